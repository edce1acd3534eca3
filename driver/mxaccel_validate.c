// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of SUBMIT's operations (the ethos-u model): every field in
 * struct order, every operand's extent against its buffer object with
 * checked arithmetic, outputs that overlap inputs, all before anything is
 * queued.  Each failure names the op, the operand and the limit.
 */
#include <linux/align.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "mxaccel_drv.h"
#include "mxaccel_engine.h"
#include "mxaccel_gem.h"
#include "mxaccel_job.h"
#include "mxaccel_validate.h"
#include "mxaccel_geom.h"

struct check_ctx {
	struct drm_device *drm;
	struct drm_file *file;
	struct mxaccel_job *job;
	const struct mxaccel_engine_limits *limits;
};

/*
 * Index of a buffer object in the job, added on first use.  Objects are
 * compared, not handles: two handles may name one object (GEM_OPEN), and
 * it must be locked, fenced and overlap-checked as one.
 */
static int bo_index(struct check_ctx *ctx, u32 handle, unsigned int access,
		    u32 *out)
{
	struct mxaccel_job *job = ctx->job;
	struct drm_gem_object *obj;
	u32 i;

	obj = drm_gem_object_lookup(ctx->file, handle);
	if (!obj)
		return mxaccel_inval(ctx->drm, -ENOENT,
				     "submit: no buffer object %u\n", handle);
	for (i = 0; i < job->bo_count; i++) {
		if (&job->bos[i].bo->base.base == obj) {
			drm_gem_object_put(obj);
			job->bos[i].read |= access & MXACCEL_BO_READ;
			job->bos[i].write |= access & MXACCEL_BO_WRITE;
			*out = i;
			return 0;
		}
	}
	/* bo_max covers every operand of every op: this cannot overflow. */
	job->bos[i].bo = to_mxaccel_bo(obj);
	job->bos[i].read = access & MXACCEL_BO_READ;
	job->bos[i].write = access & MXACCEL_BO_WRITE;
	job->bo_count++;
	*out = i;
	return 0;
}

/*
 * Record that an operand covers bytes [offset, offset + (rows - 1) * stride
 * + row_bytes) of a buffer object, which must hold them.
 */
static int add_span(struct check_ctx *ctx, u32 op, unsigned int which,
		    const char *name, u32 handle, u64 offset, u64 rows,
		    u64 stride, u64 row_bytes, unsigned int access)
{
	struct mxaccel_span *sp = &ctx->job->spans[op][which];
	u32 align = ctx->limits->offset_align;
	u64 end;
	int ret;

	if (!IS_ALIGNED(offset, align) || !IS_ALIGNED(stride, align))
		return mxaccel_inval(ctx->drm, -EINVAL,
				     "submit: op %u %s: offset %llu / stride %llu not a multiple of %u (the engine's alignment)\n",
				     op, name, offset, stride, align);
	if (check_mul_overflow(rows - 1, stride, &end) ||
	    check_add_overflow(end, row_bytes, &end) ||
	    check_add_overflow(end, offset, &end))
		return mxaccel_inval(ctx->drm, -EOVERFLOW,
				     "submit: op %u %s extent overflows\n",
				     op, name);
	ret = bo_index(ctx, handle, access, &sp->bo);
	if (ret)
		return ret;
	if (end > ctx->job->bos[sp->bo].bo->base.base.size)
		return mxaccel_inval(ctx->drm, -EINVAL,
				     "submit: op %u %s needs %llu bytes, buffer object %u has %zu\n",
				     op, name, end, handle,
				     ctx->job->bos[sp->bo].bo->base.base.size);
	sp->lo = offset;
	sp->hi = end;
	sp->used = true;
	return 0;
}

/* Largest positive finite fp32: bits above it are Inf, NaN or negative. */
#define F32_MAX_FINITE_BITS	0x7f7fffffu

/*
 * The scaling of an operand beyond what the core's geometry rules cover:
 * the engine's scale types for the op, and the per-tensor scale.
 */
static int check_block_scale(struct check_ctx *ctx, u32 op, const char *name,
			     const struct drm_mxaccel_block_scale *bs,
			     u64 scale_types)
{
	struct drm_device *drm = ctx->drm;

	if (!(scale_types & BIT_ULL(bs->scale_type)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s_scale: scale_type %u: the engine does not run it for this op (mask 0x%llx)\n",
				     op, name, bs->scale_type, scale_types);
	if (bs->scale_type != DRM_MXACCEL_SCALE_TYPE_UE4M3 && bs->tensor_scale)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s_scale: tensor_scale 0x%08x with E8M0 scales: only UE4M3 scales take one\n",
				     op, name, bs->tensor_scale);
	if (bs->tensor_scale > F32_MAX_FINITE_BITS)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s_scale: tensor_scale 0x%08x is not a positive finite fp32 (0x00000001..0x%08x, or 0)\n",
				     op, name, bs->tensor_scale,
				     F32_MAX_FINITE_BITS);
	return 0;
}

