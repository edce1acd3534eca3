// SPDX-License-Identifier: MIT
/*
 * Preference-based dispatch: (device, operation, preference) -> kernel, by
 * a walk over the backend's kernel table, cached per device.  The same walk
 * answers mxa_plan() and mxa_query(), so what they say is what runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static const char *op_name(enum mxa_op op)
{
	switch (op) {
	case MXA_OP_QUANTIZE:
		return "quantize";
	case MXA_OP_DEQUANTIZE:
		return "dequantize";
	case MXA_OP_GEMM:
		return "gemm";
	case MXA_OP_QUANTIZE_COLWISE:
		return "quantize_colwise";
	case MXA_OP_GEMM_GROUPED:
		return "gemm_grouped";
	case MXA_OP_GEMM_WEIGHT_ONLY:
		return "gemm_weight_only";
	}
	return "?";
}

/* An operand's format for messages: "e5m2", or "e2m1/ue4m3" (NVFP4). */
static const char *format_text(enum mxa_elem elem, enum mxa_scale_type st,
			       char *buf, size_t size)
{
	if (st == MXA_SCALE_E8M0)
		return mxa_elem_name(elem);
	snprintf(buf, size, "%s/%s", mxa_elem_name(elem),
		 mxa_scale_type_name(st));
	return buf;
}

/* Describe an op for messages: "e5m2 x e2m1 gemm". */
static void op_text(const struct mxa_op_desc *d, char *buf, size_t size)
{
	char fa[32], fb[32];

	if (d->op == MXA_OP_GEMM || d->op == MXA_OP_GEMM_GROUPED)
		snprintf(buf, size, "%s x %s %s",
			 format_text(d->a_elem, d->a_scale_type, fa, sizeof(fa)),
			 format_text(d->b_elem, d->b_scale_type, fb, sizeof(fb)),
			 op_name(d->op));
	else if (d->op == MXA_OP_GEMM_WEIGHT_ONLY)
		snprintf(buf, size, "%s x %s weight-only gemm",
			 mxa_dtype_name(d->a_dtype) ? mxa_dtype_name(d->a_dtype) : "?",
			 format_text(d->b_elem, d->b_scale_type, fb, sizeof(fb)));
	else
		snprintf(buf, size, "%s %s",
			 format_text(d->a_elem, d->a_scale_type, fa, sizeof(fa)),
			 op_name(d->op));
}

/* One operand's element and scale types (side "a" or "b"). */
static int check_format(const struct mxa_op_desc *d, const char *side,
			enum mxa_elem elem, enum mxa_scale_type st)
{
	if (!mxcore_elem_valid(elem))
		return mxa__err(-EINVAL, "%s: unknown element type %d for %s",
				op_name(d->op), (int)elem, side);
	if ((unsigned int)st > MXCORE_SCALE_TYPE_LAST)
		return mxa__err(-EINVAL, "%s: unknown scale type %d for %s",
				op_name(d->op), (int)st, side);
	if (st == MXA_SCALE_UE4M3 && elem != MXA_ELEM_E2M1)
		return mxa__err(-EINVAL,
				"%s: %s elements with UE4M3 scales for %s: only e2m1 (NVFP4) has them",
				op_name(d->op), mxa_elem_name(elem), side);
	if (d->k % mxcore_scale_block((enum mxcore_scale_type)st))
		return mxa__err(-EINVAL,
				"%s: K = %u is not a multiple of %s's block size %u",
				op_name(d->op), d->k, side,
				mxcore_scale_block((enum mxcore_scale_type)st));
	return 0;
}

/* Weight-only gemm: a dense A (a_dtype), no A format, B's format. */
static int check_weight_only(const struct mxa_op_desc *d)
{
	if (d->a_elem || d->a_scale_type)
		return mxa__err(-EINVAL,
				"gemm_weight_only: a_elem (%d) and a_scale_type (%d) must be 0: A is dense (a_dtype)",
				(int)d->a_elem, (int)d->a_scale_type);
	if (d->a_dtype != MXA_DTYPE_F32 && d->a_dtype != MXA_DTYPE_BF16)
		return mxa__err(-EINVAL, "gemm_weight_only: unknown a_dtype %d",
				(int)d->a_dtype);
	if (d->dtype != MXA_DTYPE_F32 && d->dtype != MXA_DTYPE_BF16)
		return mxa__err(-EINVAL, "gemm_weight_only: unknown dtype %d",
				(int)d->dtype);
	if (d->flags & ~MXA_GEMM_ACCUMULATE)
		return mxa__err(-EINVAL, "gemm_weight_only: unknown flags 0x%x",
				d->flags & ~MXA_GEMM_ACCUMULATE);
	return check_format(d, "b", d->b_elem, d->b_scale_type);
}

