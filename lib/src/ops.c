// SPDX-License-Identifier: MIT
/*
 * The public operations: each validates its arguments, resolves a kernel
 * and runs it (or starts it, for the async variant).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* Of validated operands: their spans fit their buffers. */
struct mxa_extent mxa__data_extent(const struct mxa_matrix *m,
				   const char *name)
{
	struct mxcore_geom g = mxa__geom(m);
	uint64_t span = 0;

	mxcore_geom_data_span(&g, &span);
	return (struct mxa_extent){ m->data, m->data_offset,
				    m->data_offset + (size_t)span, name };
}

struct mxa_extent mxa__scale_extent(const struct mxa_matrix *m,
				    const char *name)
{
	struct mxcore_geom g = mxa__geom(m);
	uint64_t span = 0;

	mxcore_geom_scale_span(&g, &span);
	return (struct mxa_extent){ m->scale, m->scale_offset,
				    m->scale_offset + (size_t)span, name };
}

struct mxa_extent mxa__dense_extent(const struct mxa_dense *d,
				    const char *name)
{
	return (struct mxa_extent){ d->buf, d->offset, d->offset +
				    (d->rows - 1) * mxa__dense_stride(d) +
				    (size_t)d->cols *
				    mxcore_dtype_size(d->dtype), name };
}

int mxa__check_overlap(const char *what, const struct mxa_extent *out,
		       const struct mxa_extent *in)
{
	if (out->buf == in->buf && in->lo < in->hi && out->lo < in->hi &&
	    in->lo < out->hi)
		return mxa__err(-EINVAL, "%s: %s [%zu, %zu) overlaps %s [%zu, %zu)",
				what, out->name, out->lo, out->hi, in->name,
				in->lo, in->hi);
	return 0;
}

/* Resolve a validated job to the kernel that will run it. */
static int resolve(struct mxa_device *dev, const struct mxa_op_desc *desc,
		   enum mxa_pref pref, const struct mxa_job *job,
		   struct mxa_work *work)
{
	char reason[MXA_REASON_MAX];
	int ret;

	ret = mxa__resolve(dev, desc, &pref, &work->kernel, reason,
			   sizeof(reason));
	if (ret)
		return ret;
	work->job = *job;
	mxa__dbg("%s: %s runs on %s (%s)", dev->info.name,
		 work->kernel->name, dev->info.name,
		 *reason ? reason : mxa_pref_name(pref));
	return 0;
}

/*
 * Run works in order: queued on the device when the backend can take them
 * all, else on the calling thread (sync) or a thread of their own (async).
 */
static int dispatch(struct mxa_device *dev, const struct mxa_work *works,
		    unsigned int count, struct mxa_fence **fence)
{
	struct mxa_fence *f;
	bool queued = dev->backend->submit != NULL;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < count; i++)
		queued = queued && !works[i].kernel->run;
	if (queued && !fence && dev->backend->submit_wait)
		return dev->backend->submit_wait(dev, works, count);
	if (queued) {
		ret = dev->backend->submit(dev, works, count, fence ? fence : &f);
		if (ret || fence)
			return ret;
		ret = mxa_fence_wait(f, -1);
		mxa_fence_free(f);
		return ret;
	}
	for (i = 0; i < count; i++)
		if (!works[i].kernel->run)
			return mxa__err(-EOPNOTSUPP,
					"%s: kernel %s cannot be mixed with host kernels in one batch",
					dev->info.name, works[i].kernel->name);
	if (fence)
		return mxa__fence_thread(dev, works, count, fence);
	for (i = 0; i < count && !ret; i++)
		ret = works[i].kernel->run(dev, &works[i].job);
	return ret;
}

static int run(struct mxa_device *dev, const struct mxa_op_desc *desc,
	       enum mxa_pref pref, const struct mxa_job *job,
	       struct mxa_fence **fence)
{
	struct mxa_work work;
	int ret = resolve(dev, desc, pref, job, &work);

	return ret ? ret : dispatch(dev, &work, 1, fence);
}

/*
 * mxa_quantize() and mxa_quantize_colwise(): dst is src's shape, or its
 * transpose; name prefixes the messages.
 */
