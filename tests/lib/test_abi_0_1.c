// SPDX-License-Identifier: MIT
/*
 * A program built against libmxaccel 0.1 keeps working with 0.2: the
 * functions whose structs grew are called here through their MXACCEL_0.1
 * versions (dlvsym, what the dynamic linker binds an old binary to) with
 * the 0.1 struct layouts, each followed in memory by bytes of 0xa5 where
 * 0.2 has new fields, and they must give what the 0.2 versions give on the
 * same zero-extended request, bit for bit; the 0.1 recipe functions never
 * show a recipe (NVFP4) that a 0.1 struct mxa_recipe cannot hold, and never
 * write past it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxaccel.h"
#include "testlib.h"

/* 0.1's layouts, as a 0.1 header declared them. */
struct matrix_0_1 {
	struct mxa_buffer *data;
	size_t data_offset;
	size_t data_stride;
	struct mxa_buffer *scale;
	size_t scale_offset;
	size_t scale_stride;
	enum mxa_elem elem;
	enum mxa_scale_layout scale_layout;
	uint32_t rows;
	uint32_t cols;
};

struct desc_0_1 {
	enum mxa_op op;
	enum mxa_elem a_elem, b_elem;
	enum mxa_dtype dtype;
	enum mxa_scale_mode mode;
	uint32_t m, n, k;
	uint32_t flags;
};

struct recipe_0_1 {
	enum mxa_elem elem;
	enum mxa_scale_mode mode;
};

struct gemm_op_0_1 {
	const struct matrix_0_1 *a, *b;
	const struct mxa_dense *c;
	uint32_t flags;
};

/* A 0.1 struct with what 0.2 would read as its new fields poisoned. */
struct poisoned_matrix {
	struct matrix_0_1 m;
	uint8_t poison[sizeof(struct mxa_matrix)];
};

struct poisoned_desc {
	struct desc_0_1 d;
	uint8_t poison[sizeof(struct mxa_op_desc)];
};

struct poisoned_recipe {
	struct recipe_0_1 r;
	uint8_t poison[sizeof(struct mxa_recipe)];
};

static void *lib;

static void *old_fn(const char *name)
{
	void *f = dlvsym(lib, name, "MXACCEL_0.1");

	CHECK(f, "%s@MXACCEL_0.1 is missing: %s", name, dlerror());
	if (!f) {
		test_finish();
		exit(1);
	}
	return f;
}

static bool poisoned(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0xa5)
			return false;
	return true;
}

static struct mxa_buffer *buffer(struct mxa_device *dev, size_t size)
{
	struct mxa_buffer *b = NULL;

	if (mxa_buffer_alloc(dev, size, &b)) {
		printf("cannot allocate %zu bytes\n", size);
		exit(1);
	}
	return b;
}

static void fill_random(struct mxa_buffer *b, size_t size, unsigned int mod)
{
	uint8_t *p = malloc(size);
	size_t i;

	for (i = 0; i < size; i++)
		p[i] = (uint8_t)(mod ? 120 + test_rand_below(mod) :
				 test_rand_below(256));
	mxa_buffer_write(b, 0, p, size);
	free(p);
}

static bool same_bytes(struct mxa_buffer *x, struct mxa_buffer *y, size_t n)
{
	uint8_t *a = malloc(n), *b = malloc(n);
	bool same = !mxa_buffer_read(x, 0, a, n) &&
		    !mxa_buffer_read(y, 0, b, n) && !memcmp(a, b, n);

	free(a);
	free(b);
	return same;
}

