// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's engines are bit-identical to libmxaccel's EMULATED kernels
 * (a hardware engine when asked for DRM_MXACCEL_OP_EXACT): random GEMMs (every element pair, plain and swizzled scales,
 * fp32 and bf16 C, accumulate, extreme scales) and quantizations (every
 * element type and scale mode; NVFP4, single and two level, where the
 * engine has UE4M3 scales) run through the device with raw ioctls and
 * through the library on the CPU, and every output byte must match.
 *
 * Runs inside the test VM against the first mxaccel node whose engine is
 * the one $MXACCEL_ENGINE names ("software" or "hardware"; any if unset);
 * exits 4 (skip) when there is none.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "drm.h"
#include "mxaccel_accel.h"
#include "mxaccel.h"

#define SKIP 4

static uint64_t rng = 0x243f6a8885a308d3ull;
static int failures;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)((rnd() >> 32) * n >> 32);
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

static int is_mxaccel(int fd)
{
	char name[32] = "";
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	return !xioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "mxaccel");
}

/* Whether fd's engine is the one $MXACCEL_ENGINE asks for. */
static int engine_wanted(int fd)
{
	struct drm_mxaccel_get_param p = {
		.param = DRM_MXACCEL_PARAM_ENGINE_KIND,
	};
	const char *want = getenv("MXACCEL_ENGINE");

	if (!want || !*want)
		return 1;
	if (xioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &p))
		return 0;
	return p.value == (!strcmp(want, "hardware") ?
			   DRM_MXACCEL_ENGINE_HARDWARE :
			   DRM_MXACCEL_ENGINE_SOFTWARE);
}

static int open_in(const char *dir, const char *prefix)
{
	struct dirent *e;
	char path[300];
	DIR *d = opendir(dir);
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && (!is_mxaccel(fd) || !engine_wanted(fd))) {
			close(fd);
			fd = -1;
		}
	}
	closedir(d);
	return fd;
}

struct bo {
	uint32_t handle;
	uint8_t *map;
	size_t size;
};

static void bo_new(int fd, size_t size, struct bo *bo)
{
	struct drm_mxaccel_bo_create c = { .size = size };

	if (xioctl(fd, DRM_IOCTL_MXACCEL_BO_CREATE, &c)) {
		perror("BO_CREATE");
		exit(1);
	}
	bo->handle = c.handle;
	bo->size = size;
	bo->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       c.mmap_offset);
	if (bo->map == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
}

static void bo_free(int fd, struct bo *bo)
{
	struct drm_gem_close c = { .handle = bo->handle };

	munmap(bo->map, bo->size);
	xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static int run_op(int fd, uint32_t queue, struct drm_mxaccel_op *op)
{
	struct drm_mxaccel_submit s = {
		.queue_id = queue,
		.ops = (uintptr_t)op,
		.op_count = 1,
		.op_size = sizeof(*op),
	};
	struct drm_mxaccel_job_wait w = { .queue_id = queue };
	struct timespec ts;
	int ret = xioctl(fd, DRM_IOCTL_MXACCEL_SUBMIT, &s);

	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.seqno = s.seqno;
	w.timeout_ns = (ts.tv_sec + 60) * 1000000000ll + ts.tv_nsec;
	ret = xioctl(fd, DRM_IOCTL_MXACCEL_JOB_WAIT, &w);
	return ret ? ret : w.status;
}

static void fill_codes(uint8_t *p, size_t n, enum mxa_elem e)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t c = (uint8_t)rnd();

		/* A few NaN/Inf codes, mostly finite ones. */
		if (e == MXA_ELEM_E4M3 && (c & 0x7f) == 0x7f && below(8))
			c &= 0xfe;
		if (e == MXA_ELEM_E5M2 && (c & 0x7c) == 0x7c && below(8))
			c &= 0xf3;
		p[i] = (e == MXA_ELEM_E2M3 || e == MXA_ELEM_E3M2) ? c & 0x3f : c;
	}
}

