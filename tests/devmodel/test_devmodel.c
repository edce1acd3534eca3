// SPDX-License-Identifier: MIT
/*
 * mxaccel-devmodel on the host, without a VM: this program plays qemu
 * (fakeqemu.c) and the driver.  It starts the device model with
 * --test-page, --control and a --fault, takes the ivshmem setup as qemu
 * does, maps BAR2, checks the header, says hello, and then runs jobs on
 * every ring and compares them with libmxaccel's EMULATED kernels on the
 * CPU, run on a snapshot of the heap taken before the job:
 *   - exact GEMM and QUANTIZE: the whole heap must then be bit identical
 *     (outputs equal, nothing else touched);
 *   - GEMM without MXHW_DESC_EXACT: within the library's native bound
 *     (tests/lib/test_native_bound.c: |c - c_ref| <= gamma * S +
 *     2^-24 |c_ref| for fp32 C, gamma * S + 2^-8 (|c| + |c_ref|) for bf16,
 *     gamma = (K + 1) * 2^-24, S = sum |a_k b_k| (+ |C|)), everything
 *     else bit identical;
 * and the rest of hw/mxaccel_pci.h: full rings and coalesced interrupts,
 * irq_off, a full completion queue, every validation error, aborts, ring
 * resets, hello as a device reset, goodbye, every fault kind through the
 * test page, the control socket and --fault, the lost device, the exit
 * on disconnect; then the command line's errors, SIGTERM and a 1 MiB BAR.
 *
 * Output: TAP, one line per subtest.  Exit 0 pass, 1 fail.
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeqemu.h"
#include "mxaccel_accel.h"
#include "testlib.h"

#define SIZE_ARG	"64M"
#define RINGS		4
#define DEPTH		64
#define MAX_DIM		(1u << 20)

static struct fq Q;
static struct mxa_device *cpu;
static uint64_t heap_off, heap_size, heap_used;
static uint8_t *snap;
static size_t snap_size;
static struct mxa_buffer *snap_buf;
static uint64_t seq_next = 0x100000001ULL;
static uint32_t gen_next = 1, reset_next = 1, tp_seq;
static unsigned int tap_n;
static int tap_failures;

static void tap(const char *name)
{
	tap_n++;
	printf("%sok %u - %s\n", test_failures == tap_failures ? "" : "not ",
	       tap_n, name);
	fflush(stdout);
	tap_failures = test_failures;
}

static uint32_t ld32(const __le32 *p)
{
	return le32toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static void st32(__le32 *p, uint32_t v)
{
	__atomic_store_n(p, htole32(v), __ATOMIC_RELEASE);
}

/* --- rings ---------------------------------------------------------------- */

struct tring {
	unsigned int idx;
	struct mxhw_ring_regs *regs;
	struct mxhw_desc *sq;
	struct mxhw_cpl *cq;
	uint32_t sq_tail, cq_head;
};

static struct tring R[RINGS];

static void rings_init(void)
{
	uint64_t off = le64toh(Q.hdr->ring_offset);
	uint64_t stride = le64toh(Q.hdr->ring_stride);
	unsigned int i;

	for (i = 0; i < RINGS; i++) {
		uint8_t *base = Q.bar + off + i * stride;

		R[i].idx = i;
		R[i].regs = (struct mxhw_ring_regs *)base;
		R[i].sq = (struct mxhw_desc *)(base + MXHW_RING_SQ_OFFSET);
		R[i].cq = (struct mxhw_cpl *)(base +
			mxhw_ring_cq_offset(DEPTH, sizeof(struct mxhw_desc)));
		R[i].sq_tail = R[i].cq_head = 0;
	}
}

static void kick(struct tring *r)
{
	st32(&r->regs->sq_tail, r->sq_tail);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
}

/* Write a descriptor as it is at sq_tail (no kick). */
static void put_raw(struct tring *r, const struct mxhw_desc *d)
{
	memcpy(&r->sq[r->sq_tail % DEPTH], d, sizeof(*d));
	r->sq_tail++;
}

/* Write ops as one job with a new seq (no kick). */
static uint64_t put_job(struct tring *r, struct mxhw_desc *ops, unsigned int n)
{
	uint64_t seq = seq_next++;
	unsigned int i;

	for (i = 0; i < n; i++) {
		ops[i].seq = htole64(seq);
		ops[i].op_index = htole32(i);
		ops[i].op_count = htole32(n);
		put_raw(r, &ops[i]);
	}
	return seq;
}

static uint64_t submit(struct tring *r, struct mxhw_desc *ops, unsigned int n)
{
	uint64_t seq = put_job(r, ops, n);

	kick(r);
	return seq;
}

static bool cpl_valid(const struct mxhw_cpl *c)
{
	return le32toh(c->check) ==
	       mxhw_cpl_check(le64toh(c->seq), le32toh(c->status),
			      le32toh(c->ops_done), le64toh(c->device_ns));
}

/* The next completion record of r, waiting up to timeout_ms. */
static bool cpl_get(struct tring *r, struct mxhw_cpl *c, int timeout_ms)
{
	uint64_t until = fq_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		if (ld32(&r->regs->cq_tail) != r->cq_head) {
			memcpy(c, &r->cq[r->cq_head % DEPTH], sizeof(*c));
			r->cq_head++;
			st32(&r->regs->cq_head, r->cq_head);
			return true;
		}
		if (fq_now_ms() >= until)
			return false;
		fq_irq_wait(&Q, MXHW_IRQ_RING(r->idx), 5);
	}
}

/* Status of job seq (its record checked), or 1 when none came. */
static int wait_job(struct tring *r, uint64_t seq, struct mxhw_cpl *out,
		    int timeout_ms)
{
	struct mxhw_cpl c;

	if (!cpl_get(r, &c, timeout_ms)) {
		test_fail(__FILE__, __LINE__,
			  "ring %u: no completion for seq 0x%llx within %d ms",
			  r->idx, (unsigned long long)seq, timeout_ms);
		return 1;
	}
	CHECK(cpl_valid(&c), "ring %u: record of seq 0x%llx fails its check",
	      r->idx, (unsigned long long)seq);
	CHECK(le64toh(c.seq) == seq, "ring %u: record seq 0x%llx, want 0x%llx",
	      r->idx, (unsigned long long)le64toh(c.seq),
	      (unsigned long long)seq);
	if (out)
		*out = c;
	return (int)le32toh(c.status);
}

/* Nothing completes on r for ms. */
static void expect_quiet(struct tring *r, int ms, const char *what)
{
	struct mxhw_cpl c;

	CHECK(!cpl_get(r, &c, ms), "%s: ring %u completed seq 0x%llx", what,
	      r->idx, (unsigned long long)le64toh(c.seq));
}

/* The driver's ring reset: zero our indices, a new reset_req, doorbell 0. */
static bool ring_reset(struct tring *r, int timeout_ms)
{
	uint32_t val = reset_next++;
	uint64_t until = fq_now_ms() + (uint64_t)timeout_ms;

	r->sq_tail = r->cq_head = 0;
	st32(&r->regs->sq_tail, 0);
	st32(&r->regs->cq_head, 0);
	st32(&r->regs->reset_req, val);
	fq_doorbell(&Q, MXHW_DB_CONTROL);
	while (fq_now_ms() < until) {
		fq_irq_wait(&Q, MXHW_IRQ_CONTROL, 5);
		if (ld32(&r->regs->reset_ack) == val)
			return true;
	}
	return false;
}

static bool command(uint32_t cmd, uint32_t *gen_out, bool want_irq,
		    int timeout_ms)
{
	uint32_t gen = gen_next++;
	uint64_t until = fq_now_ms() + (uint64_t)timeout_ms;
	bool irq = false;

	fq_irq_take(&Q, MXHW_IRQ_CONTROL);
	st32(&Q.ctrl->drv_gen, gen);
	st32(&Q.ctrl->drv_cmd, cmd);
	fq_doorbell(&Q, MXHW_DB_CONTROL);
	if (gen_out)
		*gen_out = gen;
	while (fq_now_ms() < until) {
		if (fq_irq_wait(&Q, MXHW_IRQ_CONTROL, 5))
			irq = true;
		if (ld32(&Q.ctrl->dev_gen) == gen && (irq || !want_irq))
			return true;
	}
	return false;
}

static bool hello(void)
{
	unsigned int i;
	bool ok = command(MXHW_CMD_HELLO, NULL, true, 3000);

	for (i = 0; i < RINGS; i++)
		R[i].sq_tail = R[i].cq_head = 0;
	return ok && ld32(&Q.ctrl->dev_status) == MXHW_STATUS_READY;
}

/* A test page command, acknowledged (returns the ms it took). */
static int tp_cmd(uint32_t cmd, uint32_t ring, uint32_t arg, uint32_t count)
{
	uint64_t t0 = fq_now_ms();

	st32(&Q.test->cmd, cmd);
	st32(&Q.test->ring, ring);
	st32(&Q.test->arg, arg);
	st32(&Q.test->count, count);
	st32(&Q.test->cmd_seq, ++tp_seq);
	while (ld32(&Q.test->ack_seq) != tp_seq) {
		if (fq_now_ms() - t0 > 2000) {
			test_fail(__FILE__, __LINE__,
				  "test page command %u not acknowledged", cmd);
			return -1;
		}
		usleep(500);
	}
	return (int)(fq_now_ms() - t0);
}

