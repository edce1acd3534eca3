// SPDX-License-Identifier: MIT
/*
 * The native GEMM's operand view (host side, and the scale re-layout
 * kernel): what every path of cuda-mx-sm90-* needs of an MX operand before
 * its kernel runs.
 *
 * - tensor maps for the tensor memory accelerator (sm90_make_map(),
 *   sm90_map_codes(), sm90_map_prepped());
 * - the operand's codes 16-byte aligned, in place or copied to
 *   stream-ordered scratch (sm90_aligned_data());
 * - its scales K-major with row maxima (sm90_kmajor_scales()), any plain
 *   or swizzled layout in;
 * - the views the kernels take (sm90_mx_operand_of(), sm90_c_of(),
 *   sm90_prep_args_of()) and the element type's fixed factor
 *   (sm90_shift_of()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <math.h>

#include "cuda_internal.cuh"
#include "cuda_sm90.cuh"

namespace {

/*
 * The scales of an operand as bytes [blocks][rows_pad], K-major, so that a
 * stage's scales are one 2D box for the tensor memory accelerator.  Any
 * plain or swizzled layout goes in; rows past the matrix are 0.  A 32 x
 * SK_COLS tile through shared memory keeps reads and writes coalesced;
 * each thread has 16 loads in flight per tile (32 x 32 tiles, four loads
 * per thread, took 8 us for the row maxima of 8192 x 256 scales: a round
 * trip per tile).
 */
constexpr uint32_t SK_COLS = 128;

struct scale_src {
	const uint8_t *scale;
	uint64_t stride;
	uint32_t rows, blocks, rows_pad;
	uint32_t swz_tiles;		/* Cp / 4 of the swizzled layout */
	int swizzled;
	/* Where not NULL: per row (rows_pad), the largest scale but NaN. */
	uint32_t *rmax;
	/* Where not NULL: nothing to do unless *only_if (a tile list count). */
	const uint32_t *only_if;
};

__global__ void scales_kmajor_kernel(const struct scale_src p, uint8_t *out)
{
	__shared__ uint8_t tile[32][SK_COLS + 4];
	const uint32_t r0 = blockIdx.x * 32;
	const int tx = threadIdx.x, ty = threadIdx.y;
	uint32_t m[4] = { 0, 0, 0, 0 };

	if (p.only_if && !*p.only_if)
		return;
	/*
	 * CTAs over 32 rows by SK_COLS-block column groups; with rmax one CTA walks
	 * a row group's blocks (gridDim.y = 1), so maxima need no atomics.
	 */
	for (uint32_t kb0 = blockIdx.y * SK_COLS; kb0 < p.blocks; kb0 += gridDim.y * SK_COLS) {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const int i = ty + 8 * j;

#pragma unroll
			for (uint32_t c = 0; c < SK_COLS; c += 32) {
				uint32_t r = r0 + i, kb = kb0 + c + tx;
				uint8_t v = 0;

				if (r < p.rows && kb < p.blocks) {
					v = p.scale[sm90_scale_index(p.swizzled, p.stride,
								 p.swz_tiles, r, kb)];
				}
				tile[i][c + tx] = v;
				m[j] = max(m[j], v == 0xff ? 0u : (uint32_t)v);
			}
		}
		__syncthreads();
		for (uint32_t i = ty; i < SK_COLS; i += 8) {
			uint32_t kb = kb0 + i, r = r0 + tx;

			if (kb < p.blocks && r < p.rows_pad)
				out[(uint64_t)kb * p.rows_pad + r] = tile[tx][i];
		}
		__syncthreads();
	}
	if (p.rmax) {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const uint32_t i = ty + 8 * j, v = __reduce_max_sync(0xffffffffu, m[j]);

			if (tx == 0 && r0 + i < p.rows_pad)
				p.rmax[r0 + i] = v;
		}
	}
}

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t,
			      void *, const cuuint64_t *, const cuuint64_t *,
			      const cuuint32_t *, const cuuint32_t *,
			      CUtensorMapInterleave, CUtensorMapSwizzle,
			      CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

