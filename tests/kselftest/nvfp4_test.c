// SPDX-License-Identifier: GPL-2.0
/*
 * NVFP4 through the uapi (version 4): the per-operand scaling of struct
 * drm_mxaccel_op (struct drm_mxaccel_block_scale: scale type, block size,
 * fp32 tensor scale) and the GET_PARAM masks that say which engine runs
 * it.
 *
 * - the parameters: version 4, the op size, per-engine scale types;
 * - QUANTIZE to UE4M3 on an engine that has it, checked against values
 *   this test computes with the C library's IEEE float arithmetic (the
 *   torchao rule of Documentation/formats.rst), single and two level,
 *   fp32 and bf16 sources, plain and swizzled scales;
 * - boundaries: the largest finite tensor scale (0x7f7fffff) and the
 *   smallest subnormal are accepted, the next above (Inf) is not; K = 16;
 * - one invalid field per subtest, each with its exact errno, the 0xcc
 *   prefilled outputs untouched;
 * - GEMM with UE4M3 operands (NVFP4 x NVFP4, mixed with MX, two level,
 *   accumulate, fp32 and bf16 C) against sums of the operands' values
 *   that are exact in double, rounded once; a NaN scale;
 * - an engine without UE4M3 (the PCI engine) refuses it with -EINVAL.
 */
#include <math.h>

#include "mxaccel_test.h"

#define E4M3	DRM_MXACCEL_ELEM_E4M3
#define E2M1	DRM_MXACCEL_ELEM_E2M1
#define F32	DRM_MXACCEL_DTYPE_F32
#define BF16	DRM_MXACCEL_DTYPE_BF16
#define UE4M3	DRM_MXACCEL_SCALE_TYPE_UE4M3
#define E8M0	DRM_MXACCEL_SCALE_TYPE_E8M0

/* One buffer object: codes, scales, the dense source. */
#define NV_BO		0x10000
#define NV_DATA		0x0000
#define NV_SCALE	0x1000
#define NV_SRC		0x4000
#define NV_M		8
#define NV_K		64
#define NV_BLOCK	16

static __u64 param(struct __test_metadata *_metadata, int fd, __u32 p)
{
	__u64 v = 0xccccccccccccccccull;

	EXPECT_EQ(0, mxt_get_param(fd, p, &v));
	return v;
}

static bool has_ue4m3_quantize(struct __test_metadata *_metadata, int fd)
{
	return param(_metadata, fd, DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES) &
	       (1ull << UE4M3);
}

/* ---- the reference, in IEEE float (round to nearest even) ------------ */

