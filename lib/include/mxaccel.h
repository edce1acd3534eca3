/* SPDX-License-Identifier: MIT */
/*
 * libmxaccel: OCP Microscaling (MX) quantization and block-scaled GEMM with
 * preference-based dispatch across devices.
 *
 * Every function that can fail returns 0 or a negative errno; mxa_strerror()
 * turns it into text.  With MXACCEL_DEBUG=1 in the environment, every failure
 * also prints one line on stderr naming the argument and the limit at fault.
 *
 * Matrices are row-major with the reduction dimension (K, "cols") contiguous.
 * A block-scaled matrix is element codes plus one scale per block of
 * consecutive elements of a row: an E8M0 scale per 32 (OCP MX: MXFP8,
 * MXFP6, MXFP4) or a UE4M3 scale per 16 with an optional fp32 per-tensor
 * scale (NVFP4).  GEMM computes C[M x N] (+)= A[M x K] * B[N x K]^T.
 *
 * ABI: version 0.2 grew struct mxa_matrix, struct mxa_op_desc and struct
 * mxa_recipe (scale types); the functions taking them are versioned
 * (MXACCEL_0.2), and programs built against 0.1 keep calling the 0.1
 * versions, which see MX with E8M0 scales only.  Zero-initialise these
 * structs: every field added since has 0 as its old meaning.
 */
#ifndef MXACCEL_H
#define MXACCEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXA_VERSION_MAJOR 0
#define MXA_VERSION_MINOR 2
#define MXA_VERSION_PATCH 0

/* Elements per E8M0 scale block along K (OCP MX). */
#define MXA_BLOCK_SIZE 32
/* Elements per UE4M3 scale block along K (NVFP4). */
#define MXA_NVFP4_BLOCK_SIZE 16

/* Element types (OCP MX v1.0). Values are stable ABI. */
enum mxa_elem {
	MXA_ELEM_E4M3 = 1,	/* MXFP8, max 448, no Inf, NaN = S.1111.111 */
	MXA_ELEM_E5M2 = 2,	/* MXFP8, max 57344, Inf and NaN */
	MXA_ELEM_E2M3 = 3,	/* MXFP6, max 7.5, one per byte, bits 6-7 ignored */
	MXA_ELEM_E3M2 = 4,	/* MXFP6, max 28, one per byte, bits 6-7 ignored */
	MXA_ELEM_E2M1 = 5,	/* MXFP4, max 6, two per byte, element 2i low */
};

/* What a block's scale is (UE4M3: e2m1 elements only). Stable ABI. */
enum mxa_scale_type {
	MXA_SCALE_E8M0 = 0,	/* 2^(s - 127), 255 = NaN; blocks of 32 (MX) */
	MXA_SCALE_UE4M3 = 1,	/* float8_e4m3fn, sign 0; blocks of 16 (NVFP4) */
};

/*
 * How quantization derives a block's scale from its absolute maximum
 * (torchao): FLOOR .. EVEN for E8M0 scales, NVFP4 (torchao's nvfp4 rule:
 * amax / 6, divided by the per-tensor scale if any, rounded to nearest
 * e4m3) for UE4M3 scales and only for them.
 */
enum mxa_scale_mode {
	MXA_SCALE_FLOOR = 0,
	MXA_SCALE_RCEIL = 1,
	MXA_SCALE_CEIL = 2,
	MXA_SCALE_EVEN = 3,
	MXA_SCALE_NVFP4 = 4,	/* since 0.2 */
};

/* Where scale (r, c) lives in the scale buffer. */
enum mxa_scale_layout {
	MXA_LAYOUT_PLAIN = 0,	 /* row-major [rows][cols/32], row stride given */
	MXA_LAYOUT_SWIZZLED = 1, /* cuBLAS / torchao to_blocked 128x4 tiles */
};

/* Dense (high-precision) element types. */
enum mxa_dtype {
	MXA_DTYPE_F32 = 0,
	MXA_DTYPE_BF16 = 1,
};

/*
 * Kernel preference, torchao's KernelPreference made device agnostic.
 * AUTO:     the fastest kernel the device has for the request; falls back
 *           to the device's emulated kernel; never fails for a valid request
 *           on a working device, except one beyond the device's limits
 *           (e.g. an accel device's largest dimension: -EOPNOTSUPP, and
 *           mxa_query() says so).
 * NATIVE:   only a native kernel, else -EOPNOTSUPP.
 * EMULATED: the exact reference semantics (Documentation/numerics.rst).
 */