pthread_once_t encode_once = PTHREAD_ONCE_INIT;
encode_fn encode;

void encode_load(void)
{
	cudaDriverEntryPointQueryResult q;
	void *fn = NULL;

	if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn,
					     12000, cudaEnableDefault,
					     &q) == cudaSuccess &&
	    q == cudaDriverEntryPointSuccess)
		encode = (encode_fn)fn;
}

/*
 * The PTX version this file's kernels were loaded from: 90 for the sm_90a
 * code, 80 where the driver JIT-compiles the compute_80 PTX instead (whose
 * GEMM kernels are empty), as under CUDA_FORCE_PTX_JIT=1.
 */
pthread_once_t code_once = PTHREAD_ONCE_INIT;
int code_ptx;

void code_probe(void)
{
	cudaFuncAttributes a;

	if (cudaFuncGetAttributes(&a, scales_kmajor_kernel) == cudaSuccess)
		code_ptx = a.ptxVersion;
}

} /* namespace */

/* NULL if the driver has what the tensor maps need, else why not. */
const char *sm90_operand_reject(void)
{
	pthread_once(&encode_once, encode_load);
	if (!encode)
		return "the driver has no cuTensorMapEncodeTiled";
	pthread_once(&code_once, code_probe);
	if (code_ptx < 90)
		return "its sm_90a code is not loaded (the driver runs the compute_80 PTX, e.g. under CUDA_FORCE_PTX_JIT)";
	return NULL;
}

/* rows x row_bytes bytes, row stride `stride`, boxes of box_x x box_y. */
int sm90_make_map(CUtensorMap *map, const uint8_t *base, uint64_t row_bytes,
	     uint64_t rows, uint64_t stride, uint32_t box_x, uint32_t box_y,
	     CUtensorMapSwizzle swizzle)
{
	cuuint64_t dims[2] = { row_bytes, rows };
	cuuint64_t strides[1] = { stride };
	cuuint32_t box[2] = { box_x, box_y };
	cuuint32_t estr[2] = { 1, 1 };
	CUresult r;

	r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, (void *)base, dims,
		   strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
		   swizzle,
		   CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
		   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS)
		return cuda_err(-EIO, "cuda-mx-sm90: cuTensorMapEncodeTiled: error %d (rows %llu, row bytes %llu, stride %llu)",
				(int)r, (unsigned long long)rows,
				(unsigned long long)row_bytes,
				(unsigned long long)stride);
	return 0;
}

int sm90_make_map_3d(CUtensorMap *map, const uint8_t *base, uint64_t row_bytes,
		     uint64_t rows, uint64_t planes, uint64_t stride, uint64_t plane_stride,
		     uint32_t box_x, uint32_t box_y, CUtensorMapSwizzle swizzle)
{
	cuuint64_t dims[3] = { row_bytes, rows, planes };
	cuuint64_t strides[2] = { stride, plane_stride };
	cuuint32_t box[3] = { box_x, box_y, 1 };
	cuuint32_t estr[3] = { 1, 1, 1 };
	CUresult r;

	r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, (void *)base, dims, strides, box, estr,
		   CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
		   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS)
		return cuda_err(-EIO, "cuda-mx-sm90: cuTensorMapEncodeTiled: error %d (%llu planes of %llu rows, row bytes %llu, stride %llu)",
				(int)r, (unsigned long long)planes, (unsigned long long)rows,
				(unsigned long long)row_bytes, (unsigned long long)stride);
	return 0;
}

/* log2 of element value / e4m3 byte value after conversion. */
int sm90_shift_of(enum mxa_elem e)
{
	switch (e) {
	case MXA_ELEM_E2M3:
	case MXA_ELEM_E2M1:
		return 6;
	case MXA_ELEM_E3M2:
		return 4;
	default:
		return 0;
	}
}

/*
 * An operand's data, 16-byte aligned: in place when it is, else copied into
 * stream-ordered scratch (*scratch, freed by the caller after the launch).
 */
