/* SPDX-License-Identifier: MIT */
/*
 * Backends built as separate shared objects (the CUDA backend,
 * libmxaccel-cuda.so.0) that the library loads at run time, so that the
 * library itself never links their runtimes.
 *
 * A plugin exports one symbol, mxa_plugin_entry() (named MXA_PLUGIN_ENTRY).
 * The library passes a table of the services a backend needs from it (the
 * plugin cannot link the library's hidden symbols); the plugin checks the
 * ABI version and the sizes of the shared structures, and returns its
 * backend, or NULL with the reason in reason.  A plugin is never unloaded.
 */
#ifndef MXA_PLUGIN_H
#define MXA_PLUGIN_H

#include "backend.h"

/* Bump on any change to this file or to the structures of backend.h. */
/* 2: struct mxa_matrix grew (0.2); geometry comes from mxcore_geom.h. */
/* 3: struct mxa_job grew (groups, for mxa_gemm_grouped()). */
/*
 * 4: the backend has buf_wrap, set_stream and get_stream, a kernel
 * rank_for; submit_wait is copied.
 */
/* 5: struct mxa_job grew (a_dense, for mxa_gemm_weight_only()). */
#define MXA_PLUGIN_ABI 5

#define MXA_PLUGIN_ENTRY "mxa_plugin_entry"

struct mxa_plugin_host {
	unsigned int abi;		/* MXA_PLUGIN_ABI */
	/* Sizes of the shared structures, as the library was built. */
	unsigned int sizeof_host;
	unsigned int sizeof_backend;
	unsigned int sizeof_kernel;
	unsigned int sizeof_device;
	unsigned int sizeof_buffer;
	unsigned int sizeof_work;
	bool (*debug)(void);
	void (*dbg)(const char *fmt, ...)
		__attribute__((format(printf, 1, 2)));
	int (*err)(int err, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
	const char *(*strerror)(int err);
	const char *(*elem_name)(enum mxa_elem elem);
};

/* The entry point, which each plugin defines and exports. */
const struct mxa_backend *mxa_plugin_entry(const struct mxa_plugin_host *host,
					   char *reason, size_t size);

#endif /* MXA_PLUGIN_H */
