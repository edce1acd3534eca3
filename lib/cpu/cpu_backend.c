// SPDX-License-Identifier: MIT
/*
 * The CPU backend: one device, "cpu", with host memory buffers, a worker
 * pool, the instruction-set level its kernels use, and its kernel table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "cpu_isa.h"

static unsigned int cpu_probe(char *reason, size_t size)
{
	(void)reason;
	(void)size;
	return 1;
}

static int threads_from_env(unsigned int *threads)
{
	const char *s = getenv("MXACCEL_THREADS");
	unsigned long n;
	char *end;

	*threads = 0;
	if (!s || !*s)
		return 0;
	n = strtoul(s, &end, 10);
	if (*end || *s == '-' || n > 1024)
		return mxa__err(-EINVAL,
				"MXACCEL_THREADS='%s' is not a thread count 0..1024",
				s);
	*threads = (unsigned int)n;
	return 0;
}

/*
 * $MXACCEL_CPU_PACK_BUDGET: bytes of packed GEMM panels at once (default
 * CPU_PACK_BUDGET); beyond it a GEMM runs in stripes.  Tests shrink it to
 * reach the striped paths with small matrices.
 */
static int pack_budget_from_env(size_t *budget)
{
	const char *s = getenv("MXACCEL_CPU_PACK_BUDGET");
	unsigned long long n;
	char *end;

	*budget = CPU_PACK_BUDGET;
	if (!s || !*s)
		return 0;
	n = strtoull(s, &end, 10);
	if (*end || *s == '-' || n < 4096 || n > ((size_t)1 << 40))
		return mxa__err(-EINVAL,
				"MXACCEL_CPU_PACK_BUDGET='%s' is not a byte count 4096..2^40",
				s);
	*budget = (size_t)n;
	return 0;
}

static void describe(struct mxa_device *dev)
{
	struct cpu_device *cd = cpu_dev(dev);
	const char *amx = cpu_isa_amx_unused();
	char why[200] = "";

	/* Say why the matrix unit sits idle where the CPU has one. */
	if (amx && cd->isa->level < CPU_ISA_AMX)
		snprintf(why, sizeof(why), "; amx unused: %s", amx);
	mxa__strlcpy(dev->info.name, "cpu", sizeof(dev->info.name));
	mxa__strlcpy(dev->info.backend, "cpu", sizeof(dev->info.backend));
	snprintf(dev->info.description, sizeof(dev->info.description),
		 "host CPU, %u of %u online CPUs, ISA %s (%s): GEMM microkernels %s (most pairs) and %s (e2m1/e2m3 pairs), %s quantization%s",
		 cd->threads, cpu_online(), cd->isa->name,
		 cd->isa_forced ? "forced by MXACCEL_CPU_ISA" : "cpuid",
		 cd->isa->uk_bf16->insn, cd->isa->uk_i8->insn,
		 cd->isa->quant->name, why);
	dev->info.threads = cd->threads;
	dev->info.host_visible = 1;
	dev->info.conformance = 0;
}

static int cpu_set_threads(struct mxa_device *dev, unsigned int threads)
{
	struct cpu_device *cd = cpu_dev(dev);
	struct cpu_pool *pool;

	if (threads > 1024)
		return mxa__err(-EINVAL, "set_threads: %u is more than 1024",
				threads);
	if (!threads)
		threads = cpu_online();
	pool = cpu_pool_create(threads);
	if (!pool)
		return -ENOMEM;
	cpu_pool_destroy(cd->pool);
	cd->pool = pool;
	cd->threads = cpu_pool_threads(pool);
	describe(dev);
	return 0;
}

static int cpu_open(struct mxa_device *dev)
{
	struct cpu_device *cd = calloc(1, sizeof(*cd));
	unsigned int threads;
	int ret;

	if (!cd)
		return -ENOMEM;
	dev->priv = cd;
	cd->decode = cpu_decode_alloc();
	if (!cd->decode) {
		free(cd);
		dev->priv = NULL;
		return -ENOMEM;
	}
	ret = cpu_isa_select(&cd->isa, &cd->isa_forced);
	if (!ret)
		ret = pack_budget_from_env(&cd->pack_budget);
	if (!ret)
		ret = threads_from_env(&threads);
	if (!ret)
		ret = cpu_set_threads(dev, threads);
	if (ret) {
		cpu_decode_free(cd->decode);
		free(cd);
		dev->priv = NULL;
	}
	return ret;
}

static void cpu_close(struct mxa_device *dev)
{
	struct cpu_device *cd = cpu_dev(dev);

	cpu_pool_destroy(cd->pool);
	cpu_decode_free(cd->decode);
	free(cd);
}

static int cpu_buf_alloc(struct mxa_buffer *buf)
{
	size_t size = (buf->size + 63) & ~(size_t)63;
	void *p;

	if (size < buf->size || posix_memalign(&p, 64, size))
		return -ENOMEM;
	memset(p, 0, size);
	buf->host = p;
	return 0;
}

