// SPDX-License-Identifier: MIT
/*
 * Ring workers: one thread per ring, so that a hung or slow ring never
 * delays another.  Doorbell MXHW_DB_RING(r) wakes ring r's worker, which
 * takes jobs in order from sq_head to sq_tail:
 *
 *  1. Copy the job's descriptors out of BAR2 (the guest may rewrite them
 *     at any time; only the copies are looked at), advance sq_head.
 *     A job is op_count descriptors with the head's seq, op_index 0..n-1
 *     and the same op_count.  When they do not agree, the run of
 *     consecutive descriptors that carry the head's seq is taken as the
 *     job and fails with -EINVAL: every descriptor is consumed once and no
 *     job yields more than one completion record.
 *  2. Check every op (devmodel_exec.c), then run them in order.  Before
 *     each op and between the chunks of an op the worker looks at
 *     abort_seq (-ECANCELED), at resets, stops and faults.
 *  3. Write one completion record at cq_tail, advance cq_tail (release),
 *     raise MXHW_IRQ_RING(r) unless irq_off.  A completion queue the
 *     driver has not drained (cq_tail - cq_head == depth) holds the worker
 *     until it has room.
 *
 * sq_head and cq_tail are kept here and only ever written to BAR2, never
 * read back from it.  A driver that puts sq_tail more than depth ahead of
 * sq_head has broken the protocol: the ring stalls (logged) until it is
 * reset.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devmodel.h"

/* ring_check()'s verdict that the job is dropped without a completion. */
#define DM_ABANDON	1

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
}

void dm_ring_wake(struct dm_ring *r)
{
	uint64_t one = 1;

	if (r->wake_fd >= 0 && write(r->wake_fd, &one, sizeof(one)) < 0)
		return;
}

void dm_raise(struct dm *dm, unsigned int vector)
{
	uint64_t one = 1;

	if (vector >= dm->n_vectors || dm->irq_fd[vector] < 0)
		return;
	if (write(dm->irq_fd[vector], &one, sizeof(one)) ==
	    (ssize_t)sizeof(one))
		__atomic_add_fetch(&dm->irqs, 1, __ATOMIC_RELAXED);
}

/* Sleep until a doorbell or a nudge, at most timeout_ms (-1: forever). */
static void wait_wake(struct dm_ring *r, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = r->wake_fd, .events = POLLIN },
		{ .fd = r->dm->db_fd[MXHW_DB_RING(r->idx)], .events = POLLIN },
	};

	if (poll(p, 2, timeout_ms) > 0) {
		if (p[0].revents)
			drain(p[0].fd);
		if (p[1].revents)
			drain(p[1].fd);
	}
}