static float f32_of(__u32 bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* A positive float8_e4m3fn code's value (no NaN: codes <= 0x7e). */
static float e4m3_value(unsigned int code)
{
	unsigned int e = code >> 3, m = code & 7;

	return e ? ldexpf(1.0f + m / 8.0f, (int)e - 7) : ldexpf(m, -9);
}

/*
 * The e4m3 code nearest to a positive s, ties to the even code (the code's
 * low bit is its mantissa's): every code tried, no bit tricks.
 */
static unsigned int e4m3_nearest(float s)
{
	unsigned int c, best = 0;
	double bd = 1e300;

	for (c = 0; c <= 0x7e; c++) {
		double d = fabs((double)e4m3_value(c) - s);

		if (d < bd || (d == bd && !(c & 1))) {
			bd = d;
			best = c;
		}
	}
	return best;
}

/* e2m1 of y: sign, then the nearest of 0 .. 6 (saturating), ties even. */
static unsigned int e2m1_nearest(float y)
{
	static const float mag[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };
	unsigned int c, best = 0;
	double a = fabs((double)y), bd = 1e300;

	for (c = 0; c < 8; c++) {
		double d = fabs(mag[c] - a);

		if (d < bd || (d == bd && !(c & 1))) {
			bd = d;
			best = c;
		}
	}
	return best | (signbit(y) ? 8 : 0);
}

/*
 * torchao nvfp4_quantize() of one block of 16 finite values: the scale
 * code, and the 16 element codes in codes[].
 */
static unsigned int ref_block(const float *x, float ts, unsigned int *codes)
{
	float amax = 0, s, r;
	unsigned int i, sc;

	for (i = 0; i < NV_BLOCK; i++)
		if (fabsf(x[i]) > amax)
			amax = fabsf(x[i]);
	s = amax / 6.0f;
	if (ts != 0)
		s = s / ts;
	s = s < 0x1p-6f ? 0x1p-6f : s > 448.0f ? 448.0f : s;
	sc = e4m3_nearest(s);
	r = ts != 0 ? (1.0f / ts) / e4m3_value(sc) : 1.0f / e4m3_value(sc);
	for (i = 0; i < NV_BLOCK; i++)
		codes[i] = e2m1_nearest(x[i] * r);
	return sc;
}

/* ---- ops ------------------------------------------------------------- */

/* A valid single-level NVFP4 QUANTIZE of NV_M x k fp32 at NV_SRC. */
static void nv_quantize(struct drm_mxaccel_op *op, __u32 handle, __u32 k)
{
	mxt_quantize(op, NV_M, k, DRM_MXACCEL_SCALE_NVFP4);
	mxt_mx(&op->a, handle, NV_DATA, NV_SCALE, E2M1);
	op->a_scale.scale_type = UE4M3;
	mxt_dense(&op->c, handle, NV_SRC, F32);
}

/* Source values over many binades, both signs, some ties, some zeros. */
static __u32 src_bits(unsigned int i, unsigned int seed)
{
	__u32 h = (i + 1) * 2654435761u ^ seed * 40503u;

	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	if (h % 29 == 0)
		return 0;
	/* Exponents 2^-20 .. 2^19, each block differently (i / 16). */
	return (h & 0x80000000u) |
	       (__u32)(107 + (i / NV_BLOCK * 7 + h % 9) % 40) << 23 |
	       (h & 0x7fffff);
}

/* What the helpers below need of the fixture (its first members). */
struct nv_ctx {
	int fd;
	__u32 queue;
	struct mxt_bo bo;
};

FIXTURE(nvfp4) {
	struct nv_ctx c;
};

FIXTURE_SETUP(nvfp4)
{
	self->c.fd = mxt_open();
	ASSERT_LE(0, self->c.fd);
	ASSERT_EQ(0, mxt_queue_create(self->c.fd, &self->c.queue, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->c.fd, NV_BO, &self->c.bo));
}

FIXTURE_TEARDOWN(nvfp4)
{
	if (self->c.fd >= 0) {
		mxt_bo_free(self->c.fd, &self->c.bo);
		close(self->c.fd);
	}
}

TEST_F(nvfp4, params)
{
	__u64 q = param(_metadata, self->c.fd,
			DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES);
	__u64 g = param(_metadata, self->c.fd, DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES);
	__u64 kind = param(_metadata, self->c.fd, DRM_MXACCEL_PARAM_ENGINE_KIND);
	__u64 modes = param(_metadata, self->c.fd,
			    DRM_MXACCEL_PARAM_SCALE_MODE_MASK);

	EXPECT_LE(4, param(_metadata, self->c.fd,
			   DRM_MXACCEL_PARAM_UAPI_VERSION));
	EXPECT_EQ(sizeof(struct drm_mxaccel_op),
		  param(_metadata, self->c.fd, DRM_MXACCEL_PARAM_OP_SIZE));
	EXPECT_EQ(DRM_MXACCEL_OP_SIZE_V1 + 32, sizeof(struct drm_mxaccel_op));
	/* Every engine has E8M0; only known types are reported. */
	EXPECT_EQ(1ull << E8M0, q & ~(1ull << UE4M3));
	EXPECT_EQ(1ull << E8M0, g & ~(1ull << UE4M3));
	/* The NVFP4 mode goes with UE4M3 quantization. */
	EXPECT_EQ(!!(q & (1ull << UE4M3)),
		  !!(modes & (1ull << DRM_MXACCEL_SCALE_NVFP4)));
	/*
	 * The software engine quantizes NVFP4; the PCI device model has no
	 * NVFP4 (Documentation/pci-device.rst).
	 */
	EXPECT_TRUE(kind != DRM_MXACCEL_ENGINE_SOFTWARE ||
		    (q & (1ull << UE4M3)));
	EXPECT_TRUE(kind == DRM_MXACCEL_ENGINE_SOFTWARE || q == 1ull << E8M0);
	TH_LOG("engine %llu: quantize scale types 0x%llx, gemm 0x%llx",
	       (unsigned long long)kind, (unsigned long long)q,
	       (unsigned long long)g);
}

/* An engine without UE4M3 refuses it at SUBMIT, before anything runs. */
TEST_F(nvfp4, refused_without_ue4m3)
{
	__u64 g = param(_metadata, self->c.fd, DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES);
	struct drm_mxaccel_op op;

	if (!has_ue4m3_quantize(_metadata, self->c.fd)) {
		memset(self->c.bo.map, 0xcc, NV_SRC);
		nv_quantize(&op, self->c.bo.handle, NV_K);
		EXPECT_EQ(-EINVAL, mxt_run(self->c.fd, self->c.queue, &op, 1));
		EXPECT_TRUE(mxt_all(self->c.bo.map, 0xcc, NV_SRC));
	}
	if (!(g & (1ull << UE4M3))) {
		/* A: 8 x 64 NVFP4 at 0; B the same; C at NV_SRC. */
		mxt_gemm(&op, NV_M, NV_M, NV_K);
		mxt_mx(&op.a, self->c.bo.handle, NV_DATA, NV_SCALE, E2M1);
		mxt_mx(&op.b, self->c.bo.handle, NV_DATA, NV_SCALE, E2M1);
		op.a_scale.scale_type = UE4M3;
		op.b_scale.scale_type = UE4M3;
		mxt_dense(&op.c, self->c.bo.handle, NV_SRC, F32);
		memset(mxt_bo_at(&self->c.bo, NV_SRC), 0xcc, NV_BO - NV_SRC);
		EXPECT_EQ(-EINVAL, mxt_run(self->c.fd, self->c.queue, &op, 1));
		/* One UE4M3 operand is enough. */
		op.a_scale.scale_type = E8M0;
		EXPECT_EQ(-EINVAL, mxt_run(self->c.fd, self->c.queue, &op, 1));
		EXPECT_TRUE(mxt_all(mxt_bo_at(&self->c.bo, NV_SRC), 0xcc,
				    NV_BO - NV_SRC));
	}
}

/*
 * Quantize NV_M x k from the source at NV_SRC (fp32 or bf16) and compare
 * every code and scale with ref_block(); the bytes around stay 0xcc.
 */
static void check_quantize(struct __test_metadata *_metadata,
			   struct nv_ctx *self, __u32 k, __u32 dtype,
			   __u32 layout, __u32 ts_bits, unsigned int seed)
{
	__u32 blocks = k / NV_BLOCK, r, b, i;
	__u64 scale_bytes = layout == DRM_MXACCEL_LAYOUT_SWIZZLED ?
			    mxt_swizzle_bytes(NV_M, blocks) : NV_M * blocks;
	struct drm_mxaccel_op op;
	float x[NV_BLOCK];
	unsigned int codes[NV_BLOCK], sc;

	memset(self->bo.map, 0xcc, NV_BO);
	for (r = 0; r < NV_M; r++)
		for (i = 0; i < k; i++) {
			__u32 v = src_bits(r * k + i, seed);
			__u8 *at = mxt_bo_at(&self->bo, NV_SRC);

			if (dtype == BF16)
				mxt_put_u16(at + 2 * (r * k + i), v >> 16);
			else
				mxt_put_u32(at + 4 * (r * k + i), v);
		}
	nv_quantize(&op, self->bo.handle, k);
	op.c.dtype = dtype;
	op.a.scale_layout = layout;
	op.a_scale.tensor_scale = ts_bits;
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));

	for (r = 0; r < NV_M; r++)
		for (b = 0; b < blocks; b++) {
			__u64 si = layout == DRM_MXACCEL_LAYOUT_SWIZZLED ?
				   mxt_swizzle_index(blocks, r, b) :
				   r * blocks + b;

			for (i = 0; i < NV_BLOCK; i++) {
				__u32 v = src_bits(r * k + b * NV_BLOCK + i,
						   seed);

				x[i] = f32_of(dtype == BF16 ? v & 0xffff0000u
							    : v);
			}
			sc = ref_block(x, f32_of(ts_bits), codes);
			EXPECT_EQ(sc, *mxt_bo_at(&self->bo, NV_SCALE + si))
				TH_LOG("row %u block %u: scale", r, b);
			for (i = 0; i < NV_BLOCK; i += 2)
				EXPECT_EQ(codes[i] | codes[i + 1] << 4,
					  *mxt_bo_at(&self->bo, NV_DATA +
						     (r * k + b * NV_BLOCK + i) / 2))
					TH_LOG("row %u block %u: elements %u, %u",
					       r, b, i, i + 1);
		}
	/* Swizzled padding is zero; nothing past the operands is written. */
	if (layout == DRM_MXACCEL_LAYOUT_SWIZZLED)
		for (i = 0; i < scale_bytes; i++) {
			bool used = false;

			for (r = 0; r < NV_M; r++)
				for (b = 0; b < blocks; b++)
					used |= mxt_swizzle_index(blocks, r, b) == i;
			if (!used) {
				EXPECT_EQ(0, *mxt_bo_at(&self->bo, NV_SCALE + i))
					TH_LOG("padding scale byte %u", i);
			}
		}
	EXPECT_TRUE(mxt_all(mxt_bo_at(&self->bo, NV_SCALE + scale_bytes),
			    0xcc, NV_SRC - NV_SCALE - scale_bytes));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&self->bo, NV_M * k / 2), 0xcc,
			    NV_SCALE - NV_M * k / 2));
}

