// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the end-to-end programs; see e2e.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "e2e.h"

int e2e_failures;
static int subtest_failures;
static unsigned int subtests;
static uint64_t rng = 0x6d78616363656cull;

void e2e_plan(unsigned int tests)
{
	printf("1..%u\n", tests);
	fflush(stdout);
}

void e2e_fail(int line, const char *fmt, ...)
{
	va_list ap;

	e2e_failures++;
	if (++subtest_failures > 20)
		return;
	printf("# FAIL line %d: ", line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void e2e_note(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void e2e_subtest(const char *fmt, ...)
{
	va_list ap;

	printf("%sok %u - ", subtest_failures ? "not " : "", ++subtests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	subtest_failures = 0;
}

void e2e_subtest_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	printf("ok %u - ", ++subtests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

void e2e_subtest_todo(const char *todo, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %u - ", subtest_failures ? "not " : "", ++subtests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (subtest_failures)
		printf(" # TODO %s", todo);
	putchar('\n');
	fflush(stdout);
	e2e_failures -= subtest_failures;
	subtest_failures = 0;
}

int e2e_exit_status(void)
{
	return e2e_failures ? 1 : 0;
}

struct mxa_device *e2e_open(const char *name)
{
	struct mxa_device *dev = NULL;
	int ret = mxa_device_open(name, &dev);

	if (ret == -ENODEV) {
		printf("1..0 # SKIP %s: %s\n", name, mxa_strerror(ret));
		exit(E2E_SKIP);
	}
	if (ret) {
		printf("Bail out! mxa_device_open(%s): %s\n", name,
		       mxa_strerror(ret));
		exit(1);
	}
	return dev;
}

/* --- PRNG and time ------------------------------------------------------- */

void e2e_seed(uint64_t seed)
{
	rng = seed;
}

uint64_t e2e_rand(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t e2e_below(uint32_t n)
{
	return (uint32_t)((e2e_rand() >> 32) * n >> 32);
}

int64_t e2e_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* --- random GEMM problems ------------------------------------------------ */

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	return p;
}

static void fill_bytes(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)e2e_rand();
}

/* Mostly moderate scales, one in 16 an extreme: 2^-127, 2^-126, 2^127, NaN. */
static void fill_scales(uint8_t *p, size_t n)
{
	static const uint8_t extreme[] = { 0, 1, 254, 255 };
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = e2e_below(16) ? (uint8_t)(112 + e2e_below(32)) :
		       extreme[e2e_below(4)];
}

/* C before: moderate fp32 or bf16 values, now and then any bit pattern. */
static void fill_c(uint8_t *p, size_t n, enum mxa_dtype dtype)
{
	size_t es = dtype == MXA_DTYPE_BF16 ? 2 : 4, i;

	for (i = 0; i < n / es; i++) {
		uint32_t x = (uint32_t)e2e_rand();

		if (e2e_below(8))
			x = (x & 0x807fffff) | ((110 + e2e_below(30)) << 23);
		if (es == 2) {
			uint16_t h = (uint16_t)(x >> 16);

			memcpy(p + 2 * i, &h, 2);
		} else {
			memcpy(p + 4 * i, &x, 4);
		}
	}
}

void e2e_gemm_random(struct e2e_gemm *g, uint32_t max_m, uint32_t max_n,
		     uint32_t max_kb)
{
	size_t row;

	memset(g, 0, sizeof(*g));
	g->ea = (enum mxa_elem)(MXA_ELEM_E4M3 + e2e_below(5));
	g->eb = (enum mxa_elem)(MXA_ELEM_E4M3 + e2e_below(5));
	g->dtype = e2e_below(2) ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
	g->layout = e2e_below(2) ? MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
	g->m = 1 + e2e_below(max_m);
	g->n = 1 + e2e_below(max_n);
	g->k = 32 * (1 + e2e_below(max_kb));
	g->flags = e2e_below(2) ? MXA_GEMM_ACCUMULATE : 0;
	mxa_data_row_bytes(g->ea, g->k, &row);
	g->a_bytes = row * g->m;
	mxa_data_row_bytes(g->eb, g->k, &row);
	g->b_bytes = row * g->n;
	mxa_scale_bytes(g->layout, g->m, g->k, &g->as_bytes);
	mxa_scale_bytes(g->layout, g->n, g->k, &g->bs_bytes);
	g->c_bytes = (size_t)g->m * g->n * (g->dtype == MXA_DTYPE_BF16 ? 2 : 4);
	g->a = xmalloc(g->a_bytes);
	g->as = xmalloc(g->as_bytes);
	g->b = xmalloc(g->b_bytes);
	g->bs = xmalloc(g->bs_bytes);
	g->c_in = xmalloc(g->c_bytes);
	fill_bytes(g->a, g->a_bytes);
	fill_bytes(g->b, g->b_bytes);
	fill_scales(g->as, g->as_bytes);
	fill_scales(g->bs, g->bs_bytes);
	fill_c(g->c_in, g->c_bytes, g->dtype);
}

void e2e_gemm_free(struct e2e_gemm *g)
{
	free(g->a);
	free(g->as);
	free(g->b);
	free(g->bs);
	free(g->c_in);
	memset(g, 0, sizeof(*g));
}

struct mxa_buffer *e2e_buffer(struct mxa_device *dev, const void *src,
			      size_t size)
{
	struct mxa_buffer *buf = NULL;

	if (mxa_buffer_alloc(dev, size, &buf))
		return NULL;
	if (src && mxa_buffer_write(buf, 0, src, size)) {
		mxa_buffer_free(buf);
		return NULL;
	}
	return buf;
}

int e2e_gemm_run(struct mxa_device *dev, const struct e2e_gemm *g,
		 enum mxa_pref pref, uint8_t *out)
{
	struct mxa_matrix a = {
		.data = e2e_buffer(dev, g->a, g->a_bytes),
		.scale = e2e_buffer(dev, g->as, g->as_bytes),
		.elem = g->ea, .scale_layout = g->layout,
		.rows = g->m, .cols = g->k,
	};
	struct mxa_matrix b = {
		.data = e2e_buffer(dev, g->b, g->b_bytes),
		.scale = e2e_buffer(dev, g->bs, g->bs_bytes),
		.elem = g->eb, .scale_layout = g->layout,
		.rows = g->n, .cols = g->k,
	};
	struct mxa_dense c = {
		.buf = e2e_buffer(dev, g->c_in, g->c_bytes),
		.dtype = g->dtype, .rows = g->m, .cols = g->n,
	};
	int ret = -ENOMEM;

	if (a.data && a.scale && b.data && b.scale && c.buf) {
		ret = mxa_gemm(dev, &a, &b, &c, g->flags, pref);
		if (!ret)
			ret = mxa_buffer_read(c.buf, 0, out, g->c_bytes);
	}
	mxa_buffer_free(a.data);
	mxa_buffer_free(a.scale);
	mxa_buffer_free(b.data);
	mxa_buffer_free(b.scale);
	mxa_buffer_free(c.buf);
	return ret;
}

/* --- the mxaccel node, raw ------------------------------------------------ */

int e2e_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

static bool is_mxaccel(int fd)
{
	char name[32] = "";
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	return !e2e_ioctl(fd, DRM_IOCTL_VERSION, &v) &&
	       !strcmp(name, "mxaccel");
}

/* The nth mxaccel node of dir (in version order), or -1. */
static int open_in(const char *dir, const char *prefix, unsigned int nth)
{
	struct dirent **names;
	char path[300];
	int i, n, fd = -1;

	n = scandir(dir, &names, NULL, versionsort);
	for (i = 0; i < n; i++) {
		if (fd < 0 && !strncmp(names[i]->d_name, prefix,
				       strlen(prefix))) {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 names[i]->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd >= 0 && !is_mxaccel(fd)) {
				close(fd);
				fd = -1;
			}
			if (fd >= 0 && nth) {
				nth--;
				close(fd);
				fd = -1;
			}
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return fd;
}

int e2e_node_open_nth(unsigned int nth)
{
	int fd = open_in("/dev/accel", "accel", nth);

	return fd >= 0 ? fd : open_in("/dev/dri", "renderD", nth);
}

int e2e_node_open(void)
{
	return e2e_node_open_nth(0);
}

const char *e2e_device(void)
{
	const char *name = getenv("MXACCEL_E2E_DEVICE");

	return name && *name ? name : "accel:0";
}

int e2e_device_node_open(void)
{
	unsigned int nth = 0;

	if (sscanf(e2e_device(), "accel:%u", &nth) != 1)
		return -1;
	return e2e_node_open_nth(nth);
}

/* --- SUBMIT accounting ---------------------------------------------------- */

static uint64_t n_submits, n_ops;

uint64_t e2e_submits(void)
{
	return __atomic_load_n(&n_submits, __ATOMIC_RELAXED);
}

uint64_t e2e_submitted_ops(void)
{
	return __atomic_load_n(&n_ops, __ATOMIC_RELAXED);
}

/*
 * With -Wl,--wrap=ioctl every call of ioctl() in the program, libdrm's
 * included, comes here first.
 */
int __wrap_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (request == DRM_IOCTL_MXACCEL_SUBMIT && arg) {
		const struct drm_mxaccel_submit *s = arg;

		__atomic_add_fetch(&n_submits, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&n_ops, s->op_count, __ATOMIC_RELAXED);
	}
	return __real_ioctl(fd, request, arg);
}
