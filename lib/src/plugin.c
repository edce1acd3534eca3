// SPDX-License-Identifier: MIT
/*
 * The CUDA backend is a plugin, libmxaccel-cuda.so.0, loaded on first use
 * (design section 5): the library never links CUDA, and a machine without
 * the plugin, the driver or a GPU runs everything else while `mxaccel info`
 * says why CUDA is absent.
 *
 * mxa_cuda_backend stands in the backend table from the start with only
 * probe; the first probe loads the plugin (once) and copies its ops and
 * kernels in.  Every other op is reached only through a device, which is
 * opened only after probe has counted it, so nothing reads the table before
 * it is complete.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"

#define CUDA_PLUGIN "libmxaccel-cuda.so.0"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const struct mxa_backend *plugin;	/* NULL: load_reason says why */
static char load_reason[MXA_REASON_MAX];

static unsigned int cuda_probe(char *reason, size_t size);

struct mxa_backend mxa_cuda_backend = {
	.name = "cuda",
	.probe = cuda_probe,
};

static const struct mxa_plugin_host host = {
	.abi = MXA_PLUGIN_ABI,
	.sizeof_host = sizeof(struct mxa_plugin_host),
	.sizeof_backend = sizeof(struct mxa_backend),
	.sizeof_kernel = sizeof(struct mxa_kernel),
	.sizeof_device = sizeof(struct mxa_device),
	.sizeof_buffer = sizeof(struct mxa_buffer),
	.sizeof_work = sizeof(struct mxa_work),
	.debug = mxa__debug,
	.dbg = mxa__dbg,
	.err = mxa__err,
	.strerror = mxa_strerror,
	.elem_name = mxa_elem_name,
};

static void *try_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		snprintf(load_reason, sizeof(load_reason),
			 "cannot load the CUDA plugin: %s", dlerror());
	return h;
}

/*
 * The plugin beside this library (beside the program when the library is
 * linked statically), else wherever the dynamic loader finds it.
 */
static void *open_plugin(void)
{
	char path[PATH_MAX];
	Dl_info info;

	if (dladdr((void *)&mxa_cuda_backend, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');

		if (slash &&
		    snprintf(path, sizeof(path), "%.*s/%s",
			     (int)(slash - info.dli_fname), info.dli_fname,
			     CUDA_PLUGIN) < (int)sizeof(path) &&
		    !access(path, F_OK))
			return try_open(path);
	}
	return try_open(CUDA_PLUGIN);
}

static void load(void)
{
	struct mxa_backend *b = &mxa_cuda_backend;
	__typeof__(&mxa_plugin_entry) entry;
	const struct mxa_backend *p;
	void *h = open_plugin();

	if (!h)
		return;
	*(void **)&entry = dlsym(h, MXA_PLUGIN_ENTRY);
	if (!entry) {
		snprintf(load_reason, sizeof(load_reason),
			 "%s has no entry point: %s", CUDA_PLUGIN, dlerror());
		return;
	}
	p = entry(&host, load_reason, sizeof(load_reason));
	if (!p)
		return;
	b->wraps_host = p->wraps_host;
	b->open = p->open;
	b->close = p->close;
	b->buf_alloc = p->buf_alloc;
	b->buf_free = p->buf_free;
	b->buf_copy = p->buf_copy;
	b->submit = p->submit;
	b->buf_export = p->buf_export;
	b->buf_import = p->buf_import;
	b->set_threads = p->set_threads;
	b->submit_wait = p->submit_wait;
	b->buf_wrap = p->buf_wrap;
	b->set_stream = p->set_stream;
	b->get_stream = p->get_stream;
	b->kernels = p->kernels;
	b->n_kernels = p->n_kernels;
	plugin = p;
	mxa__dbg("cuda: loaded %s", CUDA_PLUGIN);
}

static unsigned int cuda_probe(char *reason, size_t size)
{
	pthread_once(&load_once, load);
	if (!plugin) {
		if (reason && size)
			mxa__strlcpy(reason, load_reason, size);
		return 0;
	}
	return plugin->probe(reason, size);
}