static int check_mx(struct check_ctx *ctx, u32 op, const char *name,
		    const struct drm_mxaccel_mx_operand *mx,
		    const struct drm_mxaccel_block_scale *bs, u64 scale_types,
		    u32 rows, u32 cols, unsigned int data, unsigned int access)
{
	struct mxcore_geom g = mxaccel_mx_geom(mx, bs, rows, cols);
	struct drm_device *drm = ctx->drm;
	enum mxcore_geom_fault fault;
	u64 value, limit, span = 0;
	char text[128];
	int ret;

	if (!mxcore_elem_valid(mx->elem) ||
	    !(ctx->limits->elem_mask & BIT_ULL(mx->elem)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s: element type %u\n",
				     op, name, mx->elem);
	if (bs->pad)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u %s_scale: pad is not zero\n",
				     op, name);
	/*
	 * The rules are the core's, the library's too (mxcore_geom.h):
	 * scale type, block size, UE4M3 only with e2m1, K a multiple of
	 * the block, strides.
	 */
	fault = mxcore_geom_check(&g, &value, &limit);
	if (fault) {
		snprintf(text, sizeof(text), mxcore_geom_fault_text(fault),
			 value, limit);
		return mxaccel_inval(drm, -EINVAL, "submit: op %u %s: %s\n",
				     op, name, text);
	}
	ret = check_block_scale(ctx, op, name, bs, scale_types);
	if (ret)
		return ret;
	ret = add_span(ctx, op, data, name, mx->data_handle, mx->data_offset,
		       rows, mxcore_geom_data_stride(&g),
		       mxcore_geom_row_bytes(&g), access);
	if (ret)
		return ret;
	if (g.layout == MXCORE_LAYOUT_SWIZZLED) {
		mxcore_geom_scale_span(&g, &span);
		return add_span(ctx, op, data + 1, name, mx->scale_handle,
				mx->scale_offset, 1, 0, span, access);
	}
	return add_span(ctx, op, data + 1, name, mx->scale_handle,
			mx->scale_offset, rows, mxcore_geom_scale_stride(&g),
			mxcore_geom_blocks(&g), access);
}

static int check_dense(struct check_ctx *ctx, u32 op,
		       const struct drm_mxaccel_dense_operand *d, u32 rows,
		       u32 cols, unsigned int access)
{
	struct drm_device *drm = ctx->drm;
	u64 es, row_bytes, stride;

	if (d->dtype == DRM_MXACCEL_DTYPE_F32)
		es = 4;
	else if (d->dtype == DRM_MXACCEL_DTYPE_BF16)
		es = 2;
	else
		return mxaccel_inval(drm, -EINVAL, "submit: op %u c: dtype %u\n",
				     op, d->dtype);
	row_bytes = cols * es;
	stride = d->stride ? d->stride : row_bytes;
	if (stride < row_bytes || stride % es || d->offset % es)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u c: offset %llu / stride %llu (row %llu bytes, element %llu)\n",
				     op, d->offset, stride, row_bytes, es);
	return add_span(ctx, op, MXACCEL_OPND_C, "c", d->handle, d->offset, rows,
			stride, row_bytes, access);
}

static bool dim_ok(const struct check_ctx *ctx, u32 v)
{
	return v >= 1 && v <= ctx->limits->max_dim;
}

