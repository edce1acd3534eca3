// SPDX-License-Identifier: MIT
/*
 * Zero copy on CUDA with the caller's stream (mxa_buffer_wrap() of device
 * memory, mxa_device_set_stream()):
 *
 * - wrap: cuMemAlloc'd memory works; host memory, NULL, size 0 and a size
 *   past the allocation's end are -EINVAL; another GPU's memory -EXDEV
 *   (skipped with one GPU); a base 4 bytes past 16-byte alignment runs
 *   (the GEMM copies such MX operands to aligned scratch) with the same
 *   bytes; an fp32 matrix at an odd address is -EINVAL before anything
 *   runs, and so is a weight-only GEMM's bf16 A (decode and prefill
 *   kernels);
 * - stream mode: quantize + GEMM on a stream of the test's, behind a
 *   kernel that first spins, then writes the inputs (so a library that
 *   did not queue on that stream would read zeros), followed by a kernel
 *   on the same stream that copies C out: that copy equals the default
 *   stream's C byte for byte, and the stream is still busy when the
 *   library's calls have returned (no host wait);  mxa_gemm_async's fence
 *   waits for the stream's work;
 * - a wrapped buffer freed before the caller's memory leaves it intact;
 * - set_stream / get_stream on cpu: NULL accepted, anything else
 *   -EOPNOTSUPP.
 *
 * The test drives the GPU through the driver API (libcuda.so.1, dlopen)
 * and a kernel in PTX, so that it builds without CUDA.  Skips (77) where
 * no CUDA device is found.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatest.h"

/* The driver API's types as the ABI has them: handles are pointers. */
#define CUDA_ERROR_NOT_READY 600

static struct {
	int (*init)(unsigned int flags);
	int (*device_count)(int *count);
	int (*device_get)(int *device, int ordinal);
	int (*primary_ctx)(void **ctx, int device);
	int (*ctx_set)(void *ctx);
	int (*mem_alloc)(unsigned long long *ptr, size_t size);
	int (*mem_free)(unsigned long long ptr);
	int (*htod)(unsigned long long dst, const void *src, size_t size);
	int (*dtoh)(void *dst, unsigned long long src, size_t size);
	int (*stream_create)(void **stream, unsigned int flags);
	int (*stream_destroy)(void *stream);
	int (*stream_sync)(void *stream);
	int (*stream_query)(void *stream);
	int (*module_load)(void **module, const void *image);
	int (*module_fn)(void **fn, void *module, const char *name);
	int (*launch)(void *fn, unsigned int gx, unsigned int gy,
		      unsigned int gz, unsigned int bx, unsigned int by,
		      unsigned int bz, unsigned int shared, void *stream,
		      void **params, void **extra);
} cu;

/*
 * delayed_copy(dst, src, n, cycles): every thread spins `cycles` clocks,
 * then the grid copies n bytes (any alignment).
 */
static const char ptx[] =
	".version 7.0\n"
	".target sm_52\n"
	".address_size 64\n"
	".visible .entry delayed_copy(.param .u64 p_dst, .param .u64 p_src,\n"
	"	.param .u32 p_n, .param .u64 p_cycles)\n"
	"{\n"
	"	.reg .pred %p<3>;\n"
	"	.reg .b32 %r<10>;\n"
	"	.reg .b64 %rd<12>;\n"
	"	ld.param.u64 %rd1, [p_dst];\n"
	"	ld.param.u64 %rd2, [p_src];\n"
	"	ld.param.u32 %r1, [p_n];\n"
	"	ld.param.u64 %rd3, [p_cycles];\n"
	"	mov.u64 %rd4, %clock64;\n"
	"SPIN:\n"
	"	mov.u64 %rd5, %clock64;\n"
	"	sub.s64 %rd6, %rd5, %rd4;\n"
	"	setp.lt.u64 %p1, %rd6, %rd3;\n"
	"	@%p1 bra SPIN;\n"
	"	mov.u32 %r2, %ctaid.x;\n"
	"	mov.u32 %r3, %ntid.x;\n"
	"	mov.u32 %r4, %tid.x;\n"
	"	mad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"	mov.u32 %r7, %nctaid.x;\n"
	"	mul.lo.s32 %r6, %r7, %r3;\n"
	"LOOP:\n"
	"	setp.ge.u32 %p2, %r5, %r1;\n"
	"	@%p2 bra DONE;\n"
	"	cvt.u64.u32 %rd7, %r5;\n"
	"	add.s64 %rd8, %rd2, %rd7;\n"
	"	add.s64 %rd9, %rd1, %rd7;\n"
	"	ld.u8 %r8, [%rd8];\n"
	"	st.u8 [%rd9], %r8;\n"
	"	add.s32 %r5, %r5, %r6;\n"
	"	bra LOOP;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

