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

#include "internal.h"

struct mxa_backend;

/* A validated request.  Copies, so an async job owns its description. */
struct mxa_job {
	enum mxa_op op;
	struct mxa_matrix a;	/* quantize: dst; dequantize: src; gemm: A */
	struct mxa_matrix b;	/* gemm: B */
	struct mxa_dense dense;	/* quantize: src; dequantize: dst; gemm: C */
	enum mxa_scale_mode mode;
	uint32_t flags;
};

struct mxa_kernel {
	const char *name;
	const char *summary;	/* one line for plans: what it computes */
	enum mxa_op op;
	bool native;		/* the device's own fast path */
	bool exact;		/* implements the exact reference semantics */
	int rank;		/* higher wins under AUTO */
	/* NULL if the kernel can run desc on dev, else why not. */
	const char *(*reject)(struct mxa_device *dev,
			      const struct mxa_op_desc *desc);
	int (*run)(struct mxa_device *dev, const struct mxa_job *job);
};

struct mxa_backend {
	const char *name;
	/* Count devices; on 0, write why into reason. */
	unsigned int (*probe)(char *reason, size_t size);
	int (*open)(struct mxa_device *dev);
	void (*close)(struct mxa_device *dev);
	int (*buf_alloc)(struct mxa_buffer *buf);
	void (*buf_free)(struct mxa_buffer *buf);
	/* Copy between host memory and a buffer without a host mapping. */
	int (*buf_copy)(struct mxa_buffer *buf, size_t offset, void *host,
			size_t size, bool to_device);
	/* Optional: worker threads of the device. */
	int (*set_threads)(struct mxa_device *dev, unsigned int threads);
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
/* Effective strides (0 means packed). */
size_t mxa__data_stride(const struct mxa_matrix *m);
size_t mxa__scale_stride(const struct mxa_matrix *m);
size_t mxa__dense_stride(const struct mxa_dense *d);

/* fence.c: run job on a thread of its own, signalling the fence. */
int mxa__fence_start(struct mxa_device *dev, const struct mxa_kernel *k,
		     const struct mxa_job *job, struct mxa_fence **out);

#endif /* MXA_BACKEND_H */