static int do_quantize(struct mxa_device *dev, const struct mxa_dense *src,
		       const struct mxa_matrix *dst, enum mxa_scale_mode mode,
		       enum mxa_pref pref, enum mxa_op op, const char *name,
		       bool transposed)
{
	struct mxa_op_desc desc;
	struct mxa_job job;
	struct mxa_extent ed, es, ein;
	char what[32];
	int ret;

	if (!dev)
		return mxa__err(-EINVAL, "%s: dev is NULL", name);
	snprintf(what, sizeof(what), "%s: src", name);
	ret = mxa__check_dense(dev, what, src);
	if (!ret) {
		snprintf(what, sizeof(what), "%s: dst", name);
		ret = mxa__check_matrix(dev, what, dst);
	}
	if (ret)
		return ret;
	if (!transposed && (src->rows != dst->rows || src->cols != dst->cols))
		return mxa__err(-EINVAL, "%s: src is %ux%u but dst is %ux%u",
				name, src->rows, src->cols, dst->rows,
				dst->cols);
	if (transposed && (src->rows != dst->cols || src->cols != dst->rows))
		return mxa__err(-EINVAL,
				"%s: src is %ux%u, so dst must be %ux%u (its transpose), not %ux%u",
				name, src->rows, src->cols, src->cols,
				src->rows, dst->rows, dst->cols);
	ed = mxa__data_extent(dst, "dst data");
	es = mxa__scale_extent(dst, "dst scale");
	ein = mxa__dense_extent(src, "src");
	ret = mxa__check_overlap(name, &ed, &ein);
	if (!ret)
		ret = mxa__check_overlap(name, &es, &ein);
	if (!ret)
		ret = mxa__check_overlap(name, &ed, &es);
	if (ret)
		return ret;

	desc = (struct mxa_op_desc){ .op = op, .a_elem = dst->elem,
				     .dtype = src->dtype, .mode = mode,
				     .m = dst->rows, .k = dst->cols,
				     .a_scale_type = dst->scale_type };
	job = (struct mxa_job){ .op = op, .a = *dst, .dense = *src,
				.mode = mode };
	return run(dev, &desc, pref, &job, NULL);
}

MXA_EXPORT int mxa_quantize(struct mxa_device *dev,
			    const struct mxa_dense *src,
			    const struct mxa_matrix *dst,
			    enum mxa_scale_mode mode, enum mxa_pref pref)
{
	return do_quantize(dev, src, dst, mode, pref, MXA_OP_QUANTIZE,
			   "quantize", false);
}
MXA_SYMVER(mxa_quantize, "MXACCEL_0.2");

/* src [R x C] row-major into dst [C x R]: the transpose, quantized. */
MXA_EXPORT int mxa_quantize_colwise(struct mxa_device *dev,
				    const struct mxa_dense *src,
				    const struct mxa_matrix *dst,
				    enum mxa_scale_mode mode, enum mxa_pref pref)
{
	return do_quantize(dev, src, dst, mode, pref, MXA_OP_QUANTIZE_COLWISE,
			   "quantize_colwise", true);
}

MXA_EXPORT int mxa_dequantize(struct mxa_device *dev,
			      const struct mxa_matrix *src,
			      const struct mxa_dense *dst, enum mxa_pref pref)
{
	struct mxa_op_desc desc;
	struct mxa_job job;
	struct mxa_extent eout, ed, es;
	int ret;

	if (!dev)
		return mxa__err(-EINVAL, "dequantize: dev is NULL");
	ret = mxa__check_matrix(dev, "dequantize: src", src);
	if (!ret)
		ret = mxa__check_dense(dev, "dequantize: dst", dst);
	if (ret)
		return ret;
	if (src->rows != dst->rows || src->cols != dst->cols)
		return mxa__err(-EINVAL,
				"dequantize: src is %ux%u but dst is %ux%u",
				src->rows, src->cols, dst->rows, dst->cols);
	eout = mxa__dense_extent(dst, "dst");
	ed = mxa__data_extent(src, "src data");
	es = mxa__scale_extent(src, "src scale");
	ret = mxa__check_overlap("dequantize", &eout, &ed);
	if (!ret)
		ret = mxa__check_overlap("dequantize", &eout, &es);
	if (ret)
		return ret;

	desc = (struct mxa_op_desc){ .op = MXA_OP_DEQUANTIZE,
				     .a_elem = src->elem, .dtype = dst->dtype,
				     .m = src->rows, .k = src->cols,
				     .a_scale_type = src->scale_type };
	job = (struct mxa_job){ .op = MXA_OP_DEQUANTIZE, .a = *src,
				.dense = *dst };
	return run(dev, &desc, pref, &job, NULL);
}
MXA_SYMVER(mxa_dequantize, "MXACCEL_0.2");