enum mxa_pref {
	MXA_PREF_AUTO = 0,
	MXA_PREF_NATIVE = 1,
	MXA_PREF_EMULATED = 2,
};

/* Operations a device may run. */
enum mxa_op {
	MXA_OP_QUANTIZE = 0,
	MXA_OP_DEQUANTIZE = 1,
	MXA_OP_GEMM = 2,
	MXA_OP_QUANTIZE_COLWISE = 3,	/* since 0.2: mxa_quantize_colwise() */
	MXA_OP_GEMM_GROUPED = 4,	/* since 0.2: mxa_gemm_grouped() */
	MXA_OP_GEMM_WEIGHT_ONLY = 5,	/* since 0.2: mxa_gemm_weight_only() */
};

/*
 * A named recipe: element type, scale type and mode, e.g. "mxfp8" =
 * e4m3 / E8M0 / floor, "nvfp4" = e2m1 / UE4M3 / nvfp4.  A recipe names no
 * per-tensor scale: two-level NVFP4 is "nvfp4" with a matrix's
 * tensor_scale set by the caller.
 */
struct mxa_recipe {
	enum mxa_elem elem;
	enum mxa_scale_mode mode;
	/* Since 0.2: */
	enum mxa_scale_type scale_type;
	uint32_t block_size;	/* elements per scale (32 or 16) */
};

/* Opaque objects. */
struct mxa_device;
struct mxa_buffer;
struct mxa_fence;

/*
 * A block-scaled matrix: rows x cols elements (cols = K, a multiple of the
 * block size), codes in data, one scale byte per block in scale.
 */
struct mxa_matrix {
	struct mxa_buffer *data;
	size_t data_offset;	/* bytes */
	size_t data_stride;	/* bytes between rows; 0 = packed */
	struct mxa_buffer *scale;
	size_t scale_offset;	/* bytes */
	size_t scale_stride;	/* bytes between rows (plain); 0 = packed */
	enum mxa_elem elem;
	enum mxa_scale_layout scale_layout;
	uint32_t rows;
	uint32_t cols;
	/* Since 0.2: */
	enum mxa_scale_type scale_type;
	uint32_t block_size;	/* 0 = the scale type's: 32 (E8M0), 16 (UE4M3) */
	/*
	 * UE4M3 only: the fp32 per-tensor scale of two-level scaling (a
	 * positive normal or subnormal float: value = element * block scale
	 * * tensor_scale); 0 = single level.
	 */
	float tensor_scale;
	uint32_t reserved[4];	/* must be 0 */
};

/* A dense fp32 or bf16 matrix, row-major. */
struct mxa_dense {
	struct mxa_buffer *buf;
	size_t offset;		/* bytes */
	size_t stride;		/* bytes between rows; 0 = packed */
	enum mxa_dtype dtype;
	uint32_t rows;
	uint32_t cols;
};

/* mxa_gemm() flags. */
#define MXA_GEMM_ACCUMULATE (1u << 0)	/* C += A*B^T instead of C = A*B^T */

/* What a plan / capability answer says. */
enum mxa_support {
	MXA_SUPPORT_NATIVE = 0,		/* a native kernel runs it */
	MXA_SUPPORT_EMULATED = 1,	/* only the emulated (exact) kernel */
	MXA_SUPPORT_NONE = 2,		/* cannot run on this device */
};

/* Description of an operation, without buffers (for plans and queries). */
struct mxa_op_desc {
	enum mxa_op op;
	enum mxa_elem a_elem;	/* quantize(_colwise): target; dequantize: source */
	enum mxa_elem b_elem;	/* gemm only */
	enum mxa_dtype dtype;	/* gemm: C; quantize: source; dequant: out */
	enum mxa_scale_mode mode; /* quantize only */
	uint32_t m, n, k;	/* gemm: shape; (de)quantize: m rows, k cols */
	uint32_t flags;		/* gemm: MXA_GEMM_* */
	/* Since 0.2 (block sizes are the scale types'): */
	enum mxa_scale_type a_scale_type;	/* like a_elem */
	enum mxa_scale_type b_scale_type;	/* gemm only */
	/*
	 * Weight-only gemm: A's dense type (a_elem and a_scale_type are 0);
	 * every other op: 0.
	 */
	enum mxa_dtype a_dtype;
	uint32_t reserved[5];			/* must be 0 */
};

#define MXA_NAME_MAX 64
#define MXA_REASON_MAX 256

