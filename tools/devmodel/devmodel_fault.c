// SPDX-License-Identifier: MIT
/*
 * Fault injection, three ways with one meaning (enum mxhw_fault):
 *   --fault KIND:RING[:ARG[:COUNT]]   armed at the driver's first hello
 *                                     (a hello clears faults, so arming
 *                                     them earlier would be pointless)
 *   --control PATH                    text lines "fault KIND RING [ARG
 *                                     [COUNT]]", "clear", "status"; one
 *                                     reply line each, "ok ..." or
 *                                     "error: ..."
 *   the test page (--test-page)       struct mxhw_test in BAR2, polled at
 *                                     least every 10 ms and before a ring
 *                                     is read; acknowledged in ack_seq
 *
 * KIND: hang, hang-hard, error, slow, corrupt, drop-irq, lost (and clear).
 * ARG: error: the positive errno the jobs fail with (0: EIO); slow: the
 * extra milliseconds per job (0: 100).  COUNT: jobs (completions for
 * corrupt and drop-irq) it applies to, 0 until cleared; hang, hang-hard
 * and lost ignore it.  A fault replaces an armed fault of the same kind on
 * that ring; faults of different kinds combine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devmodel.h"

#define DM_MAX_SLOW_MS	600000U

static const char *const fault_names[DM_N_FAULTS] = {
	[MXHW_FAULT_CLEAR] = "clear",
	[MXHW_FAULT_HANG] = "hang",
	[MXHW_FAULT_HANG_HARD] = "hang-hard",
	[MXHW_FAULT_ERROR] = "error",
	[MXHW_FAULT_SLOW] = "slow",
	[MXHW_FAULT_CORRUPT] = "corrupt",
	[MXHW_FAULT_DROP_IRQ] = "drop-irq",
	[MXHW_FAULT_LOST] = "lost",
};

const char *dm_fault_name(uint32_t kind)
{
	return kind < DM_N_FAULTS ? fault_names[kind] : "unknown";
}

static int parse_kind(const char *s, size_t len, uint32_t *kind)
{
	uint32_t k;

	for (k = 0; k < DM_N_FAULTS; k++) {
		if (strlen(fault_names[k]) == len &&
		    !strncmp(fault_names[k], s, len)) {
			*kind = k;
			return 0;
		}
	}
	/* "hang_hard", "drop_irq" too */
	if (len == 9 && !strncmp(s, "hang_hard", 9))
		return *kind = MXHW_FAULT_HANG_HARD, 0;
	if (len == 8 && !strncmp(s, "drop_irq", 8))
		return *kind = MXHW_FAULT_DROP_IRQ, 0;
	return -EINVAL;
}