/* Mostly moderate scales, one in 16 an extreme: 2^-127, 2^-126, 2^127, NaN. */
static void fill_scales(uint8_t *p, size_t n)
{
	static const uint8_t extreme[] = { 0, 1, 254, 255 };
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = below(16) ? (uint8_t)(112 + below(32)) : extreme[below(4)];
}

/*
 * UE4M3 scales: mostly normal e4m3 values, one in 16 an extreme: the
 * smallest subnormal, 448, NaN (0x7f) or a set sign bit.
 */
static void fill_ue4m3_scales(uint8_t *p, size_t n)
{
	static const uint8_t extreme[] = { 1, 0x7e, 0x7f, 0xb8 };
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = below(16) ? (uint8_t)(0x20 + below(0x40)) :
				   extreme[below(4)];
}

static struct mxa_device *cpu;

/* How an operand's blocks are scaled (scale type, fp32 tensor scale). */
struct scaling {
	enum mxa_scale_type type;
	uint32_t ts;
};

static const struct scaling e8m0 = { MXA_SCALE_E8M0, 0 };

/* One GEMM on both sides; every byte of C must match. */
static void check_gemm_scaled(int fd, uint32_t queue, enum mxa_elem ea,
			      enum mxa_elem eb, uint32_t m, uint32_t n,
			      uint32_t k, enum mxa_scale_layout layout,
			      enum mxa_dtype dt, int accumulate,
			      const struct scaling *sa,
			      const struct scaling *sb)
{
	size_t arow, brow, asz, bsz, csz = (size_t)m * n * (dt ? 2 : 4);
	struct mxa_matrix a = { .elem = ea, .scale_layout = layout,
				.rows = m, .cols = k, .scale_type = sa->type };
	struct mxa_matrix b = { .elem = eb, .scale_layout = layout,
				.rows = n, .cols = k, .scale_type = sb->type };
	struct bo ad, as, bd, bs, c;
	struct mxa_buffer *lc;
	uint8_t *host_c;
	int ret;

	memcpy(&a.tensor_scale, &sa->ts, sizeof(sa->ts));
	memcpy(&b.tensor_scale, &sb->ts, sizeof(sb->ts));
	if (mxa_matrix_bytes(&a, &arow, &asz) ||
	    mxa_matrix_bytes(&b, &brow, &bsz)) {
		printf("# mxa_matrix_bytes failed\n");
		failures++;
		return;
	}
	bo_new(fd, arow, &ad);
	bo_new(fd, asz, &as);
	bo_new(fd, brow, &bd);
	bo_new(fd, bsz, &bs);
	bo_new(fd, csz, &c);
	fill_codes(ad.map, arow, ea);
	fill_codes(bd.map, brow, eb);
	if (sa->type == MXA_SCALE_UE4M3)
		fill_ue4m3_scales(as.map, asz);
	else
		fill_scales(as.map, asz);
	if (sb->type == MXA_SCALE_UE4M3)
		fill_ue4m3_scales(bs.map, bsz);
	else
		fill_scales(bs.map, bsz);
	if (accumulate) {
		size_t i;

		for (i = 0; i < csz; i++)
			c.map[i] = (uint8_t)rnd();
	}
	host_c = malloc(csz);
	memcpy(host_c, c.map, csz);

	mxa_buffer_wrap(cpu, ad.map, ad.size, &a.data);
	mxa_buffer_wrap(cpu, as.map, as.size, &a.scale);
	mxa_buffer_wrap(cpu, bd.map, bd.size, &b.data);
	mxa_buffer_wrap(cpu, bs.map, bs.size, &b.scale);
	mxa_buffer_wrap(cpu, host_c, csz, &lc);
	{
		struct mxa_dense cd = { .buf = lc, .dtype = dt, .rows = m,
					.cols = n };

		ret = mxa_gemm(cpu, &a, &b, &cd,
			       accumulate ? MXA_GEMM_ACCUMULATE : 0,
			       MXA_PREF_EMULATED);
		if (ret) {
			printf("# library gemm: %s\n", mxa_strerror(ret));
			failures++;
		}
	}
	{
		struct drm_mxaccel_op op = {
			.kind = DRM_MXACCEL_OP_GEMM,
			.flags = DRM_MXACCEL_OP_EXACT |
				 (accumulate ? DRM_MXACCEL_OP_ACCUMULATE : 0),
			.m = m, .n = n, .k = k,
			.a = { .data_handle = ad.handle,
			       .scale_handle = as.handle, .elem = ea,
			       .scale_layout = layout },
			.b = { .data_handle = bd.handle,
			       .scale_handle = bs.handle, .elem = eb,
			       .scale_layout = layout },
			.c = { .handle = c.handle, .dtype = dt },
			.a_scale = { .scale_type = sa->type,
				     .tensor_scale = sa->ts },
			.b_scale = { .scale_type = sb->type,
				     .tensor_scale = sb->ts },
		};

		ret = run_op(fd, queue, &op);
		if (ret) {
			printf("# device gemm: %s\n", strerror(-ret));
			failures++;
		}
	}
	if (memcmp(host_c, c.map, csz)) {
		printf("# gemm %s/%s x %s/%s %ux%ux%u %s %s%s, tensor scales 0x%08x 0x%08x: device differs from EMULATED\n",
		       mxa_elem_name(ea), mxa_scale_type_name(sa->type),
		       mxa_elem_name(eb), mxa_scale_type_name(sb->type),
		       m, n, k, mxa_layout_name(layout), mxa_dtype_name(dt),
		       accumulate ? " accumulate" : "", sa->ts, sb->ts);
		failures++;
	}
	mxa_buffer_free(a.data);
	mxa_buffer_free(a.scale);
	mxa_buffer_free(b.data);
	mxa_buffer_free(b.scale);
	mxa_buffer_free(lc);
	free(host_c);
	bo_free(fd, &ad);
	bo_free(fd, &as);
	bo_free(fd, &bd);
	bo_free(fd, &bs);
	bo_free(fd, &c);
}