static int check_desc(const struct mxa_op_desc *d, enum mxa_pref pref)
{
	unsigned int i;
	int ret;

	if (pref != MXA_PREF_AUTO && pref != MXA_PREF_NATIVE &&
	    pref != MXA_PREF_EMULATED)
		return mxa__err(-EINVAL, "unknown kernel preference %d",
				(int)pref);
	if (d->op != MXA_OP_QUANTIZE && d->op != MXA_OP_DEQUANTIZE &&
	    d->op != MXA_OP_GEMM && d->op != MXA_OP_QUANTIZE_COLWISE &&
	    d->op != MXA_OP_GEMM_GROUPED && d->op != MXA_OP_GEMM_WEIGHT_ONLY)
		return mxa__err(-EINVAL, "unknown operation %d", (int)d->op);
	for (i = 0; i < MXA_ARRAY_SIZE(d->reserved); i++)
		if (d->reserved[i])
			return mxa__err(-EINVAL, "%s: reserved[%u] is not 0",
					op_name(d->op), i);
	if (d->op == MXA_OP_GEMM_WEIGHT_ONLY)
		return check_weight_only(d);
	if (d->a_dtype)
		return mxa__err(-EINVAL, "%s: a_dtype %d is for weight-only gemm: must be 0",
				op_name(d->op), (int)d->a_dtype);
	ret = check_format(d, "a", d->a_elem, d->a_scale_type);
	if (!ret && (d->op == MXA_OP_GEMM || d->op == MXA_OP_GEMM_GROUPED))
		ret = check_format(d, "b", d->b_elem, d->b_scale_type);
	if (ret)
		return ret;
	if (d->dtype != MXA_DTYPE_F32 && d->dtype != MXA_DTYPE_BF16)
		return mxa__err(-EINVAL, "%s: unknown dtype %d", op_name(d->op),
				(int)d->dtype);
	if (d->op == MXA_OP_QUANTIZE || d->op == MXA_OP_QUANTIZE_COLWISE) {
		bool ue4m3 = d->a_scale_type == MXA_SCALE_UE4M3;

		if ((unsigned int)d->mode > MXA_SCALE_NVFP4)
			return mxa__err(-EINVAL, "quantize: unknown scale mode %d",
					(int)d->mode);
		if (ue4m3 != (d->mode == MXA_SCALE_NVFP4))
			return mxa__err(-EINVAL,
					"quantize: scale mode %s with %s scales (UE4M3 takes nvfp4, E8M0 floor/rceil/ceil/even)",
					mxa_scale_mode_name(d->mode),
					mxa_scale_type_name(d->a_scale_type));
	}
	if ((d->op == MXA_OP_GEMM || d->op == MXA_OP_GEMM_GROUPED) &&
	    (d->flags & ~MXA_GEMM_ACCUMULATE))
		return mxa__err(-EINVAL, "%s: unknown flags 0x%x",
				op_name(d->op), d->flags & ~MXA_GEMM_ACCUMULATE);
	return 0;
}

static bool pref_allows(enum mxa_pref pref, const struct mxa_kernel *k)
{
	switch (pref) {
	case MXA_PREF_NATIVE:
		return k->native;
	case MXA_PREF_EMULATED:
		return k->exact;
	case MXA_PREF_AUTO:
		return true;
	}
	return false;
}

/*
 * $MXACCEL_KERNEL: a preference name overrides the caller's preference, a
 * kernel name of this device's backend forces that kernel for the
 * operation it implements (other operations resolve as usual).  Anything
 * else is an error, never a silent default.
 */
static int env_override(struct mxa_device *dev, enum mxa_op op,
			enum mxa_pref *pref, const struct mxa_kernel **forced)
{
	const char *s = getenv("MXACCEL_KERNEL");
	const struct mxa_backend *b = dev->backend;
	unsigned int i;

