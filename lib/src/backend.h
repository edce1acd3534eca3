/* SPDX-License-Identifier: MIT */
/*
 * The backend interface.  A backend (cpu, accel, cuda) registers an ops
 * table for devices and buffers and a list of kernels; the front end
 * validates every request, resolves it to a kernel by walking that list
 * (dispatch.c) and hands the kernel a validated job.
 */
#ifndef MXA_BACKEND_H
#define MXA_BACKEND_H

#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "mxcore_geom.h"

struct mxa_backend;

/* A validated request.  Copies, so an async job owns its description. */
struct mxa_job {
	enum mxa_op op;
	struct mxa_matrix a;	/* quantize: dst; dequantize: src; gemm: A */
	struct mxa_matrix b;	/* gemm: B */
	struct mxa_dense dense;	/* quantize: src; dequantize: dst; gemm: C */
	enum mxa_scale_mode mode;
	uint32_t flags;
	struct mxa_grouped groups;	/* gemm_grouped: the groups */
	struct mxa_dense a_dense;	/* weight-only gemm: A (then a is unused) */
};

#define MXA_KERNEL_SCALES(type)	(1u << (unsigned int)(type))

struct mxa_kernel {
	const char *name;
	const char *summary;	/* one line for plans: what it computes */
	enum mxa_op op;
	bool native;		/* the device's own fast path */
	bool exact;		/* implements the exact reference semantics */
	int rank;		/* higher wins under AUTO */
	/*
	 * Scale types the kernel takes on every operand, as a mask of
	 * MXA_KERNEL_SCALES(type); 0 = E8M0 only (every MX kernel).
	 */
	uint32_t scale_types;
	/* NULL if the kernel can run desc on dev, else why not. */
	const char *(*reject)(struct mxa_device *dev,
			      const struct mxa_op_desc *desc);
	/* Run synchronously; NULL for kernels the backend queues (submit). */
	int (*run)(struct mxa_device *dev, const struct mxa_job *job);
	/*
	 * Optional: the rank for this request where it depends on the shape
	 * (a kernel measured faster on some shapes than another that can run
	 * them too); NULL: rank.
	 */
	int (*rank_for)(struct mxa_device *dev,
			const struct mxa_op_desc *desc);
};

/* A validated job and the kernel it resolved to. */
struct mxa_work {
	const struct mxa_kernel *kernel;
	struct mxa_job job;
};

/*
 * A fence.  Backends with device queues embed it in their own fence
 * object; everything else gets the thread fence of fence.c.
 */
struct mxa_fence_ops {
	int (*wait)(struct mxa_fence *fence, int64_t timeout_ns);
	/* Wait for completion, then free. */
	void (*release)(struct mxa_fence *fence);
};

struct mxa_fence {
	const struct mxa_fence_ops *ops;
};

struct mxa_backend {
	const char *name;
	bool wraps_host;	/* mxa_buffer_wrap() of host memory works */
	/* Count devices; on 0, write why into reason. */
	unsigned int (*probe)(char *reason, size_t size);
	int (*open)(struct mxa_device *dev);
	void (*close)(struct mxa_device *dev);
	int (*buf_alloc)(struct mxa_buffer *buf);
	void (*buf_free)(struct mxa_buffer *buf);
	/*
	 * Optional: copy between host memory and a buffer without a host
	 * mapping (backends whose buffers are all mapped leave it NULL).
	 */
	int (*buf_copy)(struct mxa_buffer *buf, size_t offset, void *host,
			size_t size, bool to_device);
	/*
	 * Optional: queue works whose kernels have run == NULL on the device
	 * in order, and return a fence for the last one at once.
	 */
	int (*submit)(struct mxa_device *dev, const struct mxa_work *works,
		      unsigned int count, struct mxa_fence **out);
	/*
	 * Optional: submit and wait until done, for a synchronous call (the
	 * accel backend does both in one ioctl); else submit + fence wait.
	 */
	int (*submit_wait)(struct mxa_device *dev, const struct mxa_work *works,
			   unsigned int count);
	/* Optional: dma-buf sharing. */
	int (*buf_export)(struct mxa_buffer *buf, int *fd);
	int (*buf_import)(struct mxa_buffer *buf, int fd);
	/* Optional: worker threads of the device. */
	int (*set_threads)(struct mxa_device *dev, unsigned int threads);
	/*
	 * Optional: wrap caller memory that is not host memory (a CUDA
	 * device pointer): check ptr for buf->dev, set buf->priv.
	 */
	int (*buf_wrap)(struct mxa_buffer *buf, void *ptr);
	/* Optional: the caller's queue for later work (NULL: the device's own). */
	int (*set_stream)(struct mxa_device *dev, void *stream);
	void *(*get_stream)(struct mxa_device *dev);
	const struct mxa_kernel *kernels;
	unsigned int n_kernels;
};

/* Resolved kernels, per (op signature, preference). */
#define MXA_PLAN_CACHE 32

struct mxa_plan_cache_entry {
	bool valid;
	struct mxa_op_desc key;
	enum mxa_pref pref;
	const struct mxa_kernel *kernel;
	int err;
};

struct mxa_device {
	const struct mxa_backend *backend;
	unsigned int index;
	struct mxa_device_info info;
	void *priv;
	pthread_mutex_t lock;	/* guards the plan cache */
	struct mxa_plan_cache_entry cache[MXA_PLAN_CACHE];
	unsigned int cache_next;
};

struct mxa_buffer {
	struct mxa_device *dev;
	size_t size;
	void *host;		/* host mapping, NULL if not host visible */
	bool wrapped;		/* caller-owned memory */
	void *priv;
};

