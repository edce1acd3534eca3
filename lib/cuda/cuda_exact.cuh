// SPDX-License-Identifier: MIT
/*
 * The exact GEMMs on the GPU (EMULATED; Documentation/cuda.rst): the
 * core's segment dots (lib/core/mxcore_dot.c compiled as __device__) into
 * its wide accumulator, one thread per output, one rounding.  Each is
 * bit-identical to the CPU's kernel of the same name, which uses the same
 * core functions:
 *
 *   cuda-exact                MX / NVFP4 / mixed A x B, fp32 tensor scales
 *                             (cpu-exact)
 *   cuda-weight-only-exact    dense fp32 / bf16 A x MX / NVFP4 B
 *                             (cpu-weight-only-exact)
 *   cuda-grouped-exact        grouped 2D_3D and 2D_2D, MX / NVFP4, plain
 *                             and per-group swizzled scales
 *                             (cpu-grouped-exact)
 *
 * Grouped offsets live in device memory: a one-thread kernel reads and
 * checks them on the GPU (the rules of lib/src/grouped.c), lays out each
 * group's start and swizzled-scale offsets in a workspace, and the GEMM
 * kernel finds its group there.  Where group geometry is concerned both
 * use lib/src/group_geom.h, the library's own statement of it.  Offsets
 * that break the rules leave C untouched; the fault is recorded in mapped
 * host memory and reported by the next wait on the device
 * (cuda_exact_fault_take()).
 *
 * Part of cuda_core.cu's translation unit, not one of its own: without
 * relocatable device code a kernel can call only the __device__ functions
 * of its own unit, and the core's functions compiled into two units would
 * define their host-side stubs twice.  cuda_core.cu includes the core's
 * files once, then this.
 */
#ifndef MXA_CUDA_EXACT_CUH
#define MXA_CUDA_EXACT_CUH

#include "group_geom.h"

/*
 * A kernel launch on the device's stream.  tests/cuda/cuda_exact_host.cpp
 * defines it to run the kernels on the host, where there is no GPU.
 */
#ifndef EXACT_LAUNCH
#define EXACT_LAUNCH(kernel, grid, threads, stream, p) \
	kernel<<<(grid), (threads), 0, (stream)>>>(p)
#endif

/* Offsets that cuda-grouped-exact's check on the GPU refused. */
enum cuda_exact_fault_code {
	CUDA_FAULT_NONE,
	CUDA_FAULT_BELOW,	/* an end below the previous one (or 0) */
	CUDA_FAULT_BEYOND,	/* an end beyond the total extent */
	CUDA_FAULT_BLOCK,	/* a K end not on a block boundary */
	CUDA_FAULT_LAST,	/* the last end is not the total extent */
	CUDA_FAULT_A,		/* a group's a runs past its buffers */
	CUDA_FAULT_B,		/* a group's b runs past its buffers */
};

struct cuda_exact_fault {
	uint32_t code;		/* enum cuda_exact_fault_code; 0 = none */
	uint32_t group;		/* the offending offsets[] index */
	int32_t value;		/* its value */
	uint32_t limit;		/* the extent or block it broke */
};

/*
 * An operand as the exact kernels see it: its description (offsets,
 * strides, shape; the buffer pointers in it are host memory and never
 * dereferenced here) and the device addresses of its buffers.
 */
struct exact_operand {
	struct mxa_matrix m;
	const uint8_t *data;		/* data buffer, offset 0 */
	const uint8_t *scale;		/* scale buffer, offset 0 */
	struct mxcore_scaling f;
};

static struct exact_operand operand(const struct mxa_matrix *m)
{
	struct exact_operand o;

	o.m = *m;
	o.data = cuda_ptr(m->data, 0);
	o.scale = cuda_ptr(m->scale, 0);
	o.f.elem = (uint32_t)m->elem;
	o.f.scale_type = (uint32_t)m->scale_type;
	o.f.tensor_scale = mxa__tensor_scale_bits(m);
	return o;
}

