// SPDX-License-Identifier: MIT
/*
 * The cpu device's instruction-set levels ($MXACCEL_CPU_ISA): selection
 * errors, and every level this machine runs against the portable one.
 *
 * - Quantize and dequantize are bit-exact with the scalar core (the "ref"
 *   level) for all 5 element types x 4 scale modes, fp32 and bf16, plain
 *   and swizzled scales, on random rows that mix ordinary values, exact
 *   rounding ties, fp32 subnormals, zeros of both signs, NaN (any sign and
 *   payload), +-Inf, values near the top of fp32 and all-special blocks;
 *   and bf16 exhaustively: all 65536 patterns under block scales from
 *   subnormal amaxes to Inf and NaN, in every element type and mode;
 *   dequantize on random codes (every byte, bits above the code width
 *   included) and scales (every byte, the ends weighted).
 * - GEMM results do not depend on the thread count or on how the packed
 *   panels are striped ($MXACCEL_CPU_PACK_BUDGET forces M, N and K
 *   stripes): bit-identical.
 * - The error bounds and special values of every level: test_native_bound
 *   and test_special (beside this program) run once per level, with
 *   $MXACCEL_CPU_ISA set.
 * - The amx level's fallback: this program runs itself again in a child
 *   whose seccomp filter makes arch_prctl(ARCH_REQ_XCOMP_PERM) fail with
 *   EPERM, as a kernel or sandbox refusing the tile data would; there the
 *   default level must be the next one, the device description must say
 *   why, and MXACCEL_CPU_ISA=amx must fail with -EOPNOTSUPP.  On a CPU
 *   without AMX, MXACCEL_CPU_ISA=amx must fail the same way.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "testlib.h"

#define MAX_LEVELS 5

static const char *const level_names[MAX_LEVELS] = {
	"ref", "avx2", "avx512vnni", "avx512bf16", "amx",
};

static const char *isas[MAX_LEVELS];
static unsigned int n_isas;
static unsigned int n_quantize, n_dequantize, n_gemm;

/* mxa_device_open("cpu") with $MXACCEL_CPU_ISA = isa, then restored. */
static int open_level_ret(const char *isa, struct mxa_device **dev)
{
	const char *old = getenv("MXACCEL_CPU_ISA");
	char *saved = old ? strdup(old) : NULL;
	int ret;

	setenv("MXACCEL_CPU_ISA", isa, 1);
	ret = mxa_device_open("cpu", dev);
	if (saved)
		setenv("MXACCEL_CPU_ISA", saved, 1);
	else
		unsetenv("MXACCEL_CPU_ISA");
	free(saved);
	return ret;
}

static struct mxa_device *test_open_cpu_isa(const char *isa)
{
	struct mxa_device *dev = NULL;
	int ret = open_level_ret(isa, &dev);

	if (ret) {
		fprintf(stderr, "FAIL: MXACCEL_CPU_ISA=%s: mxa_device_open(\"cpu\") = %d (%s)\n",
			isa, ret, mxa_strerror(ret));
		exit(1);
	}
	return dev;
}

/*
 * The levels this machine runs, lowest first: only the one named when the
 * caller set $MXACCEL_CPU_ISA, else every level that opens (a level the
 * CPU lacks fails with -EOPNOTSUPP and is left out).
 */
static unsigned int test_cpu_isas(const char *names[MAX_LEVELS])
{
	const char *forced = getenv("MXACCEL_CPU_ISA");
	struct mxa_device *dev;
	unsigned int i, n = 0;
	int ret;

	if (forced && *forced && strcmp(forced, "auto")) {
		names[0] = forced;
		return 1;
	}
	for (i = 0; i < MAX_LEVELS; i++) {
		ret = open_level_ret(level_names[i], &dev);
		if (ret == -EOPNOTSUPP)
			continue;
		CHECK(ret == 0, "MXACCEL_CPU_ISA=%s: mxa_device_open(\"cpu\") = %d (%s)",
		      level_names[i], ret, mxa_strerror(ret));
		if (ret)
			continue;
		mxa_device_close(dev);
		names[n++] = level_names[i];
	}
	CHECK(n > 0 && !strcmp(names[0], "ref"),
	      "the portable level does not open");
	return n;
}