static int parse_u32(const char *s, size_t len, uint32_t *out)
{
	char buf[16];
	unsigned long v;
	char *end;

	if (!len || len >= sizeof(buf) || *s == '-' || *s == '+')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	v = strtoul(buf, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "KIND:RING[:ARG[:COUNT]]" or, with sep ' ', the control socket's words. */
static int parse_fields(const char *s, char sep, struct dm_fault_spec *f,
			char *why, size_t size)
{
	const char *p = s, *q;
	uint32_t *fields[3] = { &f->ring, &f->arg, &f->count };
	unsigned int i;

	memset(f, 0, sizeof(*f));
	q = strchr(p, sep);
	if (parse_kind(p, q ? (size_t)(q - p) : strlen(p), &f->kind)) {
		snprintf(why, size,
			 "unknown fault kind in '%s' (hang, hang-hard, error, slow, corrupt, drop-irq, lost)",
			 s);
		return -EINVAL;
	}
	if (f->kind == MXHW_FAULT_CLEAR && !q)
		return 0;
	for (i = 0; i < 3 && q; i++) {
		p = q + 1;
		while (sep == ' ' && *p == ' ')
			p++;
		q = strchr(p, sep);
		if (parse_u32(p, q ? (size_t)(q - p) : strlen(p), fields[i])) {
			snprintf(why, size,
				 "'%s': %s is not a number", s,
				 i == 0 ? "RING" : i == 1 ? "ARG" : "COUNT");
			return -EINVAL;
		}
	}
	if (q) {
		snprintf(why, size, "'%s': more than KIND, RING, ARG, COUNT", s);
		return -EINVAL;
	}
	if (!i && f->kind != MXHW_FAULT_CLEAR) {
		snprintf(why, size, "'%s': no RING", s);
		return -EINVAL;
	}
	return 0;
}

int dm_fault_parse_spec(const char *s, struct dm_fault_spec *out, char *why,
			size_t size)
{
	return parse_fields(s, ':', out, why, size);
}

/* dm->lock held. */
void dm_fault_counted(struct dm *dm)
{
	dm->faulted++;
	if (dm->test)
		dm_st32(&dm->test->jobs_faulted, (uint32_t)dm->faulted);
}

bool dm_fault_take(struct dm_ring *r, uint32_t kind, uint32_t *arg)
{
	struct dm_fault *f = &r->fault[kind];

	if (!f->on)
		return false;
	if (arg)
		*arg = f->arg;
	if (f->left && !--f->left)
		f->on = false;
	dm_fault_counted(r->dm);
	dm_log(r->dm, "fault: ring %u: %s applied%s", r->idx,
	       dm_fault_name(kind), f->on ? "" : " (the last time)");
	return true;
}

/* dm->lock held. */
void dm_go_lost(struct dm *dm, const char *why)
{
	unsigned int i;

	if (dm->lost)
		return;
	dm->lost = true;
	dm->status = MXHW_STATUS_LOST;
	dm_st32(&dm->ctrl->dev_status, MXHW_STATUS_LOST);
	dm_log(dm, "fault: device lost (%s): every ring stops, everything is ignored from now on",
	       why);
	if (dm->irq_on)
		dm_raise(dm, MXHW_IRQ_CONTROL);
	dm->irq_on = false;
	dm->stop_gen++;
	for (i = 0; i < dm->cfg.rings; i++) {
		dm->rings[i].running = false;
		dm_ring_wake(&dm->rings[i]);
	}
}

int dm_fault_apply(struct dm *dm, const struct dm_fault_spec *f,
		   const char *source, char *why, size_t size)
{
	struct dm_fault *slot;
	uint32_t arg = f->arg;
	unsigned int i;

	if (f->kind >= DM_N_FAULTS) {
		snprintf(why, size, "fault kind %u (0..%u)", f->kind,
			 DM_N_FAULTS - 1);
		return -EINVAL;
	}
	if (dm->lost) {
		snprintf(why, size, "the device is lost");
		return -ENODEV;
	}
	if (f->kind == MXHW_FAULT_CLEAR) {
		for (i = 0; i < dm->cfg.rings; i++) {
			memset(dm->rings[i].fault, 0,
			       sizeof(dm->rings[i].fault));
			dm_ring_wake(&dm->rings[i]);
		}
		dm_log(dm, "fault: clear (%s): every fault off", source);
		return 0;
	}
	if (f->kind == MXHW_FAULT_LOST) {
		dm_go_lost(dm, source);
		return 0;
	}
	if (f->ring >= dm->cfg.rings) {
		snprintf(why, size, "ring %u (the device has %u)", f->ring,
			 dm->cfg.rings);
		return -EINVAL;
	}
	if (f->kind == MXHW_FAULT_ERROR) {
		if (!arg)
			arg = EIO;
		if (arg > 4095) {
			snprintf(why, size, "error %u: not an errno (1..4095)",
				 arg);
			return -EINVAL;
		}
	}
	if (f->kind == MXHW_FAULT_SLOW) {
		if (!arg)
			arg = 100;
		if (arg > DM_MAX_SLOW_MS) {
			snprintf(why, size, "slow %u ms: at most %u", arg,
				 DM_MAX_SLOW_MS);
			return -EINVAL;
		}
	}
	slot = &dm->rings[f->ring].fault[f->kind];
	slot->on = true;
	slot->arg = arg;
	slot->left = f->kind == MXHW_FAULT_HANG ||
		     f->kind == MXHW_FAULT_HANG_HARD ? 0 : f->count;
	if (slot->left)
		dm_log(dm, "fault: ring %u: %s armed (%s), arg %u, count %u",
		       f->ring, dm_fault_name(f->kind), source, arg,
		       slot->left);
	else
		dm_log(dm, "fault: ring %u: %s armed (%s), arg %u, until cleared",
		       f->ring, dm_fault_name(f->kind), source, arg);
	dm_ring_wake(&dm->rings[f->ring]);
	return 0;
}

/* --- the test page ------------------------------------------------------ */

void dm_test_page_poll(struct dm *dm)
{
	struct mxhw_test *t = dm->test;
	struct dm_fault_spec f;
	char why[128];
	uint32_t seq;

	if (!t)
		return;
	/* Cheap when nothing changed, which is nearly always. */
	if (dm_ld32(&t->cmd_seq) == __atomic_load_n(&dm->test_seq,
						    __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&dm->test_lock);
	seq = dm_ld32(&t->cmd_seq);
	if (seq != dm->test_seq) {
		f.kind = dm_ld32(&t->cmd);
		f.ring = dm_ld32(&t->ring);
		f.arg = dm_ld32(&t->arg);
		f.count = dm_ld32(&t->count);
		pthread_mutex_lock(&dm->lock);
		if (dm_fault_apply(dm, &f, "test page", why, sizeof(why)))
			dm_log(dm, "fault: test page command %u (seq %u) ignored: %s",
			       f.kind, seq, why);
		pthread_mutex_unlock(&dm->lock);
		__atomic_store_n(&dm->test_seq, seq, __ATOMIC_RELEASE);
		dm_st32(&t->ack_seq, seq);
	}
	pthread_mutex_unlock(&dm->test_lock);
}

/* --- the control socket --------------------------------------------------- */

int dm_control_listen(struct dm *dm)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = dm->cfg.control_path;
	int fd, i;

	for (i = 0; i < DM_MAX_CTL_CLIENTS; i++)
		dm->ctl[i].fd = -1;
	if (!path)
		return 0;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		dm_log(dm, "error: --control %s: longer than %zu bytes", path,
		       sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		int ret = -errno;

		dm_log(dm, "error: --control %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	dm->ctl_fd = fd;
	return 0;
}

void dm_control_close(struct dm *dm)
{
	int i;

	for (i = 0; i < DM_MAX_CTL_CLIENTS; i++)
		if (dm->ctl[i].fd >= 0)
			close(dm->ctl[i].fd);
	if (dm->ctl_fd >= 0) {
		close(dm->ctl_fd);
		unlink(dm->cfg.control_path);
	}
	dm->ctl_fd = -1;
}

void dm_control_accept(struct dm *dm)
{
	int fd = accept4(dm->ctl_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	int i;

	if (fd < 0)
		return;
	for (i = 0; i < DM_MAX_CTL_CLIENTS; i++) {
		if (dm->ctl[i].fd < 0) {
			dm->ctl[i].fd = fd;
			dm->ctl[i].len = 0;
			return;
		}
	}
	dm_log(dm, "control: more than %d clients, one refused",
	       DM_MAX_CTL_CLIENTS);
	close(fd);
}

static void reply(struct dm_ctl_client *c, const char *s)
{
	size_t n = strlen(s), done = 0;

	while (done < n) {
		ssize_t w = send(c->fd, s + done, n - done, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		done += (size_t)w;
	}
}

static const char *status_name(uint32_t s)
{
	switch (s) {
	case MXHW_STATUS_OFF: return "off";
	case MXHW_STATUS_READY: return "ready";
	case MXHW_STATUS_LOST: return "lost";
	}
	return "?";
}

static void status_line(struct dm *dm, char *out, size_t size)
{
	size_t len;
	unsigned int i, k;
	uint64_t jobs = 0, ops = 0;

	pthread_mutex_lock(&dm->lock);
	for (i = 0; i < dm->cfg.rings; i++) {
		jobs += dm->rings[i].jobs;
		ops += dm->rings[i].ops;
	}
	len = (size_t)snprintf(out, size,
			       "ok status %s gen %u hellos %llu jobs %llu ops %llu faulted %llu rings",
			       status_name(dm->status), dm->last_gen,
			       (unsigned long long)dm->hellos,
			       (unsigned long long)jobs,
			       (unsigned long long)ops,
			       (unsigned long long)dm->faulted);
	for (i = 0; i < dm->cfg.rings && len < size; i++) {
		len += (size_t)snprintf(out + len, size - len, " %u:%llu", i,
					(unsigned long long)dm->rings[i].jobs);
		for (k = 1; k < DM_N_FAULTS && len < size; k++)
			if (dm->rings[i].fault[k].on)
				len += (size_t)snprintf(out + len, size - len,
							",%s", fault_names[k]);
	}
	pthread_mutex_unlock(&dm->lock);
	if (len < size)
		snprintf(out + len, size - len, "\n");
}

static void run_line(struct dm *dm, struct dm_ctl_client *c, char *line)
{
	struct dm_fault_spec f;
	char why[160], out[600];
	int ret;

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line)
		return;
	if (!strcmp(line, "status")) {
		status_line(dm, out, sizeof(out));
		reply(c, out);
		return;
	}
	if (!strcmp(line, "clear")) {
		f = (struct dm_fault_spec){ .kind = MXHW_FAULT_CLEAR };
	} else if (!strncmp(line, "fault ", 6)) {
		line += 6;
		while (*line == ' ')
			line++;
		if (parse_fields(line, ' ', &f, why, sizeof(why))) {
			snprintf(out, sizeof(out), "error: %s\n", why);
			reply(c, out);
			return;
		}
	} else {
		snprintf(out, sizeof(out),
			 "error: unknown command '%.64s' (fault KIND RING [ARG [COUNT]], clear, status)\n",
			 line);
		reply(c, out);
		return;
	}
	pthread_mutex_lock(&dm->lock);
	ret = dm_fault_apply(dm, &f, "control socket", why, sizeof(why));
	pthread_mutex_unlock(&dm->lock);
	if (ret)
		snprintf(out, sizeof(out), "error: %s\n", why);
	else if (f.kind == MXHW_FAULT_CLEAR)
		snprintf(out, sizeof(out), "ok clear\n");
	else
		snprintf(out, sizeof(out), "ok fault %s ring %u arg %u count %u\n",
			 fault_names[f.kind], f.ring, f.arg, f.count);
	reply(c, out);
}

bool dm_control_serve(struct dm *dm, struct dm_ctl_client *c)
{
	ssize_t n;
	char *nl;

	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0)
		return false;
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	while ((nl = strchr(c->buf, '\n'))) {
		*nl = 0;
		if (nl > c->buf && nl[-1] == '\r')
			nl[-1] = 0;
		run_line(dm, c, c->buf);
		c->len -= (size_t)(nl + 1 - c->buf);
		memmove(c->buf, nl + 1, c->len + 1);
	}
	if (c->len == sizeof(c->buf) - 1) {
		reply(c, "error: line too long\n");
		c->len = 0;
	}
	return true;
}