/* Which kernel a request resolves to on a device, and why. */
struct mxa_plan {
	char device[MXA_NAME_MAX];	/* e.g. "cpu" */
	char kernel[MXA_NAME_MAX];	/* e.g. "cpu-exact" */
	enum mxa_support support;	/* NATIVE or EMULATED */
	enum mxa_pref pref;		/* the preference that was resolved */
	int exact;			/* 1 if the kernel is bit-exact (§4) */
	char reason[MXA_REASON_MAX];
};

/* Answer of mxa_query(). */
struct mxa_capability {
	enum mxa_support support;
	char kernel[MXA_NAME_MAX];	/* the kernel that would run, or "" */
	char reason[MXA_REASON_MAX];
};

/* Device description. */
struct mxa_device_info {
	char name[MXA_NAME_MAX];	/* "cpu", "accel:0", "cuda:0" */
	char backend[MXA_NAME_MAX];	/* "cpu", "accel", "cuda" */
	char description[MXA_REASON_MAX];
	unsigned int threads;		/* worker threads (cpu), else 0 */
	int host_visible;		/* buffers can be mapped by the host */
	int conformance;		/* emulated-only device: never picked by auto */
};

/* A backend compiled into (or loadable by) the library. */
struct mxa_backend_info {
	char name[MXA_NAME_MAX];
	unsigned int devices;		/* devices found */
	int available;			/* 0: see reason */
	char reason[MXA_REASON_MAX];
};

/* --- errors and names ---------------------------------------------------- */

const char *mxa_strerror(int err);
const char *mxa_version(void);

/* Parsers return 0 or -EINVAL; printers return NULL for an invalid value. */
int mxa_elem_parse(const char *name, enum mxa_elem *out);
const char *mxa_elem_name(enum mxa_elem elem);
int mxa_scale_mode_parse(const char *name, enum mxa_scale_mode *out);
const char *mxa_scale_mode_name(enum mxa_scale_mode mode);
int mxa_scale_type_parse(const char *name, enum mxa_scale_type *out);
const char *mxa_scale_type_name(enum mxa_scale_type type);	/* since 0.2 */
int mxa_layout_parse(const char *name, enum mxa_scale_layout *out);
const char *mxa_layout_name(enum mxa_scale_layout layout);
int mxa_dtype_parse(const char *name, enum mxa_dtype *out);
const char *mxa_dtype_name(enum mxa_dtype dtype);
int mxa_pref_parse(const char *name, enum mxa_pref *out);
const char *mxa_pref_name(enum mxa_pref pref);
const char *mxa_support_name(enum mxa_support support);

/* Recipes: "mxfp8", "mxfp8_rceil", "mxfp8_e5m2", "mxfp6_e2m3", ... */
int mxa_recipe_parse(const char *name, struct mxa_recipe *out);
/* Name of a recipe, or NULL when the combination has no name. */
const char *mxa_recipe_name(const struct mxa_recipe *recipe);
/* Iterate the named recipes: returns NULL past the end. */
const char *mxa_recipe_at(unsigned int index);

/* --- sizes of MX storage -------------------------------------------------- */

/* Bytes of one row of element codes (e2m1: cols/2). -EINVAL if cols % 32. */
int mxa_data_row_bytes(enum mxa_elem elem, uint32_t cols, size_t *out);
/* Bytes a scale buffer needs for rows x cols/32 E8M0 scales in a layout. */
int mxa_scale_bytes(enum mxa_scale_layout layout, uint32_t rows,
		    uint32_t cols, size_t *out);
/*
 * Since 0.2: the bytes m's data and scale buffers must hold from their
 * offsets (either pointer may be NULL), for any scale type; the buffers
 * are not looked at.  -EINVAL with the field at fault, -EOVERFLOW.
 */
int mxa_matrix_bytes(const struct mxa_matrix *m, size_t *data_bytes,
		     size_t *scale_bytes);
/* Byte index of scale (row, block) in the swizzled layout. */
size_t mxa_swizzle_index(uint32_t rows, uint32_t blocks, uint32_t row,
			 uint32_t block);

/* --- devices ------------------------------------------------------------ */

/*
 * Open a device by name: "cpu", "accel:N", "cuda:N", "auto", or NULL (=
 * $MXACCEL_DEVICE if set, else "auto").  -ENODEV: no such device (with
 * MXACCEL_DEBUG=1 the reason is printed); -EINVAL: malformed name.
 */