TEST_F(nvfp4, quantize_single_level)
{
	if (!has_ue4m3_quantize(_metadata, self->c.fd))
		SKIP(return, "the engine has no UE4M3 quantization");
	check_quantize(_metadata, &self->c, NV_K, F32, DRM_MXACCEL_LAYOUT_PLAIN,
		       0, 1);
	check_quantize(_metadata, &self->c, NV_K, BF16, DRM_MXACCEL_LAYOUT_PLAIN,
		       0, 2);
	check_quantize(_metadata, &self->c, NV_K, F32,
		       DRM_MXACCEL_LAYOUT_SWIZZLED, 0, 3);
}

TEST_F(nvfp4, quantize_two_level)
{
	/* amax / (6 * 448) of the source's range, and a few others. */
	static const float ts[] = { 0x1p19f / 2688, 1.0f, 0.75f, 3e-5f };
	unsigned int i;

	if (!has_ue4m3_quantize(_metadata, self->c.fd))
		SKIP(return, "the engine has no UE4M3 quantization");
	for (i = 0; i < ARRAY_SIZE(ts); i++) {
		check_quantize(_metadata, &self->c, NV_K, i % 2 ? BF16 : F32,
			       DRM_MXACCEL_LAYOUT_PLAIN, mxt_f32_bits(ts[i]),
			       10 + i);
		check_quantize(_metadata, &self->c, NV_K, F32,
			       DRM_MXACCEL_LAYOUT_SWIZZLED,
			       mxt_f32_bits(ts[i]), 20 + i);
	}
}