/*
 * Elements that share one scale on both sides (cpu-exact's segment): 16
 * when either side has UE4M3 scales, else 32.
 */
static uint32_t segment(const struct mxa_matrix *a, const struct mxa_matrix *b)
{
	return a->scale_type == MXA_SCALE_UE4M3 ||
	       b->scale_type == MXA_SCALE_UE4M3 ? MXCORE_NVFP4_BLOCK :
						  MXCORE_BLOCK;
}

/*
 * acc += row i of am times row j of bm over all of K, segment by segment;
 * am and bm are a's and b's own geometry, or a group's part of it (the
 * offsets in them count from the buffers' starts, a.data and b.data).
 */
static __device__ void exact_dot(struct mxcore_acc *acc, uint32_t seg,
				 const struct exact_operand &a,
				 const struct mxa_matrix *am, uint32_t i,
				 const struct exact_operand &b,
				 const struct mxa_matrix *bm, uint32_t j)
{
	const uint8_t *ar = a.data + am->data_offset +
			    (uint64_t)i * mxa__data_stride(am);
	const uint8_t *br = b.data + bm->data_offset +
			    (uint64_t)j * mxa__data_stride(bm);
	const uint8_t *as = a.scale + am->scale_offset;
	const uint8_t *bs = b.scale + bm->scale_offset;
	uint32_t ba = mxa__block(am), bb = mxa__block(bm), k;

	for (k = 0; k < am->cols; k += seg)
		mxcore_acc_seg_dot(acc, seg, &a.f,
				   ar + mxcore_row_bytes(am->elem, k),
				   as[mxa__scale_index(am, i, k / ba)],
				   &b.f, br + mxcore_row_bytes(bm->elem, k),
				   bs[mxa__scale_index(bm, j, k / bb)]);
}

/* C's element at out: C_in (when accumulating) enters acc first. */
static __device__ void exact_begin(struct mxcore_acc *acc, const uint8_t *out,
				   bool bf16, bool accumulate)
{
	mxcore_acc_init(acc);
	if (accumulate)
		mxcore_acc_add_float(acc, bf16 ? (uint32_t)*(const uint16_t *)out << 16 :
					       *(const uint32_t *)out, MXCORE_F32);
}

/* The exact sum rounded once to C's type, stored at out. */
static __device__ void exact_end(const struct mxcore_acc *acc, uint8_t *out,
				 bool bf16)
{
	uint32_t v = mxcore_acc_round(acc, bf16 ? MXCORE_BF16 : MXCORE_F32);

	if (bf16)
		*(uint16_t *)out = (uint16_t)v;
	else
		*(uint32_t *)out = v;
}

/* --- cuda-exact ------------------------------------------------------------ */

struct exact_params {
	struct exact_operand a, b;
	uint8_t *c;
	uint64_t c_stride;
	uint32_t seg;
	int bf16;
	int accumulate;
};

/* One thread per output. */
__global__ void gemm_exact_kernel(const struct exact_params p)
{
	uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;

	if (col >= p.b.m.rows)
		return;
	for (; row < p.a.m.rows; row += gridDim.y * blockDim.y) {
		uint8_t *out = p.c + row * p.c_stride +
			       (uint64_t)col * (p.bf16 ? 2 : 4);
		struct mxcore_acc acc;

		exact_begin(&acc, out, p.bf16, p.accumulate);
		exact_dot(&acc, p.seg, p.a, &p.a.m, row, p.b, &p.b.m, col);
		exact_end(&acc, out, p.bf16);
	}
}

/* A grid of 16 x 16 threads over rows x cols outputs (rows loop past 2^20). */
static void grid_2d(uint32_t rows, uint32_t cols, dim3 *grid, dim3 *threads)
{
	uint32_t gy = (rows + 15) / 16;

	*threads = dim3(16, 16);
	*grid = dim3((cols + 15) / 16, gy > 65535 ? 65535 : gy);
}