static void test_recipes(void)
{
	const char *(*at)(unsigned int index) = old_fn("mxa_recipe_at");
	int (*parse)(const char *s, struct recipe_0_1 *out) =
		old_fn("mxa_recipe_parse");
	const char *(*name)(const struct recipe_0_1 *r) =
		old_fn("mxa_recipe_name");
	struct poisoned_recipe pr;
	unsigned int i, n_old = 0, n_new = 0;
	const char *s;

	for (i = 0; (s = at(i)); i++) {
		struct mxa_recipe r;

		n_old++;
		memset(&pr, 0xa5, sizeof(pr));
		CHECK_RET(parse(s, &pr.r), 0);
		CHECK(poisoned(pr.poison, sizeof(pr.poison)),
		      "recipe_parse@0.1('%s') wrote past a 0.1 struct", s);
		CHECK(name(&pr.r) && !strcmp(name(&pr.r), s),
		      "recipe_name@0.1 of '%s' is '%s'", s,
		      name(&pr.r) ? name(&pr.r) : "(null)");
		CHECK_RET(mxa_recipe_parse(s, &r), 0);
		CHECK(r.scale_type == MXA_SCALE_E8M0 && r.elem == pr.r.elem &&
		      r.mode == pr.r.mode, "'%s' differs between 0.1 and 0.2", s);
	}
	for (i = 0; mxa_recipe_at(i); i++)
		n_new++;
	CHECK(n_old == 10 && n_new == 11,
	      "0.1 lists %u recipes (want the 10 MX ones), 0.2 lists %u",
	      n_old, n_new);
	memset(&pr, 0xa5, sizeof(pr));
	CHECK_RET(parse("nvfp4", &pr.r), -EINVAL);
	CHECK(poisoned((const uint8_t *)&pr, sizeof(pr)),
	      "a refused recipe_parse@0.1 wrote");
	pr.r.elem = MXA_ELEM_E2M1;
	pr.r.mode = MXA_SCALE_NVFP4;
	CHECK(!name(&pr.r), "recipe_name@0.1 names {e2m1, nvfp4}");
}

/* A random e4m3 x e2m1 GEMM (K = 96) through both versions. */
static void test_gemm(struct mxa_device *cpu)
{
	int (*gemm)(struct mxa_device *dev, const struct matrix_0_1 *a,
		    const struct matrix_0_1 *b, const struct mxa_dense *c,
		    uint32_t flags, enum mxa_pref pref) = old_fn("mxa_gemm");
	int (*gemm_async)(struct mxa_device *dev, const struct matrix_0_1 *a,
			  const struct matrix_0_1 *b,
			  const struct mxa_dense *c, uint32_t flags,
			  enum mxa_pref pref, struct mxa_fence **fence) =
		old_fn("mxa_gemm_async");
	int (*batch)(struct mxa_device *dev, const struct gemm_op_0_1 *ops,
		     unsigned int count, enum mxa_pref pref,
		     struct mxa_fence **fence) = old_fn("mxa_gemm_batch");
	static const uint8_t zeros[5 * 7 * 4];
	const uint32_t m = 5, n = 7, k = 96;
	struct mxa_buffer *ad = buffer(cpu, m * k), *as = buffer(cpu, m * 3);
	struct mxa_buffer *bd = buffer(cpu, n * k / 2), *bs = buffer(cpu, n * 3);
	struct mxa_buffer *c_old = buffer(cpu, m * n * 4);
	struct mxa_buffer *c_new = buffer(cpu, m * n * 4);
	struct poisoned_matrix pa, pb;
	struct mxa_matrix a = { .data = ad, .scale = as, .elem = MXA_ELEM_E4M3,
				.rows = m, .cols = k };
	struct mxa_matrix b = { .data = bd, .scale = bs, .elem = MXA_ELEM_E2M1,
				.rows = n, .cols = k };
	struct mxa_dense co = { .buf = c_old, .rows = m, .cols = n };
	struct mxa_dense cn = { .buf = c_new, .rows = m, .cols = n };
	struct gemm_op_0_1 op = { &pa.m, &pb.m, &co, 0 };
	struct mxa_fence *f = NULL;

	fill_random(ad, m * k, 0);
	fill_random(bd, n * k / 2, 0);
	fill_random(as, m * 3, 16);
	fill_random(bs, n * 3, 16);
	memset(&pa, 0xa5, sizeof(pa));
	memset(&pb, 0xa5, sizeof(pb));
	memcpy(&pa.m, &a, sizeof(pa.m));
	memcpy(&pb.m, &b, sizeof(pb.m));

	CHECK_RET(mxa_gemm(cpu, &a, &b, &cn, 0, MXA_PREF_EMULATED), 0);
	CHECK_RET(gemm(cpu, &pa.m, &pb.m, &co, 0, MXA_PREF_EMULATED), 0);
	CHECK(same_bytes(c_old, c_new, m * n * 4),
	      "gemm@0.1 differs from gemm@0.2");
	mxa_buffer_write(c_old, 0, zeros, sizeof(zeros));
	CHECK_RET(gemm_async(cpu, &pa.m, &pb.m, &co, 0, MXA_PREF_EMULATED, &f),
		  0);
	CHECK_RET(mxa_fence_wait(f, -1), 0);
	mxa_fence_free(f);
	CHECK(same_bytes(c_old, c_new, m * n * 4),
	      "gemm_async@0.1 differs from gemm@0.2");
	mxa_buffer_write(c_old, 0, zeros, sizeof(zeros));
	CHECK_RET(batch(cpu, &op, 1, MXA_PREF_EMULATED, NULL), 0);
	CHECK(same_bytes(c_old, c_new, m * n * 4),
	      "gemm_batch@0.1 differs from gemm@0.2");
	CHECK_RET(batch(cpu, &op, 0, MXA_PREF_EMULATED, NULL), -EINVAL);
	CHECK_RET(batch(cpu, NULL, 1, MXA_PREF_EMULATED, NULL), -EINVAL);
	/* 0.1 validation as before: K not a multiple of 32. */
	pa.m.cols = pb.m.cols = 48;
	CHECK_RET(gemm(cpu, &pa.m, &pb.m, &co, 0, MXA_PREF_AUTO), -EINVAL);
	CHECK_RET(gemm(cpu, NULL, &pb.m, &co, 0, MXA_PREF_AUTO), -EINVAL);

	mxa_buffer_free(ad);
	mxa_buffer_free(as);
	mxa_buffer_free(bd);
	mxa_buffer_free(bs);
	mxa_buffer_free(c_old);
	mxa_buffer_free(c_new);
}