	*forced = NULL;
	if (!s || !*s)
		return 0;
	if (!strcmp(s, "auto") || !strcmp(s, "native") ||
	    !strcmp(s, "emulated"))
		return mxa_pref_parse(s, pref);
	for (i = 0; i < b->n_kernels; i++) {
		if (!strcmp(b->kernels[i].name, s)) {
			if (b->kernels[i].op == op)
				*forced = &b->kernels[i];
			return 0;
		}
	}
	return mxa__err(-EINVAL,
			"MXACCEL_KERNEL='%s' is neither auto|native|emulated nor a kernel of %s",
			s, dev->info.name);
}

/* NULL if k takes desc's scale types, else why not. */
static const char *scale_types_reject(const struct mxa_kernel *k,
				      const struct mxa_op_desc *desc)
{
	uint32_t mask = k->scale_types ? k->scale_types :
			MXA_KERNEL_SCALES(MXA_SCALE_E8M0);

	bool a_mx = desc->op != MXA_OP_GEMM_WEIGHT_ONLY;
	bool b_mx = desc->op == MXA_OP_GEMM ||
		    desc->op == MXA_OP_GEMM_GROUPED ||
		    desc->op == MXA_OP_GEMM_WEIGHT_ONLY;

	if ((a_mx && !(mask & MXA_KERNEL_SCALES(desc->a_scale_type))) ||
	    (b_mx &&
	     !(mask & MXA_KERNEL_SCALES(desc->b_scale_type))))
		return mask == MXA_KERNEL_SCALES(MXA_SCALE_E8M0) ?
		       "E8M0 (MX) scales only" : "not these scale types";
	return NULL;
}

/* NULL if k can run desc on dev, else why not. */
static const char *kernel_reject(struct mxa_device *dev,
				 const struct mxa_kernel *k,
				 const struct mxa_op_desc *desc)
{
	const char *no = scale_types_reject(k, desc);

	if (!no && k->reject)
		no = k->reject(dev, desc);
	return no;
}

static int walk(struct mxa_device *dev, const struct mxa_op_desc *desc,
		enum mxa_pref pref, const struct mxa_kernel **out,
		char *reason, size_t size)
{
	const struct mxa_backend *b = dev->backend;
	const struct mxa_kernel *best = NULL;
	const char *why = NULL;
	int rank, best_rank = 0;
	char what[64];
	unsigned int i;

	for (i = 0; i < b->n_kernels; i++) {
		const struct mxa_kernel *k = &b->kernels[i];
		const char *no;

		if (k->op != desc->op || !pref_allows(pref, k))
			continue;
		no = kernel_reject(dev, k, desc);
		if (no) {
			why = no;
			continue;
		}
		rank = k->rank_for ? k->rank_for(dev, desc) : k->rank;
		if (!best || rank > best_rank) {
			best = k;
			best_rank = rank;
		}
	}
	if (best) {
		*out = best;
		return 0;
	}
	op_text(desc, what, sizeof(what));
	snprintf(reason, size, "%s has no %s%s kernel%s%s", dev->info.name,
		 pref == MXA_PREF_NATIVE ? "native " :
		 pref == MXA_PREF_EMULATED ? "exact " : "", what,
		 why ? ": " : "", why ? why : "");
	return -EOPNOTSUPP;
}

static bool desc_equal(const struct mxa_op_desc *a, const struct mxa_op_desc *b)
{
	return a->op == b->op && a->a_elem == b->a_elem &&
	       a->b_elem == b->b_elem && a->dtype == b->dtype &&
	       a->mode == b->mode && a->m == b->m && a->n == b->n &&
	       a->k == b->k && a->flags == b->flags &&
	       a->a_scale_type == b->a_scale_type &&
	       a->b_scale_type == b->b_scale_type && a->a_dtype == b->a_dtype;
}