int cuda_launch_gemm_exact(struct cuda_device *cd, const struct mxa_job *job)
{
	struct exact_params p;
	dim3 threads, grid;

	p.a = operand(&job->a);
	p.b = operand(&job->b);
	p.c = cuda_ptr(job->dense.buf, job->dense.offset);
	p.c_stride = mxa__dense_stride(&job->dense);
	p.seg = segment(&job->a, &job->b);
	p.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	p.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
	if (!job->a.rows || !job->b.rows)
		return 0;
	grid_2d(job->a.rows, job->b.rows, &grid, &threads);
	EXACT_LAUNCH(gemm_exact_kernel, grid, threads, cd->stream, p);
	return 0;
}

/* --- cuda-weight-only-exact ------------------------------------------------ */

struct wo_params {
	const uint8_t *a;		/* A's first row */
	uint64_t a_stride;
	uint32_t m;
	int a_bf16;
	struct exact_operand b;
	uint8_t *c;
	uint64_t c_stride;
	int bf16;
	int accumulate;
};

/*
 * One thread per output: cpu-weight-only-exact's sum, block by block of
 * B through mxcore_acc_dense_dot() with A's values as given.
 */
__global__ void gemm_wo_exact_kernel(const struct wo_params p)
{
	uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;
	const struct mxa_matrix *bm = &p.b.m;
	uint32_t bs = mxa__block(bm), blocks = bm->cols / bs;
	uint64_t bbytes = mxcore_row_bytes(bm->elem, bs);

	if (col >= bm->rows)
		return;
	for (; row < p.m; row += gridDim.y * blockDim.y) {
		const uint8_t *arow = p.a + row * p.a_stride;
		const uint8_t *brow = p.b.data + bm->data_offset +
				      (uint64_t)col * mxa__data_stride(bm);
		const uint8_t *bsc = p.b.scale + bm->scale_offset;
		uint8_t *out = p.c + row * p.c_stride +
			       (uint64_t)col * (p.bf16 ? 2 : 4);
		uint32_t x[MXCORE_BLOCK], blk, t;
		struct mxcore_acc acc;

		exact_begin(&acc, out, p.bf16, p.accumulate);
		for (blk = 0; blk < blocks; blk++) {
			for (t = 0; t < bs; t++)
				x[t] = mxa__dense_bits(arow, p.a_bf16, blk * bs + t);
			mxcore_acc_dense_dot(&acc, x, bs, &p.b.f,
					     brow + blk * bbytes,
					     bsc[mxa__scale_index(bm, col, blk)]);
		}
		exact_end(&acc, out, p.bf16);
	}
}

int cuda_launch_gemm_weight_only_exact(struct cuda_device *cd,
				       const struct mxa_job *job)
{
	const struct mxa_dense *a = &job->a_dense;
	struct wo_params p;
	dim3 threads, grid;

	p.a = cuda_ptr(a->buf, a->offset);
	p.a_stride = mxa__dense_stride(a);
	p.m = a->rows;
	p.a_bf16 = a->dtype == MXA_DTYPE_BF16;
	p.b = operand(&job->b);
	p.c = cuda_ptr(job->dense.buf, job->dense.offset);
	p.c_stride = mxa__dense_stride(&job->dense);
	p.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	p.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
	if (!a->rows || !job->b.rows)
		return 0;
	grid_2d(a->rows, job->b.rows, &grid, &threads);
	EXACT_LAUNCH(gemm_wo_exact_kernel, grid, threads, cd->stream, p);
	return 0;
}

/* --- cuda-grouped-exact ---------------------------------------------------- */

/* Where group g lives: its extent [start, end) and swizzled scales. */
struct group_at {
	uint32_t start, end;
	uint64_t a_swz, b_swz;
};