/* K = 16, one block per row: the smallest NVFP4 operand. */
TEST_F(nvfp4, quantize_k16)
{
	if (!has_ue4m3_quantize(_metadata, self->c.fd))
		SKIP(return, "the engine has no UE4M3 quantization");
	check_quantize(_metadata, &self->c, NV_BLOCK, F32,
		       DRM_MXACCEL_LAYOUT_PLAIN, 0, 5);
}

/*
 * Tensor scales at the edges: the largest finite fp32 (MAX) and the
 * smallest subnormal are accepted; MAX + 1 (Inf) is -EINVAL.  An
 * explicit block_size of 16 equals 0.
 */
TEST_F(nvfp4, tensor_scale_and_block_size_bounds)
{
	struct drm_mxaccel_op op;

	if (!has_ue4m3_quantize(_metadata, self->c.fd))
		SKIP(return, "the engine has no UE4M3 quantization");
	check_quantize(_metadata, &self->c, NV_K, F32, DRM_MXACCEL_LAYOUT_PLAIN,
		       0x7f7fffffu, 6);
	memset(self->c.bo.map, 0, NV_BO);
	nv_quantize(&op, self->c.bo.handle, NV_K);
	op.a_scale.tensor_scale = 0x00000001u;
	EXPECT_EQ(0, mxt_run(self->c.fd, self->c.queue, &op, 1));
	op.a_scale.tensor_scale = 0x7f800000u;
	EXPECT_EQ(-EINVAL, mxt_run(self->c.fd, self->c.queue, &op, 1));
	op.a_scale.tensor_scale = 0;
	op.a_scale.block_size = NV_BLOCK;
	EXPECT_EQ(0, mxt_run(self->c.fd, self->c.queue, &op, 1));
}

