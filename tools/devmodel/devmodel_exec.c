// SPDX-License-Identifier: MIT
/*
 * Descriptors: validation of a local copy (never of BAR2 itself, which the
 * guest may rewrite while we look), then execution with libmxaccel's cpu
 * device on host pointers into the mapped heap.
 *
 * Semantics are those of the driver's software engine
 * (driver/mxaccel_soft_engine.c, driver/mxaccel_validate.c):
 *   GEMM      C[m x n] (+)= A[m x k] * B[n x k]^T; A and B MX (K
 *             contiguous), C fp32 or bf16; MXHW_DESC_ACCUMULATE adds C.
 *   QUANTIZE  A[m x k] (MX) = quantize(C[m x k] dense) with scale_mode;
 *             n and b must be zero; swizzled scale padding is written 0.
 * Strides of 0 mean packed rows (data: one row of codes; scales: k / 32
 * bytes; dense: k or n elements); plain scales of row r start at
 * scale + r * scale_stride, swizzled ones follow the 128x4 tiling and must
 * have scale_stride 0.
 *
 * Errors: -EINVAL for a field the device does not accept (kind, flag,
 * element type, layout, dtype, mode, shape, stride below a row, dense
 * address or stride not a multiple of its element, non-zero reserved
 * fields, an output overlapping another operand), -EFAULT for an operand
 * whose bytes are not all inside the heap, including extents whose
 * arithmetic overflows.
 *
 * Execution is split into chunks (row bands of C, and column bands where
 * one band is too much work) sized from measured speed to take about
 * DM_CHUNK_NS each, so that an abort, a reset or a stop between chunks is
 * honoured within a few milliseconds even for the largest GEMM.  Each C
 * element is still computed in one piece, so an exact GEMM is bit
 * identical to the unsplit one.  Swizzled scales of a chunk are copied
 * into a plain scratch buffer first (a chunk of a swizzled matrix is not a
 * swizzled matrix unless it starts and ends on 128-row tiles).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "devmodel.h"
#include "mxcore_geom.h"

#define DM_CHUNK_NS	4000000.0
/* Bytes of plain scales per scratch region: A, B (GEMM) or the output. */
#define DM_SCRATCH	(1U << 20)

int dm_exec_init(struct dm *dm, struct dm_exec *x)
{
	struct mxa_device_info info;
	int ret;

	memset(x, 0, sizeof(*x));
	/* The cpu device by name: never accel (us, in a guest) nor CUDA. */
	ret = mxa_device_open("cpu", &x->dev);
	if (!ret)
		ret = mxa_device_info(x->dev, &info);
	if (!ret && strcmp(info.backend, "cpu"))
		ret = -ENODEV;
	/* One thread per ring: rings never queue on a shared pool. */
	if (!ret)
		ret = mxa_device_set_threads(x->dev, 1);
	x->heap_offset = dm->lay.heap_offset;
	x->heap_ptr = dm->shm + dm->lay.heap_offset;
	if (!ret)
		ret = mxa_buffer_wrap(x->dev, x->heap_ptr,
				      (size_t)dm->lay.heap_size, &x->heap);
	if (ret) {
		dm_log(dm, "error: libmxaccel cpu device: %s", mxa_strerror(ret));
		dm_exec_fini(x);
		return ret;
	}
	/* Deliberately pessimistic: the first chunks are short. */
	x->ns_per_dot[0] = 30.0;
	x->ns_per_dot[1] = 200.0;
	x->ns_per_qblock = 200.0;
	return 0;
}

void dm_exec_fini(struct dm_exec *x)
{
	mxa_buffer_free(x->scratch);
	mxa_buffer_free(x->heap);
	mxa_device_close(x->dev);
	memset(x, 0, sizeof(*x));
}

/* --- validation ----------------------------------------------------------- */

struct span {
	uint64_t lo, hi;
	bool used;
};

#define bad(err, ...) (snprintf(why, size, __VA_ARGS__), (err))