static void cpu_buf_free(struct mxa_buffer *buf)
{
	free(buf->host);
}

/*
 * Rows of A up to which the decode kernel streams B (the MX GEMM op):
 * measured (Documentation/bench-cpu.rst) 4x cpu-blocked's time at M = 4,
 * even at 8, half its speed at 16, where cpu-blocked's bf16-dot tiles win.
 */
#define CPU_DECODE_MAX_M 8

static const char *decode_reject(struct mxa_device *dev,
				 const struct mxa_op_desc *desc)
{
	(void)dev;
	if (!desc->m || desc->m > CPU_DECODE_MAX_M)
		return "the decode kernel takes M = 1..8 only";
	return NULL;
}

static const struct mxa_kernel cpu_kernels[] = {
	{
		.name = "cpu-quantize",
		.summary = "quantization rows in the device's ISA (NVFP4: scalar), bit-exact with torchao",
		.op = MXA_OP_QUANTIZE,
		.native = true,
		.exact = true,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_quantize,
	},
	{
		.name = "cpu-quantize-colwise",
		.summary = "column-wise quantization: blocks gathered down src's columns through the core's block quantizer, bit-exact with quantizing the transpose",
		.op = MXA_OP_QUANTIZE_COLWISE,
		.native = true,
		.exact = true,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_quantize_colwise,
	},
	{
		.name = "cpu-dequantize",
		.summary = "dequantization rows in the device's ISA (NVFP4: scalar), bit-exact with torchao",
		.op = MXA_OP_DEQUANTIZE,
		.native = true,
		.exact = true,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_dequantize,
	},
	{
		.name = "cpu-exact",
		.summary = "exact integer block dots, 704-bit accumulator, one rounding (MX, NVFP4, mixed)",
		.op = MXA_OP_GEMM,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_gemm_exact,
	},
	{
		.name = "cpu-blocked",
		.summary = "blocked GEMM, bf16-dot or int8-dot microkernels of the device's ISA, fp32 sums per block (error <= K*2^-24*sum|a*b|; NVFP4: block scales folded into bf16 panels, (K+3)*2^-24)",
		.op = MXA_OP_GEMM,
		.native = true,
		.exact = false,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_gemm_blocked,
	},
	{
		.name = "cpu-grouped-exact",
		.summary = "grouped GEMM, each group through cpu-exact (bit-identical to per-group mxa_gemm)",
		.op = MXA_OP_GEMM_GROUPED,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_gemm_grouped_exact,
	},
	{
		.name = "cpu-grouped-blocked",
		.summary = "grouped GEMM, each group through cpu-blocked (error <= K*2^-24*sum|a*b| per group; NVFP4 (K+3)*2^-24)",
		.op = MXA_OP_GEMM_GROUPED,
		.native = true,
		.exact = false,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_gemm_grouped_blocked,
	},
	{
		.name = "cpu-decode",
		.summary = "decode GEMM (M <= 8): B's codes and scales streamed once and decoded in registers, A in fp32, fp32 FMA sums (error <= K*2^-24*sum|a*b|; NVFP4 (K+3)*2^-24)",
		.op = MXA_OP_GEMM,
		.native = true,
		.exact = false,
		.rank = 20,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.reject = decode_reject,
		.run = cpu_gemm_decode,
	},
	{
		.name = "cpu-weight-only-exact",
		.summary = "exact weight-only GEMM: A's values as given times B's (MX or NVFP4), every product exact in the core's wide accumulator, one rounding",
		.op = MXA_OP_GEMM_WEIGHT_ONLY,
		.native = false,
		.exact = true,
		.rank = 0,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_gemm_weight_only_exact,
	},
	{
		.name = "cpu-weight-only",
		.summary = "weight-only GEMM: B (MX or NVFP4) streamed once, decoded in registers (amx, and avx512bf16 from 7 rows of A, 16 at a time: 16 B rows per tile pass), fp32 sums, A in stripes of 64 rows (error <= (K+2)*2^-24*sum|a*b|)",
		.op = MXA_OP_GEMM_WEIGHT_ONLY,
		.native = true,
		.exact = false,
		.rank = 10,
		.scale_types = MXA_KERNEL_SCALES(MXA_SCALE_E8M0) |
			       MXA_KERNEL_SCALES(MXA_SCALE_UE4M3),
		.run = cpu_gemm_decode,
	},
};

const struct mxa_backend mxa_cpu_backend = {
	.name = "cpu",
	.wraps_host = true,
	.probe = cpu_probe,
	.open = cpu_open,
	.close = cpu_close,
	.buf_alloc = cpu_buf_alloc,
	.buf_free = cpu_buf_free,
	.set_threads = cpu_set_threads,
	.kernels = cpu_kernels,
	.n_kernels = MXA_ARRAY_SIZE(cpu_kernels),
};