/* The backends this library knows, in `auto` preference order. */
extern const struct mxa_backend mxa_cpu_backend;

/*
 * dispatch.c: resolve desc on dev under *pref (cached); *pref becomes the
 * preference actually applied ($MXACCEL_KERNEL may override it).
 */
int mxa__resolve(struct mxa_device *dev, const struct mxa_op_desc *desc,
		 enum mxa_pref *pref, const struct mxa_kernel **out,
		 char *reason, size_t size);

/* validate.c */
int mxa__check_matrix(struct mxa_device *dev, const char *what,
		      const struct mxa_matrix *m);
int mxa__check_dense(struct mxa_device *dev, const char *what,
		     const struct mxa_dense *d);
/* The rules mxa__check_matrix() applies that do not need the buffers. */
int mxa__matrix_shape_check(const char *what, const struct mxa_matrix *m);

/*
 * grouped.c: mxa_gemm_grouped()'s validation, and the walk over a grouped
 * job's groups, each a dense GEMM job (the only statement of where a
 * group's codes, scales and results live; kernels of any backend use it).
 */
int mxa__check_gemm_grouped(struct mxa_device *dev, const struct mxa_matrix *a,
			    const struct mxa_matrix *b, const struct mxa_dense *c,
			    const struct mxa_grouped *groups, uint32_t flags,
			    struct mxa_op_desc *desc, struct mxa_job *job);

struct mxa_group_iter {
	const struct mxa_job *job;
	const int32_t *ends;	/* the host-visible offsets */
	uint32_t g;		/* the group next() returns */
	uint32_t start;		/* where it starts (row or K) */
	uint64_t a_swz;		/* its swizzled scales' offsets from */
	uint64_t b_swz;		/* the operands' scale_offset */
};

void mxa__group_iter_init(struct mxa_group_iter *it, const struct mxa_job *job,
			  const int32_t *ends);
/*
 * Group it->g as a dense GEMM job in *sub and advance.  Returns false past
 * the last group.  *empty: the group has no rows (2D_3D: nothing to do) or
 * no K (2D_2D: its C is 0, or C_in rounded); sub's C is set even then.
 * The ends must have passed validation.
 */
bool mxa__group_next(struct mxa_group_iter *it, struct mxa_job *sub,
		     bool *empty);
/*
 * m's geometry for the core's functions (lib/core/mxcore_geom.h, the one
 * source of sizes, strides and scale positions); the helpers below are
 * those functions on a matrix.  Inline: the CUDA plugin uses it too.
 */
static inline MXCORE_GEOM_FN struct mxcore_geom
mxa__geom(const struct mxa_matrix *m)
{
	struct mxcore_geom g;

	g.rows = m->rows;
	g.cols = m->cols;
	g.data_stride = m->data_stride;
	g.scale_stride = m->scale_stride;
	g.elem = (uint32_t)m->elem;
	g.scale_type = (uint32_t)m->scale_type;
	g.block = m->block_size;
	g.layout = (uint32_t)m->scale_layout;
	return g;
}
/* fp32 bits of m's per-tensor scale (NVFP4; 0 = single level). */
static inline MXCORE_GEOM_FN uint32_t
mxa__tensor_scale_bits(const struct mxa_matrix *m)
{
	uint32_t bits;

	memcpy(&bits, &m->tensor_scale, sizeof(bits));
	return bits;
}

/* Element i of a dense fp32 or bf16 row as fp32 bits (bf16 widened exactly). */
static inline MXCORE_GEOM_FN uint32_t mxa__dense_bits(const void *row, bool bf16,
						     uint32_t i)
{
	uint32_t v;

	if (bf16) {
		uint16_t h;

		memcpy(&h, (const uint8_t *)row + 2 * (size_t)i, 2);
		return (uint32_t)h << 16;
	}
	memcpy(&v, (const uint8_t *)row + 4 * (size_t)i, 4);
	return v;
}

/* Effective strides (0 means packed). */
static inline MXCORE_GEOM_FN size_t mxa__data_stride(const struct mxa_matrix *m)
{
	struct mxcore_geom g = mxa__geom(m);

	return (size_t)mxcore_geom_data_stride(&g);
}

static inline MXCORE_GEOM_FN size_t
mxa__scale_stride(const struct mxa_matrix *m)
{
	struct mxcore_geom g = mxa__geom(m);

	return (size_t)mxcore_geom_scale_stride(&g);
}

static inline MXCORE_GEOM_FN size_t mxa__dense_stride(const struct mxa_dense *d)
{
	return (size_t)mxcore_dense_stride((uint32_t)d->dtype, d->cols,
					   d->stride);
}

/* Byte offset of scale (row, block) from the start of m's scales. */
static inline MXCORE_GEOM_FN size_t
mxa__scale_index(const struct mxa_matrix *m, uint32_t row, uint32_t block)
{
	struct mxcore_geom g = mxa__geom(m);

	return (size_t)mxcore_geom_scale_index(&g, row, block);
}

/* Elements per scale of m. */
static inline MXCORE_GEOM_FN uint32_t mxa__block(const struct mxa_matrix *m)
{
	struct mxcore_geom g = mxa__geom(m);

	return mxcore_geom_block(&g);
}

/*
 * fence.c: run works in order on a thread of their own (stopping at the
 * first error); the fence signals when they are done.
 */
int mxa__fence_thread(struct mxa_device *dev, const struct mxa_work *works,
		      unsigned int count, struct mxa_fence **out);

/* The backends this build contains, in `auto` order. */
extern const struct mxa_backend mxa_accel_backend;
/* Filled in when plugin.c loads libmxaccel-cuda.so.0. */
extern struct mxa_backend mxa_cuda_backend;

#endif /* MXA_BACKEND_H */