/* --- the heap, operands, descriptors ------------------------------------ */

#define BAR(off) (Q.bar + (off))

static uint64_t halloc(uint64_t bytes)
{
	uint64_t off;

	heap_used = (heap_used + 63) & ~63ULL;
	off = heap_off + heap_used;
	heap_used += bytes ? bytes : 1;
	if (heap_used > heap_size) {
		fprintf(stderr, "test heap exhausted\n");
		exit(1);
	}
	return off;
}

struct pmx {
	uint64_t data, dstride, scale, sstride;
	uint64_t dstride_field, sstride_field;
	uint32_t elem, layout, rows, cols;
};

struct pdense {
	uint64_t addr, stride, stride_field;
	uint32_t dtype, rows, cols;
};

static size_t row_bytes(uint32_t elem, uint32_t cols)
{
	size_t n = 0;

	mxa_data_row_bytes((enum mxa_elem)elem, cols, &n);
	return n;
}

/*
 * An MX matrix in the heap; fill: random codes and scales, else 0xcc
 * everywhere (a QUANTIZE destination).  Padding bytes hold 0xa5.
 */
static void put_mx(struct pmx *p, uint32_t elem, uint32_t layout,
		   uint32_t rows, uint32_t cols, uint32_t dpad, uint32_t spad,
		   bool fill)
{
	uint32_t blocks = cols / 32, r, i;
	size_t rb = row_bytes(elem, cols), sb;

	*p = (struct pmx){ .elem = elem, .layout = layout, .rows = rows,
			   .cols = cols };
	p->dstride = rb + dpad;
	p->data = halloc((uint64_t)rows * p->dstride);
	memset(BAR(p->data), 0xa5, (size_t)(rows * p->dstride));
	for (r = 0; r < rows; r++) {
		uint8_t *row = BAR(p->data + r * p->dstride);

		if (!fill) {
			memset(row, 0xcc, rb);
			continue;
		}
		for (i = 0; i < rb; i++)
			row[i] = elem == MXA_ELEM_E2M1 ?
				 (uint8_t)(test_rand_code(elem, false) |
					   test_rand_code(elem, false) << 4) :
				 test_rand_code(elem, false);
	}
	p->dstride_field = dpad || test_rand_below(2) ? p->dstride : 0;
	if (layout == MXA_LAYOUT_PLAIN) {
		p->sstride = blocks + spad;
		p->scale = halloc((uint64_t)rows * p->sstride);
		memset(BAR(p->scale), 0xa5, (size_t)(rows * p->sstride));
		for (r = 0; r < rows; r++)
			for (i = 0; i < blocks; i++)
				*BAR(p->scale + r * p->sstride + i) =
					fill ? (uint8_t)(117 + test_rand_below(21)) :
					0xcc;
		p->sstride_field = spad || test_rand_below(2) ? p->sstride : 0;
	} else {
		mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, rows, cols, &sb);
		p->scale = halloc(sb);
		memset(BAR(p->scale), fill ? 0 : 0xcc, sb);
		for (r = 0; fill && r < rows; r++)
			for (i = 0; i < blocks; i++)
				*BAR(p->scale + mxa_swizzle_index(rows, blocks,
								  r, i)) =
					(uint8_t)(117 + test_rand_below(21));
	}
}

/* fill: 0 zeros, 1 random values, 2 0xcc bytes.  Padding holds 0xa5. */
static void put_dense(struct pdense *p, uint32_t dtype, uint32_t rows,
		      uint32_t cols, uint32_t pad_elems, int fill)
{
	uint32_t es = dtype == MXA_DTYPE_BF16 ? 2 : 4, r, i;

	*p = (struct pdense){ .dtype = dtype, .rows = rows, .cols = cols };
	p->stride = (uint64_t)(cols + pad_elems) * es;
	p->addr = halloc(rows * p->stride);
	memset(BAR(p->addr), 0xa5, (size_t)(rows * p->stride));
	for (r = 0; r < rows; r++) {
		uint8_t *row = BAR(p->addr + r * p->stride);
		float scale = ldexpf(1.0f, (int)test_rand_below(16) - 6);

		for (i = 0; i < cols; i++) {
			uint32_t bits = fill == 1 ?
					test_f32_bits(test_rand_float(scale)) : 0;

			if (fill == 2)
				memset(row + i * es, 0xcc, es);
			else if (es == 2)
				((uint16_t *)row)[i] = (uint16_t)(bits >> 16);
			else
				((uint32_t *)row)[i] = bits;
		}
	}
	p->stride_field = pad_elems || test_rand_below(2) ? p->stride : 0;
}

static void mx_field(struct mxhw_mx_operand *o, const struct pmx *p)
{
	o->data_addr = htole64(p->data);
	o->data_stride = htole64(p->dstride_field);
	o->scale_addr = htole64(p->scale);
	o->scale_stride = htole64(p->sstride_field);
	o->elem = htole32(p->elem);
	o->scale_layout = htole32(p->layout);
}

static struct mxhw_desc d_gemm(const struct pmx *a, const struct pmx *b,
			       const struct pdense *c, uint32_t flags)
{
	struct mxhw_desc d;

	memset(&d, 0, sizeof(d));
	d.kind = htole32(DRM_MXACCEL_OP_GEMM);
	d.flags = htole32(flags);
	d.m = htole32(a->rows);
	d.n = htole32(b->rows);
	d.k = htole32(a->cols);
	mx_field(&d.a, a);
	mx_field(&d.b, b);
	d.c.addr = htole64(c->addr);
	d.c.stride = htole64(c->stride_field);
	d.c.dtype = htole32(c->dtype);
	return d;
}

static struct mxhw_desc d_quant(const struct pmx *a, const struct pdense *c,
				uint32_t mode, uint32_t flags)
{
	struct mxhw_desc d;

	memset(&d, 0, sizeof(d));
	d.kind = htole32(DRM_MXACCEL_OP_QUANTIZE);
	d.flags = htole32(flags);
	d.m = htole32(a->rows);
	d.k = htole32(a->cols);
	d.scale_mode = htole32(mode);
	mx_field(&d.a, a);
	d.c.addr = htole64(c->addr);
	d.c.stride = htole64(c->stride_field);
	d.c.dtype = htole32(c->dtype);
	return d;
}

/* A small exact GEMM with fresh operands, C f32 (a job that must pass). */
static struct mxhw_desc small_gemm(struct pdense *c_out)
{
	struct pmx a, b;
	struct pdense c;

	put_mx(&a, MXA_ELEM_E4M3, MXA_LAYOUT_PLAIN, 5, 64, 0, 0, true);
	put_mx(&b, MXA_ELEM_E2M1, MXA_LAYOUT_PLAIN, 7, 64, 0, 0, true);
	put_dense(&c, MXA_DTYPE_F32, 5, 7, 0, 2);
	if (c_out)
		*c_out = c;
	return d_gemm(&a, &b, &c, MXHW_DESC_EXACT);
}

/* An exact GEMM of m x n x k with fresh operands. */
static struct mxhw_desc big_gemm(uint32_t m, uint32_t n, uint32_t k)
{
	struct pmx a, b;
	struct pdense c;

	put_mx(&a, MXA_ELEM_E4M3, MXA_LAYOUT_PLAIN, m, k, 0, 0, true);
	put_mx(&b, MXA_ELEM_E4M3, MXA_LAYOUT_SWIZZLED, n, k, 0, 0, true);
	put_dense(&c, MXA_DTYPE_F32, m, n, 0, 2);
	return d_gemm(&a, &b, &c, MXHW_DESC_EXACT);
}

/* A long one: seconds of work (512 x 512 x 4096). */
static struct mxhw_desc long_gemm(void)
{
	return big_gemm(512, 512, 4096);
}

/* --- the reference: libmxaccel EMULATED on a snapshot of the heap -------- */

static void snapshot(void)
{
	int ret;

	mxa_buffer_free(snap_buf);
	free(snap);
	snap_size = (size_t)((heap_used + 63) & ~63ULL);
	snap = aligned_alloc(64, snap_size);
	if (!snap)
		exit(1);
	memcpy(snap, BAR(heap_off), snap_size);
	ret = mxa_buffer_wrap(cpu, snap, snap_size, &snap_buf);
	CHECK(!ret, "wrapping the heap copy: %d", ret);
}

static void ref_mx(struct mxa_matrix *m, const struct mxhw_mx_operand *o,
		   uint32_t rows, uint32_t cols)
{
	*m = (struct mxa_matrix){
		.data = snap_buf,
		.data_offset = (size_t)(le64toh(o->data_addr) - heap_off),
		.data_stride = (size_t)le64toh(o->data_stride),
		.scale = snap_buf,
		.scale_offset = (size_t)(le64toh(o->scale_addr) - heap_off),
		.scale_stride = (size_t)le64toh(o->scale_stride),
		.elem = (enum mxa_elem)le32toh(o->elem),
		.scale_layout = (enum mxa_scale_layout)le32toh(o->scale_layout),
		.rows = rows,
		.cols = cols,
	};
}