static void *delayed_copy;
static void *ctx0;
static int n_gpus;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "FAIL: libcuda.so.1 has no %s\n", name);
		exit(1);
	}
	return p;
}

static void cu_load(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	void *mod;
	int d;

	if (!h) {
		fprintf(stderr, "FAIL: cuda:0 opened but libcuda.so.1 cannot be loaded: %s\n",
			dlerror());
		exit(1);
	}
	*(void **)&cu.init = sym(h, "cuInit");
	*(void **)&cu.device_count = sym(h, "cuDeviceGetCount");
	*(void **)&cu.device_get = sym(h, "cuDeviceGet");
	*(void **)&cu.primary_ctx = sym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&cu.ctx_set = sym(h, "cuCtxSetCurrent");
	*(void **)&cu.mem_alloc = sym(h, "cuMemAlloc_v2");
	*(void **)&cu.mem_free = sym(h, "cuMemFree_v2");
	*(void **)&cu.htod = sym(h, "cuMemcpyHtoD_v2");
	*(void **)&cu.dtoh = sym(h, "cuMemcpyDtoH_v2");
	*(void **)&cu.stream_create = sym(h, "cuStreamCreate");
	*(void **)&cu.stream_destroy = sym(h, "cuStreamDestroy_v2");
	*(void **)&cu.stream_sync = sym(h, "cuStreamSynchronize");
	*(void **)&cu.stream_query = sym(h, "cuStreamQuery");
	*(void **)&cu.module_load = sym(h, "cuModuleLoadData");
	*(void **)&cu.module_fn = sym(h, "cuModuleGetFunction");
	*(void **)&cu.launch = sym(h, "cuLaunchKernel");
	if (cu.init(0) || cu.device_count(&n_gpus) || cu.device_get(&d, 0) ||
	    cu.primary_ctx(&ctx0, d) || cu.ctx_set(ctx0) ||
	    cu.module_load(&mod, ptx) ||
	    cu.module_fn(&delayed_copy, mod, "delayed_copy")) {
		fprintf(stderr, "FAIL: driver API setup\n");
		exit(1);
	}
}

static int copy_on(void *s, unsigned long long dst, unsigned long long src,
			uint32_t n, unsigned long long cycles)
{
	void *args[] = { &dst, &src, &n, &cycles };

	return cu.launch(delayed_copy, 64, 1, 1, 256, 1, 1, 0, s, args, NULL);
}

/* The byte layout of one problem inside a region of device memory. */
enum { M_MAX = 200, N = 300, K = 256 };

struct layout {
	uint32_t m;
	size_t src_a, src_b, a, sa, b, sb, c, end;
};

static struct layout layout_of(uint32_t m)
{
	struct layout l = { .m = m };
	size_t at = 0;

#define PLACE(field, bytes) (l.field = at, at = (at + (bytes) + 255) / 256 * 256)
	PLACE(src_a, (size_t)m * K * 4);
	PLACE(src_b, (size_t)N * K * 4);
	PLACE(a, (size_t)m * K);
	PLACE(sa, (size_t)m * K / 32);
	PLACE(b, (size_t)N * K);
	PLACE(sb, (size_t)N * K / 32);
	PLACE(c, (size_t)m * N * 4);
#undef PLACE
	l.end = at;
	return l;
}