/* Run the test program name (beside this one) at one level. */
static void run_sibling(const char *name, const char *isa)
{
	char self[PATH_MAX], path[PATH_MAX + 64], *slash;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status = -1;
	pid_t pid;

	if (len <= 0) {
		CHECK(0, "cannot find this program: %s", strerror(errno));
		return;
	}
	self[len] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, name);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setenv("MXACCEL_CPU_ISA", isa, 1);
		setenv("MXACCEL_TEST_DEVICE", "cpu", 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "MXACCEL_CPU_ISA=%s %s: status 0x%x", isa, path, status);
}

/* --- selection ------------------------------------------------------------ */

static void test_selection(void)
{
	static const char *const bad[] = { "avx9", "AVX2", "ref ", "none" };
	struct mxa_device_info info;
	struct mxa_device *dev;
	unsigned int i;
	char want[64];

	for (i = 0; i < TEST_ARRAY_SIZE(bad); i++) {
		setenv("MXACCEL_CPU_ISA", bad[i], 1);
		dev = NULL;
		CHECK_RET(mxa_device_open("cpu", &dev), -EINVAL);
		CHECK(!dev, "MXACCEL_CPU_ISA='%s' opened a device", bad[i]);
	}
	setenv("MXACCEL_CPU_ISA", "auto", 1);
	dev = NULL;
	CHECK_RET(mxa_device_open("cpu", &dev), 0);
	mxa_device_close(dev);
	setenv("MXACCEL_CPU_PACK_BUDGET", "12", 1);
	CHECK_RET(mxa_device_open("cpu", &dev), -EINVAL);
	unsetenv("MXACCEL_CPU_PACK_BUDGET");
	unsetenv("MXACCEL_CPU_ISA");

	/* Each level says which one it is, and that it was forced. */
	for (i = 0; i < n_isas; i++) {
		dev = test_open_cpu_isa(isas[i]);
		CHECK_RET(mxa_device_info(dev, &info), 0);
		snprintf(want, sizeof(want), "ISA %s (forced", isas[i]);
		CHECK(strstr(info.description, want),
		      "level %s: description '%s' does not name it", isas[i],
		      info.description);
		mxa_device_close(dev);
	}
}

/* --- amx refused ------------------------------------------------------------ */

#if defined(__x86_64__)
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/*
 * From now on, in this process and what it executes, the tile data
 * permission request fails with EPERM; every other system call runs.
 */
static int refuse_xcomp_perm(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_arch_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_REQ_XCOMP_PERM, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = TEST_ARRAY_SIZE(f), .filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}

/* The child's side (argv[1] "--amx-refused"), with the filter in place. */
static int amx_refused_child(void)
{
	struct mxa_device_info info;
	struct mxa_device *dev = NULL;

	CHECK(syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM,
		      XFEATURE_XTILEDATA) == -1 && errno == EPERM,
	      "the seccomp filter does not refuse ARCH_REQ_XCOMP_PERM");
	unsetenv("MXACCEL_CPU_ISA");
	CHECK_RET(mxa_device_open("cpu", &dev), 0);
	if (dev) {
		CHECK_RET(mxa_device_info(dev, &info), 0);
		printf("permission refused: %s\n", info.description);
		CHECK(!strstr(info.description, "ISA amx"),
		      "permission refused, yet the level is amx: %s",
		      info.description);
		CHECK(strstr(info.description,
			     "amx unused: arch_prctl(ARCH_REQ_XCOMP_PERM) refused"),
		      "the description does not say why amx is unused: %s",
		      info.description);
		mxa_device_close(dev);
	}
	setenv("MXACCEL_CPU_ISA", "amx", 1);
	dev = NULL;
	CHECK_RET(mxa_device_open("cpu", &dev), -EOPNOTSUPP);
	CHECK(!dev, "MXACCEL_CPU_ISA=amx opened a device without permission");
	return test_finish();
}

/* Run this program again, refused, and expect the child to pass. */
static void test_amx_refused(void)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (refuse_xcomp_perm()) {
			fprintf(stderr, "seccomp: %s\n", strerror(errno));
			_exit(2);
		}
		execl("/proc/self/exe", "test_cpu_isa", "--amx-refused",
		      (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the amx fallback under a refused permission: status 0x%x",
	      status);
}
#endif