static void ref_run(const struct mxhw_desc *d)
{
	uint32_t m = le32toh(d->m), n = le32toh(d->n), k = le32toh(d->k);
	bool gemm = le32toh(d->kind) == DRM_MXACCEL_OP_GEMM;
	struct mxa_matrix a, b;
	struct mxa_dense c = {
		.buf = snap_buf,
		.offset = (size_t)(le64toh(d->c.addr) - heap_off),
		.stride = (size_t)le64toh(d->c.stride),
		.dtype = (enum mxa_dtype)le32toh(d->c.dtype),
		.rows = m,
		.cols = gemm ? n : k,
	};
	int ret;

	ref_mx(&a, &d->a, m, k);
	if (gemm) {
		ref_mx(&b, &d->b, n, k);
		ret = mxa_gemm(cpu, &a, &b, &c,
			       le32toh(d->flags) & MXHW_DESC_ACCUMULATE ?
			       MXA_GEMM_ACCUMULATE : 0, MXA_PREF_EMULATED);
	} else {
		ret = mxa_quantize(cpu, &c, &a,
				   (enum mxa_scale_mode)le32toh(d->scale_mode),
				   MXA_PREF_EMULATED);
	}
	CHECK(!ret, "reference %s %ux%ux%u: %s", gemm ? "gemm" : "quantize",
	      m, n, k, mxa_strerror(ret));
}

/* The heap equals the snapshot, except [skip_lo, skip_hi). */
static void compare_heap(const char *what, uint64_t skip_lo, uint64_t skip_hi)
{
	const uint8_t *h = BAR(heap_off);
	size_t i;

	for (i = 0; i < snap_size; i++) {
		if (heap_off + i >= skip_lo && heap_off + i < skip_hi)
			continue;
		if (h[i] != snap[i]) {
			test_fail(__FILE__, __LINE__,
				  "%s: BAR2 0x%llx is 0x%02x, the reference has 0x%02x",
				  what, (unsigned long long)(heap_off + i),
				  h[i], snap[i]);
			return;
		}
	}
}

/* Run ops as one job on r; the heap must end up equal to the reference. */
static void exact_job(struct tring *r, struct mxhw_desc *ops, unsigned int n,
		      const char *what)
{
	struct mxhw_cpl c;
	unsigned int i;
	uint64_t seq;

	snapshot();
	for (i = 0; i < n; i++)
		ref_run(&ops[i]);
	seq = submit(r, ops, n);
	CHECK(wait_job(r, seq, &c, 20000) == 0, "%s: status %d", what,
	      (int)le32toh(c.status));
	CHECK(le32toh(c.ops_done) == n, "%s: ops_done %u of %u", what,
	      le32toh(c.ops_done), n);
	compare_heap(what, 0, 0);
}

/* --- subtests ------------------------------------------------------------- */

static void t_header(void)
{
	const struct mxhw_header *h = Q.hdr;
	uint64_t stride = (sizeof(struct mxhw_ring_regs) +
			   DEPTH * (256 + 32) + 4095) / 4096 * 4096;

	CHECK(le16toh(h->version_major) == 1 && le16toh(h->version_minor) == 0,
	      "version %u.%u", le16toh(h->version_major),
	      le16toh(h->version_minor));
	CHECK(le32toh(h->header_size) == sizeof(*h), "header_size %u",
	      le32toh(h->header_size));
	CHECK(le32toh(h->device_peer) == 0 && Q.my_id == 1,
	      "device peer %u, guest id %lld", le32toh(h->device_peer),
	      (long long)Q.my_id);
	CHECK(le32toh(h->n_rings) == RINGS && le32toh(h->ring_depth) == DEPTH,
	      "rings %u depth %u", le32toh(h->n_rings), le32toh(h->ring_depth));
	CHECK(le32toh(h->desc_size) == 256 && le32toh(h->cpl_size) == 32,
	      "desc %u cpl %u", le32toh(h->desc_size), le32toh(h->cpl_size));
	CHECK(le32toh(h->n_doorbells) == RINGS + 1 &&
	      le32toh(h->n_irqs) == RINGS + 1 && Q.n_vectors == RINGS + 1,
	      "doorbells %u irqs %u", le32toh(h->n_doorbells),
	      le32toh(h->n_irqs));
	CHECK(le32toh(h->max_dim) == MAX_DIM && le32toh(h->offset_align) == 1,
	      "max_dim %u offset_align %u", le32toh(h->max_dim),
	      le32toh(h->offset_align));
	CHECK(le64toh(h->elem_mask) == 0x3e && le64toh(h->op_mask) == 0x6 &&
	      le64toh(h->mode_mask) == 0xf && le64toh(h->desc_flags) == 3 &&
	      le64toh(h->features) == MXHW_FEAT_TEST_PAGE,
	      "masks 0x%llx 0x%llx 0x%llx flags 0x%llx features 0x%llx",
	      (unsigned long long)le64toh(h->elem_mask),
	      (unsigned long long)le64toh(h->op_mask),
	      (unsigned long long)le64toh(h->mode_mask),
	      (unsigned long long)le64toh(h->desc_flags),
	      (unsigned long long)le64toh(h->features));
	CHECK(le64toh(h->ctrl_offset) == 0x1000 &&
	      le64toh(h->test_offset) == 0x2000 &&
	      le64toh(h->ring_offset) == 0x10000 &&
	      le64toh(h->ring_stride) == stride,
	      "ctrl 0x%llx test 0x%llx rings 0x%llx stride 0x%llx",
	      (unsigned long long)le64toh(h->ctrl_offset),
	      (unsigned long long)le64toh(h->test_offset),
	      (unsigned long long)le64toh(h->ring_offset),
	      (unsigned long long)le64toh(h->ring_stride));
	CHECK(le64toh(h->heap_offset) == (2u << 20) &&
	      le64toh(h->heap_size) == Q.size - (2u << 20) &&
	      Q.size == (64u << 20),
	      "heap 0x%llx + 0x%llx, BAR %zu",
	      (unsigned long long)le64toh(h->heap_offset),
	      (unsigned long long)le64toh(h->heap_size), Q.size);
	CHECK(!strcmp(h->name, "mxaccel-devmodel 1.0"), "name '%.32s'",
	      h->name);
	CHECK(ld32(&Q.ctrl->dev_status) == MXHW_STATUS_OFF, "status %u",
	      ld32(&Q.ctrl->dev_status));
	heap_off = le64toh(h->heap_offset);
	heap_size = le64toh(h->heap_size);
	tap("setup in qemu's order; header and layout");
}

static void t_second_client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", Q.sock);
	CHECK(stat(Q.sock, &st) && errno == ENOENT,
	      "socket path still there after the client connected");
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	      errno == ENOENT, "a second client could connect (errno %d)",
	      errno);
	close(fd);
	tap("a second client is refused at connect, not accepted and closed");
}

static void t_before_hello(void)
{
	unsigned int v, i;
	struct pdense c;
	struct mxhw_desc d;

	heap_used = 0;
	d = small_gemm(&c);
	submit(&R[0], &d, 1);
	for (i = 0; i < RINGS; i++)
		fq_doorbell(&Q, MXHW_DB_RING(i));
	fq_doorbell(&Q, MXHW_DB_CONTROL);
	usleep(150000);
	for (v = 0; v < Q.n_vectors; v++)
		CHECK(!fq_irq_take(&Q, v), "vector %u raised before hello", v);
	CHECK(ld32(&R[0].regs->cq_tail) == 0 && ld32(&R[0].regs->sq_head) == 0,
	      "a job ran before hello");
	CHECK(*(uint32_t *)BAR(c.addr) == 0xccccccccU, "C written before hello");
	tap("nothing runs and no interrupt is raised before hello");
}

static void t_hello(void)
{
	struct mxhw_desc d;
	uint64_t seq;
	unsigned int i;

	CHECK(hello(), "hello: no answer (dev_gen %u, status %u)",
	      ld32(&Q.ctrl->dev_gen), ld32(&Q.ctrl->dev_status));
	for (i = 0; i < RINGS; i++)
		CHECK(!ld32(&R[i].regs->sq_tail) && !ld32(&R[i].regs->sq_head) &&
		      !ld32(&R[i].regs->cq_tail), "ring %u not empty after hello",
		      i);
	tap("hello: vector 0, dev_gen, READY, empty rings");

	/* --fault error:0:5:1 was armed by that hello. */
	heap_used = 0;
	d = small_gemm(NULL);
	snapshot();
	seq = submit(&R[0], &d, 1);
	CHECK(wait_job(&R[0], seq, NULL, 5000) == -EIO,
	      "--fault error:0:5:1: first job not -EIO");
	compare_heap("--fault error", 0, 0);
	d = small_gemm(NULL);
	exact_job(&R[0], &d, 1, "after --fault error");
	CHECK(ld32(&Q.test->jobs_faulted) == 1, "jobs_faulted %u",
	      ld32(&Q.test->jobs_faulted));
	tap("--fault error:0:5:1 applies to the first job after hello");
}

static const uint32_t shapes[][3] = {
	{ 1, 1, 32 }, { 17, 33, 96 }, { 3, 129, 64 }, { 130, 7, 160 },
	{ 64, 64, 256 }, { 5, 200, 32 }, { 33, 2, 512 }, { 128, 129, 64 },
};