/*
 * An MX QUANTIZE in the version 1 op (op_size DRM_MXACCEL_OP_SIZE_V1,
 * two ops that far apart) gives the bytes the current op gives.
 */
TEST_F(nvfp4, old_op_size_is_e8m0)
{
	static __u8 want[NV_SRC];
	struct drm_mxaccel_submit args;
	struct drm_mxaccel_op op[2];
	__u8 old[2 * DRM_MXACCEL_OP_SIZE_V1];
	unsigned int i;
	int status;

	for (i = 0; i < 2; i++) {
		mxt_quantize(&op[i], NV_M, NV_K, DRM_MXACCEL_SCALE_FLOOR);
		mxt_mx(&op[i].a, self->c.bo.handle, NV_DATA + i * 0x200,
		       NV_SCALE + i * 0x100, E4M3);
		mxt_dense(&op[i].c, self->c.bo.handle, NV_SRC, F32);
		memcpy(old + i * DRM_MXACCEL_OP_SIZE_V1, &op[i],
		       DRM_MXACCEL_OP_SIZE_V1);
	}
	memset(self->c.bo.map, 0xcc, NV_SRC);
	for (i = 0; i < NV_M * NV_K; i++)
		mxt_put_u32(mxt_bo_at(&self->c.bo, NV_SRC + 4 * i),
			    src_bits(i, 7));
	ASSERT_EQ(0, mxt_run(self->c.fd, self->c.queue, op, 2));
	memcpy(want, self->c.bo.map, sizeof(want));
	ASSERT_EQ(0, memcmp(want, want + 0x200, 0x200));
	ASSERT_EQ(0, memcmp(want + NV_SCALE, want + NV_SCALE + 0x100,
			    NV_M * NV_K / 32));
	memset(self->c.bo.map, 0xcc, NV_SRC);

	mxt_submit_init(&args, self->c.queue, NULL, 2);
	args.ops = (uintptr_t)old;
	args.op_size = DRM_MXACCEL_OP_SIZE_V1;
	ASSERT_EQ(0, mxt_submit_args(self->c.fd, &args));
	ASSERT_EQ(0, mxt_job_wait(self->c.fd, self->c.queue, args.seqno,
				  mxt_job_deadline(), &status));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, memcmp(want, self->c.bo.map, sizeof(want)));
}

/* ---- GEMM: NVFP4 x NVFP4 and mixed with MX, exact -------------------- */

#define G_M	3
#define G_N	5
#define G_K	64
#define G_A	0x0000
#define G_AS	0x1000
#define G_B	0x2000
#define G_BS	0x3000
#define G_C	0x4000

/* How a GEMM operand is made up. */
struct g_opnd {
	__u32 elem;		/* E2M1 or E4M3 */
	__u32 scale_type;
	float ts;		/* tensor scale, 0 = none */
};