int mxa_device_open(const char *name, struct mxa_device **out);
/* Closing (or freeing, below) NULL does nothing. */
void mxa_device_close(struct mxa_device *dev);
int mxa_device_info(struct mxa_device *dev, struct mxa_device_info *out);
/*
 * Worker threads of a cpu device (0 = one per online CPU, at most 1024,
 * else -EINVAL; $MXACCEL_THREADS sets the initial count the same way);
 * -EOPNOTSUPP on devices without worker threads.
 */
int mxa_device_set_threads(struct mxa_device *dev, unsigned int threads);
/*
 * Stream mode (0.2).  On a cuda device, every later operation on dev is
 * enqueued on `stream` (a cudaStream_t of dev's GPU, e.g. PyTorch's
 * torch.cuda.current_stream().cuda_stream) and returns once enqueued,
 * without synchronising the host: ordering with the caller's other work
 * comes from the stream, and mxa_gemm_async()'s fence is an event
 * recorded on it.  mxa_buffer_read/write and mxa_buffer_free of a buffer
 * mxa_buffer_alloc() made still wait for the stream.  NULL restores the
 * device's own stream (every call synchronous); the legacy default stream
 * is cudaStreamLegacy ((void *)1), not NULL.  Work queued before the
 * switch is ordered before work queued after it (no host wait).
 * -EINVAL: dev is NULL, or (cuda) stream is not a CUDA stream; -EXDEV: a
 * stream of another GPU; -EOPNOTSUPP: a non-NULL stream on a device
 * without streams (cpu, accel: NULL is accepted and does nothing).
 */
int mxa_device_set_stream(struct mxa_device *dev, void *stream);
/* The stream set by mxa_device_set_stream(), NULL if none.  -EINVAL: NULL argument. */
int mxa_device_get_stream(struct mxa_device *dev, void **stream);

unsigned int mxa_backend_count(void);
int mxa_backend_info(unsigned int index, struct mxa_backend_info *out);

/* --- buffers -------------------------------------------------------------- */

/* -EINVAL: NULL argument or size 0; -ENOMEM.  Contents start zeroed. */
int mxa_buffer_alloc(struct mxa_device *dev, size_t size,
		     struct mxa_buffer **out);
/*
 * Wrap caller memory as a buffer of dev without copying: host memory on
 * host-visible devices (cpu), a device pointer of that GPU on cuda:N
 * (cudaMalloc, cudaMallocAsync or a PyTorch tensor's data_ptr()).  The
 * caller keeps the memory alive until every operation using the buffer
 * has completed; mxa_buffer_free() of a wrapped buffer never frees it.
 * On cuda, fp32 / bf16 matrices must sit at addresses aligned to their
 * element size (else the operation fails with -EINVAL naming the operand,
 * before anything runs); MX codes and scales may sit anywhere (GEMM
 * operands not 16-byte aligned, base and row stride, are copied to
 * aligned scratch first, at a cost).  -EINVAL: NULL argument, size 0,
 * or (cuda) host, managed or unregistered memory; -EXDEV: memory of
 * another GPU; -EOPNOTSUPP: a device that cannot wrap memory (accel:
 * share a dma-buf instead).
 */
int mxa_buffer_wrap(struct mxa_device *dev, void *ptr, size_t size,
		    struct mxa_buffer **out);
void mxa_buffer_free(struct mxa_buffer *buf);
size_t mxa_buffer_size(const struct mxa_buffer *buf);
/* Host pointer to the contents; -EOPNOTSUPP if not host visible. */
int mxa_buffer_map(struct mxa_buffer *buf, void **ptr);
/* -EOVERFLOW: offset + size past the end of the buffer. */
int mxa_buffer_write(struct mxa_buffer *buf, size_t offset, const void *src,
		     size_t size);
int mxa_buffer_read(struct mxa_buffer *buf, size_t offset, void *dst,
		    size_t size);
/*
 * Share a buffer as a dma-buf file descriptor (the caller owns *fd), or
 * wrap a dma-buf in a buffer of dev.  -EOPNOTSUPP on devices without
 * dma-buf support (cpu); -EBADF / -EINVAL for a bad descriptor.
 */
int mxa_buffer_export_dmabuf(struct mxa_buffer *buf, int *fd);
int mxa_buffer_import_dmabuf(struct mxa_device *dev, int fd,
			     struct mxa_buffer **out);

/* --- operations ------------------------------------------------------------ */