/* Where amx is not among the levels, forcing it fails loudly. */
static void test_amx_absent(void)
{
	struct mxa_device *dev = NULL;
	unsigned int i;

	for (i = 0; i < n_isas; i++)
		if (!strcmp(isas[i], "amx"))
			return;
	CHECK_RET(open_level_ret("amx", &dev), -EOPNOTSUPP);
	CHECK(!dev, "MXACCEL_CPU_ISA=amx opened a device on a CPU without it");
}

/* --- data ----------------------------------------------------------------- */

static uint32_t rand_bits(uint32_t exp_lo, uint32_t exp_hi)
{
	uint32_t e = exp_lo + test_rand_below(exp_hi - exp_lo + 1);

	return (uint32_t)test_rand_below(2) << 31 | e << 23 |
	       ((uint32_t)test_rand() & 0x7fffff);
}

static uint32_t rand_special(void)
{
	switch (test_rand_below(5)) {
	case 0:		/* NaN, any sign and payload */
		return (uint32_t)test_rand_below(2) << 31 | 0x7f800000 |
		       (1 + test_rand_below(0x7fffff));
	case 1:
		return 0x7f800000;
	case 2:
		return 0xff800000;
	case 3:
		return 0x80000000;
	default:
		return 0;
	}
}

/*
 * One block of 32 fp32 patterns in a random regime.  Ties: code values
 * and midpoints between neighbours, times a common power of two, with
 * the largest value present so that FLOOR maps them back exactly.
 */
static void rand_block(enum mxa_elem elem, uint32_t x[32])
{
	const struct test_elem_info *f = test_elem(elem);
	unsigned int regime = test_rand_below(8), i;
	int t = (int)test_rand_below(200) - 100;

	for (i = 0; i < 32; i++) {
		switch (regime) {
		case 0:		/* ordinary values around one magnitude */
		case 1:
			x[i] = rand_bits(110 + t / 10, 130 + t / 10);
			break;
		case 2: {	/* exact ties (and exact codes) */
			uint8_t c = test_rand_below(test_elem_max_code(elem));
			double v = test_elem_value(elem, c);

			if (test_rand_below(2))
				v = (v + test_elem_value(elem, c + 1)) / 2;
			if (i == 0)
				v = f->max;
			v = ldexp(test_rand_below(2) ? -v : v, t);
			x[i] = test_f32_bits((float)v);
			break;
		}
		case 3:		/* fp32 subnormals and tiny normals */
			x[i] = rand_bits(0, 2);
			break;
		case 4:		/* near the top of fp32 */
			x[i] = rand_bits(240, 254);
			break;
		case 5:		/* sprinkled specials */
			x[i] = test_rand_below(4) ? rand_bits(100, 150) :
						    rand_special();
			break;
		case 6:		/* every exponent */
			x[i] = rand_bits(0, 254);
			break;
		default:	/* all special, or all zero */
			x[i] = t > 0 ? rand_special() : (uint32_t)(t & 1) << 31;
			break;
		}
	}
}

static size_t row_bytes(enum mxa_elem elem, uint32_t cols)
{
	return elem == MXA_ELEM_E2M1 ? cols / 2 : cols;
}

/* --- quantize ------------------------------------------------------------- */

struct quant_case {
	enum mxa_elem elem;
	enum mxa_scale_mode mode;
	enum mxa_dtype dtype;
	enum mxa_scale_layout layout;
	uint32_t rows, cols;
	const uint32_t *in;		/* dtype bits (bf16 in the low 16) */
};

/* Quantize on dev; data and scales come back as raw buffer bytes. */
static int quantize_on(struct mxa_device *dev, const struct quant_case *q,
		       uint8_t *data, uint8_t *scales, size_t scale_bytes)
{
	struct mxa_matrix dst = {
		.elem = q->elem, .scale_layout = q->layout,
		.rows = q->rows, .cols = q->cols,
	};
	size_t data_bytes = q->rows * row_bytes(q->elem, q->cols);
	struct mxa_dense src;
	int ret = test_dense_upload(dev, q->dtype, q->rows, q->cols, q->in,
				    0, 0, &src);

	if (!ret)
		ret = mxa_buffer_alloc(dev, data_bytes, &dst.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, scale_bytes, &dst.scale);
	if (!ret)
		ret = mxa_quantize(dev, &src, &dst, q->mode, MXA_PREF_AUTO);
	if (!ret)
		ret = mxa_buffer_read(dst.data, 0, data, data_bytes);
	if (!ret)
		ret = mxa_buffer_read(dst.scale, 0, scales, scale_bytes);
	mxa_buffer_free(dst.data);
	mxa_buffer_free(dst.scale);
	test_dense_release(&src);
	return ret;
}