int mxa__resolve(struct mxa_device *dev, const struct mxa_op_desc *desc,
		 enum mxa_pref *pref_io, const struct mxa_kernel **out,
		 char *reason, size_t size)
{
	enum mxa_pref pref = *pref_io;
	const struct mxa_kernel *forced;
	struct mxa_op_desc key = *desc;
	unsigned int i;
	int ret;

	*reason = '\0';
	if (desc->op != MXA_OP_GEMM && desc->op != MXA_OP_GEMM_GROUPED &&
	    desc->op != MXA_OP_GEMM_WEIGHT_ONLY) {
		key.b_elem = 0;
		key.b_scale_type = 0;
	}
	if (desc->op != MXA_OP_QUANTIZE && desc->op != MXA_OP_QUANTIZE_COLWISE)
		key.mode = 0;
	ret = check_desc(&key, pref);
	if (!ret)
		ret = env_override(dev, key.op, &pref, &forced);
	*pref_io = pref;
	if (ret) {
		snprintf(reason, size, "invalid request (MXACCEL_DEBUG=1 says why)");
		return ret;
	}
	if (forced) {
		const char *no = kernel_reject(dev, forced, &key);

		if (no) {
			snprintf(reason, size, "MXACCEL_KERNEL=%s cannot run this: %s",
				 forced->name, no);
			return mxa__err(-EOPNOTSUPP, "%s", reason);
		}
		*out = forced;
		snprintf(reason, size, "forced by MXACCEL_KERNEL=%s",
			 forced->name);
		return 0;
	}

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < MXA_PLAN_CACHE; i++) {
		struct mxa_plan_cache_entry *e = &dev->cache[i];

		if (e->valid && e->pref == pref && desc_equal(&e->key, &key)) {
			*out = e->kernel;
			ret = e->err;
			pthread_mutex_unlock(&dev->lock);
			if (ret)
				return walk(dev, &key, pref, out, reason, size);
			return 0;
		}
	}
	pthread_mutex_unlock(&dev->lock);

	ret = walk(dev, &key, pref, out, reason, size);
	pthread_mutex_lock(&dev->lock);
	i = dev->cache_next++ % MXA_PLAN_CACHE;
	dev->cache[i] = (struct mxa_plan_cache_entry){
		.valid = true, .key = key, .pref = pref,
		.kernel = ret ? NULL : *out, .err = ret,
	};
	pthread_mutex_unlock(&dev->lock);
	if (ret)
		return mxa__err(ret, "%s", reason);
	return 0;
}

static void describe(struct mxa_device *dev, const struct mxa_kernel *k,
		     enum mxa_pref pref, const char *why, char *buf,
		     size_t size)
{
	const char *how;

	if (*why)
		how = why;
	else if (pref == MXA_PREF_NATIVE)
		how = "NATIVE: the device's native kernel";
	else if (pref == MXA_PREF_EMULATED)
		how = "EMULATED: the exact reference semantics";
	else if (k->native)
		how = "AUTO: the fastest kernel for this request";
	else
		how = "AUTO: no native kernel for this request, using the exact one";
	snprintf(buf, size, "%s on %s; %s", how, dev->info.name, k->summary);
}

MXA_EXPORT int mxa_plan(struct mxa_device *dev, const struct mxa_op_desc *desc,
			enum mxa_pref pref, struct mxa_plan *out)
{
	const struct mxa_kernel *k;
	char why[MXA_REASON_MAX];
	int ret;

	if (!dev || !desc || !out)
		return mxa__err(-EINVAL, "plan: NULL argument");
	memset(out, 0, sizeof(*out));
	ret = mxa__resolve(dev, desc, &pref, &k, why, sizeof(why));
	mxa__strlcpy(out->device, dev->info.name, sizeof(out->device));
	out->pref = pref;
	if (ret) {
		out->support = MXA_SUPPORT_NONE;
		mxa__strlcpy(out->reason, why, sizeof(out->reason));
		return ret;
	}
	mxa__strlcpy(out->kernel, k->name, sizeof(out->kernel));
	out->support = k->native ? MXA_SUPPORT_NATIVE : MXA_SUPPORT_EMULATED;
	out->exact = k->exact;
	describe(dev, k, pref, why, out->reason, sizeof(out->reason));
	if (mxa__debug())
		mxa__dbg("plan: %s -> %s (%s)", dev->info.name, k->name,
			 out->reason);
	return 0;
}
MXA_SYMVER(mxa_plan, "MXACCEL_0.2");

MXA_EXPORT int mxa_query(struct mxa_device *dev,
			 const struct mxa_op_desc *desc, enum mxa_pref pref,
			 struct mxa_capability *out)
{
	struct mxa_plan plan;
	int ret;

	if (!dev || !desc || !out)
		return mxa__err(-EINVAL, "query: NULL argument");
	memset(out, 0, sizeof(*out));
	ret = mxa_plan(dev, desc, pref, &plan);
	if (ret && ret != -EOPNOTSUPP)
		return ret;
	out->support = plan.support;
	mxa__strlcpy(out->kernel, plan.kernel, sizeof(out->kernel));
	mxa__strlcpy(out->reason, plan.reason, sizeof(out->reason));
	return 0;
}
MXA_SYMVER(mxa_query, "MXACCEL_0.2");