/* Quantize A and B (MXFP8 e4m3) from fp32 in buf, then C = A B^T (fp32). */
static int run_ops(struct mxa_device *dev, struct mxa_buffer *buf,
		   const struct layout *l, struct mxa_fence **fence)
{
	struct mxa_dense src_a = { buf, l->src_a, 0, MXA_DTYPE_F32, l->m, K };
	struct mxa_dense src_b = { buf, l->src_b, 0, MXA_DTYPE_F32, N, K };
	struct mxa_dense c = { buf, l->c, 0, MXA_DTYPE_F32, l->m, N };
	struct mxa_matrix a = {
		.data = buf, .data_offset = l->a, .scale = buf,
		.scale_offset = l->sa, .elem = MXA_ELEM_E4M3, .rows = l->m,
		.cols = K,
	};
	struct mxa_matrix b = a;
	int ret;

	b.data_offset = l->b;
	b.scale_offset = l->sb;
	b.rows = N;
	ret = mxa_quantize(dev, &src_a, &a, MXA_SCALE_FLOOR, MXA_PREF_AUTO);
	if (!ret)
		ret = mxa_quantize(dev, &src_b, &b, MXA_SCALE_FLOOR,
				   MXA_PREF_AUTO);
	if (!ret && fence)
		return mxa_gemm_async(dev, &a, &b, &c, 0, MXA_PREF_AUTO, fence);
	if (!ret)
		ret = mxa_gemm(dev, &a, &b, &c, 0, MXA_PREF_AUTO);
	return ret;
}

static void random_sources(uint8_t *host, const struct layout *l)
{
	float *fa = (float *)(host + l->src_a), *fb = (float *)(host + l->src_b);
	size_t i;

	for (i = 0; i < (size_t)l->m * K; i++)
		fa[i] = test_rand_float(4.0f);
	for (i = 0; i < (size_t)N * K; i++)
		fb[i] = test_rand_float(4.0f);
}

/* C on the device's own stream, from buffers of the library's. */
static uint8_t *default_stream_c(struct mxa_device *dev, const uint8_t *host,
				 const struct layout *l)
{
	struct mxa_buffer *buf = NULL;
	uint8_t *c = malloc(l->end);
	int ret = mxa_buffer_alloc(dev, l->end, &buf);

	if (!ret)
		ret = mxa_buffer_write(buf, 0, host, l->c);
	if (!ret)
		ret = run_ops(dev, buf, l, NULL);
	if (!ret)
		ret = mxa_buffer_read(buf, l->c, c, (size_t)l->m * N * 4);
	CHECK(ret == 0, "M %u on the default stream: %d (%s)", l->m, ret,
	      mxa_strerror(ret));
	mxa_buffer_free(buf);
	return c;
}

/*
 * The same on the test's stream, from wrapped memory at region + skew:
 * the inputs are written by a kernel that spins first, C is copied out by
 * a kernel after the library's calls.
 */
