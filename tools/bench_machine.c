// SPDX-License-Identifier: MIT
/*
 * What the machine can do, measured in the run that uses it: peak rates of
 * the instructions the GEMM kernels are built on, and memcpy bandwidth.
 * The peak loops are assembler (12 independent accumulators, zeroed so no
 * operand is ever subnormal; 4 accumulator tiles for AMX), run by every
 * thread at once.
 */
#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define PEAK_ITERS 10000000L	/* x 12 instructions per thread */
#define PEAK_QUICK_ITERS 2000000L
#define PEAK_REPEAT 3

enum peak_kind {
	PEAK_FMA512,
	PEAK_FMA256,
	PEAK_BF16,
	PEAK_INT8,
	PEAK_AMX_BF16,
	PEAK_AMX_INT8,
};

/* Multiply-adds of one instruction, times 2. */
static const double flops_per_insn[] = {
	[PEAK_FMA512] = 32,
	[PEAK_FMA256] = 16,
	[PEAK_BF16] = 64,
	[PEAK_INT8] = 128,
	[PEAK_AMX_BF16] = 16 * 16 * 32 * 2,
	[PEAK_AMX_INT8] = 16 * 16 * 64 * 2,
};

/* A tile instruction takes 16 cycles where a zmm one takes 1 or 2. */
#define PEAK_AMX_DIV 16

/* Eight tiles of 16 rows x 64 bytes; see lib/cpu/kernels/amx/amx.h. */
struct amx_tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} __attribute__((aligned(64)));

static const struct amx_tilecfg amx_cfg = {
	.palette = 1,
	.colsb = { 64, 64, 64, 64, 64, 64, 64, 64 },
	.rows = { 16, 16, 16, 16, 16, 16, 16, 16 },
};

#define T12(insn) \
	insn " %%tmm6, %%tmm4, %%tmm0\n\t" insn " %%tmm7, %%tmm4, %%tmm1\n\t" \
	insn " %%tmm6, %%tmm5, %%tmm2\n\t" insn " %%tmm7, %%tmm5, %%tmm3\n\t" \
	insn " %%tmm6, %%tmm4, %%tmm0\n\t" insn " %%tmm7, %%tmm4, %%tmm1\n\t" \
	insn " %%tmm6, %%tmm5, %%tmm2\n\t" insn " %%tmm7, %%tmm5, %%tmm3\n\t" \
	insn " %%tmm6, %%tmm4, %%tmm0\n\t" insn " %%tmm7, %%tmm4, %%tmm1\n\t" \
	insn " %%tmm6, %%tmm5, %%tmm2\n\t" insn " %%tmm7, %%tmm5, %%tmm3\n\t"

#define ZERO_TMM \
	"ldtilecfg %1\n\t" \
	"tilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2\n\t" \
	"tilezero %%tmm3\n\ttilezero %%tmm4\n\ttilezero %%tmm5\n\t" \
	"tilezero %%tmm6\n\ttilezero %%tmm7\n\t"

/*
 * The CPU has AMX-TILE/BF16/INT8 and this process may use tile data
 * (Linux grants it on request; the library asks the same way).
 */
static bool amx_usable(void)
{
	unsigned int a, b, c, d = 0;

	if (__get_cpuid_max(0, NULL) >= 7)
		__cpuid_count(7, 0, a, b, c, d);
	if ((d & 0x3400000u) != 0x3400000u)	/* bits 22, 24, 25 */
		return false;
	return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
		       18 /* XTILEDATA */) == 0;
}

#define X12(insn) \
	insn " %%zmm12, %%zmm13, %%zmm0\n\t" insn " %%zmm12, %%zmm13, %%zmm1\n\t" \
	insn " %%zmm12, %%zmm13, %%zmm2\n\t" insn " %%zmm12, %%zmm13, %%zmm3\n\t" \
	insn " %%zmm12, %%zmm13, %%zmm4\n\t" insn " %%zmm12, %%zmm13, %%zmm5\n\t" \
	insn " %%zmm12, %%zmm13, %%zmm6\n\t" insn " %%zmm12, %%zmm13, %%zmm7\n\t" \
	insn " %%zmm12, %%zmm13, %%zmm8\n\t" insn " %%zmm12, %%zmm13, %%zmm9\n\t" \
	insn " %%zmm12, %%zmm13, %%zmm10\n\t" insn " %%zmm12, %%zmm13, %%zmm11\n\t"

#define Y12(insn) \
	insn " %%ymm12, %%ymm13, %%ymm0\n\t" insn " %%ymm12, %%ymm13, %%ymm1\n\t" \
	insn " %%ymm12, %%ymm13, %%ymm2\n\t" insn " %%ymm12, %%ymm13, %%ymm3\n\t" \
	insn " %%ymm12, %%ymm13, %%ymm4\n\t" insn " %%ymm12, %%ymm13, %%ymm5\n\t" \
	insn " %%ymm12, %%ymm13, %%ymm6\n\t" insn " %%ymm12, %%ymm13, %%ymm7\n\t" \
	insn " %%ymm12, %%ymm13, %%ymm8\n\t" insn " %%ymm12, %%ymm13, %%ymm9\n\t" \
	insn " %%ymm12, %%ymm13, %%ymm10\n\t" insn " %%ymm12, %%ymm13, %%ymm11\n\t"