int sm90_aligned_data(struct cuda_device *cd, const struct mxa_matrix *m,
		 const uint8_t **data, uint64_t *stride, void **scratch)
{
	const uint8_t *d = cuda_ptr(m->data, m->data_offset);
	struct mxcore_geom g = mxa__geom(m);
	uint64_t s = mxcore_geom_data_stride(&g);
	uint64_t row = mxcore_geom_row_bytes(&g);
	/* NVFP4 rows are multiples of 8 bytes only (K % 16 == 0) */
	uint64_t pitch = (row + 15) / 16 * 16;
	cudaError_t e;

	*scratch = NULL;
	if (!((uintptr_t)d & 15) && !(s & 15)) {
		*data = d;
		*stride = s;
		return 0;
	}
	e = cudaMallocAsync(scratch, pitch * m->rows, cd->stream);
	if (e == cudaSuccess)
		e = cudaMemcpy2DAsync(*scratch, pitch, d, s, row, m->rows,
				      cudaMemcpyDeviceToDevice, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: aligned copy");
	*data = (const uint8_t *)*scratch;
	*stride = pitch;
	return 0;
}

/*
 * An operand's scales K-major, [blocks][rows_pad], in stream-ordered
 * scratch (*scratch, freed by the caller after the launches); with rmax,
 * also each row's largest scale but NaN, in the same scratch after them.
 */
int sm90_kmajor_scales(struct cuda_device *cd, const struct mxa_matrix *m,
		  bool rmax, const uint32_t *only_if, void **scratch,
		  uint32_t *rows_pad)
{
	struct scale_src src;
	size_t bytes, rmax_off;
	cudaError_t e;

	src.scale = cuda_ptr(m->scale, m->scale_offset);
	src.stride = mxa__scale_stride(m);
	src.rows = m->rows;
	src.blocks = m->cols / 32;
	src.rows_pad = (m->rows + 15) / 16 * 16;
	src.swz_tiles = (src.blocks + 3) / 4;
	src.swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	rmax_off = ((size_t)src.rows_pad * src.blocks + 15) / 16 * 16;
	bytes = rmax_off + (rmax ? (size_t)src.rows_pad * 4 : 0);
	*rows_pad = src.rows_pad;
	e = cudaMallocAsync(scratch, bytes, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, "cuda-mx-sm90: scale scratch");
	src.rmax = rmax ? (uint32_t *)((uint8_t *)*scratch + rmax_off) : NULL;
	src.only_if = only_if;
	scales_kmajor_kernel<<<dim3((src.rows_pad + 31) / 32,
				    rmax ? 1 : (src.blocks + SK_COLS - 1) / SK_COLS),
			       dim3(32, 8), 0, cd->stream>>>(src, (uint8_t *)*scratch);
	return 0;
}

const uint32_t *sm90_rmax_of(const void *scratch, const struct mxa_matrix *m)
{
	uint32_t rows_pad = (m->rows + 15) / 16 * 16;

	return (const uint32_t *)((const uint8_t *)scratch +
				  ((size_t)rows_pad * (m->cols / 32) + 15) / 16 * 16);
}

enum sm90_elem sm90_elem_of(enum mxa_elem e)
{
	switch (e) {
	case MXA_ELEM_E5M2:
		return SM90_E5M2;
	case MXA_ELEM_E2M3:
		return SM90_E2M3;
	case MXA_ELEM_E3M2:
		return SM90_E3M2;
	case MXA_ELEM_E2M1:
		return SM90_E2M1;
	default:
		return SM90_E4M3;
	}
}

uint64_t sm90_row_bytes(const struct mxa_matrix *m)
{
	struct mxcore_geom g = mxa__geom(m);

	return mxcore_geom_row_bytes(&g);
}

/*
 * m's codes at data (row stride bytes) in boxes of KC elements by
 * box_rows rows, swizzled as the bf16 kernels' A and the decode kernel's
 * X read them.
 */
int sm90_map_codes(CUtensorMap *map, const struct mxa_matrix *m, const uint8_t *data,
	      uint64_t stride, uint32_t box_rows)
{
	const bool fp4 = m->elem == MXA_ELEM_E2M1;

	return sm90_make_map(map, data, sm90_row_bytes(m), m->rows, stride,
			fp4 ? SM90_BF16_KC / 2 : SM90_BF16_KC, box_rows,
			fp4 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_64B);
}

/* The bf16 operand sm90_prep_bf16(p) writes, in boxes of KC by box_rows. */
int sm90_map_prepped(CUtensorMap *map, const struct sm90_prep_args &p, uint32_t box_rows)
{
	const uint64_t bytes = (uint64_t)(p.blocks + 1) / 2 * SM90_BF16_KC * 2;

	return sm90_make_map(map, p.out, bytes, p.rows, bytes, SM90_BF16_KC * 2, box_rows,
			CU_TENSOR_MAP_SWIZZLE_128B);
}

/*
 * sm90_prep_bf16()'s arguments for y (codes at yd, row stride ys; scales
 * K-major at ysc with row maxima rmax): bf16 into out, a flag per
 * 2^tile_shift rows in bad_tiles.
 */
struct sm90_prep_args sm90_prep_args_of(const struct mxa_matrix *y, const uint8_t *yd, uint64_t ys,
				const void *ysc, const uint32_t *rmax, uint8_t *out,
				uint32_t *bad_tiles, uint32_t tile_shift)
{
	struct sm90_prep_args pb;

	pb.data = yd;
	pb.stride = ys;
	pb.rows = y->rows;
	pb.blocks = y->cols / 32;
	pb.rows_pad = (y->rows + 15) / 16 * 16;
	pb.elem = sm90_elem_of(y->elem);
	pb.scales = (const uint8_t *)ysc;
	pb.rmax = rmax;
	pb.out = out;
	pb.bad_tiles = bad_tiles;
	pb.tile_shift = tile_shift;
	return pb;
}

/* The job's C as the kernels write it. */
struct sm90_c sm90_c_of(const struct mxa_job *job)
{
	struct sm90_c o;

	o.c = cuda_ptr(job->dense.buf, job->dense.offset);
	o.bf16 = job->dense.dtype == MXA_DTYPE_BF16;
	o.stride = mxa__dense_stride(&job->dense) / (o.bf16 ? 2 : 4);
	o.accumulate = !!(job->flags & MXA_GEMM_ACCUMULATE);
	return o;
}

/* One operand as the decode and skinny kernels read it. */
struct sm90_mx_operand sm90_mx_operand_of(const struct mxa_matrix *m,
					  const uint8_t *data, uint64_t stride)
{
	struct sm90_mx_operand o;

	o.data = data;
	o.stride = stride;
	o.scale = cuda_ptr(m->scale, m->scale_offset);
	o.scale_stride = mxa__scale_stride(m);
	o.swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	o.swz_tiles = (m->cols / 32 + 3) / 4;
	o.rows = m->rows;
	o.elem = sm90_elem_of(m->elem);
	return o;
}

/*
 * The epilogue's factors for NVFP4: C = acc * 2^16 * t1 * t2 must be
 * acc * 2^16 * ts_a * ts_b (single level: 1).  Where ts_a * ts_b rounded
 * once to fp32 is a normal number it is one factor (t2 = 1, exact);
 * else the two scales are applied one after the other, the larger first
 * when the product is below fp32's normal range (the intermediate stays
 * normal) and the smaller first when it overflows, so that a zero sum
 * stays 0 and a result leaves fp32's range only where it really does.
 */
void sm90_nvfp4_factors_of(float ta, float tb, float *t1, float *t2)
{
	const float big = ta > tb ? ta : tb, small = ta > tb ? tb : ta;
	const float t = (float)((double)ta * tb);	/* exact in double */

	if (t >= 0x1p-126f && t <= 0x1.fffffep127f) {
		*t1 = t;
		*t2 = 1.0f;
	} else if (t < 0x1p-126f) {
		*t1 = big;
		*t2 = small;
	} else {
		*t1 = small;
		*t2 = big;
	}
}

void sm90_nvfp4_factors(const struct mxa_matrix *a, const struct mxa_matrix *b, float *t1,
			float *t2)
{
	sm90_nvfp4_factors_of(a->tensor_scale != 0.0f ? a->tensor_scale : 1.0f,
			      b->tensor_scale != 0.0f ? b->tensor_scale : 1.0f, t1, t2);
}

struct sm90_nvfp4_prep_args sm90_nvfp4_prep_args_of(const struct mxa_matrix *m,
						    const uint8_t *data, uint64_t stride,
						    uint8_t *out, uint32_t *row_nan)
{
	struct sm90_nvfp4_prep_args p;

	p.data = data;
	p.stride = stride;
	p.rows = m->rows;
	p.blocks = m->cols / 16;
	p.scale = cuda_ptr(m->scale, m->scale_offset);
	p.scale_stride = mxa__scale_stride(m);
	p.swizzled = m->scale_layout == MXA_LAYOUT_SWIZZLED;
	p.swz_tiles = (p.blocks + 3) / 4;
	p.out = out;
	p.row_nan = row_nan;
	return p;
}

size_t sm90_bf16_flags_bytes(const struct sm90_bf16_args &b)
{
	return ((size_t)b.m + b.n + b.tiles_m + b.tiles_n + 1 +
		2 * (size_t)b.tiles_m * b.tiles_n) * 4;
}

int sm90_bf16_scratch(struct cuda_device *cd, struct sm90_bf16_args *b, size_t head,
		      void **scratch, const char *what)
{
	const size_t bytes = sm90_bf16_flags_bytes(*b);
	cudaError_t e = cudaMallocAsync(scratch, head + bytes, cd->stream);

	if (e != cudaSuccess) {
		*scratch = NULL;
		return cuda_fail(e, what);
	}
	e = cudaMemsetAsync((uint8_t *)*scratch + head, 0, bytes, cd->stream);
	if (e != cudaSuccess)
		return cuda_fail(e, what);
	sm90_bf16_flags_at(b, (uint32_t *)((uint8_t *)*scratch + head));
	return 0;
}

void sm90_bf16_flags_at(struct sm90_bf16_args *b, uint32_t *flags)
{
	b->rmax_a = flags;
	b->rmax_b = flags + b->m;
	b->bad_rows = flags + b->m + b->n;
	b->bad_cols = b->bad_rows + b->tiles_m;
	b->list_count = flags + b->m + b->n + b->tiles_m + b->tiles_n;
	b->list = b->list_count + 1;
}

struct mxa_op_desc sm90_desc_of(const struct mxa_job *job)
{
	struct mxa_op_desc d;

	memset(&d, 0, sizeof(d));
	d.op = MXA_OP_GEMM;
	d.a_elem = job->a.elem;
	d.b_elem = job->b.elem;
	d.dtype = job->dense.dtype;
	d.a_scale_type = job->a.scale_type;
	d.b_scale_type = job->b.scale_type;
	d.m = job->a.rows;
	d.n = job->b.rows;
	d.k = job->a.cols;
	d.flags = job->flags;
	return d;
}

struct sm90_skinny_args sm90_skinny_args_of(const struct mxa_job *job,
					    const struct sm90_mx_operand &x,
					    const struct sm90_mx_operand &y)
{
	const struct mxa_matrix *b = &job->b;
	struct sm90_skinny_args s;

	memset(&s, 0, sizeof(s));
	s.x = x;
	s.y = y;
	/* Scales per 32 or per 16: the swizzled layout's tiles of 4 blocks. */
	s.x.swz_tiles = s.y.swz_tiles = (b->cols / mxa__block(b) + 3) / 4;
	s.blocks = b->cols / 32;
	s.out = sm90_c_of(job);
	s.x_scale_words = !((uintptr_t)s.x.scale & 3) && (s.x.swizzled || !(s.x.scale_stride & 3));
	s.post = ldexpf(1.0f, sm90_shift_of(job->b.elem) + sm90_shift_of(job->a.elem));
	s.nvfp4 = b->scale_type == MXA_SCALE_UE4M3;
	s.t1 = s.t2 = 1.0f;
	if (s.nvfp4)
		sm90_nvfp4_factors(&job->a, &job->b, &s.t1, &s.t2);
	return s;
}