static int check_op(struct check_ctx *ctx, u32 i,
		    const struct drm_mxaccel_op *op)
{
	const struct mxaccel_engine_limits *lim = ctx->limits;
	struct drm_device *drm = ctx->drm;
	int ret;

	if (op->reserved[0] || op->reserved[1])
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: reserved is not zero\n", i);
	if (op->kind >= 64 || !(lim->op_mask & BIT_ULL(op->kind)))
		return mxaccel_inval(drm, -EINVAL, "submit: op %u: kind %u\n",
				     i, op->kind);
	/* K against each operand's block size: check_mx(). */
	if (!dim_ok(ctx, op->m) || !dim_ok(ctx, op->k))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: m %u / k %u (1..%u)\n",
				     i, op->m, op->k, lim->max_dim);

	if (op->kind == DRM_MXACCEL_OP_GEMM) {
		if (op->flags & ~(DRM_MXACCEL_OP_ACCUMULATE |
				  DRM_MXACCEL_OP_EXACT))
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u: unknown flags 0x%x\n",
					     i, op->flags);
		if (op->scale_mode)
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u: scale_mode set on a GEMM\n",
					     i);
		if (!dim_ok(ctx, op->n))
			return mxaccel_inval(drm, -EINVAL,
					     "submit: op %u: n %u (1..%u)\n",
					     i, op->n, lim->max_dim);
		ret = check_mx(ctx, i, "a", &op->a, &op->a_scale,
			       lim->gemm_scale_types, op->m, op->k,
			       MXACCEL_OPND_A_DATA, MXACCEL_BO_READ);
		if (!ret)
			ret = check_mx(ctx, i, "b", &op->b, &op->b_scale,
				       lim->gemm_scale_types, op->n, op->k,
				       MXACCEL_OPND_B_DATA, MXACCEL_BO_READ);
		/* C is an input too when accumulating. */
		if (!ret)
			ret = check_dense(ctx, i, &op->c, op->m, op->n,
					  op->flags & DRM_MXACCEL_OP_ACCUMULATE ?
					  MXACCEL_BO_READ | MXACCEL_BO_WRITE :
					  MXACCEL_BO_WRITE);
		return ret;
	}

	/* QUANTIZE */
	if (op->flags)
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: flags set on a QUANTIZE\n", i);
	if (op->n || memchr_inv(&op->b, 0, sizeof(op->b)) ||
	    memchr_inv(&op->b_scale, 0, sizeof(op->b_scale)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: n, b or b_scale set on a QUANTIZE\n",
				     i);
	if (op->scale_mode >= 64 || !(lim->mode_mask & BIT_ULL(op->scale_mode)))
		return mxaccel_inval(drm, -EINVAL,
				     "submit: op %u: scale_mode %u\n", i,
				     op->scale_mode);
	ret = check_mx(ctx, i, "a", &op->a, &op->a_scale,
		       lim->quantize_scale_types, op->m, op->k,
		       MXACCEL_OPND_A_DATA, MXACCEL_BO_WRITE);
	/* NVFP4 is UE4M3's one mode, and only UE4M3's. */
	if (!ret && (op->scale_mode == DRM_MXACCEL_SCALE_NVFP4) !=
	    (op->a_scale.scale_type == DRM_MXACCEL_SCALE_TYPE_UE4M3))
		ret = mxaccel_inval(drm, -EINVAL,
				    "submit: op %u: scale_mode %u with scale_type %u (UE4M3 takes NVFP4 (%u), E8M0 FLOOR..EVEN)\n",
				    i, op->scale_mode, op->a_scale.scale_type,
				    DRM_MXACCEL_SCALE_NVFP4);
	if (!ret)
		ret = check_dense(ctx, i, &op->c, op->m, op->k, MXACCEL_BO_READ);
	return ret;
}

static bool spans_overlap(const struct mxaccel_span *x, const struct mxaccel_span *y)
{
	return x->used && y->used && x->bo == y->bo && x->lo < y->hi &&
	       y->lo < x->hi;
}

/* Outputs must not overlap any other operand of their op. */
static int check_aliasing(struct check_ctx *ctx, u32 i)
{
	const struct drm_mxaccel_op *op = &ctx->job->ops[i];
	const struct mxaccel_span *sp = ctx->job->spans[i];
	unsigned int out, in;

	for (out = 0; out < MXACCEL_OPND_COUNT; out++) {
		bool is_out = op->kind == DRM_MXACCEL_OP_GEMM ?
			      out == MXACCEL_OPND_C :
			      out == MXACCEL_OPND_A_DATA || out == MXACCEL_OPND_A_SCALE;

		if (!is_out)
			continue;
		for (in = 0; in < MXACCEL_OPND_COUNT; in++)
			if (in != out && spans_overlap(&sp[out], &sp[in]))
				return mxaccel_inval(ctx->drm, -EINVAL,
						     "submit: op %u: output operand %u overlaps operand %u\n",
						     i, out, in);
	}
	return 0;
}

int mxaccel_validate_op(struct mxaccel_job *job, struct drm_file *file,
			u32 i)
{
	struct mxaccel_device *mdev = to_mxaccel(file->minor->dev);
	struct check_ctx ctx = {
		.drm = &mdev->drm,
		.file = file,
		.job = job,
		.limits = &mdev->engine->limits,
	};
	int ret = check_op(&ctx, i, &job->ops[i]);

	return ret ? ret : check_aliasing(&ctx, i);
}