static __u32 g_rand(__u32 *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

static double e2m1_value(unsigned int c)
{
	static const double mag[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };

	return c & 8 ? -mag[c & 7] : mag[c & 7];
}

static double e4m3_signed(unsigned int c)
{
	double v = e4m3_value(c & 0x7f);

	return c & 0x80 ? -v : v;
}

/*
 * Fill rows x G_K of an operand at data / scales (plain, packed) with
 * codes and scales from *state, and return its values in v[rows][G_K].
 * Elements, scales and tensor scales are kept to a few binades (e4m3
 * codes with exponent field 0..7, UE4M3 scales 2^-3 .. 2^3, E8M0 scales
 * 2^-3 .. 2^3, tensor scales of 2 significant bits) so that every
 * product has at most 20 significant bits within 2^-24 .. 2^12 and the
 * double sums below are exact: their one rounding is the test's.
 */
static void g_fill(const struct mxt_bo *bo, __u64 data, __u64 scales,
		   const struct g_opnd *o, __u32 rows, __u32 *state, double *v)
{
	__u32 block = o->scale_type == UE4M3 ? 16 : 32;
	__u32 blocks = G_K / block, r, i, b;

	for (r = 0; r < rows; r++) {
		for (b = 0; b < blocks; b++) {
			__u8 sc = o->scale_type == UE4M3 ?
				  0x20 + g_rand(state) % 0x30 :
				  124 + g_rand(state) % 7;

			*mxt_bo_at(bo, scales + r * blocks + b) = sc;
		}
		for (i = 0; i < G_K; i++) {
			__u8 sc = *mxt_bo_at(bo, scales + r * blocks + i / block);
			double s = o->scale_type == UE4M3 ? e4m3_value(sc) :
				   ldexp(1, sc - 127);
			double x;

			if (o->elem == E2M1) {
				__u8 c = g_rand(state) & 0xf;
				__u8 *at = mxt_bo_at(bo, data + (r * G_K + i) / 2);

				*at = i & 1 ? (*at & 0x0f) | c << 4 :
					      (*at & 0xf0) | c;
				x = e2m1_value(c);
			} else {
				__u8 c = (g_rand(state) & 0x80) |
					 g_rand(state) % 0x40;

				*mxt_bo_at(bo, data + r * G_K + i) = c;
				x = e4m3_signed(c);
			}
			v[r * G_K + i] = x * s * (o->ts != 0 ? o->ts : 1);
		}
	}
}

/* The bf16 bits of an exact double, rounded once (nearest even). */
static __u16 bf16_round(double x)
{
	int e;
	double m = frexp(x, &e);

	return mxt_f32_bits((float)ldexp(rint(ldexp(m, 8)), e - 8)) >> 16;
}

static void check_gemm(struct __test_metadata *_metadata,
		       struct nv_ctx *self, const struct g_opnd *oa,
		       const struct g_opnd *ob, __u32 dtype, bool accumulate,
		       __u32 seed)
{
	static double va[G_M * G_K], vb[G_N * G_K];
	struct drm_mxaccel_op op;
	__u32 state = seed, i, j, kk;
	double c0 = accumulate ? 0.375 : 0;

	memset(self->bo.map, 0, NV_BO);
	g_fill(&self->bo, G_A, G_AS, oa, G_M, &state, va);
	g_fill(&self->bo, G_B, G_BS, ob, G_N, &state, vb);
	memset(mxt_bo_at(&self->bo, G_C), 0xcc, NV_BO - G_C);
	for (i = 0; i < G_M * G_N && accumulate; i++) {
		if (dtype == BF16)
			mxt_put_u16(mxt_bo_at(&self->bo, G_C + 2 * i), 0x3ec0);
		else
			mxt_put_u32(mxt_bo_at(&self->bo, G_C + 4 * i),
				    mxt_f32_bits(0.375f));
	}
	mxt_gemm(&op, G_M, G_N, G_K);
	if (accumulate)
		op.flags |= DRM_MXACCEL_OP_ACCUMULATE;
	mxt_mx(&op.a, self->bo.handle, G_A, G_AS, oa->elem);
	mxt_mx(&op.b, self->bo.handle, G_B, G_BS, ob->elem);
	op.a_scale.scale_type = oa->scale_type;
	op.a_scale.tensor_scale = oa->ts != 0 ? mxt_f32_bits(oa->ts) : 0;
	op.b_scale.scale_type = ob->scale_type;
	op.b_scale.tensor_scale = ob->ts != 0 ? mxt_f32_bits(ob->ts) : 0;
	mxt_dense(&op.c, self->bo.handle, G_C, dtype);
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));

	for (i = 0; i < G_M; i++)
		for (j = 0; j < G_N; j++) {
			double sum = c0;

			for (kk = 0; kk < G_K; kk++)
				sum += va[i * G_K + kk] * vb[j * G_K + kk];
			if (dtype == BF16) {
				EXPECT_EQ(bf16_round(sum),
					  mxt_get_u16(mxt_bo_at(&self->bo,
						G_C + 2 * (i * G_N + j))))
					TH_LOG("seed %u: C[%u][%u] = %a", seed,
					       i, j, sum);
			} else {
				EXPECT_EQ(mxt_f32_bits((float)sum),
					  mxt_get_u32(mxt_bo_at(&self->bo,
						G_C + 4 * (i * G_N + j))))
					TH_LOG("seed %u: C[%u][%u] = %a", seed,
					       i, j, sum);
			}
		}
	i = G_C + G_M * G_N * (dtype == BF16 ? 2 : 4);
	EXPECT_TRUE(mxt_all(mxt_bo_at(&self->bo, i), 0xcc, NV_BO - i));
}