static void check_gemm(int fd, uint32_t queue, enum mxa_elem ea,
		       enum mxa_elem eb, uint32_t m, uint32_t n, uint32_t k,
		       enum mxa_scale_layout layout, enum mxa_dtype dt,
		       int accumulate)
{
	check_gemm_scaled(fd, queue, ea, eb, m, n, k, layout, dt, accumulate,
			  &e8m0, &e8m0);
}

static uint32_t rand_f32_bits(void)
{
	uint32_t x = (uint32_t)rnd();

	/* Mostly moderate magnitudes, some anything-goes bit patterns. */
	if (below(8))
		x = (x & 0x807fffff) | ((100 + below(50)) << 23);
	return x;
}

/* A tensor scale: none, moderate, extreme or subnormal (fp32 bits). */
static uint32_t rand_tensor_scale(void)
{
	switch (below(6)) {
	case 0:
	case 1:
		return 0;
	case 2:
		return 0x7f7fffffu;
	case 3:
		return 1 + below(0x7fffff);
	default:
		return (uint32_t)((107 + below(40)) << 23) | below(1u << 23);
	}
}

/*
 * One quantization on both sides (MX with sc = e8m0, or NVFP4 with UE4M3
 * scales per 16 and sc's tensor scale); every byte must match.
 */
static void check_quantize(int fd, uint32_t queue, enum mxa_elem e,
			   enum mxa_scale_mode mode, uint32_t rows,
			   uint32_t cols, enum mxa_scale_layout layout,
			   enum mxa_dtype dt, const struct scaling *sc)
{
	size_t es = dt ? 2 : 4, dsz, ssz, i;
	struct mxa_matrix d = {
		.elem = e, .scale_type = sc->type, .scale_layout = layout,
		.rows = rows, .cols = cols,
	};
	struct bo src, data, scale;
	struct mxa_buffer *ls;
	uint8_t *hd, *hs;
	int ret;