static void compare_quantize(struct mxa_device *ref, struct mxa_device *dev,
			     const char *isa, const struct quant_case *q)
{
	size_t data_bytes = q->rows * row_bytes(q->elem, q->cols), sb, i;
	uint8_t *d0, *d1, *s0, *s1;
	int r0, r1;

	CHECK_RET(mxa_scale_bytes(q->layout, q->rows, q->cols, &sb), 0);
	d0 = calloc(data_bytes, 1);
	d1 = calloc(data_bytes, 1);
	s0 = calloc(sb, 1);
	s1 = calloc(sb, 1);
	r0 = quantize_on(ref, q, d0, s0, sb);
	r1 = quantize_on(dev, q, d1, s1, sb);
	n_quantize++;
	CHECK(r0 == 0 && r1 == 0, "quantize: %d (ref), %d (%s)", r0, r1, isa);
	for (i = 0; !r0 && !r1 && i < data_bytes; i++) {
		if (d0[i] == d1[i])
			continue;
		CHECK(0, "%s quantize %s/%s %s %ux%u: code byte %zu (row %zu) 0x%02x, ref 0x%02x",
		      isa, test_elem(q->elem)->name, test_mode_names[q->mode],
		      q->dtype == MXA_DTYPE_BF16 ? "bf16" : "f32", q->rows,
		      q->cols, i, i / row_bytes(q->elem, q->cols), d1[i],
		      d0[i]);
		break;
	}
	for (i = 0; !r0 && !r1 && i < sb; i++) {
		if (s0[i] == s1[i])
			continue;
		CHECK(0, "%s quantize %s/%s %s %ux%u %s: scale byte %zu 0x%02x, ref 0x%02x",
		      isa, test_elem(q->elem)->name, test_mode_names[q->mode],
		      q->dtype == MXA_DTYPE_BF16 ? "bf16" : "f32", q->rows,
		      q->cols, q->layout ? "swizzled" : "plain", i, s1[i],
		      s0[i]);
		break;
	}
	free(d0);
	free(d1);
	free(s0);
	free(s1);
}

static void test_quantize(struct mxa_device *ref, struct mxa_device *dev,
			  const char *isa)
{
	static const uint32_t cols[] = { 32, 64, 256, 480, 512, 544, 1056 };
	unsigned int c;

	/* 5 elements x 4 modes x fp32, bf16 x two random shapes each */
	for (c = 0; c < 5 * 4 * 2 * 2; c++) {
		struct quant_case q = {
			.elem = test_elems[c / 16],
			.mode = test_modes[c / 4 % 4],
			.dtype = c / 2 % 2 ? MXA_DTYPE_BF16 : MXA_DTYPE_F32,
			.layout = test_rand_below(2) ? MXA_LAYOUT_SWIZZLED :
						       MXA_LAYOUT_PLAIN,
			.rows = 1 + test_rand_below(20),
			.cols = cols[test_rand_below(TEST_ARRAY_SIZE(cols))],
		};
		size_t n = (size_t)q.rows * q.cols, i;
		uint32_t *in = malloc(n * 4);

		for (i = 0; i < n; i += 32)
			rand_block(q.elem, in + i);
		if (q.dtype == MXA_DTYPE_BF16)
			for (i = 0; i < n; i++)
				in[i] >>= 16;
		q.in = in;
		compare_quantize(ref, dev, isa, &q);
		free(in);
	}
}

/*
 * Every bf16 input under every kind of block scale: for each anchor
 * magnitude (the block's amax, at a random place in every block, random
 * sign), all 65536 bf16 patterns whose magnitude is at most the anchor's
 * fill the other 31 places of the blocks, in rows of 37 blocks (a chunk,
 * a chunk, and a ragged tail).  The anchors run from bf16 subnormals
 * through the largest finite value to Inf and NaN (whose blocks are all
 * NaN codes), so each anchor pins one block scale per mode and every
 * element code under it is compared with the scalar core.
 */