/*
 * The rules of C = A * B^T that mxa_gemm() and mxa_gemm_weight_only()
 * share, A being a_rows x a_cols (block-scaled or dense).
 */
static int check_gemm_dims(const char *name, uint32_t flags, uint32_t a_rows,
			   uint32_t a_cols, const struct mxa_matrix *b,
			   const struct mxa_dense *c)
{
	if (flags & ~MXA_GEMM_ACCUMULATE)
		return mxa__err(-EINVAL, "%s: unknown flags 0x%x", name,
				flags & ~MXA_GEMM_ACCUMULATE);
	if (a_cols != b->cols)
		return mxa__err(-EINVAL, "%s: a has K = %u but b has K = %u",
				name, a_cols, b->cols);
	if (c->rows != a_rows || c->cols != b->rows)
		return mxa__err(-EINVAL, "%s: c is %ux%u but a*b^T is %ux%u",
				name, c->rows, c->cols, a_rows, b->rows);
	return 0;
}

/* Validate one GEMM and describe it. */
static int check_gemm(struct mxa_device *dev, const struct mxa_matrix *a,
		      const struct mxa_matrix *b, const struct mxa_dense *c,
		      uint32_t flags, struct mxa_op_desc *desc,
		      struct mxa_job *job)
{
	struct mxa_extent ec, in[4];
	unsigned int i;
	int ret;

	ret = mxa__check_matrix(dev, "gemm: a", a);
	if (!ret)
		ret = mxa__check_matrix(dev, "gemm: b", b);
	if (!ret)
		ret = mxa__check_dense(dev, "gemm: c", c);
	if (ret)
		return ret;
	ret = check_gemm_dims("gemm", flags, a->rows, a->cols, b, c);
	if (ret)
		return ret;
	ec = mxa__dense_extent(c, "c");
	in[0] = mxa__data_extent(a, "a data");
	in[1] = mxa__scale_extent(a, "a scale");
	in[2] = mxa__data_extent(b, "b data");
	in[3] = mxa__scale_extent(b, "b scale");
	for (i = 0; i < MXA_ARRAY_SIZE(in); i++) {
		ret = mxa__check_overlap("gemm", &ec, &in[i]);
		if (ret)
			return ret;
	}

	*desc = (struct mxa_op_desc){ .op = MXA_OP_GEMM, .a_elem = a->elem,
				      .b_elem = b->elem, .dtype = c->dtype,
				      .m = a->rows, .n = b->rows,
				      .k = a->cols, .flags = flags,
				      .a_scale_type = a->scale_type,
				      .b_scale_type = b->scale_type };
	*job = (struct mxa_job){ .op = MXA_OP_GEMM, .a = *a, .b = *b,
				 .dense = *c, .flags = flags };
	return 0;
}

static int submit_gemm(struct mxa_device *dev, const struct mxa_matrix *a,
		       const struct mxa_matrix *b, const struct mxa_dense *c,
		       uint32_t flags, enum mxa_pref pref,
		       struct mxa_fence **fence)
{
	struct mxa_op_desc desc;
	struct mxa_job job;
	int ret;

	if (!dev)
		return mxa__err(-EINVAL, "gemm: dev is NULL");
	ret = check_gemm(dev, a, b, c, flags, &desc, &job);
	return ret ? ret : run(dev, &desc, pref, &job, fence);
}

MXA_EXPORT int mxa_gemm(struct mxa_device *dev, const struct mxa_matrix *a,
			const struct mxa_matrix *b, const struct mxa_dense *c,
			uint32_t flags, enum mxa_pref pref)
{
	return submit_gemm(dev, a, b, c, flags, pref, NULL);
}
MXA_SYMVER(mxa_gemm, "MXACCEL_0.2");

MXA_EXPORT int mxa_gemm_async(struct mxa_device *dev,
			      const struct mxa_matrix *a,
			      const struct mxa_matrix *b,
			      const struct mxa_dense *c, uint32_t flags,
			      enum mxa_pref pref, struct mxa_fence **fence)
{
	if (!fence)
		return mxa__err(-EINVAL, "gemm_async: fence is NULL");
	*fence = NULL;
	return submit_gemm(dev, a, b, c, flags, pref, fence);
}
MXA_SYMVER(mxa_gemm_async, "MXACCEL_0.2");