static bool elem_ok(uint32_t e)
{
	return e >= MXA_ELEM_E4M3 && e <= MXA_ELEM_E2M1;
}

static struct mxcore_geom dm_geom(const struct dm_mx *mx, uint32_t rows,
				  uint32_t cols)
{
	return (struct mxcore_geom){
		.rows = rows, .cols = cols, .data_stride = mx->data_stride,
		.scale_stride = mx->scale_stride, .elem = mx->elem,
		.scale_type = MXCORE_SCALE_E8M0, .layout = mx->layout,
	};
}

/*
 * The fields of an MX operand (the rules of Documentation/pci-device.rst
 * are the core's, mxcore_geom.h); strides resolved; spans come later.
 */
static int check_mx_fields(const struct mxhw_mx_operand *in, uint32_t cols,
			   const char *name, struct dm_mx *out, char *why,
			   size_t size)
{
	enum mxcore_geom_fault fault;
	struct mxcore_geom g;
	uint64_t value, limit;
	char text[128];

	out->data = le64toh(in->data_addr);
	out->data_stride = le64toh(in->data_stride);
	out->scale = le64toh(in->scale_addr);
	out->scale_stride = le64toh(in->scale_stride);
	out->elem = le32toh(in->elem);
	out->layout = le32toh(in->scale_layout);
	if (!elem_ok(out->elem))
		return bad(-EINVAL, "%s: element type %u", name, out->elem);
	g = dm_geom(out, 1, cols);
	fault = mxcore_geom_check(&g, &value, &limit);
	if (fault) {
		snprintf(text, sizeof(text), mxcore_geom_fault_text(fault),
			 (unsigned long long)value, (unsigned long long)limit);
		return bad(-EINVAL, "%s: %s", name, text);
	}
	out->data_stride = mxcore_geom_data_stride(&g);
	out->scale_stride = out->layout == MXCORE_LAYOUT_PLAIN ?
			    mxcore_geom_scale_stride(&g) : 0;
	return 0;
}

/* [addr, addr + (rows - 1) * stride + row_bytes) must be in the heap. */
static int check_span(const struct dm_layout *lay, const char *name,
		      uint64_t addr, uint64_t rows, uint64_t stride,
		      uint64_t row_bytes, struct span *sp, char *why,
		      size_t size)
{
	uint64_t end;

	if (__builtin_mul_overflow(rows - 1, stride, &end) ||
	    __builtin_add_overflow(end, row_bytes, &end) ||
	    __builtin_add_overflow(end, addr, &end))
		return bad(-EFAULT, "%s: extent overflows (address 0x%llx)",
			   name, (unsigned long long)addr);
	if (addr < lay->heap_offset ||
	    end > lay->heap_offset + lay->heap_size)
		return bad(-EFAULT,
			   "%s: [0x%llx, 0x%llx) outside the heap [0x%llx, 0x%llx)",
			   name, (unsigned long long)addr,
			   (unsigned long long)end,
			   (unsigned long long)lay->heap_offset,
			   (unsigned long long)(lay->heap_offset +
						lay->heap_size));
	sp->lo = addr;
	sp->hi = end;
	sp->used = true;
	return 0;
}

static int mx_spans(const struct dm_layout *lay, const char *name,
		    const struct dm_mx *mx, uint32_t rows, uint32_t cols,
		    struct span sp[2], char *why, size_t size)
{
	struct mxcore_geom g = dm_geom(mx, rows, cols);
	uint64_t span = 0;
	int ret;

	ret = check_span(lay, name, mx->data, rows, mx->data_stride,
			 mxcore_geom_row_bytes(&g), &sp[0], why, size);
	if (ret)
		return ret;
	if (mx->layout == MXCORE_LAYOUT_PLAIN)
		return check_span(lay, name, mx->scale, rows,
				  mx->scale_stride, mxcore_geom_blocks(&g),
				  &sp[1], why, size);
	if (!mxcore_geom_scale_span(&g, &span))
		return bad(-EINVAL, "%s: swizzled scales of %u x %u", name,
			   rows, cols);
	return check_span(lay, name, mx->scale, 1, 0, span, &sp[1], why,
			  size);
}

