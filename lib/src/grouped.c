// SPDX-License-Identifier: MIT
/*
 * Grouped GEMM (mxa_gemm_grouped(), torch._scaled_grouped_mm): where each
 * group's codes, scales and results live, stated once as a walk that turns
 * group g into a dense GEMM job, and the validation built on that walk:
 * every group must be a valid mxa_gemm() of its own.  Scale layouts follow
 * torchao's per-group ones (Documentation/library.rst, "Grouped GEMM").
 * A group's geometry is group_geom.h's, shared with the CUDA plugin's
 * device code.
 */
#include <stdio.h>
#include <string.h>

#include "group_geom.h"

static uint32_t block_of(const struct mxa_matrix *m)
{
	return mxa__block(m);
}

void mxa__group_iter_init(struct mxa_group_iter *it, const struct mxa_job *job,
			  const int32_t *ends)
{
	memset(it, 0, sizeof(*it));
	it->job = job;
	it->ends = ends;
}

bool mxa__group_next(struct mxa_group_iter *it, struct mxa_job *sub,
		     bool *empty)
{
	const struct mxa_job *job = it->job;
	const struct mxa_dense *c = &job->dense;
	uint32_t g = it->g, end, size;
	uint64_t c_row0;

	if (g >= job->groups.count)
		return false;
	end = (uint32_t)it->ends[g];
	size = end - it->start;
	*sub = *job;
	sub->op = MXA_OP_GEMM;
	memset(&sub->groups, 0, sizeof(sub->groups));
	sub->dense.stride = mxa__dense_stride(c);
	mxa__group_operands(job->groups.kind, &job->a, &job->b, g, it->start,
			    end, &it->a_swz, &it->b_swz, &sub->a, &sub->b,
			    &c_row0, &sub->dense.rows);
	sub->dense.offset += (size_t)c_row0 * mxa__dense_stride(c);
	*empty = !size;
	it->start = end;
	it->g++;
	return true;
}

/* Grow s, the bytes one operand touches over all groups, by e. */
static void span_add(struct mxa_extent *s, const struct mxa_extent *e)
{
	if (s->hi == s->lo) {
		s->lo = e->lo;
		s->hi = e->hi;
		return;
	}
	if (e->lo < s->lo)
		s->lo = e->lo;
	if (e->hi > s->hi)
		s->hi = e->hi;
}

static void matrix_spans(const struct mxa_matrix *m, struct mxa_extent *data,
			 struct mxa_extent *scale)
{
	struct mxa_extent e = mxa__data_extent(m, NULL);

	span_add(data, &e);
	e = mxa__scale_extent(m, NULL);
	span_add(scale, &e);
}

/* The ends: non-negative, non-decreasing, the last = extent, on blocks. */
static int check_ends(const struct mxa_grouped *groups, const int32_t *ends,
		      uint32_t extent, uint32_t kblock)
{
	const char *dim = groups->kind == MXA_GROUP_2D_3D ? "M" : "K";
	int64_t prev = 0;
	uint32_t i;

	for (i = 0; i < groups->count; i++) {
		if (ends[i] < prev)
			return mxa__err(-EINVAL,
					"gemm_grouped: offsets[%u] = %d is below %s (offsets must not decrease and start at >= 0)",
					i, ends[i], i ? "offsets[i - 1]" : "0");
		if ((uint32_t)ends[i] > extent)
			return mxa__err(-EINVAL,
					"gemm_grouped: offsets[%u] = %d is beyond the total %s = %u",
					i, ends[i], dim, extent);
		if (kblock && ends[i] % kblock)
			return mxa__err(-EINVAL,
					"gemm_grouped: offsets[%u] = %d: K group boundaries must be multiples of the block size %u",
					i, ends[i], kblock);
		prev = ends[i];
	}
	if ((uint32_t)prev != extent)
		return mxa__err(-EINVAL,
				"gemm_grouped: the last offset (offsets[%u] = %d) must equal the total %s = %u",
				groups->count - 1, (int)prev, dim, extent);
	return 0;
}

static int check_offsets_buffer(struct mxa_device *dev,
				const struct mxa_grouped *groups)
{
	const struct mxa_buffer *buf = groups->offsets;
	size_t end;

	if (!buf)
		return mxa__err(-EINVAL, "gemm_grouped: offsets buffer is NULL");
	if (buf->dev != dev)
		return mxa__err(-EXDEV,
				"gemm_grouped: offsets buffer belongs to device %s, not %s",
				buf->dev->info.name, dev->info.name);
	if (groups->offsets_offset % 4)
		return mxa__err(-EINVAL,
				"gemm_grouped: offsets_offset %zu is not a multiple of 4 (int32 ends)",
				groups->offsets_offset);
	if (__builtin_add_overflow(groups->offsets_offset,
				   (size_t)groups->count * 4, &end) ||
	    end > buf->size)
		return mxa__err(-EOVERFLOW,
				"gemm_grouped: %u offsets at %zu need %zu bytes, buffer has %zu",
				groups->count, groups->offsets_offset,
				groups->offsets_offset + (size_t)groups->count * 4,
				buf->size);
	return 0;
}