	memcpy(&d.tensor_scale, &sc->ts, sizeof(sc->ts));
	if (mxa_matrix_bytes(&d, &dsz, &ssz)) {
		printf("# mxa_matrix_bytes failed\n");
		failures++;
		return;
	}
	bo_new(fd, (size_t)rows * cols * es, &src);
	bo_new(fd, dsz, &data);
	bo_new(fd, ssz, &scale);
	for (i = 0; i < (size_t)rows * cols; i++) {
		uint32_t x = rand_f32_bits();

		if (dt)
			((uint16_t *)src.map)[i] = (uint16_t)(x >> 16);
		else
			((uint32_t *)src.map)[i] = x;
	}
	hd = calloc(1, data.size);
	hs = calloc(1, scale.size);
	mxa_buffer_wrap(cpu, src.map, src.size, &ls);
	mxa_buffer_wrap(cpu, hd, data.size, &d.data);
	mxa_buffer_wrap(cpu, hs, scale.size, &d.scale);
	{
		struct mxa_dense s = { .buf = ls, .dtype = dt, .rows = rows,
				       .cols = cols };

		ret = mxa_quantize(cpu, &s, &d, mode, MXA_PREF_EMULATED);
		if (ret) {
			printf("# library quantize: %s\n", mxa_strerror(ret));
			failures++;
		}
	}
	{
		struct drm_mxaccel_op op = {
			.kind = DRM_MXACCEL_OP_QUANTIZE,
			.m = rows, .k = cols, .scale_mode = mode,
			.a = { .data_handle = data.handle,
			       .scale_handle = scale.handle, .elem = e,
			       .scale_layout = layout },
			.c = { .handle = src.handle, .dtype = dt },
		};

		if (sc->type == MXA_SCALE_UE4M3) {
			op.a_scale.scale_type = DRM_MXACCEL_SCALE_TYPE_UE4M3;
			op.a_scale.tensor_scale = sc->ts;
		}
		ret = run_op(fd, queue, &op);
		if (ret) {
			printf("# device quantize: %s\n", strerror(-ret));
			failures++;
		}
	}
	if (memcmp(hd, data.map, data.size) ||
	    memcmp(hs, scale.map, scale.size)) {
		printf("# quantize %s/%s %s %ux%u %s %s tensor scale 0x%08x: device differs from the library\n",
		       mxa_elem_name(e), mxa_scale_type_name(sc->type),
		       mxa_scale_mode_name(mode), rows, cols,
		       mxa_layout_name(layout), mxa_dtype_name(dt), sc->ts);
		failures++;
	}
	mxa_buffer_free(ls);
	mxa_buffer_free(d.data);
	mxa_buffer_free(d.scale);
	free(hd);
	free(hs);
	bo_free(fd, &src);
	bo_free(fd, &data);
	bo_free(fd, &scale);
}