static void test_quantize(struct mxa_device *cpu)
{
	int (*quant)(struct mxa_device *dev, const struct mxa_dense *src,
		     const struct matrix_0_1 *dst, enum mxa_scale_mode mode,
		     enum mxa_pref pref) = old_fn("mxa_quantize");
	int (*dequant)(struct mxa_device *dev, const struct matrix_0_1 *src,
		       const struct mxa_dense *dst, enum mxa_pref pref) =
		old_fn("mxa_dequantize");
	const uint32_t rows = 3, cols = 64;
	struct mxa_buffer *src = buffer(cpu, rows * cols * 4);
	struct mxa_buffer *d_old = buffer(cpu, rows * cols),
			  *d_new = buffer(cpu, rows * cols);
	struct mxa_buffer *s_old = buffer(cpu, rows * 2),
			  *s_new = buffer(cpu, rows * 2);
	struct mxa_buffer *o_old = buffer(cpu, rows * cols * 4),
			  *o_new = buffer(cpu, rows * cols * 4);
	struct mxa_dense in = { .buf = src, .rows = rows, .cols = cols };
	struct mxa_dense out_old = { .buf = o_old, .rows = rows, .cols = cols };
	struct mxa_dense out_new = { .buf = o_new, .rows = rows, .cols = cols };
	struct mxa_matrix mn = { .data = d_new, .scale = s_new,
				 .elem = MXA_ELEM_E5M2, .rows = rows,
				 .cols = cols };
	struct poisoned_matrix po;
	float *x = malloc(rows * cols * 4);
	uint32_t i;

	for (i = 0; i < rows * cols; i++)
		x[i] = test_rand_float(1000.0f);
	mxa_buffer_write(src, 0, x, rows * cols * 4);
	memset(&po, 0xa5, sizeof(po));
	po.m = (struct matrix_0_1){ .data = d_old, .scale = s_old,
				    .elem = MXA_ELEM_E5M2, .rows = rows,
				    .cols = cols };
	CHECK_RET(mxa_quantize(cpu, &in, &mn, MXA_SCALE_RCEIL, MXA_PREF_AUTO),
		  0);
	CHECK_RET(quant(cpu, &in, &po.m, MXA_SCALE_RCEIL, MXA_PREF_AUTO), 0);
	CHECK(same_bytes(d_old, d_new, rows * cols) &&
	      same_bytes(s_old, s_new, rows * 2),
	      "quantize@0.1 differs from quantize@0.2");
	CHECK_RET(quant(cpu, &in, &po.m, MXA_SCALE_NVFP4, MXA_PREF_AUTO),
		  -EINVAL);
	CHECK_RET(mxa_dequantize(cpu, &mn, &out_new, MXA_PREF_AUTO), 0);
	CHECK_RET(dequant(cpu, &po.m, &out_old, MXA_PREF_AUTO), 0);
	CHECK(same_bytes(o_old, o_new, rows * cols * 4),
	      "dequantize@0.1 differs from dequantize@0.2");
	free(x);
	mxa_buffer_free(src);
	mxa_buffer_free(d_old);
	mxa_buffer_free(d_new);
	mxa_buffer_free(s_old);
	mxa_buffer_free(s_new);
	mxa_buffer_free(o_old);
	mxa_buffer_free(o_new);
}