#define ALL_BF16_COLS (37 * 32)

static void test_quantize_bf16_all(struct mxa_device *ref,
				   struct mxa_device *dev, const char *isa)
{
	static const uint16_t exps[] = { 0, 1, 2, 9, 19, 20, 21, 60, 117,
					 120, 124, 125, 126, 127, 128, 129,
					 131, 135, 136, 140, 200, 253, 254 };
	unsigned int a, e, m;
	/* 65536 patterns, 31 to a block, and a row's padding */
	uint32_t *in = malloc((65536 / 31 + 1) * 32 * 4 + ALL_BF16_COLS * 4);

	for (a = 0; a < TEST_ARRAY_SIZE(exps) + 2; a++) {
		uint16_t anchor = a < TEST_ARRAY_SIZE(exps) ?
				  exps[a] << 7 | test_rand_below(128) :
				  a == TEST_ARRAY_SIZE(exps) ? 0x7f80 : 0x7fff;
		size_t n = 0, i;
		uint32_t p = 0;

		if (!anchor)
			anchor = 1;
		/* blocks until every pattern is placed, then whole rows */
		while (p < 65536 || n % ALL_BF16_COLS) {
			unsigned int at = test_rand_below(32);

			for (i = 0; i < 32; i++) {
				if (i == at) {
					in[n++] = anchor |
						  (uint32_t)test_rand_below(2) << 15;
					continue;
				}
				while (p < 65536 && (p & 0x7fff) > anchor)
					p++;
				in[n++] = p < 65536 ? p++ : 0;
			}
		}
		for (e = 0; e < 5; e++) {
			for (m = 0; m < 4; m++) {
				struct quant_case q = {
					.elem = test_elems[e],
					.mode = test_modes[m],
					.dtype = MXA_DTYPE_BF16,
					.layout = MXA_LAYOUT_PLAIN,
					.rows = n / ALL_BF16_COLS,
					.cols = ALL_BF16_COLS,
					.in = in,
				};

				compare_quantize(ref, dev, isa, &q);
			}
		}
	}
	free(in);
}

/* --- dequantize ------------------------------------------------------------ */

static uint8_t rand_scale_byte(void)
{
	static const uint8_t ends[] = { 0, 1, 2, 126, 127, 128, 252, 253,
					254, 255 };

	if (test_rand_below(3))
		return (uint8_t)test_rand_below(256);
	return ends[test_rand_below(TEST_ARRAY_SIZE(ends))];
}

static int dequantize_on(struct mxa_device *dev, const uint8_t *data,
			 const uint8_t *scales, enum mxa_elem elem,
			 enum mxa_scale_layout layout, uint32_t rows,
			 uint32_t cols, enum mxa_dtype dtype, uint32_t *out)
{
	struct mxa_matrix src = {
		.elem = elem, .scale_layout = layout, .rows = rows,
		.cols = cols,
	};
	size_t data_bytes = rows * row_bytes(elem, cols), sb;
	struct mxa_dense dst;
	int ret = mxa_scale_bytes(layout, rows, cols, &sb);

	if (!ret)
		ret = mxa_buffer_alloc(dev, data_bytes, &src.data);
	if (!ret)
		ret = mxa_buffer_alloc(dev, sb, &src.scale);
	if (!ret)
		ret = mxa_buffer_write(src.data, 0, data, data_bytes);
	if (!ret)
		ret = mxa_buffer_write(src.scale, 0, scales, sb);
	if (!ret)
		ret = test_dense_upload(dev, dtype, rows, cols, NULL, 0, 0,
					&dst);
	if (!ret) {
		ret = mxa_dequantize(dev, &src, &dst, MXA_PREF_AUTO);
		if (!ret)
			ret = test_dense_download(&dst, out);
		test_dense_release(&dst);
	}
	mxa_buffer_free(src.data);
	mxa_buffer_free(src.scale);
	return ret;
}