#define ZERO_ZMM \
	"vpxord %%zmm0, %%zmm0, %%zmm0\n\t" \
	"vmovdqa64 %%zmm0, %%zmm1\n\tvmovdqa64 %%zmm0, %%zmm2\n\t" \
	"vmovdqa64 %%zmm0, %%zmm3\n\tvmovdqa64 %%zmm0, %%zmm4\n\t" \
	"vmovdqa64 %%zmm0, %%zmm5\n\tvmovdqa64 %%zmm0, %%zmm6\n\t" \
	"vmovdqa64 %%zmm0, %%zmm7\n\tvmovdqa64 %%zmm0, %%zmm8\n\t" \
	"vmovdqa64 %%zmm0, %%zmm9\n\tvmovdqa64 %%zmm0, %%zmm10\n\t" \
	"vmovdqa64 %%zmm0, %%zmm11\n\tvmovdqa64 %%zmm0, %%zmm12\n\t" \
	"vmovdqa64 %%zmm0, %%zmm13\n\t"

#define CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", \
	"xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc"

static void run_kind(enum peak_kind kind, long n)
{
	switch (kind) {
	case PEAK_FMA512:
		__asm__ volatile(ZERO_ZMM "1:\n\t" X12("vfmadd231ps")
				 "dec %0\n\tjnz 1b\n\tvzeroupper"
				 : "+r"(n) : : CLOBBERS);
		break;
	case PEAK_FMA256:
		__asm__ volatile("vxorps %%ymm12, %%ymm12, %%ymm12\n\t"
				 "vxorps %%ymm13, %%ymm13, %%ymm13\n\t"
				 "1:\n\t" Y12("vfmadd231ps")
				 "dec %0\n\tjnz 1b\n\tvzeroupper"
				 : "+r"(n) : : CLOBBERS);
		break;
	case PEAK_BF16:
		__asm__ volatile(ZERO_ZMM "1:\n\t" X12("vdpbf16ps")
				 "dec %0\n\tjnz 1b\n\tvzeroupper"
				 : "+r"(n) : : CLOBBERS);
		break;
	case PEAK_INT8:
		__asm__ volatile(ZERO_ZMM "1:\n\t" X12("vpdpbusd")
				 "dec %0\n\tjnz 1b\n\tvzeroupper"
				 : "+r"(n) : : CLOBBERS);
		break;
	case PEAK_AMX_BF16:
		__asm__ volatile(ZERO_TMM "1:\n\t" T12("tdpbf16ps")
				 "dec %0\n\tjnz 1b\n\ttilerelease"
				 : "+r"(n) : "m"(amx_cfg) : "cc");
		break;
	case PEAK_AMX_INT8:
		__asm__ volatile(ZERO_TMM "1:\n\t" T12("tdpbssd")
				 "dec %0\n\tjnz 1b\n\ttilerelease"
				 : "+r"(n) : "m"(amx_cfg) : "cc");
		break;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct peak_run {
	enum peak_kind kind;
	long iters;
	pthread_barrier_t start;
};

/* One thread's loop; its own clock, so no thread's start is missed. */
struct peak_thread_arg {
	struct peak_run *run;
	double t0, t1;
};

static void *peak_thread(void *arg)
{
	struct peak_thread_arg *a = arg;

	pthread_barrier_wait(&a->run->start);
	a->t0 = now();
	run_kind(a->run->kind, a->run->iters);
	a->t1 = now();
	return NULL;
}

/*
 * GFLOP/s of kind, all threads at once, best of repeat runs; 0 on failure.
 * A run lasts from the first thread's start to the last thread's end.
 */
static double measure(enum peak_kind kind, unsigned int threads, long iters,
		      unsigned int repeat)
{
	struct peak_run r = { .kind = kind, .iters = iters };
	struct peak_thread_arg *args;
	double best = 0;
	pthread_t *tid;
	unsigned int i, rep, started;

	tid = calloc(threads, sizeof(*tid));
	args = calloc(threads, sizeof(*args));
	for (rep = 0; tid && args && rep < repeat; rep++) {
		double t0 = 0, t1 = 0, rate;

		if (pthread_barrier_init(&r.start, NULL, threads + 1))
			break;
		for (started = 0; started < threads; started++) {
			args[started].run = &r;
			if (pthread_create(&tid[started], NULL, peak_thread,
					   &args[started]))
				break;
		}
		if (started < threads) {
			/* Release and reap what started; report nothing. */
			for (i = started; i < threads; i++)
				pthread_barrier_wait(&r.start);
			for (i = 0; i < started; i++)
				pthread_join(tid[i], NULL);
			pthread_barrier_destroy(&r.start);
			best = 0;
			break;
		}
		pthread_barrier_wait(&r.start);
		for (i = 0; i < threads; i++) {
			pthread_join(tid[i], NULL);
			if (!i || args[i].t0 < t0)
				t0 = args[i].t0;
			if (!i || args[i].t1 > t1)
				t1 = args[i].t1;
		}
		pthread_barrier_destroy(&r.start);
		rate = threads * (double)iters * 12 * flops_per_insn[kind] /
		       (t1 - t0) * 1e-9;
		if (rate > best)
			best = rate;
	}
	free(args);
	free(tid);
	return best;
}

static void peaks_run(struct bench_peaks *p, long iters, unsigned int repeat)
{
	bool avx512 = __builtin_cpu_supports("avx512f");
	double r;

	if (p->fma_insn) {
		r = measure(avx512 ? PEAK_FMA512 : PEAK_FMA256, p->threads,
			    iters, repeat);
		p->fma = r > p->fma ? r : p->fma;
	}
	if (__builtin_cpu_supports("avx512bf16")) {
		r = measure(PEAK_BF16, p->threads, iters, repeat);
		p->bf16 = r > p->bf16 ? r : p->bf16;
	}
	if (__builtin_cpu_supports("avx512vnni")) {
		r = measure(PEAK_INT8, p->threads, iters, repeat);
		p->int8 = r > p->int8 ? r : p->int8;
	}
	if (p->amx) {
		r = measure(PEAK_AMX_BF16, p->threads, iters / PEAK_AMX_DIV,
			    repeat);
		p->amx_bf16 = r > p->amx_bf16 ? r : p->amx_bf16;
		r = measure(PEAK_AMX_INT8, p->threads, iters / PEAK_AMX_DIV,
			    repeat);
		p->amx_int8 = r > p->amx_int8 ? r : p->amx_int8;
	}
}

void bench_peaks(unsigned int threads, struct bench_peaks *out)
{
	memset(out, 0, sizeof(*out));
	out->threads = threads;
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		out->fma_insn = "vfmadd231ps zmm";
	else if (__builtin_cpu_supports("fma"))
		out->fma_insn = "vfmadd231ps ymm";
	out->amx = amx_usable();
	peaks_run(out, PEAK_ITERS, PEAK_REPEAT);
}

int bench_peaks_once(void *peaks)
{
	peaks_run(peaks, PEAK_QUICK_ITERS, 1);
	return 0;
}

/* --- memcpy ------------------------------------------------------------- */

struct bench_copy {
	char *src, *dst;
	size_t size;
	unsigned int threads;
	pthread_t *tid;
	struct copy_slice *slices;
};

struct copy_slice {
	char *src, *dst;
	size_t len;
};

static void *copy_thread(void *arg)
{
	struct copy_slice *s = arg;

	memcpy(s->dst, s->src, s->len);
	return NULL;
}

struct bench_copy *bench_copy_new(size_t size, unsigned int threads)
{
	struct bench_copy *c = calloc(1, sizeof(*c));
	size_t per, off = 0;
	unsigned int i;

	if (!c)
		return NULL;
	c->size = size;
	c->threads = threads ? threads : 1;
	c->src = malloc(size);
	c->dst = malloc(size);
	c->tid = calloc(c->threads, sizeof(*c->tid));
	c->slices = calloc(c->threads, sizeof(*c->slices));
	if (!c->src || !c->dst || !c->tid || !c->slices) {
		bench_copy_free(c);
		return NULL;
	}
	memset(c->src, 0x5a, size);
	memset(c->dst, 0, size);
	/* Slices of whole cache lines. */
	per = (size / c->threads + 63) & ~(size_t)63;
	for (i = 0; i < c->threads; i++) {
		size_t len = off < size ? (size - off < per ? size - off : per) : 0;

		c->slices[i] = (struct copy_slice){
			.src = c->src + off, .dst = c->dst + off, .len = len,
		};
		off += len;
	}
	return c;
}

int bench_copy_once(void *arg)
{
	struct bench_copy *c = arg;
	unsigned int i, started;

	if (c->threads == 1) {
		copy_thread(&c->slices[0]);
		return 0;
	}
	for (started = 1; started < c->threads; started++)
		if (pthread_create(&c->tid[started], NULL, copy_thread,
				   &c->slices[started]))
			break;
	copy_thread(&c->slices[0]);
	for (i = 1; i < started; i++)
		pthread_join(c->tid[i], NULL);
	return started == c->threads ? 0 : -11;	/* -EAGAIN */
}

void bench_copy_free(struct bench_copy *c)
{
	if (!c)
		return;
	free(c->src);
	free(c->dst);
	free(c->tid);
	free(c->slices);
	free(c);
}