static void stream_case(struct mxa_device *dev, uint32_t m, unsigned int skew)
{
	struct layout l = layout_of(m);
	size_t c_bytes = (size_t)m * N * 4;
	uint8_t *host = calloc(1, l.end), *zero = calloc(1, l.end), *ref;
	uint8_t *got = malloc(c_bytes);
	unsigned long long region = 0, staging = 0, out = 0, base;
	struct mxa_buffer *buf = NULL;
	struct mxa_fence *fence = NULL;
	void *s = NULL;
	void *now = NULL;
	int busy;
	int ret;

	random_sources(host, &l);
	ref = default_stream_c(dev, host, &l);
	CHECK_RET(cu.mem_alloc(&region, l.end + 64), 0);
	CHECK_RET(cu.mem_alloc(&staging, l.c), 0);
	CHECK_RET(cu.mem_alloc(&out, c_bytes), 0);
	CHECK_RET(cu.htod(staging, host, l.c), 0);
	CHECK_RET(cu.stream_create(&s, 1 /* non-blocking */), 0);
	base = region + skew;
	/* Zeros where the inputs go: a GEMM before the writer reads these. */
	CHECK_RET(cu.htod(base, zero, l.end), 0);

	CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)base, l.end, &buf), 0);
	CHECK_RET(mxa_device_set_stream(dev, s), 0);
	CHECK_RET(mxa_device_get_stream(dev, &now), 0);
	CHECK(now == s, "get_stream: %p, set %p", now, s);
	/* ~50 ms of spinning at H200 clocks, then the inputs. */
	CHECK_RET(copy_on(s, base, staging, (uint32_t)l.c, 100000000ull), 0);
	ret = run_ops(dev, buf, &l, NULL);
	CHECK(ret == 0, "M %u skew %u on the caller's stream: %d (%s)", m, skew,
	      ret, mxa_strerror(ret));
	busy = cu.stream_query(s);
	CHECK(busy == CUDA_ERROR_NOT_READY,
	      "M %u: the stream is idle when the calls return (%d): they waited",
	      m, busy);
	CHECK_RET(copy_on(s, out, base + l.c, (uint32_t)c_bytes, 0), 0);
	CHECK_RET(cu.stream_sync(s), 0);
	CHECK_RET(cu.dtoh(got, out, c_bytes), 0);
	CHECK(!memcmp(got, ref, c_bytes),
	      "M %u skew %u: C on the caller's stream differs from the default stream's",
	      m, skew);

	/* The async form: a fence on the stream. */
	CHECK_RET(cu.htod(base + l.c, zero, c_bytes), 0);
	CHECK_RET(run_ops(dev, buf, &l, &fence), 0);
	if (fence) {
		CHECK_RET(mxa_fence_wait(fence, -1), 0);
		mxa_fence_free(fence);
		CHECK_RET(cu.dtoh(got, base + l.c, c_bytes), 0);
		CHECK(!memcmp(got, ref, c_bytes), "M %u: async C differs", m);
	}

	CHECK_RET(mxa_device_set_stream(dev, NULL), 0);
	CHECK_RET(mxa_device_get_stream(dev, &now), 0);
	CHECK(now == NULL, "get_stream after NULL: %p", now);
	/* Freed before the memory: the memory stays the caller's, intact. */
	mxa_buffer_free(buf);
	memset(got, 0, c_bytes);
	CHECK_RET(cu.dtoh(got, base + l.c, c_bytes), 0);
	CHECK(!memcmp(got, ref, c_bytes), "M %u: C changed by mxa_buffer_free", m);
	CHECK_RET(cu.mem_free(region), 0);
	cu.mem_free(staging);
	cu.mem_free(out);
	cu.stream_destroy(s);
	printf("M %u skew %u: caller's stream, wrapped memory: C bit-identical to the default stream's\n",
	       m, skew);
	free(host);
	free(zero);
	free(ref);
	free(got);
}