static void test_dequantize(struct mxa_device *ref, struct mxa_device *dev,
			    const char *isa)
{
	unsigned int e, d, rep;

	for (e = 0; e < 5; e++) {
		for (d = 0; d < 2; d++) {
			for (rep = 0; rep < 3; rep++) {
				enum mxa_elem elem = test_elems[e];
				enum mxa_dtype dtype = d ? MXA_DTYPE_BF16 :
							   MXA_DTYPE_F32;
				enum mxa_scale_layout layout = rep == 1 ?
					MXA_LAYOUT_SWIZZLED : MXA_LAYOUT_PLAIN;
				uint32_t rows = 1 + test_rand_below(9);
				uint32_t cols = 32 * (1 + test_rand_below(40));
				size_t db = rows * row_bytes(elem, cols), sb, i;
				size_t n = (size_t)rows * cols;
				uint8_t *data = malloc(db), *scales;
				uint32_t *o0 = calloc(n, 4), *o1 = calloc(n, 4);
				int r0, r1;

				CHECK_RET(mxa_scale_bytes(layout, rows, cols,
							  &sb), 0);
				scales = malloc(sb);
				for (i = 0; i < db; i++)
					data[i] = (uint8_t)test_rand_below(256);
				for (i = 0; i < sb; i++)
					scales[i] = rand_scale_byte();
				r0 = dequantize_on(ref, data, scales, elem,
						   layout, rows, cols, dtype, o0);
				r1 = dequantize_on(dev, data, scales, elem,
						   layout, rows, cols, dtype, o1);
				n_dequantize++;
				CHECK(r0 == 0 && r1 == 0,
				      "dequantize: %d (ref), %d (%s)", r0, r1,
				      isa);
				for (i = 0; !r0 && !r1 && i < n; i++) {
					if (o0[i] == o1[i])
						continue;
					CHECK(0, "%s dequantize %s to %s %ux%u: element %zu = 0x%08x, ref 0x%08x",
					      isa, test_elem(elem)->name,
					      d ? "bf16" : "f32", rows, cols, i,
					      o1[i], o0[i]);
					break;
				}
				free(data);
				free(scales);
				free(o0);
				free(o1);
			}
		}
	}
}

/* --- GEMM: threads and stripes do not change a bit ------------------------- */

static int gemm_on(struct mxa_device *dev, const struct test_mx *a,
		   const struct test_mx *b, enum mxa_dtype dtype,
		   uint32_t flags, const uint32_t *cin, uint32_t *out)
{
	struct mxa_matrix ma, mb;
	struct mxa_dense c;
	int ret = test_mx_upload(dev, a, NULL, &ma);

	if (ret)
		return ret;
	ret = test_mx_upload(dev, b, NULL, &mb);
	if (!ret) {
		ret = test_dense_upload(dev, dtype, a->rows, b->rows, cin, 0, 0,
					&c);
		if (!ret) {
			ret = mxa_gemm(dev, &ma, &mb, &c, flags,
				       MXA_PREF_NATIVE);
			if (!ret)
				ret = test_dense_download(&c, out);
			test_dense_release(&c);
		}
		test_mx_release(&mb);
	}
	test_mx_release(&ma);
	return ret;
}

static void random_operand(struct test_mx *m, enum mxa_elem elem,
			   uint32_t rows, uint32_t cols)
{
	size_t i;

	test_mx_alloc(m, elem, rows, cols);
	for (i = 0; i < (size_t)rows * cols; i++)
		m->code[i] = test_rand_code(elem, test_rand_below(500) == 0);
	for (i = 0; i < (size_t)rows * (cols / 32); i++)
		m->scale[i] = test_rand_below(300) ? 110 + test_rand_below(30) :
						     0xff;
}