/* One descriptor out of BAR2, each 64-bit word read once. */
static void copy_desc(struct mxhw_desc *dst, const struct mxhw_desc *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	size_t i;

	_Static_assert(sizeof(*dst) % 8 == 0, "descriptor size");
	for (i = 0; i < sizeof(*dst) / 8; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/*
 * May the job go on?  0: yes; -ECANCELED: it was aborted (abortable only);
 * DM_ABANDON: drop it (reset, stop, device lost, exit).  A hung ring stays
 * in here, deaf to aborts, until its fault is cleared, a reset heals it
 * (HANG; HANG_HARD ignores resets) or a hello or goodbye stops it.
 */
static int ring_check(struct dm_ring *r, uint64_t seq, bool abortable)
{
	struct dm *dm = r->dm;

	dm_test_page_poll(dm);
	pthread_mutex_lock(&dm->lock);
	for (;;) {
		if (dm->quit || !r->running || r->stop_ack != dm->stop_gen) {
			pthread_mutex_unlock(&dm->lock);
			return DM_ABANDON;
		}
		if (r->reset_pending) {
			if (!r->fault[MXHW_FAULT_HANG_HARD].on) {
				pthread_mutex_unlock(&dm->lock);
				return DM_ABANDON;
			}
			r->reset_pending = false;
			dm_log(dm, "fault: ring %u: hang-hard: reset %u ignored",
			       r->idx, r->reset_val);
		}
		if (!r->fault[MXHW_FAULT_HANG].on &&
		    !r->fault[MXHW_FAULT_HANG_HARD].on)
			break;
		if (!r->hang_counted) {
			r->hang_counted = true;
			dm_fault_counted(dm);
			dm_log(dm, "fault: ring %u: %s: job seq 0x%llx held",
			       r->idx,
			       r->fault[MXHW_FAULT_HANG_HARD].on ? "hang-hard" :
			       "hang", (unsigned long long)seq);
		}
		pthread_mutex_unlock(&dm->lock);
		wait_wake(r, 10);
		dm_test_page_poll(dm);
		pthread_mutex_lock(&dm->lock);
	}
	pthread_mutex_unlock(&dm->lock);
	if (abortable && dm_ld32(&r->regs->abort_seq) == (uint32_t)seq)
		return -ECANCELED;
	return 0;
}

struct job_ctx {
	struct dm_ring *r;
	uint64_t seq;
};

static int chunk_check(void *ctx)
{
	struct job_ctx *j = ctx;

	return ring_check(j->r, j->seq, true);
}

/* The SLOW fault: ms of waiting that aborts and resets cut short. */
static int slow_wait(struct dm_ring *r, uint64_t seq, uint32_t ms)
{
	uint64_t end = dm_now_ns() + (uint64_t)ms * 1000000ULL;
	int ret;

	for (;;) {
		uint64_t now = dm_now_ns();

		ret = ring_check(r, seq, true);
		if (ret || now >= end)
			return ret;
		wait_wake(r, (int)((end - now) / 1000000ULL) > 5 ? 5 :
			  (int)((end - now) / 1000000ULL) + 1);
	}
}

/* Write the job's completion record; false if it was dropped instead. */
static bool complete(struct dm_ring *r, uint64_t seq, int status,
		     uint32_t ops_done, uint64_t device_ns)
{
	struct dm *dm = r->dm;
	uint32_t depth = dm->lay.depth, check;
	struct mxhw_cpl *cpl;
	bool corrupt, drop, irq_off;

	for (;;) {
		pthread_mutex_lock(&dm->lock);
		if (dm->quit || dm->lost || !r->running ||
		    r->stop_ack != dm->stop_gen || r->reset_pending) {
			pthread_mutex_unlock(&dm->lock);
			return false;
		}
		if (r->cq_tail - dm_ld32(&r->regs->cq_head) < depth)
			break;
		pthread_mutex_unlock(&dm->lock);
		wait_wake(r, 1);
	}
	corrupt = dm_fault_take(r, MXHW_FAULT_CORRUPT, NULL);
	drop = dm_fault_take(r, MXHW_FAULT_DROP_IRQ, NULL);
	cpl = &r->cq[r->cq_tail % depth];
	check = mxhw_cpl_check(seq, (uint32_t)status, ops_done, device_ns);
	if (corrupt) {
		seq ^= 0xbad5eed0bad5eed0ULL;
		check = mxhw_cpl_check(seq, (uint32_t)status, ops_done,
				       device_ns) ^ 0x5a5a5a5aU;
	}
	cpl->seq = htole64(seq);
	cpl->status = htole32((uint32_t)status);
	cpl->ops_done = htole32(ops_done);
	cpl->device_ns = htole64(device_ns);
	cpl->check = htole32(check);
	cpl->reserved = 0;
	r->cq_tail++;
	dm_st32(&r->regs->cq_tail, r->cq_tail);
	r->jobs++;
	r->ops += ops_done;
	if (status)
		r->failed++;
	irq_off = dm_ld32(&r->regs->irq_off) != 0;
	if (!irq_off && !drop && dm->irq_on)
		dm_raise(dm, MXHW_IRQ_RING(r->idx));
	pthread_mutex_unlock(&dm->lock);
	return true;
}

/*
 * Take the job at sq_head: copy it, advance sq_head.  Returns its
 * descriptor count (0: nothing to do); *valid says whether the
 * descriptors agree with each other.
 */
static uint32_t take_job(struct dm_ring *r, bool *valid)
{
	uint32_t depth = r->dm->lay.depth;
	uint32_t tail = dm_ld32(&r->regs->sq_tail);
	uint32_t pending = tail - r->sq_head, n, i, used;
	uint64_t seq;

	if (!pending)
		return 0;
	if (pending > depth) {
		if (r->bad_tail != tail)
			dm_log(r->dm, "ring %u: sq_tail %u is %u ahead of sq_head %u (depth %u): ignored until a reset",
			       r->idx, tail, pending, r->sq_head, depth);
		r->bad_tail = tail;
		return 0;
	}
	copy_desc(&r->job[0], &r->sq[r->sq_head % depth]);
	seq = le64toh(r->job[0].seq);
	n = le32toh(r->job[0].op_count);
	*valid = n >= 1 && n <= pending && le32toh(r->job[0].op_index) == 0;
	for (i = 1; *valid && i < n; i++) {
		const struct mxhw_desc *d = &r->job[i];

		copy_desc(&r->job[i], &r->sq[(r->sq_head + i) % depth]);
		*valid = le64toh(d->seq) == seq &&
			 le32toh(d->op_index) == i &&
			 le32toh(d->op_count) == n;
	}
	if (*valid) {
		used = n;
	} else {
		/* The run of descriptors that carry the head's seq. */
		for (used = 1; used < pending; used++) {
			copy_desc(&r->job[used],
				  &r->sq[(r->sq_head + used) % depth]);
			if (le64toh(r->job[used].seq) != seq)
				break;
		}
	}
	r->sq_head += used;
	dm_st32(&r->regs->sq_head, r->sq_head);
	return used;
}

/* Run the job in r->job[0..n); returns false when there was none. */
static bool run_one(struct dm_ring *r)
{
	struct dm *dm = r->dm;
	char why[200] = "";
	uint32_t n, i, ops_done = 0, arg = 0;
	bool valid = false, exact;
	struct job_ctx ctx;
	uint64_t t0;
	int status = 0, ret;

	n = take_job(r, &valid);
	if (!n)
		return false;
	t0 = dm_now_ns();
	ctx.r = r;
	ctx.seq = le64toh(r->job[0].seq);
	if (!valid)
		snprintf(why, sizeof(why),
			 "%u descriptor(s) do not form a job (op_count %u, op_index %u, seq equal)",
			 n, le32toh(r->job[0].op_count),
			 le32toh(r->job[0].op_index));

	pthread_mutex_lock(&dm->lock);
	r->hang_counted = false;
	pthread_mutex_unlock(&dm->lock);
	ret = ring_check(r, ctx.seq, true);
	if (ret == DM_ABANDON)
		return true;
	status = ret;

	if (!status) {
		pthread_mutex_lock(&dm->lock);
		if (!dm_fault_take(r, MXHW_FAULT_SLOW, &arg))
			arg = 0;
		pthread_mutex_unlock(&dm->lock);
		if (arg) {
			ret = slow_wait(r, ctx.seq, arg);
			if (ret == DM_ABANDON)
				return true;
			status = ret;
		}
	}
	if (!status) {
		pthread_mutex_lock(&dm->lock);
		if (dm_fault_take(r, MXHW_FAULT_ERROR, &arg)) {
			status = -(int)arg;
			snprintf(why, sizeof(why), "fault: error %u", arg);
		}
		pthread_mutex_unlock(&dm->lock);
	}
	if (!status && !valid)
		status = -EINVAL;
	/* Every op is checked before any runs. */
	for (i = 0; !status && i < n; i++) {
		char opwhy[160];

		status = dm_op_check(&dm->lay, &r->job[i], &r->job_ops[i],
				     opwhy, sizeof(opwhy));
		if (status)
			snprintf(why, sizeof(why), "op %u: %s", i, opwhy);
	}
	for (i = 0; !status && i < n; i++) {
		char opwhy[160] = "";

		exact = dm->cfg.exact_only ||
			(r->job_ops[i].flags & MXHW_DESC_EXACT);
		ret = ring_check(r, ctx.seq, true);
		if (!ret)
			ret = dm_op_run(&r->exec, &r->job_ops[i], exact,
					chunk_check, &ctx, opwhy,
					sizeof(opwhy));
		if (ret == DM_ABANDON)
			return true;
		status = ret;
		if (!status)
			ops_done++;
		else if (*opwhy)
			snprintf(why, sizeof(why), "op %u: %s", i, opwhy);
	}
	if (status == -ECANCELED)
		snprintf(why, sizeof(why), "aborted after %u op(s)", ops_done);

	if (!complete(r, ctx.seq, status, ops_done, dm_now_ns() - t0))
		return true;
	if (status && status != -ECANCELED)
		dm_log(dm, "ring %u: job seq 0x%llx: status %d: %s", r->idx,
		       (unsigned long long)ctx.seq, status, why);
	else
		dm_vlog(dm, "ring %u: job seq 0x%llx: %u op(s), status %d, %u done, %.3f ms%s%s",
			r->idx, (unsigned long long)ctx.seq, n, status,
			ops_done, (double)(dm_now_ns() - t0) / 1e6,
			*why ? ": " : "", why);
	return true;
}

/*
 * Requests from the main thread: acknowledge a stop, carry out a ring
 * reset.  Returns false when the worker is to exit; *run says whether the
 * ring may take jobs.
 */
static bool service(struct dm_ring *r, bool *run)
{
	struct dm *dm = r->dm;
	bool irq = false;

	pthread_mutex_lock(&dm->lock);
	if (dm->quit) {
		pthread_mutex_unlock(&dm->lock);
		return false;
	}
	if (r->stop_ack != dm->stop_gen) {
		r->stop_ack = dm->stop_gen;
		pthread_cond_broadcast(&dm->cond);
	}
	if (r->reset_pending) {
		r->reset_pending = false;
		if (r->fault[MXHW_FAULT_HANG_HARD].on) {
			dm_log(dm, "fault: ring %u: hang-hard: reset %u ignored",
			       r->idx, r->reset_val);
		} else if (r->running && !dm->lost) {
			if (r->fault[MXHW_FAULT_HANG].on)
				dm_log(dm, "fault: ring %u: hang healed by the reset",
				       r->idx);
			r->fault[MXHW_FAULT_HANG].on = false;
			r->sq_head = 0;
			r->cq_tail = 0;
			dm_st32(&r->regs->sq_head, 0);
			dm_st32(&r->regs->cq_tail, 0);
			r->reset_ack_val = r->reset_val;
			dm_st32(&r->regs->reset_ack, r->reset_val);
			dm->resets++;
			dm_log(dm, "ring %u: reset %u done", r->idx,
			       r->reset_val);
			irq = dm->irq_on;
		}
	}
	*run = r->running && !dm->lost;
	if (irq)
		dm_raise(dm, MXHW_IRQ_CONTROL);
	pthread_mutex_unlock(&dm->lock);
	return true;
}

static void *worker(void *arg)
{
	struct dm_ring *r = arg;
	bool run;

	while (service(r, &run)) {
		if (run) {
			dm_test_page_poll(r->dm);
			if (run_one(r))
				continue;
		}
		wait_wake(r, -1);
	}
	return NULL;
}

int dm_rings_start(struct dm *dm)
{
	const struct dm_layout *lay = &dm->lay;
	unsigned int i;
	int ret;

	for (i = 0; i < dm->cfg.rings; i++) {
		struct dm_ring *r = &dm->rings[i];
		uint8_t *base = dm->shm + lay->ring_offset +
				(uint64_t)i * lay->ring_stride;

		r->dm = dm;
		r->idx = i;
		r->regs = (struct mxhw_ring_regs *)base;
		r->sq = (struct mxhw_desc *)(base + MXHW_RING_SQ_OFFSET);
		r->cq = (struct mxhw_cpl *)(base +
			mxhw_ring_cq_offset(lay->depth, sizeof(struct mxhw_desc)));
		r->job = calloc(lay->depth, sizeof(*r->job));
		r->job_ops = calloc(lay->depth, sizeof(*r->job_ops));
		r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (!r->job || !r->job_ops || r->wake_fd < 0)
			return -ENOMEM;
		ret = dm_exec_init(dm, &r->exec);
		if (ret)
			return ret;
		ret = pthread_create(&r->thread, NULL, worker, r);
		if (ret)
			return -ret;
		r->started = true;
	}
	return 0;
}

void dm_rings_stop(struct dm *dm)
{
	unsigned int i;

	pthread_mutex_lock(&dm->lock);
	dm->quit = true;
	for (i = 0; i < dm->cfg.rings; i++)
		dm_ring_wake(&dm->rings[i]);
	pthread_mutex_unlock(&dm->lock);
	for (i = 0; i < dm->cfg.rings; i++) {
		struct dm_ring *r = &dm->rings[i];

		if (r->started)
			pthread_join(r->thread, NULL);
		r->started = false;
		dm_exec_fini(&r->exec);
		free(r->job);
		free(r->job_ops);
		r->job = NULL;
		r->job_ops = NULL;
	}
}

void dm_rings_park(struct dm *dm)
{
	struct timespec until;
	unsigned int i, waited = 0;
	bool all;

	pthread_mutex_lock(&dm->lock);
	dm->stop_gen++;
	for (i = 0; i < dm->cfg.rings; i++) {
		dm->rings[i].running = false;
		dm_ring_wake(&dm->rings[i]);
	}
	for (;;) {
		all = true;
		for (i = 0; i < dm->cfg.rings; i++)
			if (dm->rings[i].stop_ack != dm->stop_gen)
				all = false;
		if (all)
			break;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		if (pthread_cond_timedwait(&dm->cond, &dm->lock, &until) ==
		    ETIMEDOUT)
			dm_log(dm, "warning: a ring worker has not stopped after %u s",
			       ++waited);
	}
	pthread_mutex_unlock(&dm->lock);
}
