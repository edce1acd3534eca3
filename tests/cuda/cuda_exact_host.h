/* SPDX-License-Identifier: MIT */
/*
 * The CUDA exact GEMMs' launchers with their kernels run on the host
 * (tests/cuda/cuda_exact_host.cpp), for test_cuda_exact.c built with
 * CUDA_EXACT_HOST.  Operands are a cpu device's buffers; each returns what
 * the plugin's synchronous call would (0, or the offset check's fault).
 */
#ifndef MXA_CUDA_EXACT_HOST_H
#define MXA_CUDA_EXACT_HOST_H

#include "mxaccel.h"

#ifdef __cplusplus
extern "C" {
#endif

int host_gemm_exact(const struct mxa_matrix *a, const struct mxa_matrix *b,
		    const struct mxa_dense *c, uint32_t flags);
int host_gemm_weight_only_exact(const struct mxa_dense *a,
				const struct mxa_matrix *b,
				const struct mxa_dense *c, uint32_t flags);
int host_gemm_grouped_exact(const struct mxa_matrix *a,
			    const struct mxa_matrix *b,
			    const struct mxa_dense *c,
			    const struct mxa_grouped *g, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* MXA_CUDA_EXACT_HOST_H */