/*
 * What C must not overlap: A's and B's codes and scales (empty, for the
 * caller to grow with span_add()) and the offsets.
 */
#define GROUP_INPUTS 5

static void group_inputs(const struct mxa_job *job,
			 struct mxa_extent in[GROUP_INPUTS])
{
	const struct mxa_grouped *g = &job->groups;

	in[0] = (struct mxa_extent){ job->a.data, 0, 0, "a data" };
	in[1] = (struct mxa_extent){ job->a.scale, 0, 0, "a scale" };
	in[2] = (struct mxa_extent){ job->b.data, 0, 0, "b data" };
	in[3] = (struct mxa_extent){ job->b.scale, 0, 0, "b scale" };
	in[4] = (struct mxa_extent){ g->offsets, g->offsets_offset,
				     g->offsets_offset + (size_t)g->count * 4,
				     "offsets" };
}

/* C's span (out) apart from every input's. */
static int check_apart(const struct mxa_extent *out,
		       const struct mxa_extent in[GROUP_INPUTS])
{
	unsigned int i;
	int ret;

	for (i = 0; i < GROUP_INPUTS; i++) {
		ret = mxa__check_overlap("gemm_grouped", out, &in[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Every group as the dense GEMM it is: operands inside their buffers, C
 * apart from everything it must not overwrite.
 */
static int check_groups(struct mxa_device *dev, const struct mxa_job *job,
			const int32_t *ends)
{
	struct mxa_extent in[GROUP_INPUTS];
	struct mxa_extent out = { job->dense.buf, 0, 0, "c" }, e;
	struct mxa_group_iter it;
	struct mxa_job sub;
	char what[64];
	bool empty;
	int ret;

	group_inputs(job, in);
	mxa__group_iter_init(&it, job, ends);
	while (mxa__group_next(&it, &sub, &empty)) {
		uint32_t g = it.g - 1;

		if (empty && job->groups.kind == MXA_GROUP_2D_3D)
			continue;
		snprintf(what, sizeof(what), "gemm_grouped: group %u c", g);
		ret = mxa__check_dense(dev, what, &sub.dense);
		if (ret)
			return ret;
		e = mxa__dense_extent(&sub.dense, NULL);
		span_add(&out, &e);
		if (empty)
			continue;
		snprintf(what, sizeof(what), "gemm_grouped: group %u a", g);
		ret = mxa__check_matrix(dev, what, &sub.a);
		if (ret)
			return ret;
		snprintf(what, sizeof(what), "gemm_grouped: group %u b", g);
		ret = mxa__check_matrix(dev, what, &sub.b);
		if (ret)
			return ret;
		matrix_spans(&sub.a, &in[0], &in[1]);
		matrix_spans(&sub.b, &in[2], &in[3]);
	}
	return check_apart(&out, in);
}

/*
 * A's or B's scales when the groups' sizes are unknown: plain ones lie in
 * the whole matrix's rows; per-group swizzled ones anywhere from
 * scale_offset to the buffer's end.
 */
static void scale_span_blind(const struct mxa_matrix *m, struct mxa_extent *s)
{
	struct mxa_extent e = mxa__scale_extent(m, NULL);

	if (m->scale_layout == MXA_LAYOUT_SWIZZLED)
		e.hi = m->scale->size;
	span_add(s, &e);
}

/*
 * Offsets the host cannot read (device memory): what does not depend on
 * them is checked here, the ends by the device's kernel, which writes
 * nothing for malformed ones.  2d x 3d: the last group's B inside its
 * buffers (the stack does not depend on the ends); C apart from every
 * input, each taken as wide as any ends could make it.
 */
static int check_groups_blind(struct mxa_device *dev, const struct mxa_job *job)
{
	struct mxa_extent in[GROUP_INPUTS];
	struct mxa_extent out = mxa__dense_extent(&job->dense, "c"), e;
	struct mxa_matrix last = job->b;
	int ret;

	group_inputs(job, in);
	if (job->groups.kind == MXA_GROUP_2D_3D) {
		mxa__group_stack_part(&job->b, job->groups.count - 1, &last);
		ret = mxa__check_matrix(dev, "gemm_grouped: the last group's b",
					&last);
		if (ret)
			return ret;
		e = mxa__data_extent(&last, NULL);
		span_add(&in[2], &e);
		e = mxa__scale_extent(&last, NULL);
		span_add(&in[3], &e);
	}
	e = mxa__data_extent(&job->a, NULL);
	span_add(&in[0], &e);
	e = mxa__data_extent(&job->b, NULL);
	span_add(&in[2], &e);
	scale_span_blind(&job->a, &in[1]);
	scale_span_blind(&job->b, &in[3]);
	return check_apart(&out, in);
}

int mxa__check_gemm_grouped(struct mxa_device *dev, const struct mxa_matrix *a,
			    const struct mxa_matrix *b, const struct mxa_dense *c,
			    const struct mxa_grouped *groups, uint32_t flags,
			    struct mxa_op_desc *desc, struct mxa_job *job)
{
	uint32_t extent, kblock = 0;
	unsigned int i;
	int ret;

	if (!groups)
		return mxa__err(-EINVAL, "gemm_grouped: groups is NULL");
	if (groups->kind != MXA_GROUP_2D_3D && groups->kind != MXA_GROUP_2D_2D)
		return mxa__err(-EINVAL, "gemm_grouped: unknown group kind %d",
				(int)groups->kind);
	if (!groups->count || groups->count > MXA_GROUPS_MAX)
		return mxa__err(-EINVAL, "gemm_grouped: count %u is not 1..%u",
				groups->count, MXA_GROUPS_MAX);
	for (i = 0; i < MXA_ARRAY_SIZE(groups->reserved); i++)
		if (groups->reserved[i])
			return mxa__err(-EINVAL,
					"gemm_grouped: groups reserved[%u] is not 0",
					i);
	if (flags & ~MXA_GEMM_ACCUMULATE)
		return mxa__err(-EINVAL, "gemm_grouped: unknown flags 0x%x",
				flags & ~MXA_GEMM_ACCUMULATE);
	ret = mxa__check_matrix(dev, "gemm_grouped: a", a);
	if (!ret)
		ret = mxa__check_matrix(dev, "gemm_grouped: b", b);
	if (!ret)
		ret = mxa__check_dense(dev, "gemm_grouped: c", c);
	if (!ret)
		ret = check_offsets_buffer(dev, groups);
	if (ret)
		return ret;
	if (a->cols != b->cols)
		return mxa__err(-EINVAL, "gemm_grouped: a has K = %u but b has K = %u",
				a->cols, b->cols);
	if (groups->kind == MXA_GROUP_2D_3D) {
		extent = a->rows;
		if (c->rows != a->rows || c->cols != b->rows)
			return mxa__err(-EINVAL,
					"gemm_grouped: c is %ux%u but 2d x 3d makes total_M x N = %ux%u",
					c->rows, c->cols, a->rows, b->rows);
	} else {
		extent = a->cols;
		kblock = block_of(a) > block_of(b) ? block_of(a) : block_of(b);
		if ((uint64_t)c->rows != (uint64_t)groups->count * a->rows ||
		    c->cols != b->rows)
			return mxa__err(-EINVAL,
					"gemm_grouped: c is %ux%u but 2d x 2d makes (count * M) x N = %llux%u",
					c->rows, c->cols,
					(unsigned long long)groups->count * a->rows,
					b->rows);
	}

	*desc = (struct mxa_op_desc){ .op = MXA_OP_GEMM_GROUPED,
				      .a_elem = a->elem, .b_elem = b->elem,
				      .dtype = c->dtype, .m = a->rows,
				      .n = b->rows, .k = a->cols,
				      .flags = flags,
				      .a_scale_type = a->scale_type,
				      .b_scale_type = b->scale_type };
	*job = (struct mxa_job){ .op = MXA_OP_GEMM_GROUPED, .a = *a, .b = *b,
				 .dense = *c, .flags = flags,
				 .groups = *groups };
	/*
	 * Offsets the host cannot read (device memory) are the kernel's to
	 * check, with these rules (cuda-grouped-exact: lib/cuda/cuda_exact.cuh).
	 */
	if (!groups->offsets->host)
		return check_groups_blind(dev, job);
	{
		const int32_t *ends = (const int32_t *)
			((const uint8_t *)groups->offsets->host +
			 groups->offsets_offset);

		ret = check_ends(groups, ends, extent, kblock);
		if (!ret)
			ret = check_groups(dev, job, ends);
	}
	return ret;
}