static void t_gemm_exact(void)
{
	unsigned int s, i, e = 0;

	for (s = 0; s < TEST_ARRAY_SIZE(shapes); s++) {
		struct mxhw_desc d[RINGS];
		struct mxhw_cpl c;
		uint64_t seq[RINGS];

		heap_used = 0;
		for (i = 0; i < RINGS; i++, e++) {
			struct pmx a, b;
			struct pdense cc;
			uint32_t ea = test_elems[e % 5];
			uint32_t eb = test_elems[(e * 3 + s) % 5];

			put_mx(&a, ea, (e / 2) % 2, shapes[s][0], shapes[s][2],
			       (e % 3) * 5, e % 2 ? 3 : 0, true);
			put_mx(&b, eb, (e / 3) % 2, shapes[s][1], shapes[s][2],
			       (e % 4) * 2, 0, true);
			put_dense(&cc, (e / 5) % 2, shapes[s][0], shapes[s][1],
				  e % 3, 2);
			d[i] = d_gemm(&a, &b, &cc, MXHW_DESC_EXACT);
		}
		snapshot();
		for (i = 0; i < RINGS; i++)
			ref_run(&d[i]);
		for (i = 0; i < RINGS; i++)
			seq[i] = submit(&R[i], &d[i], 1);
		for (i = 0; i < RINGS; i++) {
			CHECK(wait_job(&R[i], seq[i], &c, 10000) == 0,
			      "gemm %ux%ux%u ring %u: status %d", shapes[s][0],
			      shapes[s][1], shapes[s][2], i,
			      (int)le32toh(c.status));
			CHECK(le32toh(c.ops_done) == 1, "ops_done %u",
			      le32toh(c.ops_done));
		}
		compare_heap("exact gemm", 0, 0);
	}
	tap("exact GEMM on every ring: all element types, plain and swizzled, ragged M/N, strides, f32 and bf16 C");
}

static void t_quantize(void)
{
	unsigned int e, mode, i, job = 0;

	for (e = 0; e < 5; e++) {
		for (mode = 0; mode < 4; mode++) {
			struct mxhw_desc d[2];
			uint64_t seq[2];

			heap_used = 0;
			for (i = 0; i < 2; i++, job++) {
				static const uint32_t qs[][2] = {
					{ 1, 32 }, { 37, 96 }, { 130, 64 },
					{ 8, 256 },
				};
				struct pmx a;
				struct pdense c;
				uint32_t m = qs[job % 4][0], k = qs[job % 4][1];

				put_dense(&c, job % 2, m, k, job % 3, 1);
				put_mx(&a, test_elems[e], (job / 2) % 2, m, k,
				       job % 2 * 3, job % 3, false);
				/* both modes must be exact */
				d[i] = d_quant(&a, &c, mode,
					       i ? MXHW_DESC_EXACT : 0);
			}
			snapshot();
			ref_run(&d[0]);
			ref_run(&d[1]);
			seq[0] = submit(&R[(e + mode) % RINGS], &d[0], 1);
			seq[1] = submit(&R[(e + mode + 1) % RINGS], &d[1], 1);
			CHECK(!wait_job(&R[(e + mode) % RINGS], seq[0], NULL,
					5000), "quantize %s mode %u",
			      mxa_elem_name(test_elems[e]), mode);
			CHECK(!wait_job(&R[(e + mode + 1) % RINGS], seq[1],
					NULL, 5000), "quantize %s mode %u exact",
			      mxa_elem_name(test_elems[e]), mode);
			compare_heap("quantize", 0, 0);
		}
	}
	tap("QUANTIZE bit-exact with and without EXACT: 5 element types x 4 modes, f32 and bf16, plain and swizzled");
}

/* |value| of element (r, i) of a placed MX matrix, as a double. */
static double mx_value(const struct pmx *p, uint32_t r, uint32_t i)
{
	const uint8_t *row = BAR(p->data + r * p->dstride);
	uint32_t blocks = p->cols / 32;
	uint8_t code = p->elem == MXA_ELEM_E2M1 ?
		       (uint8_t)((row[i / 2] >> (i % 2 * 4)) & 0xf) : row[i];
	uint8_t s = p->layout == MXA_LAYOUT_PLAIN ?
		    *BAR(p->scale + r * p->sstride + i / 32) :
		    *BAR(p->scale + mxa_swizzle_index(p->rows, blocks, r,
						      i / 32));

	return test_elem_value((enum mxa_elem)p->elem, code) *
	       test_scale_value(s);
}

static double c_value(const uint8_t *base, const struct pdense *c,
		      uint32_t i, uint32_t j)
{
	const uint8_t *p = base + i * c->stride;
	uint32_t bits = c->dtype == MXA_DTYPE_BF16 ?
			test_bf16_to_f32(((const uint16_t *)p)[j]) :
			((const uint32_t *)p)[j];

	return test_float_value(bits, 23);
}

static void t_gemm_native(void)
{
	static const uint32_t ns[][3] = {
		{ 17, 33, 96 }, { 64, 65, 256 }, { 3, 7, 1024 }, { 98, 130, 288 },
	};
	unsigned int s, acc;
	double worst = 0;

	for (s = 0; s < TEST_ARRAY_SIZE(ns); s++) {
		for (acc = 0; acc < 2; acc++) {
			uint32_t m = ns[s][0], n = ns[s][1], k = ns[s][2];
			uint32_t dt = (s + acc) % 2, i, j, kk;
			struct pmx a, b;
			struct pdense c;
			struct mxhw_desc d;
			struct mxhw_cpl cpl;
			double *c0;
			uint64_t seq;

			heap_used = 0;
			put_mx(&a, test_elems[s % 5], s % 2, m, k, 0, 0, true);
			put_mx(&b, test_elems[(s + 2) % 5], acc, n, k, 1, 0,
			       true);
			put_dense(&c, dt, m, n, 1, acc ? 1 : 2);
			c0 = calloc((size_t)m * n, sizeof(double));
			for (i = 0; acc && i < m; i++)
				for (j = 0; j < n; j++)
					c0[i * n + j] = c_value(BAR(c.addr), &c,
								i, j);
			d = d_gemm(&a, &b, &c, acc ? MXHW_DESC_ACCUMULATE : 0);
			snapshot();
			ref_run(&d);
			seq = submit(&R[s % RINGS], &d, 1);
			CHECK(!wait_job(&R[s % RINGS], seq, &cpl, 10000),
			      "native gemm status %d", (int)le32toh(cpl.status));
			/* everything but C bit-identical */
			compare_heap("native gemm", c.addr, c.addr + m * c.stride);
			for (i = 0; i < m; i++) {
				for (j = 0; j < n; j++) {
					double sum = fabs(c0[i * n + j]), v, r;
					double gamma = (k + 1) * ldexp(1, -24);
					double bound;

					for (kk = 0; kk < k; kk++)
						sum += fabs(mx_value(&a, i, kk) *
							    mx_value(&b, j, kk));
					v = c_value(BAR(c.addr), &c, i, j);
					r = c_value(snap + (c.addr - heap_off),
						    &c, i, j);
					bound = gamma * sum +
						(dt ? ldexp(1, -8) * (fabs(v) + fabs(r)) :
						 ldexp(1, -24) * fabs(r)) +
						ldexp(1, -120);
					if (fabs(v - r) > bound) {
						test_fail(__FILE__, __LINE__,
							  "native %ux%ux%u C[%u][%u] = %g, exact %g, bound %g",
							  m, n, k, i, j, v, r,
							  bound);
						i = m;
						break;
					}
					if (bound > 0 && fabs(v - r) / bound > worst)
						worst = fabs(v - r) / bound;
				}
			}
			free(c0);
		}
	}
	printf("# native GEMM: worst error %.3f of the bound\n", worst);
	tap("GEMM without EXACT within the native bound, with and without ACCUMULATE");
}

static void t_accumulate(void)
{
	unsigned int dt, i;

	for (dt = 0; dt < 2; dt++) {
		struct pmx a, b;
		struct pdense c;
		struct mxhw_desc d[3];

		heap_used = 0;
		put_mx(&a, MXA_ELEM_E5M2, MXA_LAYOUT_SWIZZLED, 33, 128, 0, 0,
		       true);
		put_mx(&b, MXA_ELEM_E3M2, MXA_LAYOUT_PLAIN, 17, 128, 2, 1,
		       true);
		put_dense(&c, dt, 33, 17, 2, 1);
		/* three accumulating GEMMs into one C, in one job */
		for (i = 0; i < 3; i++)
			d[i] = d_gemm(&a, &b, &c,
				      MXHW_DESC_ACCUMULATE | MXHW_DESC_EXACT);
		exact_job(&R[dt + 1], d, 3, "accumulate");
	}
	tap("ACCUMULATE, f32 and bf16 C, three ops adding into one C");
}