static void test_gemm_invariance(const char *isa)
{
	/* budget 64 KiB: M, N and K stripes; 1 MiB: M and N stripes */
	static const char *const budgets[] = { "65536", "1048576" };
	static const unsigned int threads[] = { 1, 3 };
	static const enum mxa_elem pairs[][2] = {
		{ MXA_ELEM_E4M3, MXA_ELEM_E4M3 },
		{ MXA_ELEM_E2M1, MXA_ELEM_E2M1 },
		{ MXA_ELEM_E5M2, MXA_ELEM_E2M3 },
	};
	uint32_t m = 200, n = 300, k = 1024;
	size_t mn = (size_t)m * n;
	uint32_t *cin = malloc(mn * 4), *want = malloc(mn * 4);
	uint32_t *got = malloc(mn * 4);
	unsigned int p, v;
	size_t i;

	for (p = 0; p < TEST_ARRAY_SIZE(pairs); p++) {
		enum mxa_dtype dtype = p == 1 ? MXA_DTYPE_BF16 : MXA_DTYPE_F32;
		uint32_t flags = p == 2 ? MXA_GEMM_ACCUMULATE : 0;
		struct mxa_device *dev = test_open_cpu_isa(isa);
		struct test_mx a, b;
		int ret;

		random_operand(&a, pairs[p][0], m, k);
		random_operand(&b, pairs[p][1], n, k);
		for (i = 0; i < mn; i++) {
			cin[i] = test_f32_bits(test_rand_float(8.0f));
			if (dtype == MXA_DTYPE_BF16)
				cin[i] >>= 16;
		}
		ret = gemm_on(dev, &a, &b, dtype, flags, cin, want);
		n_gemm++;
		CHECK(ret == 0, "%s gemm: %d (%s)", isa, ret, mxa_strerror(ret));
		for (v = 0; !ret && v < 4; v++) {
			struct mxa_device *d2;

			if (v < 2) {
				d2 = test_open_cpu_isa(isa);
				CHECK_RET(mxa_device_set_threads(d2, threads[v]),
					  0);
			} else {
				setenv("MXACCEL_CPU_PACK_BUDGET",
				       budgets[v - 2], 1);
				d2 = test_open_cpu_isa(isa);
				unsetenv("MXACCEL_CPU_PACK_BUDGET");
			}
			ret = gemm_on(d2, &a, &b, dtype, flags, cin, got);
			n_gemm++;
			CHECK(ret == 0, "%s gemm (variant %u): %d", isa, v, ret);
			for (i = 0; !ret && i < mn; i++) {
				if (got[i] == want[i])
					continue;
				CHECK(0, "%s gemm %s x %s with %s%s: C[%zu][%zu] = 0x%08x, 0x%08x with the defaults",
				      isa, test_elem(a.elem)->name,
				      test_elem(b.elem)->name,
				      v < 2 ? "threads " : "MXACCEL_CPU_PACK_BUDGET=",
				      v < 2 ? (threads[v] == 1 ? "1" : "3") :
					      budgets[v - 2],
				      i / n, i % n, got[i], want[i]);
				break;
			}
			mxa_device_close(d2);
		}
		test_mx_free(&a);
		test_mx_free(&b);
		mxa_device_close(dev);
	}
	free(cin);
	free(want);
	free(got);
}

int main(int argc, char **argv)
{
	struct mxa_device *ref, *dev;
	unsigned int i;

#if defined(__x86_64__)
	if (argc == 2 && !strcmp(argv[1], "--amx-refused"))
		return amx_refused_child();
#endif
	(void)argc;
	(void)argv;
	test_seed(0x697361ull);
	/* This test names the levels itself; the caller's choice is kept. */
	n_isas = test_cpu_isas(isas);
	test_selection();
	test_amx_absent();
#if defined(__x86_64__)
	for (i = 0; i < n_isas; i++)
		if (!strcmp(isas[i], "amx"))
			test_amx_refused();
#endif
	ref = test_open_cpu_isa("ref");
	for (i = 0; i < n_isas; i++) {
		dev = test_open_cpu_isa(isas[i]);
		if (strcmp(isas[i], "ref")) {
			test_quantize(ref, dev, isas[i]);
			test_quantize_bf16_all(ref, dev, isas[i]);
			test_dequantize(ref, dev, isas[i]);
		}
		mxa_device_close(dev);
		test_gemm_invariance(isas[i]);
		run_sibling("test_native_bound", isas[i]);
		run_sibling("test_special", isas[i]);
	}
	mxa_device_close(ref);
	printf("levels:");
	for (i = 0; i < n_isas; i++)
		printf(" %s", isas[i]);
	printf("; %u quantize and %u dequantize comparisons, %u gemm runs\n",
	       n_quantize, n_dequantize, n_gemm);
	return test_finish();
}