/*
 * Errors of the operations, checked before anything runs (nothing is
 * written on failure):
 *   -EINVAL     NULL argument, unknown enum or flag, zero rows/cols, cols
 *               (K) not a multiple of 32, stride below one row, a dense
 *               offset or stride not a multiple of its element size, shapes
 *               that do not match, an output overlapping another operand
 *               in the same buffer, an invalid $MXACCEL_KERNEL
 *   -EOVERFLOW  an extent past the end of its buffer, or size overflow
 *   -EXDEV      a buffer that belongs to another device
 *   -EOPNOTSUPP NATIVE requested and the device has no native kernel, or
 *               the kernel $MXACCEL_KERNEL forces cannot run the request
 *   -ENOMEM     scratch memory or a job thread could not be allocated
 * $MXACCEL_KERNEL, when set, overrides the pref argument: a preference name
 * (auto, native, emulated) replaces it, a kernel name forces that kernel
 * for the operation it implements.
 * quantize writes every scale of dst; in the swizzled layout the padding
 * entries are written as 0, like torchao's to_blocked().
 */

int mxa_quantize(struct mxa_device *dev, const struct mxa_dense *src,
		 const struct mxa_matrix *dst, enum mxa_scale_mode mode,
		 enum mxa_pref pref);
int mxa_dequantize(struct mxa_device *dev, const struct mxa_matrix *src,
		   const struct mxa_dense *dst, enum mxa_pref pref);
/*
 * Since 0.2: column-wise quantization (torchao's dim1 cast, for the
 * transposed operand of training): dst is src's transpose quantized,
 * dst->rows = src->cols and dst->cols = src->rows, blocks running down
 * src's columns; bit-exact with mxa_quantize() of the transpose (to_mx()
 * / nvfp4_quantize() of src.t()), for every scale type.  Its plans and
 * queries use MXA_OP_QUANTIZE_COLWISE with m = dst rows, k = dst cols.
 */
int mxa_quantize_colwise(struct mxa_device *dev, const struct mxa_dense *src,
			 const struct mxa_matrix *dst,
			 enum mxa_scale_mode mode, enum mxa_pref pref);
int mxa_gemm(struct mxa_device *dev, const struct mxa_matrix *a,
	     const struct mxa_matrix *b, const struct mxa_dense *c,
	     uint32_t flags, enum mxa_pref pref);
/*
 * Start a GEMM and return at once; *fence signals completion.  Buffers must
 * stay alive and untouched until the fence has signalled.
 */
int mxa_gemm_async(struct mxa_device *dev, const struct mxa_matrix *a,
		   const struct mxa_matrix *b, const struct mxa_dense *c,
		   uint32_t flags, enum mxa_pref pref,
		   struct mxa_fence **fence);

/*
 * Since 0.2: weight-only GEMM, C (+)= A * B^T with a dense fp32 or bf16 A
 * [M x K] (activations) and a block-scaled B [N x K] (weights: MX or
 * NVFP4); c is M x N.  EMULATED is the exact semantics with A's values as
 * given; NATIVE on the cpu streams B's codes and scales once (bound in
 * Documentation/numerics.rst).  Errors as for mxa_gemm(); plans and
 * queries use MXA_OP_GEMM_WEIGHT_ONLY with a_dtype = A's type, b_elem and
 * b_scale_type = B's, a_elem = a_scale_type = 0.
 */
int mxa_gemm_weight_only(struct mxa_device *dev, const struct mxa_dense *a,
			 const struct mxa_matrix *b, const struct mxa_dense *c,
			 uint32_t flags, enum mxa_pref pref);

/* One GEMM of a batch. */
struct mxa_gemm_op {
	const struct mxa_matrix *a;
	const struct mxa_matrix *b;
	const struct mxa_dense *c;
	uint32_t flags;
};

#define MXA_BATCH_MAX 4096

/*
 * Run count (1..MXA_BATCH_MAX) GEMMs in order as one batch: on a device
 * with queues they travel in as few submissions as the device allows.
 * All are validated and resolved before any runs; with fence NULL the call
 * returns when all are done, else *fence signals that (and carries the
 * first error).  Ops run in order, so an op may read an earlier op's C.
 */
int mxa_gemm_batch(struct mxa_device *dev, const struct mxa_gemm_op *ops,
		   unsigned int count, enum mxa_pref pref,
		   struct mxa_fence **fence);