static void t_multi_op(void)
{
	struct pmx a, b;
	struct pdense x, c, c2;
	struct mxhw_desc d[3];

	heap_used = 0;
	put_dense(&x, MXA_DTYPE_BF16, 40, 192, 0, 1);
	put_mx(&a, MXA_ELEM_E2M1, MXA_LAYOUT_SWIZZLED, 40, 192, 0, 0, false);
	put_mx(&b, MXA_ELEM_E4M3, MXA_LAYOUT_PLAIN, 24, 192, 0, 0, true);
	put_dense(&c, MXA_DTYPE_F32, 40, 24, 0, 2);
	put_dense(&c2, MXA_DTYPE_BF16, 40, 24, 3, 2);
	/* quantize X into A, then two GEMMs that read the new A */
	d[0] = d_quant(&a, &x, MXA_SCALE_RCEIL, 0);
	d[1] = d_gemm(&a, &b, &c, MXHW_DESC_EXACT);
	d[2] = d_gemm(&a, &b, &c2, MXHW_DESC_EXACT);
	exact_job(&R[3], d, 3, "multi-op job");
	tap("a job of three ops runs them in order (QUANTIZE, then GEMMs reading its output)");
}

static void t_chunked(void)
{
	struct pmx a, b, q;
	struct pdense c, x;
	struct mxhw_desc d;

	/* Several chunks per op (about 3 ms each), swizzled across tiles. */
	heap_used = 0;
	put_mx(&a, MXA_ELEM_E3M2, MXA_LAYOUT_SWIZZLED, 300, 512, 0, 0, true);
	put_mx(&b, MXA_ELEM_E2M3, MXA_LAYOUT_SWIZZLED, 200, 512, 0, 0, true);
	put_dense(&c, MXA_DTYPE_BF16, 300, 200, 5, 2);
	d = d_gemm(&a, &b, &c, MXHW_DESC_EXACT);
	exact_job(&R[1], &d, 1, "chunked exact gemm");

	heap_used = 0;
	put_dense(&x, MXA_DTYPE_F32, 1000, 4096, 0, 1);
	put_mx(&q, MXA_ELEM_E4M3, MXA_LAYOUT_SWIZZLED, 1000, 4096, 0, 0, false);
	d = d_quant(&q, &x, MXA_SCALE_EVEN, 0);
	exact_job(&R[2], &d, 1, "chunked quantize");
	tap("ops split into chunks stay exact (GEMM 300x200x512, QUANTIZE 1000x4096, swizzled)");
}

static void t_full_ring(void)
{
	struct tring *r = &R[0];
	struct mxhw_desc d[DEPTH];
	uint64_t seq0 = seq_next, irqs = 0;
	struct mxhw_cpl c;
	unsigned int i, got = 0, wakeups = 0;
	uint64_t until;

	heap_used = 0;
	for (i = 0; i < DEPTH; i++)
		d[i] = small_gemm(NULL);
	snapshot();
	for (i = 0; i < DEPTH; i++) {
		ref_run(&d[i]);
		put_job(r, &d[i], 1);
	}
	fq_irq_take(&Q, 1);
	kick(r);	/* one doorbell for all of them */
	until = fq_now_ms() + 10000;
	while (got < DEPTH && fq_now_ms() < until) {
		uint64_t n = fq_irq_wait(&Q, MXHW_IRQ_RING(0), 20);

		if (!n)
			continue;
		irqs += n;
		wakeups++;
		/* Interrupts coalesce: scan everything that is there. */
		while (got < DEPTH && ld32(&r->regs->cq_tail) != r->cq_head) {
			memcpy(&c, &r->cq[r->cq_head % DEPTH], sizeof(c));
			r->cq_head++;
			CHECK(cpl_valid(&c) && le64toh(c.seq) == seq0 + got &&
			      !c.status, "job %u: seq 0x%llx status %d", got,
			      (unsigned long long)le64toh(c.seq),
			      (int)le32toh(c.status));
			got++;
		}
		st32(&r->regs->cq_head, r->cq_head);
	}
	CHECK(got == DEPTH, "%u of %u completions", got, DEPTH);
	CHECK(irqs >= 1 && irqs <= DEPTH, "%llu interrupts",
	      (unsigned long long)irqs);
	compare_heap("full ring", 0, 0);
	printf("# %u jobs: %llu interrupts taken in %u wakeups\n", DEPTH,
	       (unsigned long long)irqs, wakeups);
	tap("a full ring (depth jobs, one doorbell), completions scanned per interrupt");

	/* One job of depth ops. */
	heap_used = 0;
	for (i = 0; i < DEPTH; i++)
		d[i] = small_gemm(NULL);
	exact_job(r, d, DEPTH, "a job of depth ops");
	tap("one job of depth descriptors");
}

static void t_cq_full(void)
{
	struct tring *r = &R[1];
	struct mxhw_desc d;
	struct mxhw_cpl c;
	unsigned int i;
	uint64_t seq = 0;

	uint32_t base = r->cq_head;

	heap_used = 0;
	d = small_gemm(NULL);
	/* depth completions that we do not consume */
	for (i = 0; i < DEPTH; i++)
		put_job(r, &d, 1);
	kick(r);
	for (i = 0; i < 500 && ld32(&r->regs->cq_tail) != base + DEPTH; i++)
		usleep(2000);
	CHECK(ld32(&r->regs->cq_tail) == base + DEPTH, "cq_tail %u, want %u",
	      ld32(&r->regs->cq_tail), base + DEPTH);
	seq = submit(r, &d, 1);
	usleep(100000);
	CHECK(ld32(&r->regs->cq_tail) == base + DEPTH,
	      "a completion overwrote one not consumed (cq_tail %u)",
	      ld32(&r->regs->cq_tail));
	for (i = 0; i < DEPTH; i++)
		CHECK(cpl_get(r, &c, 100) && cpl_valid(&c) && !c.status,
		      "record %u", i);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
	CHECK(!wait_job(r, seq, NULL, 2000), "the held job");
	tap("a full completion queue holds the device until the driver consumes");
}

static void t_irq_off(void)
{
	struct tring *r = &R[2];
	struct mxhw_desc d;
	unsigned int i;
	uint64_t seq;

	heap_used = 0;
	d = small_gemm(NULL);
	st32(&r->regs->irq_off, 1);
	fq_irq_take(&Q, MXHW_IRQ_RING(2));
	seq = submit(r, &d, 1);
	for (i = 0; i < 1000 && ld32(&r->regs->cq_tail) == r->cq_head; i++)
		usleep(1000);
	usleep(30000);
	CHECK(!fq_irq_take(&Q, MXHW_IRQ_RING(2)), "interrupt with irq_off");
	CHECK(!wait_job(r, seq, NULL, 100), "polled job");
	st32(&r->regs->irq_off, 0);
	seq = submit(r, &d, 1);
	CHECK(fq_irq_wait(&Q, MXHW_IRQ_RING(2), 2000) >= 1,
	      "no interrupt with irq_off clear");
	CHECK(!wait_job(r, seq, NULL, 100), "job after irq_off");
	tap("irq_off: the record is written, no interrupt");
}

/* --- validation ----------------------------------------------------------- */

/* A job of one desc expected to fail with err, touching nothing. */
static void bad_job(struct mxhw_desc *d, int err, const char *what)
{
	struct mxhw_cpl c;
	int st;
	uint64_t seq;

	snapshot();
	seq = submit(&R[0], d, 1);
	st = wait_job(&R[0], seq, &c, 5000);
	CHECK(st == err, "%s: status %d, want %d", what, st, err);
	CHECK(!c.ops_done, "%s: ops_done %u", what, le32toh(c.ops_done));
	compare_heap(what, 0, 0);
}