TEST_F(nvfp4, gemm_exact)
{
	const struct g_opnd nv = { E2M1, UE4M3, 0 };
	const struct g_opnd nv2 = { E2M1, UE4M3, 0.75f };
	const struct g_opnd nv3 = { E2M1, UE4M3, 0x1p-3f };
	const struct g_opnd mx8 = { E4M3, E8M0, 0 };
	const struct g_opnd mx4 = { E2M1, E8M0, 0 };
	__u32 seed;

	if (!(param(_metadata, self->c.fd, DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES) &
	      (1ull << UE4M3)))
		SKIP(return, "the engine's GEMM has no UE4M3 scales");
	for (seed = 1; seed <= 3; seed++) {
		check_gemm(_metadata, &self->c, &nv, &nv, F32, false, seed);
		check_gemm(_metadata, &self->c, &nv2, &nv3, F32, false, seed);
		check_gemm(_metadata, &self->c, &nv2, &nv, BF16, false, seed);
		check_gemm(_metadata, &self->c, &mx8, &nv3, F32, false, seed);
		check_gemm(_metadata, &self->c, &nv, &mx4, F32, true, seed);
		check_gemm(_metadata, &self->c, &nv3, &mx8, BF16, true, seed);
	}
}

/* A NaN UE4M3 scale (0x7f) makes its row's results NaN. */
TEST_F(nvfp4, gemm_nan_scale)
{
	const struct g_opnd nv = { E2M1, UE4M3, 0 };
	static double va[G_M * G_K], vb[G_N * G_K];
	struct drm_mxaccel_op op;
	__u32 state = 9, j;

	if (!(param(_metadata, self->c.fd, DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES) &
	      (1ull << UE4M3)))
		SKIP(return, "the engine's GEMM has no UE4M3 scales");
	memset(self->c.bo.map, 0, NV_BO);
	g_fill(&self->c.bo, G_A, G_AS, &nv, G_M, &state, va);
	g_fill(&self->c.bo, G_B, G_BS, &nv, G_N, &state, vb);
	*mxt_bo_at(&self->c.bo, G_AS + 1 * (G_K / 16) + 2) = 0x7f;
	mxt_gemm(&op, G_M, G_N, G_K);
	mxt_mx(&op.a, self->c.bo.handle, G_A, G_AS, E2M1);
	mxt_mx(&op.b, self->c.bo.handle, G_B, G_BS, E2M1);
	op.a_scale.scale_type = UE4M3;
	op.b_scale.scale_type = UE4M3;
	mxt_dense(&op.c, self->c.bo.handle, G_C, F32);
	ASSERT_EQ(0, mxt_run(self->c.fd, self->c.queue, &op, 1));
	for (j = 0; j < G_N; j++) {
		__u32 c0 = mxt_get_u32(mxt_bo_at(&self->c.bo, G_C + 4 * j));
		__u32 c1 = mxt_get_u32(mxt_bo_at(&self->c.bo,
						 G_C + 4 * (G_N + j)));

		EXPECT_FALSE((c0 & 0x7fffffff) > 0x7f800000);
		EXPECT_TRUE((c1 & 0x7fffffff) > 0x7f800000);
	}
}

/* ---- one invalid field each ------------------------------------------- */

FIXTURE(nvfp4_bad) {
	int fd;
	__u32 queue;
	struct mxt_bo bo;
};

FIXTURE_VARIANT(nvfp4_bad) {
	/* Spoil one field of a valid NVFP4 QUANTIZE. */
	void (*spoil)(struct drm_mxaccel_op *op);
	int err;
};

FIXTURE_SETUP(nvfp4_bad)
{
	self->fd = mxt_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mxt_queue_create(self->fd, &self->queue, NULL));
	ASSERT_EQ(0, mxt_bo_new(self->fd, NV_BO, &self->bo));
}