int main(void)
{
	struct drm_mxaccel_get_param gp = {
		.param = DRM_MXACCEL_PARAM_QUANTIZE_SCALE_TYPES,
	};
	struct drm_mxaccel_queue_create qc = { 0 };
	int fd = open_in("/dev/accel", "accel");
	int ea, eb, mode, t = 0;

	if (fd < 0)
		fd = open_in("/dev/dri", "renderD");
	if (fd < 0) {
		printf("1..0 # SKIP no mxaccel device\n");
		return SKIP;
	}
	if (mxa_device_open("cpu", &cpu) ||
	    xioctl(fd, DRM_IOCTL_MXACCEL_QUEUE_CREATE, &qc)) {
		printf("Bail out! setup failed\n");
		return 1;
	}
	printf("1..4\n");
	for (ea = MXA_ELEM_E4M3; ea <= MXA_ELEM_E2M1; ea++) {
		for (eb = MXA_ELEM_E4M3; eb <= MXA_ELEM_E2M1; eb++) {
			check_gemm(fd, qc.queue_id, ea, eb, 1 + below(9),
				   1 + below(9), 32 * (1 + below(6)),
				   below(2), below(2), below(2));
			t++;
		}
	}
	check_gemm(fd, qc.queue_id, MXA_ELEM_E4M3, MXA_ELEM_E2M1, 131, 67,
		   256, MXA_LAYOUT_SWIZZLED, MXA_DTYPE_F32, 1);
	printf("%s 1 - gemm: %d cases, device == EMULATED\n",
	       failures ? "not ok" : "ok", t + 1);

	t = 0;
	for (ea = MXA_ELEM_E4M3; ea <= MXA_ELEM_E2M1; ea++) {
		for (mode = MXA_SCALE_FLOOR; mode <= MXA_SCALE_EVEN; mode++) {
			check_quantize(fd, qc.queue_id, ea, mode,
				       1 + below(140), 32 * (1 + below(9)),
				       below(2), below(2), &e8m0);
			t++;
		}
	}
	printf("%s 2 - quantize: %d cases, device == library\n",
	       failures ? "not ok" : "ok", t);

	/* Ragged rows and K (multiples of 16), specials, tensor scales. */
	if (xioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp) ||
	    !(gp.value & (1u << DRM_MXACCEL_SCALE_TYPE_UE4M3))) {
		printf("ok 3 - nvfp4 quantize # SKIP the engine has no UE4M3 scales\n");
	} else {
		for (t = 0; t < 24; t++) {
			struct scaling nv = { MXA_SCALE_UE4M3,
					      rand_tensor_scale() };

			check_quantize(fd, qc.queue_id, MXA_ELEM_E2M1,
				       MXA_SCALE_NVFP4, 1 + below(140),
				       16 * (1 + below(18)), below(2),
				       below(2), &nv);
		}
		printf("%s 3 - nvfp4 quantize: %d cases, device == library\n",
		       failures ? "not ok" : "ok", t);
	}

	/* NVFP4 x NVFP4, NVFP4 x MX and MX x NVFP4 GEMMs, any MX element. */
	gp.param = DRM_MXACCEL_PARAM_GEMM_SCALE_TYPES;
	if (xioctl(fd, DRM_IOCTL_MXACCEL_GET_PARAM, &gp) ||
	    !(gp.value & (1u << DRM_MXACCEL_SCALE_TYPE_UE4M3))) {
		printf("ok 4 - nvfp4 gemm # SKIP the engine has no UE4M3 scales\n");
	} else {
		for (t = 0; t < 18; t++) {
			struct scaling nv = { MXA_SCALE_UE4M3,
					      rand_tensor_scale() };
			struct scaling nv2 = { MXA_SCALE_UE4M3,
					       rand_tensor_scale() };
			enum mxa_elem other = below(2) ? MXA_ELEM_E2M1 :
					      (enum mxa_elem)(1 + below(5));
			uint32_t k = (t % 3 == 0 ? 16 : 32) * (1 + below(6));

			if (t % 3 == 2)		/* MX x NVFP4 */
				check_gemm_scaled(fd, qc.queue_id, other,
						  MXA_ELEM_E2M1, 1 + below(9),
						  1 + below(9), k, below(2),
						  below(2), below(2), &e8m0,
						  &nv);
			else			/* NVFP4 x NVFP4, x MX */
				check_gemm_scaled(fd, qc.queue_id,
						  MXA_ELEM_E2M1,
						  t % 3 ? other : MXA_ELEM_E2M1,
						  1 + below(9), 1 + below(9), k,
						  below(2), below(2), below(2),
						  &nv, t % 3 ? &e8m0 : &nv2);
		}
		check_gemm_scaled(fd, qc.queue_id, MXA_ELEM_E2M1, MXA_ELEM_E2M1,
				  131, 67, 256, MXA_LAYOUT_SWIZZLED,
				  MXA_DTYPE_BF16, 1,
				  &(struct scaling){ MXA_SCALE_UE4M3, 0x3d800000 },
				  &(struct scaling){ MXA_SCALE_UE4M3, 0 });
		printf("%s 4 - nvfp4 gemm: %d cases, device == EMULATED\n",
		       failures ? "not ok" : "ok", t + 1);
	}
	mxa_device_close(cpu);
	close(fd);
	return failures ? 1 : 0;
}