static void wrap_errors(struct mxa_device *dev)
{
	struct mxa_buffer *buf = NULL;
	unsigned long long p = 0, other = 0;
	char host[64];
	void *map;

	CHECK_RET(cu.mem_alloc(&p, 4096), 0);
	CHECK_RET(mxa_buffer_wrap(dev, host, sizeof(host), &buf), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, NULL, 64, &buf), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)p, 0, &buf), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)p, 4097, &buf), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)(p + 100), 3997, &buf),
		  -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)(p + 100), 3996, &buf), 0);
	CHECK(mxa_buffer_size(buf) == 3996, "wrapped size %zu", mxa_buffer_size(buf));
	CHECK_RET(mxa_buffer_map(buf, &map), -EOPNOTSUPP);
	mxa_buffer_free(buf);
	if (n_gpus >= 2) {
		void *c1;
		int d1;

		CHECK_RET(cu.device_get(&d1, 1), 0);
		CHECK_RET(cu.primary_ctx(&c1, d1), 0);
		CHECK_RET(cu.ctx_set(c1), 0);
		CHECK_RET(cu.mem_alloc(&other, 4096), 0);
		CHECK_RET(cu.ctx_set(ctx0), 0);
		CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)other, 4096, &buf),
			  -EXDEV);
		CHECK_RET(cu.ctx_set(c1), 0);
		cu.mem_free(other);
		CHECK_RET(cu.ctx_set(ctx0), 0);
	} else {
		printf("skip: memory of another GPU (-EXDEV): one GPU\n");
	}
	/* fp32 source at an odd address: refused, nothing queued. */
	{
		struct layout l = layout_of(16);
		unsigned long long r = 0;

		CHECK_RET(cu.mem_alloc(&r, l.end + 16), 0);
		CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)(r + 3), l.end, &buf), 0);
		CHECK_RET(run_ops(dev, buf, &l, NULL), -EINVAL);
		mxa_buffer_free(buf);
		cu.mem_free(r);
	}
	/*
	 * bf16 A of a weight-only GEMM at an odd address: -EINVAL from the
	 * decode kernel (M = 16) and the wgmma one (M = 256), nothing run.
	 */
	{
		static const uint32_t ms[] = { 16, 256 };
		const size_t a_at = 0, b_at = 256 * K * 2 + 255, sb_at = b_at + N * K,
			     c_at = (sb_at + N * K / 32 + 255) / 256 * 256 + 255;
		unsigned long long r = 0;
		unsigned int i;

		CHECK_RET(cu.mem_alloc(&r, c_at + 256 * N * 4 + 16), 0);
		CHECK_RET(mxa_buffer_wrap(dev, (void *)(uintptr_t)(r + 1),
					  c_at + 256 * N * 4, &buf), 0);
		for (i = 0; i < TEST_ARRAY_SIZE(ms); i++) {
			struct mxa_dense a = { buf, a_at, 0, MXA_DTYPE_BF16, ms[i], K };
			struct mxa_dense c = { buf, c_at, 0, MXA_DTYPE_F32, ms[i], N };
			struct mxa_matrix b = {
				.data = buf, .data_offset = b_at, .scale = buf,
				.scale_offset = sb_at, .elem = MXA_ELEM_E4M3, .rows = N,
				.cols = K,
			};

			CHECK_RET(mxa_gemm_weight_only(dev, &a, &b, &c, 0, MXA_PREF_NATIVE),
				  -EINVAL);
		}
		mxa_buffer_free(buf);
		cu.mem_free(r);
	}
	cu.mem_free(p);
}

static void cpu_streams(void)
{
	struct mxa_device *cpu = test_open_cpu();
	void *s = (void *)1;

	CHECK_RET(mxa_device_set_stream(cpu, NULL), 0);
	CHECK_RET(mxa_device_set_stream(cpu, (void *)1), -EOPNOTSUPP);
	CHECK_RET(mxa_device_get_stream(cpu, &s), 0);
	CHECK(s == NULL, "cpu get_stream: %p", s);
	CHECK_RET(mxa_device_set_stream(NULL, NULL), -EINVAL);
	CHECK_RET(mxa_device_get_stream(cpu, NULL), -EINVAL);
	mxa_device_close(cpu);
}

int main(void)
{
	static const uint32_t ms[] = { 16, 40, 200 };
	struct mxa_device *dev;
	unsigned int i;

	test_seed(0x73747265616dull);
	cpu_streams();
	dev = cudatest_open();
	cu_load();
	wrap_errors(dev);
	for (i = 0; i < TEST_ARRAY_SIZE(ms); i++) {
		stream_case(dev, ms[i], 0);
		stream_case(dev, ms[i], 4);
	}
	mxa_device_close(dev);
	return test_finish();
}