FIXTURE_TEARDOWN(nvfp4_bad)
{
	if (self->fd >= 0) {
		mxt_bo_free(self->fd, &self->bo);
		close(self->fd);
	}
}

#define BAD(name, errno_, body)						\
	static void spoil_##name(struct drm_mxaccel_op *op) { body; }	\
	FIXTURE_VARIANT_ADD(nvfp4_bad, name) {				\
		.spoil = spoil_##name, .err = errno_,			\
	}

BAD(scale_type_unknown, -EINVAL, op->a_scale.scale_type = 2);
BAD(scale_type_huge, -EINVAL, op->a_scale.scale_type = 0xffffffffu);
BAD(ue4m3_with_e4m3, -EINVAL, op->a.elem = E4M3);
BAD(block_size_32, -EINVAL, op->a_scale.block_size = 32);
BAD(block_size_8, -EINVAL, op->a_scale.block_size = 8);
BAD(block_size_17, -EINVAL, op->a_scale.block_size = 17);
BAD(tensor_scale_inf, -EINVAL, op->a_scale.tensor_scale = 0x7f800000u);
BAD(tensor_scale_nan, -EINVAL, op->a_scale.tensor_scale = 0x7fc00000u);
BAD(tensor_scale_negative, -EINVAL,
	op->a_scale.tensor_scale = 0xbf800000u);
BAD(tensor_scale_minus_zero, -EINVAL,
	op->a_scale.tensor_scale = 0x80000000u);
BAD(pad, -EINVAL, op->a_scale.pad = 1);
BAD(mode_floor_with_ue4m3, -EINVAL,
	op->scale_mode = DRM_MXACCEL_SCALE_FLOOR);
BAD(mode_unknown, -EINVAL, op->scale_mode = DRM_MXACCEL_SCALE_NVFP4 + 1);
BAD(mode_nvfp4_with_e8m0, -EINVAL, op->a_scale.scale_type = E8M0);
BAD(tensor_scale_with_e8m0, -EINVAL,
	op->scale_mode = DRM_MXACCEL_SCALE_FLOOR;
	op->a_scale.scale_type = E8M0;
	op->a_scale.tensor_scale = 0x3f800000u);
BAD(e8m0_block_size_16, -EINVAL,
	op->scale_mode = DRM_MXACCEL_SCALE_FLOOR;
	op->a_scale.scale_type = E8M0;
	op->a_scale.block_size = NV_BLOCK);
BAD(k_not_a_multiple_of_16, -EINVAL, op->k = NV_K - 8);
BAD(b_scale_on_quantize, -EINVAL, op->b_scale.scale_type = UE4M3);
BAD(b_scale_pad_on_quantize, -EINVAL, op->b_scale.pad = 1);
/* The packed scale rows are k / 16 bytes: one less is too short. */
BAD(scale_stride_short, -EINVAL, op->a.scale_stride = NV_K / NV_BLOCK - 1);
/* The swizzled scales (512 bytes) run past the end of the object. */
BAD(swizzled_past_the_end, -EINVAL,
	op->a.scale_layout = DRM_MXACCEL_LAYOUT_SWIZZLED;
	op->a.scale_offset = NV_BO - 511);

TEST_F(nvfp4_bad, submit)
{
	struct drm_mxaccel_op op;

	if (!has_ue4m3_quantize(_metadata, self->fd))
		SKIP(return, "the engine has no UE4M3 quantization");
	memset(self->bo.map, 0xcc, NV_BO);
	memset(mxt_bo_at(&self->bo, NV_SRC), 0, NV_M * NV_K * 4);
	nv_quantize(&op, self->bo.handle, NV_K);
	/* The unspoiled op is valid (it writes: then re-fill). */
	ASSERT_EQ(0, mxt_run(self->fd, self->queue, &op, 1));
	memset(self->bo.map, 0xcc, NV_SRC);
	variant->spoil(&op);
	EXPECT_EQ(variant->err, mxt_run(self->fd, self->queue, &op, 1));
	EXPECT_TRUE(mxt_all(self->bo.map, 0xcc, NV_SRC));
	EXPECT_TRUE(mxt_all(mxt_bo_at(&self->bo, NV_SRC + NV_M * NV_K * 4),
			    0xcc, NV_BO - NV_SRC - NV_M * NV_K * 4));
}

TEST_HARNESS_MAIN