/*
 * The workspace: the check's verdict (a uint32_t) at 0, the groups'
 * group_at array from this byte offset.
 */
#define GROUP_WS_AT 16

struct grouped_params {
	struct exact_operand a, b;
	uint8_t *c;
	uint64_t c_stride;
	uint32_t c_rows, n;
	uint32_t seg;
	int bf16;
	int accumulate;
	int kind;			/* enum mxa_group_kind */
	uint32_t count;
	const int32_t *ends;		/* device memory */
	uint32_t extent;		/* total M (2D_3D) or K (2D_2D) */
	uint32_t kblock;		/* 2D_2D: K ends on these */
	uint64_t a_data_size, a_scale_size, b_data_size, b_scale_size;
	uint32_t *bad;			/* workspace: the check's verdict */
	struct group_at *at;		/* workspace: one per group */
	struct cuda_exact_fault *fault;	/* mapped host memory */
};

/* Does m's data (scale) lie inside a buffer of size bytes? */
static __device__ bool inside(const struct mxa_matrix *m, uint64_t data_size,
			      uint64_t scale_size)
{
	struct mxcore_geom g = mxa__geom(m);
	uint64_t span;

	if (!mxcore_geom_data_span(&g, &span) ||
	    m->data_offset > data_size || span > data_size - m->data_offset)
		return false;
	if (!mxcore_geom_scale_span(&g, &span) ||
	    m->scale_offset > scale_size || span > scale_size - m->scale_offset)
		return false;
	return true;
}

static __device__ void grouped_fault(const struct grouped_params &p,
				     uint32_t code, uint32_t g, int32_t value)
{
	volatile struct cuda_exact_fault *f = p.fault;

	*p.bad = 1;
	if (f->code)
		return;		/* the first fault is the one reported */
	f->group = g;
	f->value = value;
	f->limit = code == CUDA_FAULT_LAST || code == CUDA_FAULT_BEYOND ?
		   p.extent : p.kblock;
	__threadfence_system();
	f->code = code;
}

/*
 * One thread: the ends against mxa__check_gemm_grouped()'s rules, each
 * non-empty group's operands inside their buffers (as check_groups()
 * does on the host), and each group's place in the workspace.
 */
__global__ void grouped_check_kernel(const struct grouped_params p)
{
	uint64_t a_swz = 0, b_swz = 0, c_row0;
	uint32_t g, prev = 0, c_rows;

	*p.bad = 0;
	for (g = 0; g < p.count; g++) {
		int32_t e = p.ends[g];
		struct mxa_matrix a = p.a.m, b = p.b.m;
		struct group_at at;

		if (e < (int64_t)prev)
			return grouped_fault(p, CUDA_FAULT_BELOW, g, e);
		if ((uint32_t)e > p.extent)
			return grouped_fault(p, CUDA_FAULT_BEYOND, g, e);
		if (p.kblock && (uint32_t)e % p.kblock)
			return grouped_fault(p, CUDA_FAULT_BLOCK, g, e);
		at.start = prev;
		at.end = (uint32_t)e;
		at.a_swz = a_swz;
		at.b_swz = b_swz;
		p.at[g] = at;
		mxa__group_operands((enum mxa_group_kind)p.kind, &p.a.m, &p.b.m,
				    g, prev, (uint32_t)e, &a_swz, &b_swz, &a, &b,
				    &c_row0, &c_rows);
		if ((uint32_t)e > prev) {
			if (!inside(&a, p.a_data_size, p.a_scale_size))
				return grouped_fault(p, CUDA_FAULT_A, g, e);
			if (!inside(&b, p.b_data_size, p.b_scale_size))
				return grouped_fault(p, CUDA_FAULT_B, g, e);
		}
		prev = (uint32_t)e;
	}
	if (prev != p.extent)
		return grouped_fault(p, CUDA_FAULT_LAST, p.count - 1,
				     (int32_t)prev);
}

