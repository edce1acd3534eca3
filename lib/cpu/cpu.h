/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend: its device state, thread pool, and the kernels it
 * registers (exact reference kernels, quantization, and the native
 * blocked GEMM with microkernels per instruction-set level).
 */
#ifndef MXA_CPU_H
#define MXA_CPU_H

#include "backend.h"
#include "mxcore.h"

struct cpu_pool;
struct cpu_isa;
struct cpu_decode_state;

struct cpu_device {
	struct cpu_pool *pool;
	unsigned int threads;
	const struct cpu_isa *isa;	/* chosen at open (cpu_isa.h) */
	bool isa_forced;		/* by $MXACCEL_CPU_ISA */
	size_t pack_budget;		/* bytes of packed GEMM panels at once */
	struct cpu_decode_state *decode;	/* cpu_decode.c's scratch */
};

/* Default of cpu_device.pack_budget ($MXACCEL_CPU_PACK_BUDGET). */
#define CPU_PACK_BUDGET ((size_t)128 << 20)

static inline struct cpu_device *cpu_dev(struct mxa_device *dev)
{
	return dev->priv;
}

/*
 * cpu_pool.c: run fn(arg, task, worker) for task 0..n-1 on the pool's
 * threads and the caller; worker < cpu_pool_threads() names the thread, so
 * per-thread scratch can be allocated before the region starts.
 */
struct cpu_pool *cpu_pool_create(unsigned int threads);
void cpu_pool_destroy(struct cpu_pool *pool);
unsigned int cpu_pool_threads(const struct cpu_pool *pool);
void cpu_parallel(struct cpu_pool *pool, unsigned int n,
		  void (*fn)(void *arg, unsigned int task, unsigned int worker),
		  void *arg);
unsigned int cpu_online(void);

/* Host addresses of a job's operands. */
static inline const uint8_t *cpu_data(const struct mxa_matrix *m)
{
	return (const uint8_t *)m->data->host + m->data_offset;
}

static inline const uint8_t *cpu_scales(const struct mxa_matrix *m)
{
	return (const uint8_t *)m->scale->host + m->scale_offset;
}

static inline uint8_t *cpu_dense_row(const struct mxa_dense *d, uint32_t row)
{
	return (uint8_t *)d->buf->host + d->offset +
	       (size_t)row * mxa__dense_stride(d);
}

/* cpu_quant.c: row kernels of the device's ISA over the pool. */
int cpu_quantize(struct mxa_device *dev, const struct mxa_job *job);
int cpu_dequantize(struct mxa_device *dev, const struct mxa_job *job);
/* cpu_colwise.c: mxa_quantize_colwise(). */
int cpu_quantize_colwise(struct mxa_device *dev, const struct mxa_job *job);
struct cpu_quant;

/* cpu_nvfp4.c: row r of a UE4M3 (NVFP4) quantize / dequantize job. */
void cpu_nvfp4_quantize_row(const struct mxa_job *job,
			    const struct cpu_quant *q, uint32_t r);
void cpu_nvfp4_dequantize_row(const struct mxa_job *job,
			      const struct cpu_quant *q, uint32_t r);

/* cpu_exact.c */
int cpu_gemm_exact(struct mxa_device *dev, const struct mxa_job *job);
/* cpu_exact_weight_only.c */
int cpu_gemm_weight_only_exact(struct mxa_device *dev,
			       const struct mxa_job *job);

/* cpu_gemm.c: the native blocked GEMM framework. */
int cpu_gemm_blocked(struct mxa_device *dev, const struct mxa_job *job);

/*
 * cpu_decode.c: the decode (weight-streaming) GEMM, for MX GEMMs of few
 * rows and every weight-only GEMM; its scratch lives with the device.
 */
int cpu_gemm_decode(struct mxa_device *dev, const struct mxa_job *job);
struct cpu_decode_state *cpu_decode_alloc(void);
void cpu_decode_free(struct cpu_decode_state *st);

/* cpu_grouped.c: mxa_gemm_grouped(), group by group through the above. */
int cpu_gemm_grouped_exact(struct mxa_device *dev, const struct mxa_job *job);
int cpu_gemm_grouped_blocked(struct mxa_device *dev, const struct mxa_job *job);

#endif /* MXA_CPU_H */