static void t_validation(void)
{
	struct pmx a, b, q;
	struct pdense c, x;
	struct mxhw_desc g, qd, d;
	uint64_t heap_end;

	heap_used = 0;
	put_mx(&a, MXA_ELEM_E4M3, MXA_LAYOUT_PLAIN, 9, 64, 0, 0, true);
	put_mx(&b, MXA_ELEM_E2M1, MXA_LAYOUT_SWIZZLED, 5, 64, 0, 0, true);
	put_dense(&c, MXA_DTYPE_F32, 9, 5, 0, 2);
	put_dense(&x, MXA_DTYPE_F32, 9, 64, 0, 1);
	put_mx(&q, MXA_ELEM_E2M3, MXA_LAYOUT_PLAIN, 9, 64, 0, 0, false);
	g = d_gemm(&a, &b, &c, MXHW_DESC_EXACT);
	qd = d_quant(&q, &x, 0, 0);
	heap_end = heap_off + heap_size;

#define BAD(field, val, err) \
	do { d = g; field = (val); bad_job(&d, err, #field " = " #val); } while (0)
#define BADQ(field, val, err) \
	do { d = qd; field = (val); bad_job(&d, err, "quantize " #field " = " #val); } while (0)
	BAD(d.reserved[0], 1, -EINVAL);
	BAD(d.reserved[13], htole64(1ULL << 63), -EINVAL);
	BAD(d.c.reserved, 1, -EINVAL);
	BAD(d.kind, 0, -EINVAL);
	BAD(d.kind, htole32(3), -EINVAL);
	BAD(d.flags, htole32(1u << 2), -EINVAL);
	BAD(d.m, 0, -EINVAL);
	BAD(d.m, htole32(MAX_DIM + 1), -EINVAL);
	BAD(d.n, 0, -EINVAL);
	BAD(d.n, htole32(MAX_DIM + 1), -EINVAL);
	BAD(d.k, htole32(48), -EINVAL);
	BAD(d.k, 0, -EINVAL);
	BAD(d.scale_mode, htole32(1), -EINVAL);
	BAD(d.a.elem, 0, -EINVAL);
	BAD(d.b.elem, htole32(6), -EINVAL);
	BAD(d.a.scale_layout, htole32(2), -EINVAL);
	BAD(d.b.scale_stride, htole64(2), -EINVAL);
	BAD(d.a.data_stride, htole64(63), -EINVAL);
	BAD(d.a.scale_stride, htole64(1), -EINVAL);
	BAD(d.c.dtype, htole32(2), -EINVAL);
	BAD(d.c.addr, htole64(c.addr + 2), -EINVAL);
	BAD(d.c.stride, htole64(16), -EINVAL);
	BAD(d.c.stride, htole64(22), -EINVAL);
	/* outputs overlapping inputs */
	BAD(d.c.addr, htole64(a.data + 4), -EINVAL);
	BAD(d.c.addr, htole64(b.scale), -EINVAL);
	BADQ(d.flags, htole32(MXHW_DESC_ACCUMULATE), -EINVAL);
	BADQ(d.n, htole32(1), -EINVAL);
	BADQ(d.b.elem, htole32(1), -EINVAL);
	BADQ(d.b.data_addr, htole64(a.data), -EINVAL);
	BADQ(d.scale_mode, htole32(4), -EINVAL);
	BADQ(d.a.scale_addr, htole64(x.addr + 64), -EINVAL);
	BADQ(d.c.dtype, htole32(7), -EINVAL);
	tap("-EINVAL: reserved fields, kind, flags, shape, element, layout, strides, dtype, alignment, overlap, QUANTIZE's n/b/mode");

	/* operands outside the heap, extents that overflow */
	BAD(d.c.addr, htole64(heap_end - 16), -EFAULT);
	BAD(d.c.addr, htole64(heap_end), -EFAULT);
	BAD(d.a.data_addr, 0, -EFAULT);
	BAD(d.a.data_addr, htole64(heap_off - 64), -EFAULT);
	BAD(d.a.scale_addr, htole64(0x1000), -EFAULT);
	BAD(d.b.scale_addr, htole64(heap_end - 64), -EFAULT);
	BAD(d.a.data_stride, htole64(1ULL << 40), -EFAULT);
	BAD(d.a.data_stride, htole64(1ULL << 62), -EFAULT);
	BAD(d.a.scale_stride, htole64(UINT64_MAX / 4), -EFAULT);
	BAD(d.c.stride, htole64(1ULL << 61), -EFAULT);
	BAD(d.a.data_addr, htole64(UINT64_MAX - 63), -EFAULT);
	BAD(d.c.addr, htole64(UINT64_MAX - 3), -EFAULT);
	BADQ(d.c.stride, htole64(heap_size), -EFAULT);
	BADQ(d.a.data_addr, htole64(heap_end - 64), -EFAULT);
	tap("-EFAULT: operands past the heap end, before it, and overflowing strides and addresses");
#undef BAD
#undef BADQ

	{
		struct mxhw_desc j[2];
		struct mxhw_cpl cpl;
		uint64_t s0;
		int st;

		/* op_count 0 */
		snapshot();
		d = g;
		d.seq = htole64(s0 = seq_next++);
		d.op_count = 0;
		put_raw(&R[0], &d);
		kick(&R[0]);
		st = wait_job(&R[0], s0, NULL, 2000);
		CHECK(st == -EINVAL, "op_count 0: %d", st);

		/* op_count 2 with one descriptor, then a good job */
		d.seq = htole64(s0 = seq_next++);
		d.op_count = htole32(2);
		put_raw(&R[0], &d);
		j[0] = qd;
		j[0].seq = htole64(seq_next++);
		j[0].op_count = htole32(1);
		put_raw(&R[0], &j[0]);
		kick(&R[0]);
		st = wait_job(&R[0], s0, NULL, 2000);
		CHECK(st == -EINVAL, "op_count 2 with 1 descriptor: %d", st);
		st = wait_job(&R[0], s0 + 1, NULL, 2000);
		CHECK(st == 0, "the job after: %d", st);

		/* op_index 0, 0 */
		snapshot();
		j[0] = g;
		j[1] = qd;
		s0 = seq_next++;
		j[0].seq = j[1].seq = htole64(s0);
		j[0].op_count = j[1].op_count = htole32(2);
		put_raw(&R[0], &j[0]);
		put_raw(&R[0], &j[1]);
		kick(&R[0]);
		st = wait_job(&R[0], s0, &cpl, 2000);
		CHECK(st == -EINVAL && !cpl.ops_done, "op_index 0, 0: %d", st);

		/* seq differs within a job: two broken jobs */
		j[1].op_index = htole32(1);
		j[1].seq = htole64(s0 + 1);
		seq_next++;
		put_raw(&R[0], &j[0]);
		put_raw(&R[0], &j[1]);
		kick(&R[0]);
		st = wait_job(&R[0], s0, NULL, 2000);
		CHECK(st == -EINVAL, "seq mismatch, first: %d", st);
		st = wait_job(&R[0], s0 + 1, NULL, 2000);
		CHECK(st == -EINVAL, "seq mismatch, second: %d", st);

		/* op 1 invalid: op 0 must not run either */
		j[0] = g;
		j[1] = qd;
		j[1].reserved[5] = 1;
		s0 = submit(&R[0], j, 2);
		st = wait_job(&R[0], s0, &cpl, 2000);
		CHECK(st == -EINVAL && !cpl.ops_done, "op 1 invalid: %d, %u done",
		      st, le32toh(cpl.ops_done));
		compare_heap("broken jobs", 0, 0);

		/* the ring still works */
		d = g;
		exact_job(&R[0], &d, 1, "after the broken jobs");
	}
	tap("-EINVAL: op_count 0 or past the job, op_index, seq within a job; nothing of a broken job runs");
}

/* --- aborts, resets --------------------------------------------------------- */

static void t_abort(void)
{
	struct tring *r = &R[1];
	struct mxhw_desc d[2], s;
	struct mxhw_cpl c;
	uint64_t seq, seq2, t;
	int st;

	heap_used = 0;
	d[0] = long_gemm();
	seq = submit(r, d, 1);
	usleep(100000);
	t = fq_now_ms();
	st32(&r->regs->abort_seq, (uint32_t)seq);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
	st = wait_job(r, seq, &c, 3000);
	t = fq_now_ms() - t;
	CHECK(st == -ECANCELED && !c.ops_done, "abort: status %d, %u done", st,
	      le32toh(c.ops_done));
	CHECK(t < 250, "abort took %llu ms", (unsigned long long)t);
	printf("# abort of a running 512x512x4096 exact GEMM: %llu ms\n",
	       (unsigned long long)t);
	tap("abort of a long GEMM: -ECANCELED within a bounded time");

	/* a waiting job: the first (~0.2 s) completes, the second is canceled */
	heap_used = 0;
	s = big_gemm(256, 256, 2048);
	seq = submit(r, &s, 1);
	d[0] = small_gemm(NULL);
	seq2 = submit(r, d, 1);
	st32(&r->regs->abort_seq, (uint32_t)seq2);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
	CHECK(wait_job(r, seq, NULL, 3000) == 0, "the job before");
	st = wait_job(r, seq2, &c, 3000);
	CHECK(st == -ECANCELED && !c.ops_done, "waiting job: %d", st);

	/* aborted after op 0 */
	heap_used = 0;
	d[0] = small_gemm(NULL);
	d[1] = long_gemm();
	seq = submit(r, d, 2);
	usleep(100000);
	st32(&r->regs->abort_seq, (uint32_t)seq);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
	st = wait_job(r, seq, &c, 3000);
	CHECK(st == -ECANCELED && le32toh(c.ops_done) == 1,
	      "abort in op 1: %d, %u done", st, le32toh(c.ops_done));
	st32(&r->regs->abort_seq, 0);
	tap("abort of a waiting job (0 ops done) and of a job in its second op (1 done)");
}

static void t_reset(void)
{
	struct tring *r = &R[1], *o = &R[2];
	struct mxhw_desc d, s;
	uint64_t oseq;

	heap_used = 0;
	d = long_gemm();
	submit(r, &d, 1);
	s = small_gemm(NULL);
	submit(r, &s, 1);	/* waiting behind it */
	usleep(50000);
	oseq = submit(o, &s, 1);
	CHECK(ring_reset(r, 2000), "reset not acknowledged");
	CHECK(!ld32(&r->regs->sq_head) && !ld32(&r->regs->cq_tail),
	      "indices after reset: sq_head %u cq_tail %u",
	      ld32(&r->regs->sq_head), ld32(&r->regs->cq_tail));
	CHECK(!wait_job(o, oseq, NULL, 3000), "the other ring's job");
	expect_quiet(r, 100, "reset");
	s = small_gemm(NULL);
	exact_job(r, &s, 1, "after a ring reset");
	tap("ring reset: jobs abandoned without records, indices 0, reset_ack, vector 0, other rings unaffected");
}

/* --- faults ------------------------------------------------------------------ */

static void t_fault_hang(void)
{
	struct tring *r = &R[1];
	struct mxhw_desc d;
	uint32_t before = ld32(&Q.test->jobs_faulted), base;
	uint64_t seq;
	int ms;

	heap_used = 0;
	ms = tp_cmd(MXHW_FAULT_HANG, 1, 0, 0);
	CHECK(ms >= 0 && ms < 100, "test page acknowledged after %d ms", ms);
	d = small_gemm(NULL);
	seq = submit(r, &d, 1);
	expect_quiet(r, 200, "hang");
	st32(&r->regs->abort_seq, (uint32_t)seq);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
	expect_quiet(r, 100, "hang ignores aborts");
	CHECK(ring_reset(r, 2000), "hang: reset not acknowledged");
	st32(&r->regs->abort_seq, 0);
	d = small_gemm(NULL);
	exact_job(r, &d, 1, "after hang + reset");
	CHECK(ld32(&Q.test->jobs_faulted) == before + 1, "jobs_faulted %u, was %u",
	      ld32(&Q.test->jobs_faulted), before);
	tap("test page: hang (aborts ignored), healed by a ring reset");

	r = &R[3];
	tp_cmd(MXHW_FAULT_HANG_HARD, 3, 0, 0);
	heap_used = 0;
	d = small_gemm(NULL);
	snapshot();
	ref_run(&d);
	seq = submit(r, &d, 1);
	base = r->cq_head;
	expect_quiet(r, 150, "hang-hard");
	CHECK(!ring_reset(r, 300), "hang-hard: reset acknowledged");
	/* Our reset zeroed our indices; the device kept its own. */
	r->cq_head = base;
	st32(&r->regs->cq_head, base);
	tp_cmd(MXHW_FAULT_CLEAR, 0, 0, 0);
	CHECK(!wait_job(r, seq, NULL, 2000), "hang-hard: job after clear");
	compare_heap("hang-hard then clear", 0, 0);
	CHECK(ring_reset(r, 2000), "reset after clear");
	d = small_gemm(NULL);
	exact_job(r, &d, 1, "after hang-hard");
	tap("test page: hang-hard ignores resets; clear lets the held job finish");
}

static void t_fault_error(void)
{
	struct tring *r = &R[2];
	struct mxhw_desc d[3];
	uint32_t before = ld32(&Q.test->jobs_faulted);
	uint64_t seq[3];
	unsigned int i;

	heap_used = 0;
	tp_cmd(MXHW_FAULT_ERROR, 2, ENOMEM, 2);
	for (i = 0; i < 3; i++)
		d[i] = small_gemm(NULL);
	snapshot();
	ref_run(&d[2]);
	for (i = 0; i < 3; i++)
		seq[i] = submit(r, &d[i], 1);
	CHECK(wait_job(r, seq[0], NULL, 2000) == -ENOMEM, "error 1");
	CHECK(wait_job(r, seq[1], NULL, 2000) == -ENOMEM, "error 2");
	CHECK(wait_job(r, seq[2], NULL, 2000) == 0, "after the count");
	compare_heap("error fault", 0, 0);
	CHECK(ld32(&Q.test->jobs_faulted) == before + 2, "jobs_faulted");

	tp_cmd(MXHW_FAULT_ERROR, 2, 0, 1);
	seq[0] = submit(r, &d[0], 1);
	CHECK(wait_job(r, seq[0], NULL, 2000) == -EIO, "error default EIO");
	tap("test page: error ARG COUNT (jobs fail unexecuted; ARG 0 is EIO)");
}

static void t_fault_slow(void)
{
	struct tring *r = &R[3];
	struct mxhw_desc d;
	struct mxhw_cpl c;
	uint64_t seq, t;

	heap_used = 0;
	tp_cmd(MXHW_FAULT_SLOW, 3, 150, 0);
	d = small_gemm(NULL);
	t = fq_now_ms();
	seq = submit(r, &d, 1);
	CHECK(!wait_job(r, seq, &c, 3000), "slow job");
	t = fq_now_ms() - t;
	CHECK(t >= 150 && le64toh(c.device_ns) >= 150000000ULL,
	      "slow: %llu ms, device_ns %llu", (unsigned long long)t,
	      (unsigned long long)le64toh(c.device_ns));
	seq = submit(r, &d, 1);
	usleep(20000);
	t = fq_now_ms();
	st32(&r->regs->abort_seq, (uint32_t)seq);
	fq_doorbell(&Q, MXHW_DB_RING(r->idx));
	CHECK(wait_job(r, seq, NULL, 3000) == -ECANCELED, "abort while slow");
	CHECK(fq_now_ms() - t < 100, "abort while slow took %llu ms",
	      (unsigned long long)(fq_now_ms() - t));
	st32(&r->regs->abort_seq, 0);
	tp_cmd(MXHW_FAULT_CLEAR, 0, 0, 0);
	tap("test page: slow ARG ms (device_ns includes it; aborts still work)");
}

static void t_fault_corrupt_drop(void)
{
	struct tring *r = &R[0];
	struct mxhw_desc d;
	struct mxhw_cpl c;
	uint64_t seq;
	unsigned int i;

	heap_used = 0;
	d = small_gemm(NULL);
	tp_cmd(MXHW_FAULT_CORRUPT, 0, 0, 1);
	fq_irq_take(&Q, MXHW_IRQ_RING(0));
	seq = submit(r, &d, 1);
	CHECK(fq_irq_wait(&Q, MXHW_IRQ_RING(0), 2000) >= 1,
	      "corrupt: no interrupt");
	CHECK(cpl_get(r, &c, 1000), "corrupt: no record");
	CHECK(!cpl_valid(&c) && le64toh(c.seq) != seq,
	      "corrupt: the record passes its check (seq 0x%llx)",
	      (unsigned long long)le64toh(c.seq));
	seq = submit(r, &d, 1);
	CHECK(!wait_job(r, seq, NULL, 2000), "after corrupt");
	tap("test page: corrupt COUNT (bad check and seq, cq_tail and interrupt as usual)");

	r = &R[2];
	tp_cmd(MXHW_FAULT_DROP_IRQ, 2, 0, 1);
	fq_irq_take(&Q, MXHW_IRQ_RING(2));
	seq = submit(r, &d, 1);
	for (i = 0; i < 1000 && ld32(&r->regs->cq_tail) == r->cq_head; i++)
		usleep(1000);
	usleep(50000);
	CHECK(!fq_irq_take(&Q, MXHW_IRQ_RING(2)), "drop-irq: interrupt raised");
	CHECK(!wait_job(r, seq, NULL, 100), "drop-irq: the record");
	seq = submit(r, &d, 1);
	CHECK(fq_irq_wait(&Q, MXHW_IRQ_RING(2), 2000) >= 1,
	      "drop-irq: no interrupt after the count");
	CHECK(!wait_job(r, seq, NULL, 100), "after drop-irq");
	tap("test page: drop-irq COUNT (record written, no interrupt)");
}

static void t_control(void)
{
	char reply[600];
	struct mxhw_desc d;
	uint64_t seq;

	heap_used = 0;
	d = small_gemm(NULL);
	CHECK(!fq_control(&Q, "status", reply, sizeof(reply)) &&
	      !strncmp(reply, "ok status ready", 15), "status: '%s'", reply);
	CHECK(!fq_control(&Q, "fault error 1 22 1", reply, sizeof(reply)) &&
	      !strcmp(reply, "ok fault error ring 1 arg 22 count 1"),
	      "fault: '%s'", reply);
	seq = submit(&R[1], &d, 1);
	CHECK(wait_job(&R[1], seq, NULL, 2000) == -EINVAL, "control error 22");
	seq = submit(&R[1], &d, 1);
	CHECK(!wait_job(&R[1], seq, NULL, 2000), "after control error");
	CHECK(!fq_control(&Q, "fault slow 0 50", reply, sizeof(reply)) &&
	      !strncmp(reply, "ok", 2), "slow: '%s'", reply);
	CHECK(!fq_control(&Q, "status", reply, sizeof(reply)) &&
	      strstr(reply, "0:") && strstr(reply, ",slow"), "status: '%s'",
	      reply);
	CHECK(!fq_control(&Q, "clear", reply, sizeof(reply)) &&
	      !strcmp(reply, "ok clear"), "clear: '%s'", reply);
	CHECK(!fq_control(&Q, "status", reply, sizeof(reply)) &&
	      !strstr(reply, ",slow"), "status after clear: '%s'", reply);
	CHECK(!fq_control(&Q, "fault hang 9", reply, sizeof(reply)) &&
	      !strncmp(reply, "error: ring 9", 13), "bad ring: '%s'", reply);
	CHECK(!fq_control(&Q, "fault melt 0", reply, sizeof(reply)) &&
	      !strncmp(reply, "error: unknown fault kind", 25),
	      "bad kind: '%s'", reply);
	CHECK(!fq_control(&Q, "fault error x", reply, sizeof(reply)) &&
	      !strncmp(reply, "error:", 6), "bad number: '%s'", reply);
	CHECK(!fq_control(&Q, "frobnicate", reply, sizeof(reply)) &&
	      !strncmp(reply, "error: unknown command", 22),
	      "bad command: '%s'", reply);
	tap("control socket: fault, status, clear; errors for bad lines");
}

static void t_goodbye(void)
{
	struct mxhw_desc d;
	uint32_t gen;

	heap_used = 0;
	d = small_gemm(NULL);
	CHECK(command(MXHW_CMD_GOODBYE, &gen, false, 2000), "goodbye");
	CHECK(ld32(&Q.ctrl->dev_status) == MXHW_STATUS_OFF, "status %u",
	      ld32(&Q.ctrl->dev_status));
	usleep(50000);
	CHECK(!fq_irq_take(&Q, MXHW_IRQ_CONTROL), "goodbye raised vector 0");
	submit(&R[0], &d, 1);
	expect_quiet(&R[0], 150, "after goodbye");
	CHECK(hello(), "hello after goodbye");
	d = small_gemm(NULL);
	exact_job(&R[0], &d, 1, "after goodbye and hello");
	tap("goodbye: status OFF, no interrupt, rings stopped; hello brings it back");
}

static void t_hello_reset(void)
{
	struct mxhw_desc d, s;
	unsigned int i;

	heap_used = 0;
	d = long_gemm();
	submit(&R[1], &d, 1);
	tp_cmd(MXHW_FAULT_ERROR, 2, 0, 0);
	tp_cmd(MXHW_FAULT_HANG_HARD, 3, 0, 0);
	s = small_gemm(NULL);
	submit(&R[3], &s, 1);
	usleep(50000);
	CHECK(hello(), "second hello");
	for (i = 0; i < RINGS; i++)
		CHECK(!ld32(&R[i].regs->sq_head) && !ld32(&R[i].regs->cq_tail) &&
		      !ld32(&R[i].regs->sq_tail), "ring %u not empty", i);
	expect_quiet(&R[1], 100, "hello dropped the running job");
	for (i = 0; i < RINGS; i++) {
		s = small_gemm(NULL);
		exact_job(&R[i], &s, 1, "after hello");
	}
	tap("hello as a device reset: running jobs dropped, rings empty, faults (error, hang-hard) cleared");
}

static void t_lost(void)
{
	struct mxhw_desc d;
	uint32_t gen = ld32(&Q.ctrl->dev_gen);
	unsigned int i;

	heap_used = 0;
	d = small_gemm(NULL);
	for (i = 0; i < Q.n_vectors; i++)
		fq_irq_take(&Q, i);
	tp_cmd(MXHW_FAULT_LOST, 0, 0, 0);
	CHECK(fq_irq_wait(&Q, MXHW_IRQ_CONTROL, 1000) == 1,
	      "lost: vector 0 not raised once");
	CHECK(ld32(&Q.ctrl->dev_status) == MXHW_STATUS_LOST, "status %u",
	      ld32(&Q.ctrl->dev_status));
	submit(&R[1], &d, 1);
	expect_quiet(&R[1], 150, "lost");
	st32(&Q.ctrl->drv_gen, gen + 100);
	st32(&Q.ctrl->drv_cmd, MXHW_CMD_HELLO);
	fq_doorbell(&Q, MXHW_DB_CONTROL);
	usleep(150000);
	CHECK(ld32(&Q.ctrl->dev_gen) == gen, "lost: hello obeyed");
	for (i = 0; i < Q.n_vectors; i++)
		CHECK(!fq_irq_take(&Q, i), "lost: vector %u raised", i);
	tap("test page: lost (status LOST, vector 0 once, everything ignored)");
}

static void t_exit(void)
{
	char *log;
	int st = fq_finish(&Q, 5000);

	CHECK(st == 0, "exit status %d after the client left", st);
	log = fq_read_log(&Q);
	CHECK(log && strstr(log, "summary: the client disconnected; jobs "),
	      "no summary line in the log");
	CHECK(log && strstr(log, "fault: ring 0: error armed (--fault)"),
	      "--fault not logged");
	free(log);
	tap("exit 0 when qemu disconnects, with a summary line");
}

/* --- other instances ------------------------------------------------------ */

static void t_cli(void)
{
	static const struct {
		const char *args[10];
		int status;
		const char *says;
	} cases[] = {
		{ { "--size", "1M", NULL }, 2, "--socket" },
		{ { "--socket", "x", "--size", "3M", NULL }, 2, "--size 3M" },
		{ { "--socket", "x", "--size", "512K", NULL }, 2, "--size" },
		{ { "--socket", "x", "--size", "12Q", NULL }, 2, "--size" },
		{ { "--socket", "x", "--rings", "17", NULL }, 2, "--rings '17': must be 1..16" },
		{ { "--socket", "x", "--rings", "0", NULL }, 2, "--rings" },
		{ { "--socket", "x", "--depth", "48", NULL }, 2, "--depth 48" },
		{ { "--socket", "x", "--depth", "8192", NULL }, 2, "--depth" },
		{ { "--socket", "x", "--fault", "melt:0", NULL }, 2, "unknown fault kind" },
		{ { "--socket", "x", "--fault", "error", NULL }, 2, "no RING" },
		{ { "--socket", "x", "--fault", "error:9", NULL }, 2, "ring 9" },
		{ { "--socket", "x", "--guest-peer", "0", NULL }, 2, "must differ" },
		{ { "--socket", "x", "--device-peer", "70000", NULL }, 2, "--device-peer" },
		{ { "--socket", "x", "--size", "1M", "--rings", "16", "--depth", "4096", NULL }, 2, "too small" },
		{ { "--socket", "x", "--bogus", NULL }, 2, "--bogus" },
		{ { "--help", NULL }, 0, "vectors=" },
	};
	char out[4096];
	unsigned int i;

	for (i = 0; i < TEST_ARRAY_SIZE(cases); i++) {
		const char *second = cases[i].args[1];
		int st = fq_run_capture(cases[i].args, out, sizeof(out));

		if (!second)
			second = "";
		CHECK(st == cases[i].status && strstr(out, cases[i].says),
		      "case %u (%s %s): status %d, output '%s'", i,
		      cases[i].args[0], second, st, out);
	}
	tap("command line errors name the option and the limit");
}

static void t_sigterm(void)
{
	static const char *const args[] = { "--rings", "1", NULL };
	struct fq q;
	struct stat st;
	int ret;

	if (fq_start(&q, args)) {
		test_fail(__FILE__, __LINE__, "start");
		return;
	}
	ret = fq_signal(&q, SIGTERM, 3000);
	CHECK(ret == 0, "SIGTERM: exit status %d", ret);
	CHECK(stat(q.sock, &st) && stat(q.ctl, &st),
	      "sockets left behind after SIGTERM");
	fq_cleanup(&q);
	tap("SIGTERM: exit 0, sockets removed");
}

static void t_small_bar(void)
{
	static const char *const args[] = {
		"--rings", "1", "--depth", "2", "--size", "1M", "--guest-peer",
		"7", "--device-peer", "3", NULL,
	};
	struct fq q;
	int ret;

	if (fq_start(&q, args) || fq_connect(&q)) {
		test_fail(__FILE__, __LINE__, "start 1 MiB instance");
		fq_cleanup(&q);
		return;
	}
	CHECK(q.size == (1u << 20) && q.n_vectors == 2 && q.my_id == 7 &&
	      le32toh(q.hdr->device_peer) == 3 && !q.test &&
	      !q.hdr->features && le64toh(q.hdr->heap_offset) == 0x80000 &&
	      le64toh(q.hdr->heap_size) == 0x80000 &&
	      le64toh(q.hdr->ring_stride) == 4096,
	      "1 MiB BAR: size %zu vectors %u id %lld heap 0x%llx+0x%llx",
	      q.size, q.n_vectors, (long long)q.my_id,
	      (unsigned long long)le64toh(q.hdr->heap_offset),
	      (unsigned long long)le64toh(q.hdr->heap_size));
	ret = fq_finish(&q, 3000);
	CHECK(ret == 0, "exit %d", ret);
	fq_cleanup(&q);
	tap("a 1 MiB BAR with one ring of depth 2 and other peer ids");
}

int main(void)
{
	static const char *const args[] = {
		"--size", SIZE_ARG, "--rings", "4", "--depth", "64",
		"--test-page", "--fault", "error:0:5:1", NULL,
	};
	int ret;

	test_seed(0x6d786463);
	ret = mxa_device_open("cpu", &cpu);
	if (ret) {
		fprintf(stderr, "cpu device: %s\n", mxa_strerror(ret));
		return 1;
	}
	if (fq_start(&Q, args) || fq_connect(&Q)) {
		char *log = fq_read_log(&Q);

		fprintf(stderr, "device model did not start; log:\n%s\n",
			log ? log : "(none)");
		free(log);
		fq_cleanup(&Q);
		return 1;
	}
	rings_init();
	t_header();
	t_second_client();
	t_before_hello();
	t_hello();
	t_gemm_exact();
	t_quantize();
	t_gemm_native();
	t_accumulate();
	t_multi_op();
	t_chunked();
	t_full_ring();
	t_cq_full();
	t_irq_off();
	t_validation();
	t_abort();
	t_reset();
	t_fault_hang();
	t_fault_error();
	t_fault_slow();
	t_fault_corrupt_drop();
	t_control();
	t_goodbye();
	t_hello_reset();
	t_lost();
	t_exit();
	if (test_failures) {
		char *log = fq_read_log(&Q);

		fprintf(stderr, "--- device model log ---\n%s\n",
			log ? log : "(none)");
		free(log);
	}
	fq_cleanup(&Q);
	t_cli();
	t_sigterm();
	t_small_bar();
	printf("1..%u\n", tap_n);
	mxa_buffer_free(snap_buf);
	free(snap);
	mxa_device_close(cpu);
	return test_finish();
}