/*
 * One thread per output of the whole C: its group (2D_3D: the group
 * whose rows hold it, found by bisection; 2D_2D: row / M), that group's
 * operands, and cuda-exact's sum over them.  An empty K group's C is the
 * exact sum of nothing: 0, or C_in rounded (cpu-grouped-exact's).
 */
__global__ void gemm_grouped_exact_kernel(const struct grouped_params p)
{
	uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t row = blockIdx.y * blockDim.y + threadIdx.y;

	if (col >= p.n || *p.bad)
		return;
	for (; row < p.c_rows; row += gridDim.y * blockDim.y) {
		uint8_t *out = p.c + row * p.c_stride +
			       (uint64_t)col * (p.bf16 ? 2 : 4);
		struct mxa_matrix a = p.a.m, b = p.b.m;
		struct mxcore_acc acc;
		uint32_t g, i, c_rows;
		uint64_t a_swz, b_swz, c_row0;
		struct group_at at;

		if (p.kind == MXA_GROUP_2D_3D) {
			uint32_t lo = 0, hi = p.count - 1;

			/* The first group whose end is past row. */
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (p.at[mid].end > row)
					hi = mid;
				else
					lo = mid + 1;
			}
			g = lo;
		} else {
			g = row / p.a.m.rows;
		}
		at = p.at[g];
		a_swz = at.a_swz;
		b_swz = at.b_swz;
		mxa__group_operands((enum mxa_group_kind)p.kind, &p.a.m, &p.b.m,
				    g, at.start, at.end, &a_swz, &b_swz, &a, &b,
				    &c_row0, &c_rows);
		i = (uint32_t)(row - c_row0);
		exact_begin(&acc, out, p.bf16, p.accumulate);
		exact_dot(&acc, p.seg, p.a, &a, i, p.b, &b, col);
		exact_end(&acc, out, p.bf16);
	}
}

/* The mapped host word faults go to, made on first use. */
static int fault_word(struct cuda_device *cd)
{
	void *dev = NULL;
	cudaError_t e;

	if (cd->exact_fault)
		return 0;
	e = cudaHostAlloc((void **)&cd->exact_fault, sizeof(*cd->exact_fault),
			  cudaHostAllocMapped);
	if (e != cudaSuccess) {
		cd->exact_fault = NULL;
		return cuda_fail(e, "cuda-grouped-exact: fault word");
	}
	memset(cd->exact_fault, 0, sizeof(*cd->exact_fault));
	e = cudaHostGetDevicePointer(&dev, cd->exact_fault, 0);
	if (e != cudaSuccess) {
		cudaFreeHost(cd->exact_fault);
		cd->exact_fault = NULL;
		return cuda_fail(e, "cuda-grouped-exact: fault word");
	}
	cd->exact_fault_dev = (struct cuda_exact_fault *)dev;
	return 0;
}

/* The groups' workspace for count groups, grown on demand (stream-ordered). */
static int group_workspace(struct cuda_device *cd, uint32_t count)
{
	size_t bytes = GROUP_WS_AT + (size_t)count * sizeof(struct group_at);
	cudaError_t e;

	if (bytes <= cd->exact_ws_bytes)
		return 0;
	if (cd->exact_ws)
		cudaFreeAsync(cd->exact_ws, cd->stream);
	cd->exact_ws = NULL;
	cd->exact_ws_bytes = 0;
	e = cudaMallocAsync(&cd->exact_ws, bytes, cd->stream);
	if (e != cudaSuccess) {
		cd->exact_ws = NULL;
		return cuda_fail(e, "cuda-grouped-exact: workspace");
	}
	cd->exact_ws_bytes = bytes;
	return 0;
}

