// SPDX-License-Identifier: MIT
/*
 * The benchmark's matrix-unit peer on the CPU: a oneDNN matmul (Debian's
 * libdnnl-dev) on the same matrices dequantized to bf16, or quantized per
 * tensor to int8, what a PyTorch user on an AMX machine runs.  Plain
 * row-major layouts (B as N x K), fp32 C, the implementation oneDNN picks
 * (reported: "brg:avx512_core_amx" on Sapphire/Emerald Rapids).  Only the
 * mxaccel CLI links oneDNN, and only where its header was found at build
 * time; otherwise every call says "oneDNN not available".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if __has_include("oneapi/dnnl/dnnl.h")
#include <oneapi/dnnl/dnnl.h>

/* libgomp's, which oneDNN's OpenMP build runs its threads on. */
void omp_set_num_threads(int n);

struct bench_dnnl {
	dnnl_engine_t engine;
	dnnl_stream_t stream;
	dnnl_primitive_t prim;
	dnnl_memory_t mem[3];
	void *data[3];
	char impl[64];
};

static uint16_t f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return 0x7fc0;
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* rows x k fp32 to the peer's element type; NULL without memory. */
static void *convert(const float *x, size_t count, bool s8)
{
	void *out = malloc(count * (s8 ? 1 : 2));
	float amax = 0;
	size_t i;

	if (!out)
		return NULL;
	if (!s8) {
		for (i = 0; i < count; i++)
			((uint16_t *)out)[i] = f32_to_bf16(x[i]);
		return out;
	}
	for (i = 0; i < count; i++)
		amax = fmaxf(amax, fabsf(x[i]));
	for (i = 0; i < count; i++)
		((int8_t *)out)[i] = (int8_t)lrintf(amax > 0 ?
						    x[i] * 127 / amax : 0);
	return out;
}

void bench_dnnl_free(struct bench_dnnl *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < 3; i++) {
		if (d->mem[i])
			dnnl_memory_destroy(d->mem[i]);
		free(d->data[i]);
	}
	if (d->prim)
		dnnl_primitive_destroy(d->prim);
	if (d->stream)
		dnnl_stream_destroy(d->stream);
	if (d->engine)
		dnnl_engine_destroy(d->engine);
	free(d);
}

struct bench_dnnl *bench_dnnl_new(bool s8, const float *a, const float *b,
				  uint32_t m, uint32_t n, uint32_t k,
				  unsigned int threads, char *why, size_t len)
{
	struct bench_dnnl *d = calloc(1, sizeof(*d));
	dnnl_data_type_t dt = s8 ? dnnl_s8 : dnnl_bf16;
	dnnl_dims_t ad = { m, k }, bd = { k, n }, cd = { m, n };
	dnnl_memory_desc_t md[3];
	dnnl_matmul_desc_t mmd;
	dnnl_primitive_desc_t pd = NULL;
	const char *impl = NULL;
	unsigned int i;

	if (!d) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	omp_set_num_threads((int)threads);
	d->data[0] = convert(a, (size_t)m * k, s8);
	d->data[1] = convert(b, (size_t)n * k, s8);
	d->data[2] = malloc((size_t)m * n * 4);
	if (!d->data[0] || !d->data[1] || !d->data[2]) {
		snprintf(why, len, "out of memory");
		goto fail;
	}
	/* B is N x K row-major: the K x N weights in "ba" order. */
	if (dnnl_engine_create(&d->engine, dnnl_cpu, 0) ||
	    dnnl_stream_create(&d->stream, d->engine,
			       dnnl_stream_default_flags) ||
	    dnnl_memory_desc_init_by_tag(&md[0], 2, ad, dt, dnnl_ab) ||
	    dnnl_memory_desc_init_by_tag(&md[1], 2, bd, dt, dnnl_ba) ||
	    dnnl_memory_desc_init_by_tag(&md[2], 2, cd, dnnl_f32, dnnl_ab) ||
	    dnnl_matmul_desc_init(&mmd, &md[0], &md[1], NULL, &md[2]) ||
	    dnnl_primitive_desc_create(&pd, &mmd, NULL, d->engine, NULL) ||
	    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
				      &impl) ||
	    dnnl_primitive_create(&d->prim, pd)) {
		snprintf(why, len, "oneDNN has no %s matmul here",
			 s8 ? "s8" : "bf16");
		goto fail;
	}
	snprintf(d->impl, sizeof(d->impl), "%s", impl ? impl : "?");
	dnnl_primitive_desc_destroy(pd);
	pd = NULL;
	for (i = 0; i < 3; i++) {
		if (dnnl_memory_create(&d->mem[i], &md[i], d->engine,
				       d->data[i])) {
			snprintf(why, len, "dnnl_memory_create failed");
			goto fail;
		}
	}
	return d;
fail:
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	bench_dnnl_free(d);
	return NULL;
}

const char *bench_dnnl_impl(const struct bench_dnnl *d)
{
	return d->impl;
}

int bench_dnnl_once(void *arg)
{
	struct bench_dnnl *d = arg;
	dnnl_exec_arg_t args[3] = {
		{ DNNL_ARG_SRC, d->mem[0] },
		{ DNNL_ARG_WEIGHTS, d->mem[1] },
		{ DNNL_ARG_DST, d->mem[2] },
	};

	if (dnnl_primitive_execute(d->prim, d->stream, 3, args) ||
	    dnnl_stream_wait(d->stream))
		return -5;	/* -EIO */
	return 0;
}
#else
struct bench_dnnl *bench_dnnl_new(bool s8, const float *a, const float *b,
				  uint32_t m, uint32_t n, uint32_t k,
				  unsigned int threads, char *why, size_t len)
{
	(void)s8;
	(void)a;
	(void)b;
	(void)m;
	(void)n;
	(void)k;
	(void)threads;
	snprintf(why, len,
		 "oneDNN not available (no oneapi/dnnl/dnnl.h at build time; Debian: libdnnl-dev)");
	return NULL;
}

const char *bench_dnnl_impl(const struct bench_dnnl *d)
{
	(void)d;
	return "none";
}

int bench_dnnl_once(void *arg)
{
	(void)arg;
	return -38;	/* -ENOSYS: never called without a peer */
}

void bench_dnnl_free(struct bench_dnnl *d)
{
	(void)d;
}
#endif