/*
 * Weight-only GEMM: dense A, block-scaled B.  The same checks as a GEMM's,
 * with A's dense rules; C may overlap none of A, B's data, B's scales.
 */
MXA_EXPORT int mxa_gemm_weight_only(struct mxa_device *dev,
				    const struct mxa_dense *a,
				    const struct mxa_matrix *b,
				    const struct mxa_dense *c, uint32_t flags,
				    enum mxa_pref pref)
{
	struct mxa_extent ec, in[3];
	struct mxa_op_desc desc;
	struct mxa_job job;
	unsigned int i;
	int ret;

	if (!dev)
		return mxa__err(-EINVAL, "gemm_weight_only: dev is NULL");
	ret = mxa__check_dense(dev, "gemm_weight_only: a", a);
	if (!ret)
		ret = mxa__check_matrix(dev, "gemm_weight_only: b", b);
	if (!ret)
		ret = mxa__check_dense(dev, "gemm_weight_only: c", c);
	if (ret)
		return ret;
	ret = check_gemm_dims("gemm_weight_only", flags, a->rows, a->cols, b,
			      c);
	if (ret)
		return ret;
	ec = mxa__dense_extent(c, "c");
	in[0] = mxa__dense_extent(a, "a");
	in[1] = mxa__data_extent(b, "b data");
	in[2] = mxa__scale_extent(b, "b scale");
	for (i = 0; i < MXA_ARRAY_SIZE(in); i++) {
		ret = mxa__check_overlap("gemm_weight_only", &ec, &in[i]);
		if (ret)
			return ret;
	}

	desc = (struct mxa_op_desc){ .op = MXA_OP_GEMM_WEIGHT_ONLY,
				     .b_elem = b->elem, .dtype = c->dtype,
				     .m = a->rows, .n = b->rows, .k = a->cols,
				     .flags = flags,
				     .b_scale_type = b->scale_type,
				     .a_dtype = a->dtype };
	job = (struct mxa_job){ .op = MXA_OP_GEMM_WEIGHT_ONLY, .b = *b,
				.dense = *c, .flags = flags, .a_dense = *a };
	return run(dev, &desc, pref, &job, NULL);
}

MXA_EXPORT int mxa_gemm_batch(struct mxa_device *dev,
			      const struct mxa_gemm_op *ops,
			      unsigned int count, enum mxa_pref pref,
			      struct mxa_fence **fence)
{
	struct mxa_work *works;
	unsigned int i;
	int ret = 0;

	if (fence)
		*fence = NULL;
	if (!dev || !ops)
		return mxa__err(-EINVAL, "gemm_batch: NULL argument");
	if (!count || count > MXA_BATCH_MAX)
		return mxa__err(-EINVAL, "gemm_batch: count %u is not 1..%u",
				count, MXA_BATCH_MAX);
	works = calloc(count, sizeof(*works));
	if (!works)
		return -ENOMEM;
	/* Everything is validated and resolved before anything runs. */
	for (i = 0; i < count && !ret; i++) {
		struct mxa_op_desc desc;
		struct mxa_job job;

		ret = check_gemm(dev, ops[i].a, ops[i].b, ops[i].c,
				 ops[i].flags, &desc, &job);
		if (!ret)
			ret = resolve(dev, &desc, pref, &job, &works[i]);
		if (ret)
			mxa__dbg("gemm_batch: op %u rejected", i);
	}
	if (!ret)
		ret = dispatch(dev, works, count, fence);
	free(works);
	return ret;
}
MXA_SYMVER(mxa_gemm_batch, "MXACCEL_0.2");

MXA_EXPORT int mxa_gemm_grouped(struct mxa_device *dev,
				const struct mxa_matrix *a,
				const struct mxa_matrix *b,
				const struct mxa_dense *c,
				const struct mxa_grouped *groups,
				uint32_t flags, enum mxa_pref pref)
{
	struct mxa_op_desc desc;
	struct mxa_job job;
	int ret;

	if (!dev)
		return mxa__err(-EINVAL, "gemm_grouped: dev is NULL");
	ret = mxa__check_gemm_grouped(dev, a, b, c, groups, flags, &desc,
				      &job);
	return ret ? ret : run(dev, &desc, pref, &job, NULL);
}