int cuda_launch_gemm_grouped_exact(struct cuda_device *cd,
				   const struct mxa_job *job)
{
	const struct mxa_grouped *gr = &job->groups;
	struct grouped_params p;
	dim3 threads, grid;
	int ret;

	ret = fault_word(cd);
	if (!ret)
		ret = group_workspace(cd, gr->count);
	if (ret)
		return ret;
	p.a = operand(&job->a);
	p.b = operand(&job->b);
	p.c = cuda_ptr(job->dense.buf, job->dense.offset);
	p.c_stride = mxa__dense_stride(&job->dense);
	p.c_rows = job->dense.rows;
	p.n = job->dense.cols;
	p.seg = segment(&job->a, &job->b);
	p.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	p.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
	p.kind = (int)gr->kind;
	p.count = gr->count;
	p.ends = (const int32_t *)cuda_ptr(gr->offsets, gr->offsets_offset);
	if (gr->kind == MXA_GROUP_2D_3D) {
		p.extent = job->a.rows;
		p.kblock = 0;
	} else {
		uint32_t ba = mxa__block(&job->a), bb = mxa__block(&job->b);

		p.extent = job->a.cols;
		p.kblock = ba > bb ? ba : bb;
	}
	p.a_data_size = job->a.data->size;
	p.a_scale_size = job->a.scale->size;
	p.b_data_size = job->b.data->size;
	p.b_scale_size = job->b.scale->size;
	p.bad = (uint32_t *)cd->exact_ws;
	p.at = (struct group_at *)((uint8_t *)cd->exact_ws + GROUP_WS_AT);
	p.fault = cd->exact_fault_dev;
	EXACT_LAUNCH(grouped_check_kernel, 1, 1, cd->stream, p);
	if (!p.c_rows || !p.n)
		return 0;
	grid_2d(p.c_rows, p.n, &grid, &threads);
	EXACT_LAUNCH(gemm_grouped_exact_kernel, grid, threads, cd->stream, p);
	return 0;
}

/* What a fault code says about offsets[group]; limit follows where it has one. */
static const char *fault_text(uint32_t code, bool *has_limit)
{
	*has_limit = true;
	switch (code) {
	case CUDA_FAULT_BELOW:
		*has_limit = false;
		return "is below the offset before it, or 0 (offsets must not decrease and start at >= 0)";
	case CUDA_FAULT_BEYOND:
		return "is beyond the total extent (M for 2d x 3d, K for 2d x 2d)";
	case CUDA_FAULT_BLOCK:
		return "is not a multiple of the block size (K group boundaries must be)";
	case CUDA_FAULT_LAST:
		return "is the last offset and must equal the total extent";
	case CUDA_FAULT_A:
		*has_limit = false;
		return "makes the group's a (codes or scales) run past its buffer";
	case CUDA_FAULT_B:
		*has_limit = false;
		return "makes the group's b (codes or scales) run past its buffer";
	}
	return NULL;
}

int cuda_exact_fault_take(struct cuda_device *cd)
{
	volatile struct cuda_exact_fault *f = cd->exact_fault;
	struct cuda_exact_fault seen;
	const char *text;
	bool has_limit;

	if (!f || !f->code)
		return 0;
	seen.code = f->code;
	seen.group = f->group;
	seen.value = f->value;
	seen.limit = f->limit;
	f->code = 0;
	text = fault_text(seen.code, &has_limit);
	if (!text)
		return cuda_err(-EIO, "cuda-grouped-exact: unknown offsets fault %u",
				seen.code);
	if (!has_limit)
		return cuda_err(seen.code == CUDA_FAULT_A ||
				seen.code == CUDA_FAULT_B ? -EOVERFLOW : -EINVAL,
				"gemm_grouped: offsets[%u] = %d %s; checked on the GPU, C was not written",
				seen.group, seen.value, text);
	return cuda_err(-EINVAL,
			"gemm_grouped: offsets[%u] = %d %s, %u; checked on the GPU, C was not written",
			seen.group, seen.value, text, seen.limit);
}

#endif /* MXA_CUDA_EXACT_CUH */