/*
 * Since 0.2: grouped GEMM, torch._scaled_grouped_mm's semantics (MoE).
 * offsets holds count int32 cumulative group ends (torch's offs), in a
 * buffer of dev at offsets_offset (a multiple of 4); group g spans
 * [ends[g-1], ends[g]) (ends[-1] = 0).  The ends must not decrease and the
 * last must equal the grouped extent; empty groups are allowed.
 *
 * MXA_GROUP_2D_3D (forward, dgrad): a is [total_M x K], its rows split into
 *   groups; b is one group's [N x K] (b->rows = N), the count groups
 *   stacked: group g's codes start g * N rows after b's first, its plain
 *   scales g * N scale rows after, its swizzled scales g *
 *   mxa_scale_bytes(swizzled, N, K) bytes after (torchao's per-group 3d
 *   layout); c is [total_M x N].  A's swizzled scales are each group's
 *   rows swizzled on their own, group g at sum over h < g of 128 *
 *   ceil(size_h / 128) scale rows (torchao's 2d M-groups layout).
 * MXA_GROUP_2D_2D (wgrad): a is [M x total_K], b is [N x total_K], the K
 *   columns split into groups at multiples of the block size (32, or 16
 *   when both are NVFP4); c is count stacked [M x N] results (c->rows =
 *   count * M).  Swizzled scales of a (and b) are each group's [M x
 *   blocks_g] swizzled on their own, group g at sum over h < g of
 *   4 * ceil(blocks_h / 4) * 128 * ceil(M / 128) bytes (torchao's 2d
 *   K-groups layout).  An empty group's C is 0 (C_in, rounded, with
 *   MXA_GEMM_ACCUMULATE).
 * Every group is the dense mxa_gemm() of its parts, with its numerics: the
 * EMULATED result is bit-identical to per-group mxa_gemm() calls.
 * Errors are mxa_gemm()'s, plus -EINVAL for a bad kind, count (1 ..
 * MXA_GROUPS_MAX), offsets_offset, decreasing or negative ends, a last end
 * other than the extent, a K boundary off the block size or reserved != 0;
 * -EOVERFLOW when the offsets or a group's operands overrun their buffer.
 * Queries and plans use MXA_OP_GEMM_GROUPED with m = a->rows, n = N, k =
 * a->cols.  Offsets are read at validation where the host can read the
 * buffer (always on the cpu).  Where it cannot (cuda), the kernel checks
 * the ends and writes nothing for malformed ones; the call returns their
 * error where it waits for the device, not in stream mode.
 */
enum mxa_group_kind {
	MXA_GROUP_2D_3D = 0,	/* groups along M; B one matrix per group */
	MXA_GROUP_2D_2D = 1,	/* groups along K; C one matrix per group */
};

#define MXA_GROUPS_MAX 65536

struct mxa_grouped {
	enum mxa_group_kind kind;
	uint32_t count;			/* groups, 1 .. MXA_GROUPS_MAX */
	struct mxa_buffer *offsets;	/* count int32 cumulative ends */
	size_t offsets_offset;		/* bytes, a multiple of 4 */
	uint32_t reserved[4];		/* must be 0 */
};

int mxa_gemm_grouped(struct mxa_device *dev, const struct mxa_matrix *a,
		     const struct mxa_matrix *b, const struct mxa_dense *c,
		     const struct mxa_grouped *groups, uint32_t flags,
		     enum mxa_pref pref);

/*
 * Wait for a fence.  timeout_ns < 0 waits forever; 0 polls.  Returns 0 when
 * the job completed successfully, -ETIME if the timeout expired first, or the
 * job's own error.
 */
int mxa_fence_wait(struct mxa_fence *fence, int64_t timeout_ns);
/* Frees the fence, waiting for its job first if it is still running. */
void mxa_fence_free(struct mxa_fence *fence);

/* --- dispatch introspection ---------------------------------------------- */

/*
 * Which kernel would run desc on dev under pref, and why.  -EOPNOTSUPP (with
 * out->support = MXA_SUPPORT_NONE and out->reason) when nothing can;
 * -EINVAL for a malformed desc or an invalid $MXACCEL_KERNEL.
 */
int mxa_plan(struct mxa_device *dev, const struct mxa_op_desc *desc,
	     enum mxa_pref pref, struct mxa_plan *out);
/*
 * Can dev run desc under pref?  Returns 0 and fills out in every case where
 * the question is well formed, including "unsupported" (MXA_SUPPORT_NONE
 * with the reason); -EINVAL for a malformed desc.  The answer may depend on
 * the shape and output type; m, n, k may be 0 to ask about any shape.
 */
int mxa_query(struct mxa_device *dev, const struct mxa_op_desc *desc,
	      enum mxa_pref pref, struct mxa_capability *out);

#ifdef __cplusplus
}
#endif

#endif /* MXACCEL_H */