static void test_plan(struct mxa_device *cpu)
{
	int (*plan)(struct mxa_device *dev, const struct desc_0_1 *d,
		    enum mxa_pref pref, struct mxa_plan *out) =
		old_fn("mxa_plan");
	int (*query)(struct mxa_device *dev, const struct desc_0_1 *d,
		     enum mxa_pref pref, struct mxa_capability *out) =
		old_fn("mxa_query");
	struct mxa_op_desc d = { .op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
				 .b_elem = MXA_ELEM_E4M3, .m = 64, .n = 64,
				 .k = 256 };
	struct poisoned_desc pd;
	struct mxa_plan p_old, p_new;
	struct mxa_capability c_old, c_new;

	memset(&pd, 0xa5, sizeof(pd));
	memcpy(&pd.d, &d, sizeof(pd.d));
	CHECK_RET(mxa_plan(cpu, &d, MXA_PREF_AUTO, &p_new), 0);
	CHECK_RET(plan(cpu, &pd.d, MXA_PREF_AUTO, &p_old), 0);
	CHECK(!strcmp(p_old.kernel, p_new.kernel) &&
	      p_old.support == p_new.support,
	      "plan@0.1 picks %s, plan@0.2 %s", p_old.kernel, p_new.kernel);
	CHECK_RET(mxa_query(cpu, &d, MXA_PREF_EMULATED, &c_new), 0);
	CHECK_RET(query(cpu, &pd.d, MXA_PREF_EMULATED, &c_old), 0);
	CHECK(!strcmp(c_old.kernel, c_new.kernel) &&
	      c_old.support == c_new.support,
	      "query@0.1 says %s, query@0.2 %s", c_old.kernel, c_new.kernel);
	CHECK_RET(plan(cpu, NULL, MXA_PREF_AUTO, &p_old), -EINVAL);
}

int main(void)
{
	struct mxa_device *cpu;

	test_seed(0x302e31);
	lib = dlopen("libmxaccel.so.0", RTLD_NOW | RTLD_NOLOAD);
	if (!lib) {
		/* A static build has no symbol versions to test. */
		printf("skip: libmxaccel.so.0 is not loaded (static link)\n");
		return TEST_SKIP;
	}
	if (mxa_device_open("cpu", &cpu)) {
		printf("cannot open the cpu device\n");
		return 1;
	}
	test_recipes();
	test_gemm(cpu);
	test_quantize(cpu);
	test_plan(cpu);
	mxa_device_close(cpu);
	printf("0.1 versions: recipes, gemm, gemm_async, gemm_batch, quantize, dequantize, plan, query\n");
	return test_finish();
}