static bool overlap(const struct span *x, const struct span *y)
{
	return x->used && y->used && x->lo < y->hi && y->lo < x->hi;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/*
 * Check a descriptor copy (d is ours, not BAR2) and translate it into op.
 * Field errors come first, in struct order, then operand extents, then
 * outputs that overlap inputs.  op_index, op_count and seq are the ring's
 * business (devmodel_ring.c).
 */
int dm_op_check(const struct dm_layout *lay, const struct mxhw_desc *d,
		struct dm_op *op, char *why, size_t size)
{
	static const char *const names[5] = {
		"a data", "a scales", "b data", "b scales", "c",
	};
	struct span sp[5] = { 0 };
	unsigned int out, in, es;
	uint64_t row_bytes;
	int ret;

	memset(op, 0, sizeof(*op));
	op->kind = le32toh(d->kind);
	op->flags = le32toh(d->flags);
	op->m = le32toh(d->m);
	op->n = le32toh(d->n);
	op->k = le32toh(d->k);
	op->mode = le32toh(d->scale_mode);

	if (!all_zero(d->reserved, sizeof(d->reserved)) || d->c.reserved)
		return bad(-EINVAL, "reserved field not zero");
	if (op->kind != DRM_MXACCEL_OP_GEMM && op->kind != DRM_MXACCEL_OP_QUANTIZE)
		return bad(-EINVAL, "kind %u", op->kind);
	if (op->flags & ~(uint32_t)(MXHW_DESC_ACCUMULATE | MXHW_DESC_EXACT))
		return bad(-EINVAL, "unknown flags 0x%x", op->flags);
	if (op->m < 1 || op->m > DM_MAX_DIM || op->k < 1 ||
	    op->k > DM_MAX_DIM || op->k % MXA_BLOCK_SIZE)
		return bad(-EINVAL, "m %u / k %u (1..%u, k a multiple of 32)",
			   op->m, op->k, DM_MAX_DIM);

	if (op->kind == DRM_MXACCEL_OP_GEMM) {
		if (op->mode)
			return bad(-EINVAL, "scale_mode %u on a GEMM",
				   op->mode);
		if (op->n < 1 || op->n > DM_MAX_DIM)
			return bad(-EINVAL, "n %u (1..%u)", op->n, DM_MAX_DIM);
		ret = check_mx_fields(&d->a, op->k, "a", &op->a, why, size);
		if (!ret)
			ret = check_mx_fields(&d->b, op->k, "b", &op->b, why,
					      size);
		if (ret)
			return ret;
	} else {
		/* EXACT is harmless: quantization is always exact. */
		if (op->flags & MXHW_DESC_ACCUMULATE)
			return bad(-EINVAL, "ACCUMULATE on a QUANTIZE");
		if (op->n || !all_zero(&d->b, sizeof(d->b)))
			return bad(-EINVAL, "n or b set on a QUANTIZE");
		if (op->mode > DRM_MXACCEL_SCALE_EVEN)
			return bad(-EINVAL, "scale_mode %u", op->mode);
		ret = check_mx_fields(&d->a, op->k, "a", &op->a, why, size);
		if (ret)
			return ret;
	}

	op->c = le64toh(d->c.addr);
	op->c_stride = le64toh(d->c.stride);
	op->c_dtype = le32toh(d->c.dtype);
	if (op->c_dtype == MXA_DTYPE_F32)
		es = 4;
	else if (op->c_dtype == MXA_DTYPE_BF16)
		es = 2;
	else
		return bad(-EINVAL, "c: dtype %u", op->c_dtype);
	row_bytes = (uint64_t)(op->kind == DRM_MXACCEL_OP_GEMM ? op->n : op->k) *
		    es;
	if (!op->c_stride)
		op->c_stride = row_bytes;
	if (op->c_stride < row_bytes || op->c_stride % es || op->c % es)
		return bad(-EINVAL,
			   "c: address 0x%llx / stride %llu (row %llu bytes, element %u)",
			   (unsigned long long)op->c,
			   (unsigned long long)op->c_stride,
			   (unsigned long long)row_bytes, es);

	ret = mx_spans(lay, "a", &op->a, op->m, op->k, &sp[0], why, size);
	if (!ret && op->kind == DRM_MXACCEL_OP_GEMM)
		ret = mx_spans(lay, "b", &op->b, op->n, op->k, &sp[2], why,
			       size);
	if (!ret)
		ret = check_span(lay, "c", op->c, op->m, op->c_stride,
				 row_bytes, &sp[4], why, size);
	if (ret)
		return ret;

	/* Outputs: GEMM's C; QUANTIZE's A data and scales. */
	for (out = 0; out < 5; out++) {
		bool is_out = op->kind == DRM_MXACCEL_OP_GEMM ? out == 4 : out < 2;

		if (!is_out)
			continue;
		for (in = 0; in < 5; in++)
			if (in != out && overlap(&sp[out], &sp[in]))
				return bad(-EINVAL, "%s overlaps %s",
					   names[out], names[in]);
	}
	return 0;
}

/* --- execution ------------------------------------------------------------ */

static int lib_err(int ret, const char *what, char *why, size_t size)
{
	snprintf(why, size, "libmxaccel %s: %s", what, mxa_strerror(ret));
	/* Validation should have caught these: the descriptor is at fault. */
	return ret == -EINVAL || ret == -EOVERFLOW ? -EINVAL : -EIO;
}

static int ensure_scratch(struct dm_exec *x)
{
	void *p;
	int ret;

	if (x->scratch)
		return 0;
	ret = mxa_buffer_alloc(x->dev, 2 * DM_SCRATCH, &x->scratch);
	if (!ret)
		ret = mxa_buffer_map(x->scratch, &p);
	if (ret) {
		mxa_buffer_free(x->scratch);
		x->scratch = NULL;
		return ret;
	}
	x->scratch_ptr = p;
	return 0;
}

/* Rows [r0, r0 + rows) of a swizzled operand's scales, plain, at dst. */
static void unswizzle(const struct dm_exec *x, const struct dm_mx *mx,
		      uint32_t total_rows, uint32_t blocks, uint32_t r0,
		      uint32_t rows, uint8_t *dst)
{
	const uint8_t *s = x->heap_ptr + (mx->scale - x->heap_offset);
	uint32_t r, b;

	for (r = 0; r < rows; r++)
		for (b = 0; b < blocks; b++)
			dst[(size_t)r * blocks + b] =
				s[mxa_swizzle_index(total_rows, blocks, r0 + r,
						    b)];
}

/*
 * Rows [r0, r0 + rows) of an MX operand as a matrix of their own; with
 * swizzled scales, their scales are copied (plain) to scratch + soff.
 */
static void sub_matrix(struct dm_exec *x, const struct dm_mx *mx,
		       uint32_t total_rows, uint32_t cols, uint32_t r0,
		       uint32_t rows, size_t soff, struct mxa_matrix *out)
{
	uint32_t blocks = cols / MXA_BLOCK_SIZE;

	*out = (struct mxa_matrix){
		.data = x->heap,
		.data_offset = (size_t)(mx->data - x->heap_offset +
					(uint64_t)r0 * mx->data_stride),
		.data_stride = (size_t)mx->data_stride,
		.elem = (enum mxa_elem)mx->elem,
		.scale_layout = MXA_LAYOUT_PLAIN,
		.rows = rows,
		.cols = cols,
	};
	if (mx->layout == MXA_LAYOUT_PLAIN) {
		out->scale = x->heap;
		out->scale_offset = (size_t)(mx->scale - x->heap_offset +
					     (uint64_t)r0 * mx->scale_stride);
		out->scale_stride = (size_t)mx->scale_stride;
		return;
	}
	unswizzle(x, mx, total_rows, blocks, r0, rows, x->scratch_ptr + soff);
	out->scale = x->scratch;
	out->scale_offset = soff;
	out->scale_stride = blocks;
}

static uint32_t clamp32(double v, uint32_t lo, uint32_t hi)
{
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return (uint32_t)v;
}

static void learn(double *est, uint64_t ns, double work)
{
	double v = (double)ns / work;

	*est = 0.5 * *est + 0.5 * v;
	if (*est < 0.01)
		*est = 0.01;
}

static int run_gemm(struct dm_exec *x, const struct dm_op *op, bool exact,
		    dm_stop_fn stop, void *ctx, char *why, size_t size)
{
	uint32_t blocks = op->k / MXA_BLOCK_SIZE;
	bool swz_a = op->a.layout == MXA_LAYOUT_SWIZZLED;
	bool swz_b = op->b.layout == MXA_LAYOUT_SWIZZLED;
	uint32_t max_tm = swz_a ? DM_SCRATCH / blocks : op->m;
	uint32_t max_tn = swz_b ? DM_SCRATCH / blocks : op->n;
	enum mxa_pref pref = exact ? MXA_PREF_EMULATED : MXA_PREF_AUTO;
	uint32_t es = op->c_dtype == MXA_DTYPE_BF16 ? 2 : 4;
	uint32_t flags = op->flags & MXHW_DESC_ACCUMULATE ?
			 MXA_GEMM_ACCUMULATE : 0;
	double *est = &x->ns_per_dot[exact];
	uint32_t i0, j0, tm, tn, b_j0 = UINT32_MAX, b_tn = 0;
	struct mxa_matrix a, b;
	int ret;

	if ((swz_a || swz_b) && ensure_scratch(x))
		return lib_err(-ENOMEM, "scratch", why, size);
	if (max_tm < 1)
		max_tm = 1;
	if (max_tn < 1)
		max_tn = 1;
	for (i0 = 0; i0 < op->m; i0 += tm) {
		/* C elements a chunk may have, from the measured speed */
		double area = DM_CHUNK_NS / *est / blocks;
		uint32_t rows = op->m - i0;

		/*
		 * Square-ish tiles: each call packs or decodes its rows of A
		 * and of B, so a tile of 1 x N would repack all of B for
		 * every row.
		 */
		if (area >= (double)rows * op->n) {
			tm = rows;
			tn = op->n;
		} else {
			tm = clamp32(sqrt(area), 1, rows);
			tn = clamp32(area / tm, 1, op->n);
			if (tn == op->n)
				tm = clamp32(area / op->n, 1, rows);
		}
		if (tm > max_tm)
			tm = max_tm;
		if (tn > max_tn)
			tn = max_tn;
		sub_matrix(x, &op->a, op->m, op->k, i0, tm, 0, &a);
		for (j0 = 0; j0 < op->n; j0 += tn) {
			uint32_t n = op->n - j0 < tn ? op->n - j0 : tn;
			struct mxa_dense c = {
				.buf = x->heap,
				.offset = (size_t)(op->c - x->heap_offset +
						   (uint64_t)i0 * op->c_stride +
						   (uint64_t)j0 * es),
				.stride = (size_t)op->c_stride,
				.dtype = (enum mxa_dtype)op->c_dtype,
				.rows = tm,
				.cols = n,
			};
			uint64_t t;

			ret = stop(ctx);
			if (ret)
				return ret;
			/* B's band is reused while it stays the same. */
			if (j0 != b_j0 || n != b_tn) {
				sub_matrix(x, &op->b, op->n, op->k, j0, n,
					   DM_SCRATCH, &b);
				b_j0 = j0;
				b_tn = n;
			}
			t = dm_now_ns();
			ret = mxa_gemm(x->dev, &a, &b, &c, flags, pref);
			if (ret)
				return lib_err(ret, "gemm", why, size);
			learn(est, dm_now_ns() - t, (double)tm * n * blocks);
		}
	}
	return 0;
}

static int run_quantize(struct dm_exec *x, const struct dm_op *op,
			bool exact, dm_stop_fn stop, void *ctx, char *why,
			size_t size)
{
	uint32_t blocks = op->k / MXA_BLOCK_SIZE;
	bool swz = op->a.layout == MXA_LAYOUT_SWIZZLED;
	enum mxa_pref pref = exact ? MXA_PREF_EMULATED : MXA_PREF_AUTO;
	uint32_t r0, tm, max_tm = swz ? DM_SCRATCH / blocks : op->m;
	uint8_t *sw = x->heap_ptr + (op->a.scale - x->heap_offset);
	int ret;

	if (swz) {
		size_t sbytes;

		if (ensure_scratch(x))
			return lib_err(-ENOMEM, "scratch", why, size);
		/* Padding entries are 0, like torchao's to_blocked(). */
		mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, op->m, op->k, &sbytes);
		memset(sw, 0, sbytes);
	}
	if (max_tm < 1)
		max_tm = 1;
	for (r0 = 0; r0 < op->m; r0 += tm) {
		struct mxa_matrix a = {
			.data = x->heap,
			.data_offset = (size_t)(op->a.data - x->heap_offset +
						(uint64_t)r0 *
						op->a.data_stride),
			.data_stride = (size_t)op->a.data_stride,
			.elem = (enum mxa_elem)op->a.elem,
			.scale_layout = MXA_LAYOUT_PLAIN,
			.cols = op->k,
		};
		struct mxa_dense c = {
			.buf = x->heap,
			.stride = (size_t)op->c_stride,
			.dtype = (enum mxa_dtype)op->c_dtype,
			.cols = op->k,
		};
		uint64_t t;
		uint32_t r, b;

		tm = clamp32(DM_CHUNK_NS / x->ns_per_qblock / blocks, 1,
			     op->m - r0);
		if (tm > max_tm)
			tm = max_tm;
		ret = stop(ctx);
		if (ret)
			return ret;
		a.rows = c.rows = tm;
		c.offset = (size_t)(op->c - x->heap_offset +
				    (uint64_t)r0 * op->c_stride);
		if (swz) {
			a.scale = x->scratch;
			a.scale_offset = 0;
			a.scale_stride = blocks;
		} else {
			a.scale = x->heap;
			a.scale_offset = (size_t)(op->a.scale - x->heap_offset +
						  (uint64_t)r0 *
						  op->a.scale_stride);
			a.scale_stride = (size_t)op->a.scale_stride;
		}
		t = dm_now_ns();
		ret = mxa_quantize(x->dev, &c, &a, (enum mxa_scale_mode)op->mode,
				   pref);
		if (ret)
			return lib_err(ret, "quantize", why, size);
		if (swz)
			for (r = 0; r < tm; r++)
				for (b = 0; b < blocks; b++)
					sw[mxa_swizzle_index(op->m, blocks,
							     r0 + r, b)] =
						x->scratch_ptr[(size_t)r *
							       blocks + b];
		learn(&x->ns_per_qblock, dm_now_ns() - t, (double)tm * blocks);
	}
	return 0;
}

/*
 * Run a checked op.  stop() is asked before every chunk; its non-zero
 * answer ends the op and is returned.  Otherwise 0 or a negative errno
 * with the reason in why.
 */
int dm_op_run(struct dm_exec *x, const struct dm_op *op, bool exact,
	      dm_stop_fn stop, void *ctx, char *why, size_t size)
{
	if (op->kind == DRM_MXACCEL_OP_GEMM)
		return run_gemm(x, op, exact, stop, ctx, why, size);
	return run_quantize(x, op, exact, stop, ctx, why, size);
}
