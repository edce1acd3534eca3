// SPDX-License-Identifier: MIT
/*
 * The public API's contract outside the numerics: every misuse returns the
 * documented errno and writes nothing, names parse and print back, the
 * dispatch introspection answers for every op and preference, environment
 * overrides fail loudly, and asynchronous GEMMs complete through fences.
 * One invalid field per check, on an otherwise valid request.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static struct mxa_device *dev;
static struct mxa_device_info dinfo;	/* dev's */
static bool is_cpu, is_accel;

/* Does dev have a NATIVE kernel for op (e4m3 x e4m3 for gemm)? */
static bool has_native(enum mxa_op op)
{
	struct mxa_op_desc d = {
		.op = op, .a_elem = MXA_ELEM_E4M3, .b_elem = MXA_ELEM_E4M3,
		.m = 4, .n = 3, .k = 64,
	};

	return test_supports(dev, &d, MXA_PREF_NATIVE);
}

/* What a call under NATIVE returns on dev: 0, or -EOPNOTSUPP if refused. */
static int native_ret(enum mxa_op op)
{
	return has_native(op) ? 0 : -EOPNOTSUPP;
}

/*
 * Run fn in a child process, so that a crash is one failed check rather
 * than the end of the test; fn's return value must be want.
 */
static void check_child(int (*fn)(void), const char *name, int want,
			int line)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		test_fail(__FILE__, line, "fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		_exit(fn() == want ? 0 : 1);
	if (waitpid(pid, &status, 0) != pid) {
		test_fail(__FILE__, line, "waitpid: %s", strerror(errno));
		return;
	}
	if (WIFSIGNALED(status))
		test_fail(__FILE__, line, "%s crashed with signal %d", name,
			  WTERMSIG(status));
	else if (WEXITSTATUS(status))
		test_fail(__FILE__, line, "%s did not return %d", name, want);
}

#define CHECK_CHILD(fn, want) check_child(fn, #fn, want, __LINE__)

static int parse_null_elem(void)
{
	return mxa_elem_parse("e4m3", NULL);
}

static int parse_null_mode(void)
{
	return mxa_scale_mode_parse("floor", NULL);
}

static int parse_null_layout(void)
{
	return mxa_layout_parse("plain", NULL);
}

static int parse_null_dtype(void)
{
	return mxa_dtype_parse("f32", NULL);
}

static int parse_null_pref(void)
{
	return mxa_pref_parse("auto", NULL);
}

static int strerror_int_min(void)
{
	return mxa_strerror(INT32_MIN) ? 0 : 1;
}

/* --- names ---------------------------------------------------------------- */

static void test_names(void)
{
	static const char *const elems[] = { "e4m3", "e5m2", "e2m3", "e3m2",
					     "e2m1" };
	static const char *const modes[] = { "floor", "rceil", "ceil", "even" };
	static const char *const layouts[] = { "plain", "swizzled" };
	static const char *const dtypes[] = { "f32", "bf16" };
	static const char *const prefs[] = { "auto", "native", "emulated" };
	static const char *const bad[] = { "", "nonsense", "E4M3", "e4m3 ",
					   "fp8", "mxfp8", "Auto", "FLOOR" };
	static const char *const bad_recipes[] = { "", "nonsense", "MXFP8",
						   "mxfp8_", "mxfp8 ", "mxfp9",
						   "e4m3", "mxfp6" };
	unsigned int i, j;

	for (i = 0; i < TEST_ARRAY_SIZE(elems); i++) {
		enum mxa_elem e = 0;

		CHECK_RET(mxa_elem_parse(elems[i], &e), 0);
		CHECK(e == (enum mxa_elem)(i + 1), "elem %s = %d", elems[i], e);
		CHECK(mxa_elem_name(e) && !strcmp(mxa_elem_name(e), elems[i]),
		      "elem %s does not print back", elems[i]);
	}
	for (i = 0; i < TEST_ARRAY_SIZE(modes); i++) {
		enum mxa_scale_mode m = 99;

		CHECK_RET(mxa_scale_mode_parse(modes[i], &m), 0);
		CHECK(m == test_modes[i], "mode %s = %d", modes[i], m);
		CHECK(mxa_scale_mode_name(m) &&
		      !strcmp(mxa_scale_mode_name(m), modes[i]),
		      "mode %s does not print back", modes[i]);
	}
	for (i = 0; i < TEST_ARRAY_SIZE(layouts); i++) {
		enum mxa_scale_layout l = 99;

		CHECK_RET(mxa_layout_parse(layouts[i], &l), 0);
		CHECK(l == (enum mxa_scale_layout)i, "layout %s = %d",
		      layouts[i], l);
		CHECK(mxa_layout_name(l) &&
		      !strcmp(mxa_layout_name(l), layouts[i]),
		      "layout %s does not print back", layouts[i]);
	}
	for (i = 0; i < TEST_ARRAY_SIZE(dtypes); i++) {
		enum mxa_dtype d = 99;

		CHECK_RET(mxa_dtype_parse(dtypes[i], &d), 0);
		CHECK(d == (enum mxa_dtype)i, "dtype %s = %d", dtypes[i], d);
		CHECK(mxa_dtype_name(d) && !strcmp(mxa_dtype_name(d), dtypes[i]),
		      "dtype %s does not print back", dtypes[i]);
	}
	for (i = 0; i < TEST_ARRAY_SIZE(prefs); i++) {
		enum mxa_pref p = 99;

		CHECK_RET(mxa_pref_parse(prefs[i], &p), 0);
		CHECK(p == (enum mxa_pref)i, "pref %s = %d", prefs[i], p);
		CHECK(mxa_pref_name(p) && !strcmp(mxa_pref_name(p), prefs[i]),
		      "pref %s does not print back", prefs[i]);
	}
	for (i = 0; i < 3; i++)
		CHECK(mxa_support_name((enum mxa_support)i) &&
		      *mxa_support_name((enum mxa_support)i),
		      "support %u has no name", i);

	/* Unknown names, NULL names and NULL outputs. */
	for (i = 0; i < TEST_ARRAY_SIZE(bad); i++) {
		enum mxa_elem e = 77;
		enum mxa_scale_mode m = 77;
		enum mxa_scale_layout l = 77;
		enum mxa_dtype d = 77;
		enum mxa_pref p = 77;

		CHECK_RET(mxa_elem_parse(bad[i], &e), -EINVAL);
		CHECK_RET(mxa_scale_mode_parse(bad[i], &m), -EINVAL);
		CHECK_RET(mxa_layout_parse(bad[i], &l), -EINVAL);
		CHECK_RET(mxa_dtype_parse(bad[i], &d), -EINVAL);
		CHECK_RET(mxa_pref_parse(bad[i], &p), -EINVAL);
		CHECK(e == 77 && m == 77 && l == 77 && d == 77 && p == 77,
		      "a failed parse of '%s' wrote its output", bad[i]);
	}
	{
		enum mxa_elem e;
		enum mxa_scale_mode m;
		enum mxa_scale_layout l;
		enum mxa_dtype d;
		enum mxa_pref p;
		struct mxa_recipe r;

		CHECK_RET(mxa_elem_parse(NULL, &e), -EINVAL);
		CHECK_RET(mxa_scale_mode_parse(NULL, &m), -EINVAL);
		CHECK_RET(mxa_layout_parse(NULL, &l), -EINVAL);
		CHECK_RET(mxa_dtype_parse(NULL, &d), -EINVAL);
		CHECK_RET(mxa_pref_parse(NULL, &p), -EINVAL);
		CHECK_RET(mxa_recipe_parse(NULL, &r), -EINVAL);
		CHECK_RET(mxa_recipe_parse("mxfp8", NULL), -EINVAL);
		/* A valid name with a NULL output (in a child: may crash). */
		CHECK_CHILD(parse_null_elem, -EINVAL);
		CHECK_CHILD(parse_null_mode, -EINVAL);
		CHECK_CHILD(parse_null_layout, -EINVAL);
		CHECK_CHILD(parse_null_dtype, -EINVAL);
		CHECK_CHILD(parse_null_pref, -EINVAL);
	}
	/* Printers: NULL for values outside the enums. */
	CHECK(!mxa_elem_name(0) && !mxa_elem_name(6) &&
	      !mxa_elem_name((enum mxa_elem)-1), "elem printer accepts junk");
	CHECK(!mxa_scale_mode_name(5) && !mxa_scale_mode_name(-1),
	      "mode printer accepts junk");
	CHECK(!mxa_layout_name(2), "layout printer accepts junk");
	CHECK(!mxa_dtype_name(2), "dtype printer accepts junk");
	CHECK(!mxa_pref_name(3), "pref printer accepts junk");
	CHECK(!mxa_support_name(3), "support printer accepts junk");

	/* Recipes. */
	{
		static const struct {
			const char *name;
			enum mxa_elem elem;
			enum mxa_scale_mode mode;
		} want[] = {
			{ "mxfp8", MXA_ELEM_E4M3, MXA_SCALE_FLOOR },
			{ "mxfp8_rceil", MXA_ELEM_E4M3, MXA_SCALE_RCEIL },
			{ "mxfp8_e5m2", MXA_ELEM_E5M2, MXA_SCALE_FLOOR },
			{ "mxfp6_e2m3", MXA_ELEM_E2M3, MXA_SCALE_FLOOR },
			{ "mxfp6_e3m2", MXA_ELEM_E3M2, MXA_SCALE_FLOOR },
			{ "mxfp4", MXA_ELEM_E2M1, MXA_SCALE_FLOOR },
			{ "mxfp4_rceil", MXA_ELEM_E2M1, MXA_SCALE_RCEIL },
		};
		bool seen[TEST_ARRAY_SIZE(want)] = { false };
		struct mxa_recipe r;
		const char *name;

		for (i = 0; i < TEST_ARRAY_SIZE(want); i++) {
			memset(&r, 0, sizeof(r));
			CHECK_RET(mxa_recipe_parse(want[i].name, &r), 0);
			CHECK(r.elem == want[i].elem && r.mode == want[i].mode,
			      "recipe %s = %d/%d", want[i].name, r.elem, r.mode);
			name = mxa_recipe_name(&r);
			CHECK(name && !strcmp(name, want[i].name),
			      "recipe %s prints back as %s", want[i].name,
			      name ? name : "NULL");
		}
		for (i = 0; i < TEST_ARRAY_SIZE(bad_recipes); i++)
			CHECK_RET(mxa_recipe_parse(bad_recipes[i], &r),
				  -EINVAL);
		CHECK(!mxa_recipe_name(NULL), "recipe name of NULL");
		r.elem = 0;
		r.mode = MXA_SCALE_FLOOR;
		CHECK(!mxa_recipe_name(&r), "recipe name of elem 0");
		r.elem = MXA_ELEM_E4M3;
		r.mode = 9;
		CHECK(!mxa_recipe_name(&r), "recipe name of mode 9");

		/* Iteration: distinct names that round-trip, then NULL. */
		for (i = 0; (name = mxa_recipe_at(i)) && i < 1000; i++) {
			CHECK(*name, "recipe %u has an empty name", i);
			CHECK_RET(mxa_recipe_parse(name, &r), 0);
			CHECK(mxa_recipe_name(&r) &&
			      !strcmp(mxa_recipe_name(&r), name),
			      "recipe %s does not print back", name);
			for (j = 0; j < i; j++)
				CHECK(strcmp(mxa_recipe_at(j), name),
				      "recipe %s listed twice", name);
			for (j = 0; j < TEST_ARRAY_SIZE(want); j++)
				if (!strcmp(want[j].name, name))
					seen[j] = true;
		}
		CHECK(i < 1000, "mxa_recipe_at() never returns NULL");
		CHECK(!mxa_recipe_at(i + 1) && !mxa_recipe_at(100000) &&
		      !mxa_recipe_at(~0u), "mxa_recipe_at past the end");
		for (j = 0; j < TEST_ARRAY_SIZE(want); j++)
			CHECK(seen[j], "mxa_recipe_at never lists %s",
			      want[j].name);
	}
}

static void test_errors_and_version(void)
{
	static const int errs[] = { 0, EINVAL, EOVERFLOW, EXDEV, EOPNOTSUPP,
				    ENODEV, ENOMEM, ETIME, EBUSY, EIO,
				    ECANCELED, ENOENT, E2BIG, ETIMEDOUT,
				    EAGAIN, 4095, 123456 };
	char v[32];
	unsigned int i;

	for (i = 0; i < TEST_ARRAY_SIZE(errs); i++) {
		const char *s = mxa_strerror(-errs[i]);

		CHECK(s && *s, "mxa_strerror(-%d) is empty", errs[i]);
		s = mxa_strerror(errs[i]);
		CHECK(s && *s, "mxa_strerror(%d) is empty", errs[i]);
	}
	CHECK_CHILD(strerror_int_min, 0);
	snprintf(v, sizeof(v), "%d.%d.%d", MXA_VERSION_MAJOR,
		 MXA_VERSION_MINOR, MXA_VERSION_PATCH);
	CHECK(mxa_version() && !strcmp(mxa_version(), v),
	      "mxa_version() = %s, header says %s",
	      mxa_version() ? mxa_version() : "NULL", v);
}

static void test_sizes(void)
{
	size_t n = 12345;

	CHECK(!mxa_data_row_bytes(MXA_ELEM_E2M1, 64, &n) && n == 32,
	      "e2m1 row of 64: %zu", n);
	CHECK(!mxa_data_row_bytes(MXA_ELEM_E4M3, 64, &n) && n == 64,
	      "e4m3 row of 64: %zu", n);
	CHECK(!mxa_data_row_bytes(MXA_ELEM_E3M2, 96, &n) && n == 96,
	      "e3m2 row of 96: %zu", n);
	CHECK_RET(mxa_data_row_bytes(MXA_ELEM_E4M3, 33, &n), -EINVAL);
	CHECK_RET(mxa_data_row_bytes(0, 32, &n), -EINVAL);
	CHECK_RET(mxa_data_row_bytes(6, 32, &n), -EINVAL);
	CHECK_RET(mxa_data_row_bytes(MXA_ELEM_E4M3, 32, NULL), -EINVAL);

	CHECK(!mxa_scale_bytes(MXA_LAYOUT_PLAIN, 3, 96, &n) && n == 9,
	      "plain 3 x 96: %zu", n);
	CHECK(!mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, 3, 96, &n) && n == 512,
	      "swizzled 3 x 96: %zu", n);
	CHECK(!mxa_scale_bytes(MXA_LAYOUT_SWIZZLED, 129, 160, &n) &&
	      n == 256 * 8, "swizzled 129 x 160: %zu", n);
	CHECK_RET(mxa_scale_bytes(MXA_LAYOUT_PLAIN, 3, 95, &n), -EINVAL);
	CHECK_RET(mxa_scale_bytes(2, 3, 96, &n), -EINVAL);
	CHECK_RET(mxa_scale_bytes(MXA_LAYOUT_PLAIN, 3, 96, NULL), -EINVAL);

	/* Design section 3's formula at a few corners. */
	CHECK(mxa_swizzle_index(1, 1, 0, 0) == 0, "swizzle (0, 0)");
	CHECK(mxa_swizzle_index(200, 5, 31, 3) == 31 * 16 + 3,
	      "swizzle (31, 3)");
	CHECK(mxa_swizzle_index(200, 5, 32, 0) == 4, "swizzle (32, 0)");
	CHECK(mxa_swizzle_index(200, 5, 0, 4) == 512, "swizzle (0, 4)");
	CHECK(mxa_swizzle_index(200, 5, 128, 0) == 2 * 512,
	      "swizzle (128, 0)");
	CHECK(mxa_swizzle_index(200, 5, 199, 4) ==
	      (1 * 2 + 1) * 512 + (199 % 32) * 16 + (71 / 32) * 4 + 0,
	      "swizzle (199, 4)");
}

/* --- devices and buffers -------------------------------------------------- */

static void test_devices(void)
{
	struct mxa_device *d = (struct mxa_device *)&d;	/* not NULL */
	struct mxa_device_info info;
	struct mxa_backend_info bi;
	unsigned int i, n;

	CHECK_RET(mxa_device_open("cpu", NULL), -EINVAL);
	CHECK_RET(mxa_device_open("nonsense", &d), -EINVAL);
	CHECK(d == NULL, "a failed open left *out set");
	CHECK_RET(mxa_device_open("", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:-1", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:x", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu:0x", &d), -EINVAL);
	CHECK_RET(mxa_device_open("cuda:7", &d), -ENODEV);
	CHECK_RET(mxa_device_open("cpu:1", &d), -ENODEV);
	CHECK(d == NULL, "a failed open left *out set");

	CHECK_RET(mxa_device_open("cpu:0", &d), 0);
	mxa_device_close(d);
	d = NULL;
	CHECK_RET(mxa_device_open("auto", &d), 0);
	/* auto never picks a conformance device (design section 5). */
	if (d && !mxa_device_info(d, &info))
		CHECK(!info.conformance, "auto opened %s, a conformance device",
		      info.name);
	mxa_device_close(d);

	/* NULL means $MXACCEL_DEVICE, else auto; an unknown value fails. */
	unsetenv("MXACCEL_DEVICE");
	CHECK_RET(mxa_device_open(NULL, &d), 0);
	mxa_device_close(d);
	setenv("MXACCEL_DEVICE", "nonsense", 1);
	CHECK_RET(mxa_device_open(NULL, &d), -EINVAL);
	CHECK_RET(mxa_device_open("cpu", &d), 0);	/* a name wins */
	mxa_device_close(d);
	setenv("MXACCEL_DEVICE", "cuda:7", 1);
	CHECK_RET(mxa_device_open(NULL, &d), -ENODEV);
	setenv("MXACCEL_DEVICE", "cpu", 1);
	d = NULL;
	CHECK_RET(mxa_device_open(NULL, &d), 0);
	if (d && !mxa_device_info(d, &info))
		CHECK(!strcmp(info.name, "cpu"), "MXACCEL_DEVICE=cpu opened %s",
		      info.name);
	mxa_device_close(d);
	/* ... and the device under test by its name. */
	setenv("MXACCEL_DEVICE", test_device_name(), 1);
	d = NULL;
	CHECK_RET(mxa_device_open(NULL, &d), 0);
	if (d && !mxa_device_info(d, &info))
		CHECK(!strcmp(info.name, dinfo.name),
		      "MXACCEL_DEVICE=%s opened %s", test_device_name(),
		      info.name);
	mxa_device_close(d);
	unsetenv("MXACCEL_DEVICE");

	/* An unknown MXACCEL_THREADS is an error, not a default. */
	setenv("MXACCEL_THREADS", "many", 1);
	CHECK_RET(mxa_device_open("cpu", &d), -EINVAL);
	setenv("MXACCEL_THREADS", "2", 1);
	d = NULL;
	CHECK_RET(mxa_device_open("cpu", &d), 0);
	if (d && !mxa_device_info(d, &info))
		CHECK(info.threads == 2, "MXACCEL_THREADS=2 gave %u threads",
		      info.threads);
	mxa_device_close(d);
	unsetenv("MXACCEL_THREADS");

	CHECK_RET(mxa_device_info(NULL, &info), -EINVAL);
	CHECK_RET(mxa_device_info(dev, NULL), -EINVAL);
	memset(&info, 0xcc, sizeof(info));
	CHECK_RET(mxa_device_info(dev, &info), 0);
	if (is_cpu)
		CHECK(!strcmp(info.name, "cpu") &&
		      !strcmp(info.backend, "cpu") &&
		      memchr(info.description, 0, sizeof(info.description)) &&
		      info.threads >= 1 && info.host_visible == 1 &&
		      info.conformance == 0,
		      "cpu device info: name %.8s backend %.8s threads %u host %d conf %d",
		      info.name, info.backend, info.threads, info.host_visible,
		      info.conformance);
	else
		CHECK(memchr(info.name, 0, sizeof(info.name)) &&
		      !strcmp(info.name, test_device_name()) &&
		      !strncmp(info.name, info.backend, strlen(info.backend)) &&
		      info.name[strlen(info.backend)] == ':' &&
		      memchr(info.description, 0, sizeof(info.description)) &&
		      *info.description &&
		      (!is_accel || (info.threads == 0 &&
				     info.host_visible == 1)),
		      "%s device info: name %.8s backend %.8s threads %u host %d conf %d",
		      test_device_name(), info.name, info.backend,
		      info.threads, info.host_visible, info.conformance);

	CHECK_RET(mxa_device_set_threads(NULL, 1), -EINVAL);
	if (info.threads) {
		CHECK_RET(mxa_device_set_threads(dev, 3), 0);
		CHECK(!mxa_device_info(dev, &info) && info.threads == 3,
		      "set_threads(3) gave %u", info.threads);
		CHECK_RET(mxa_device_set_threads(dev, 0), 0);
		CHECK_RET(mxa_device_set_threads(dev, 1u << 30), -EINVAL);
		CHECK(!mxa_device_info(dev, &info) && info.threads >= 1,
		      "a failed set_threads broke the pool: %u", info.threads);
	} else {
		/* No worker threads: nothing to set, and it says so. */
		CHECK(!is_cpu, "the cpu device has no worker threads");
		CHECK_RET(mxa_device_set_threads(dev, 3), -EOPNOTSUPP);
		CHECK_RET(mxa_device_set_threads(dev, 0), -EOPNOTSUPP);
		CHECK(!mxa_device_info(dev, &info) && info.threads == 0,
		      "a refused set_threads gave %u threads", info.threads);
	}

	n = mxa_backend_count();
	CHECK(n >= 1, "no backends");
	for (i = 0; i < n; i++) {
		memset(&bi, 0xcc, sizeof(bi));
		CHECK_RET(mxa_backend_info(i, &bi), 0);
		CHECK(memchr(bi.name, 0, sizeof(bi.name)) && *bi.name &&
		      memchr(bi.reason, 0, sizeof(bi.reason)),
		      "backend %u info not terminated", i);
		if (!strcmp(bi.name, "cpu"))
			CHECK(bi.available && bi.devices == 1,
			      "cpu backend: available %d devices %u",
			      bi.available, bi.devices);
		else if (!strcmp(bi.name, dinfo.backend))
			CHECK(bi.available && bi.devices >= 1,
			      "%s backend of the device under test: available %d devices %u (%s)",
			      bi.name, bi.available, bi.devices, bi.reason);
		else if (!bi.available)
			CHECK(*bi.reason, "backend %s absent without a reason",
			      bi.name);
	}
	CHECK_RET(mxa_backend_info(n, &bi), -EINVAL);
	CHECK_RET(mxa_backend_info(0, NULL), -EINVAL);

	/* Freeing NULL is a no-op everywhere. */
	mxa_device_close(NULL);
	mxa_buffer_free(NULL);
	mxa_fence_free(NULL);
}

static void test_buffers(void)
{
	struct mxa_buffer *b = (struct mxa_buffer *)&b, *w;
	uint8_t data[64], back[64], user[48];
	void *p = NULL;
	unsigned int i;

	CHECK_RET(mxa_buffer_alloc(NULL, 16, &b), -EINVAL);
	CHECK_RET(mxa_buffer_alloc(dev, 16, NULL), -EINVAL);
	CHECK_RET(mxa_buffer_alloc(dev, 0, &b), -EINVAL);
	CHECK(b == NULL, "a failed alloc left *out set");
	CHECK_RET(mxa_buffer_alloc(dev, SIZE_MAX, &b), -ENOMEM);
	CHECK_RET(mxa_buffer_alloc(dev, SIZE_MAX - 40, &b), -ENOMEM);

	CHECK_RET(mxa_buffer_alloc(dev, 64, &b), 0);
	if (!b)
		return;
	CHECK(mxa_buffer_size(b) == 64, "size %zu", mxa_buffer_size(b));
	CHECK(mxa_buffer_size(NULL) == 0, "size of NULL");
	for (i = 0; i < 64; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	CHECK_RET(mxa_buffer_write(b, 0, data, 64), 0);
	CHECK_RET(mxa_buffer_read(b, 0, back, 64), 0);
	CHECK(!memcmp(data, back, 64), "buffer read back differs");
	CHECK_RET(mxa_buffer_write(b, 60, data + 60, 4), 0);
	CHECK_RET(mxa_buffer_write(b, 64, data, 0), 0);
	CHECK_RET(mxa_buffer_write(b, 61, data, 4), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(b, 65, data, 0), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(b, SIZE_MAX, data, 2), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(b, 2, data, SIZE_MAX), -EOVERFLOW);
	CHECK_RET(mxa_buffer_read(b, 61, back, 4), -EOVERFLOW);
	CHECK_RET(mxa_buffer_read(b, SIZE_MAX - 1, back, 4), -EOVERFLOW);
	CHECK_RET(mxa_buffer_write(NULL, 0, data, 4), -EINVAL);
	CHECK_RET(mxa_buffer_write(b, 0, NULL, 4), -EINVAL);
	CHECK_RET(mxa_buffer_write(b, 0, NULL, 0), 0);
	CHECK_RET(mxa_buffer_read(NULL, 0, back, 4), -EINVAL);
	CHECK_RET(mxa_buffer_read(b, 0, NULL, 4), -EINVAL);
	CHECK_RET(mxa_buffer_read(b, 0, back, 64), 0);
	CHECK(!memcmp(data, back, 64), "a failed write changed the buffer");

	CHECK_RET(mxa_buffer_map(b, &p), 0);
	CHECK(p && !memcmp(p, data, 64), "map does not show the contents");
	CHECK_RET(mxa_buffer_map(NULL, &p), -EINVAL);
	CHECK_RET(mxa_buffer_map(b, NULL), -EINVAL);
	mxa_buffer_free(b);

	/* Wrapped user memory: the library reads and writes it in place. */
	memset(user, 0x11, sizeof(user));
	CHECK_RET(mxa_buffer_wrap(NULL, user, 48, &w), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, NULL, 48, &w), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, user, 0, &w), -EINVAL);
	CHECK_RET(mxa_buffer_wrap(dev, user, 48, NULL), -EINVAL);
	w = (struct mxa_buffer *)&w;
	if (!is_cpu) {
		/* accel: buffers are buffer objects; no host memory. */
		int ret = mxa_buffer_wrap(dev, user, 48, &w);

		CHECK(is_accel ? ret == -EOPNOTSUPP :
			       ret == 0 || ret == -EOPNOTSUPP,
		      "buffer_wrap on %s: %d", dinfo.name, ret);
		if (ret) {
			CHECK(!w, "a refused wrap left *out set");
			return;
		}
		mxa_buffer_free(w);
	}
	w = NULL;
	CHECK_RET(mxa_buffer_wrap(dev, user, 48, &w), 0);
	if (w) {
		CHECK_RET(mxa_buffer_write(w, 8, data, 8), 0);
		CHECK(!memcmp(user + 8, data, 8), "wrap write missed memory");
		CHECK_RET(mxa_buffer_map(w, &p), 0);
		CHECK(p == user, "wrapped buffer maps elsewhere");
		CHECK_RET(mxa_buffer_write(w, 41, data, 8), -EOVERFLOW);
		mxa_buffer_free(w);
		CHECK(user[0] == 0x11, "freeing a wrapped buffer touched it");
	}
}

/*
 * dma-buf sharing: the cpu refuses it; an accel device exports a buffer
 * object and a second handle of the same device imports it, the two
 * buffers share their bytes, and the original stays usable after the
 * import is freed.
 */
static void test_dmabuf(void)
{
	struct mxa_buffer *b = NULL, *imp = (struct mxa_buffer *)&imp;
	struct mxa_device *dev2 = NULL;
	uint8_t data[256], back[256];
	int fd = -1, nul = open("/dev/null", O_RDONLY | O_CLOEXEC), ret;
	bool shared = false;
	unsigned int i;

	CHECK_RET(mxa_buffer_export_dmabuf(NULL, &fd), -EINVAL);
	CHECK_RET(mxa_buffer_import_dmabuf(NULL, nul, &imp), -EINVAL);
	CHECK_RET(mxa_buffer_import_dmabuf(dev, nul, NULL), -EINVAL);
	CHECK_RET(mxa_buffer_import_dmabuf(dev, -1, &imp), -EBADF);
	CHECK(!imp, "a failed import left *out set");
	if (mxa_buffer_alloc(dev, 4096, &b)) {
		CHECK(0, "cannot allocate");
		close(nul);
		return;
	}
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	CHECK_RET(mxa_buffer_write(b, 0, data, sizeof(data)), 0);
	CHECK_RET(mxa_buffer_export_dmabuf(b, NULL), -EINVAL);
	ret = mxa_buffer_export_dmabuf(b, &fd);
	if (is_cpu) {
		CHECK(ret == -EOPNOTSUPP, "cpu dma-buf export: %d", ret);
		imp = (struct mxa_buffer *)&imp;
		CHECK_RET(mxa_buffer_import_dmabuf(dev, nul, &imp),
			  -EOPNOTSUPP);
		CHECK(!imp, "a refused import left *out set");
	} else if (is_accel && !dinfo.conformance) {
		/* A hardware engine's buffers are device memory: not shared. */
		CHECK(ret == -EOPNOTSUPP,
		      "device-memory dma-buf export: %d, fd %d", ret, fd);
	} else if (is_accel) {
		CHECK(ret == 0 && fd >= 0, "accel dma-buf export: %d, fd %d",
		      ret, fd);
		/* Not a dma-buf. */
		ret = mxa_buffer_import_dmabuf(dev, nul, &imp);
		CHECK(ret == -EBADF || ret == -EINVAL,
		      "import of /dev/null: %d", ret);
		imp = NULL;
		CHECK_RET(mxa_device_open(test_device_name(), &dev2), 0);
		if (dev2)
			CHECK_RET(mxa_buffer_import_dmabuf(dev2, fd, &imp), 0);
		shared = imp != NULL;
	}
	if (fd >= 0)
		close(fd);
	if (shared) {
		CHECK(mxa_buffer_size(imp) >= sizeof(data),
		      "imported size %zu", mxa_buffer_size(imp));
		CHECK(!mxa_buffer_read(imp, 0, back, sizeof(back)) &&
		      !memcmp(back, data, sizeof(data)),
		      "the imported buffer shows other bytes");
		data[7] ^= 0xff;
		CHECK_RET(mxa_buffer_write(imp, 7, data + 7, 1), 0);
		CHECK(!mxa_buffer_read(b, 0, back, sizeof(back)) &&
		      !memcmp(back, data, sizeof(data)),
		      "a write through the import is not in the original");
		mxa_buffer_free(imp);
		/* The original outlives its import, also as an operand. */
		{
			struct mxa_buffer *c = NULL;
			struct mxa_matrix a = {
				.data = b, .scale = b, .scale_offset = 64,
				.elem = MXA_ELEM_E4M3, .rows = 1, .cols = 32,
			};
			struct mxa_dense d = {
				.dtype = MXA_DTYPE_F32, .rows = 1, .cols = 1,
			};

			CHECK(!mxa_buffer_alloc(dev, 4, &c), "alloc C");
			d.buf = c;
			CHECK_RET(mxa_gemm(dev, &a, &a, &d, 0, MXA_PREF_AUTO),
				  0);
			mxa_buffer_free(c);
		}
		CHECK(!mxa_buffer_read(b, 0, back, sizeof(back)) &&
		      !memcmp(back, data, sizeof(data)),
		      "freeing the import changed the original");
	}
	mxa_buffer_free(b);
	mxa_device_close(dev2);
	close(nul);
}

/* --- operation validation ------------------------------------------------- */

/* A valid request: A 4 x 64 e4m3, B 3 x 64 e2m1, C 4 x 3 fp32. */
struct req {
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_buffer *ab, *as, *bb, *bs, *cb;
};

static void req_init(struct req *r)
{
	static const uint8_t one_e4m3 = 0x38, one_e2m1 = 0x2;
	uint8_t ad[4 * 64], bd[3 * 32], sc[16];
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < sizeof(ad); i++)
		ad[i] = one_e4m3;
	for (i = 0; i < sizeof(bd); i++)
		bd[i] = one_e2m1 | one_e2m1 << 4;
	memset(sc, 127, sizeof(sc));
	if (mxa_buffer_alloc(dev, sizeof(ad), &r->ab) ||
	    mxa_buffer_alloc(dev, 8, &r->as) ||
	    mxa_buffer_alloc(dev, sizeof(bd), &r->bb) ||
	    mxa_buffer_alloc(dev, 6, &r->bs) ||
	    mxa_buffer_alloc(dev, 4 * 3 * 4, &r->cb)) {
		fprintf(stderr, "FAIL: cannot allocate the request\n");
		exit(1);
	}
	mxa_buffer_write(r->ab, 0, ad, sizeof(ad));
	mxa_buffer_write(r->as, 0, sc, 8);
	mxa_buffer_write(r->bb, 0, bd, sizeof(bd));
	mxa_buffer_write(r->bs, 0, sc, 6);
	r->a = (struct mxa_matrix){
		.data = r->ab, .scale = r->as, .elem = MXA_ELEM_E4M3,
		.scale_layout = MXA_LAYOUT_PLAIN, .rows = 4, .cols = 64,
	};
	r->b = (struct mxa_matrix){
		.data = r->bb, .scale = r->bs, .elem = MXA_ELEM_E2M1,
		.scale_layout = MXA_LAYOUT_PLAIN, .rows = 3, .cols = 64,
	};
	r->c = (struct mxa_dense){
		.buf = r->cb, .dtype = MXA_DTYPE_F32, .rows = 4, .cols = 3,
	};
}

static void req_free(struct req *r)
{
	mxa_buffer_free(r->ab);
	mxa_buffer_free(r->as);
	mxa_buffer_free(r->bb);
	mxa_buffer_free(r->bs);
	mxa_buffer_free(r->cb);
}

/* C is preset to a pattern: a failed call must leave it alone. */
static void fill_c(struct req *r)
{
	uint8_t pat[48];

	memset(pat, 0x5a, sizeof(pat));
	mxa_buffer_write(r->cb, 0, pat, sizeof(pat));
}

static bool c_untouched(struct req *r)
{
	uint8_t got[48];
	size_t i;

	if (mxa_buffer_read(r->cb, 0, got, sizeof(got)))
		return false;
	for (i = 0; i < sizeof(got); i++)
		if (got[i] != 0x5a)
			return false;
	return true;
}

/* Run gemm, sync and async, on a copy of r modified by the caller. */
static void expect_gemm(struct req *r, const struct req *q, uint32_t flags,
			enum mxa_pref pref, int want, int line)
{
	struct mxa_fence *f = (struct mxa_fence *)&f;
	int ret;

	fill_c(r);
	ret = mxa_gemm(dev, &q->a, &q->b, &q->c, flags, pref);
	if (ret != want)
		test_fail(__FILE__, line, "mxa_gemm returned %d (%s), want %d",
			  ret, mxa_strerror(ret), want);
	if (want && !c_untouched(r))
		test_fail(__FILE__, line, "a failed mxa_gemm wrote C");
	ret = mxa_gemm_async(dev, &q->a, &q->b, &q->c, flags, pref, &f);
	if (ret != want)
		test_fail(__FILE__, line, "mxa_gemm_async returned %d, want %d",
			  ret, want);
	if (ret) {
		if (f)
			test_fail(__FILE__, line,
				  "a failed mxa_gemm_async left *fence set");
		return;
	}
	ret = mxa_fence_wait(f, -1);
	if (ret)
		test_fail(__FILE__, line, "fence of a valid gemm: %d", ret);
	mxa_fence_free(f);
}

#define GEMM_EXPECT(r, q, flags, pref, want) \
	expect_gemm(r, q, flags, pref, want, __LINE__)

static void test_gemm_validation(void)
{
	struct mxa_device *dev2 = NULL;
	struct mxa_buffer *other = NULL, *big = NULL;
	struct req r, q;
	float c[12];
	unsigned int i;

	req_init(&r);
	q = r;
	GEMM_EXPECT(&r, &q, 0, MXA_PREF_EMULATED, 0);
	CHECK(!mxa_buffer_read(r.cb, 0, c, sizeof(c)) && c[0] == 64.0f &&
	      c[11] == 64.0f, "baseline gemm: C[0] = %g, want 64", c[0]);
	GEMM_EXPECT(&r, &q, 0, MXA_PREF_NATIVE, native_ret(MXA_OP_GEMM));
	GEMM_EXPECT(&r, &q, 0, MXA_PREF_AUTO, 0);
	GEMM_EXPECT(&r, &q, MXA_GEMM_ACCUMULATE, MXA_PREF_AUTO, 0);

	/* NULL arguments. */
	CHECK_RET(mxa_gemm(NULL, &r.a, &r.b, &r.c, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm(dev, NULL, &r.b, &r.c, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm(dev, &r.a, NULL, &r.c, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, NULL, 0, 0), -EINVAL);
	CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0, 0, NULL), -EINVAL);
	q = r;
	q.a.data = NULL;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.scale = NULL;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.buf = NULL;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);

	/* Unknown enums and flags. */
	q = r;
	q.a.elem = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.elem = 6;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.scale_layout = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.dtype = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	GEMM_EXPECT(&r, &q, 2, 0, -EINVAL);
	GEMM_EXPECT(&r, &q, 0x80000000u, 0, -EINVAL);
	GEMM_EXPECT(&r, &q, MXA_GEMM_ACCUMULATE | 4, 0, -EINVAL);
	GEMM_EXPECT(&r, &q, 0, 3, -EINVAL);
	GEMM_EXPECT(&r, &q, 0, (enum mxa_pref)-1, -EINVAL);

	/* Zero sizes, K % 32, shapes that do not match. */
	q = r;
	q.a.rows = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.cols = q.b.cols = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.rows = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.cols = 0;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.cols = q.b.cols = 48;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.cols = q.b.cols = 16;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.cols = 32;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.rows = 3;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);	/* C has 4 rows */
	q = r;
	q.c.cols = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.rows = 3;
	q.c.cols = 4;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);	/* transposed C */

	/* Strides below one row. */
	q = r;
	q.a.data_stride = 63;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.b.data_stride = 31;			/* e2m1: 32 bytes a row */
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.a.scale_stride = 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.stride = 8;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	/* Swizzled scales have no row stride. */
	q = r;
	q.a.scale_layout = MXA_LAYOUT_SWIZZLED;
	q.a.scale_stride = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);

	/* Buffers too small, offsets past the end, size_t wrap. */
	q = r;
	q.a.rows = q.c.rows = 5;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_offset = 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_stride = 65;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.b.scale_offset = 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.scale_layout = MXA_LAYOUT_SWIZZLED;	/* needs 512 bytes */
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.offset = 4;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.dtype = MXA_DTYPE_BF16;
	q.c.offset = 26;			/* 24 bytes of bf16 + 26 > 48 */
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_offset = SIZE_MAX - 10;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.b.scale_offset = SIZE_MAX;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.data_stride = SIZE_MAX / 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.a.scale_stride = SIZE_MAX / 3 + 1;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.stride = SIZE_MAX - 3;		/* a multiple of 4 */
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);
	q = r;
	q.c.offset = SIZE_MAX - 3;
	GEMM_EXPECT(&r, &q, 0, 0, -EOVERFLOW);

	/* Misaligned dense offset or stride (the library's rule). */
	q = r;
	q.c.offset = 2;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
	q = r;
	q.c.stride = 14;
	GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);

	/* C overlapping an input in the same buffer. */
	if (!mxa_buffer_alloc(dev, 4096, &big)) {
		q = r;
		q.a.data = big;
		q.c.buf = big;
		q.c.offset = 252;		/* A's data is [0, 256) */
		GEMM_EXPECT(&r, &q, 0, 0, -EINVAL);
		q.c.offset = 256;
		fill_c(&r);
		CHECK_RET(mxa_gemm(dev, &q.a, &q.b, &q.c, 0, 0), 0);
		mxa_buffer_free(big);
	}

	/* A buffer of another device. */
	if (!mxa_device_open(test_device_name(), &dev2) && dev2 != dev &&
	    !mxa_buffer_alloc(dev2, 4096, &other)) {
		q = r;
		q.a.data = other;
		GEMM_EXPECT(&r, &q, 0, 0, -EXDEV);
		q = r;
		q.b.scale = other;
		GEMM_EXPECT(&r, &q, 0, 0, -EXDEV);
		q = r;
		q.c.buf = other;
		GEMM_EXPECT(&r, &q, 0, 0, -EXDEV);
		/* The same request on the other device is fine. */
		q = r;
		q.a.data = other;
		CHECK_RET(mxa_gemm(dev2, &q.a, &q.b, &q.c, 0, 0), -EXDEV);
	}
	mxa_buffer_free(other);
	mxa_device_close(dev2);

	/* The C that the successful calls left is still right. */
	for (i = 0; i < 12; i++)
		c[i] = 0;
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_EMULATED), 0);
	CHECK(!mxa_buffer_read(r.cb, 0, c, sizeof(c)) && c[5] == 64.0f,
	      "gemm after the misuse: C[5] = %g", c[5]);
	req_free(&r);
}

static void test_quantize_validation(void)
{
	struct mxa_buffer *src_buf, *data, *scale, *out;
	struct mxa_dense src, dd;
	struct mxa_matrix m, q;
	struct mxa_dense s;
	float in[2 * 64];
	unsigned int i;

	for (i = 0; i < 128; i++)
		in[i] = (float)i - 60.0f;
	if (mxa_buffer_alloc(dev, sizeof(in), &src_buf) ||
	    mxa_buffer_alloc(dev, 128, &data) ||
	    mxa_buffer_alloc(dev, 4, &scale) ||
	    mxa_buffer_alloc(dev, sizeof(in), &out)) {
		CHECK(0, "cannot allocate");
		return;
	}
	mxa_buffer_write(src_buf, 0, in, sizeof(in));
	src = (struct mxa_dense){ .buf = src_buf, .dtype = MXA_DTYPE_F32,
				  .rows = 2, .cols = 64 };
	dd = (struct mxa_dense){ .buf = out, .dtype = MXA_DTYPE_F32,
				 .rows = 2, .cols = 64 };
	m = (struct mxa_matrix){ .data = data, .scale = scale,
				 .elem = MXA_ELEM_E4M3, .rows = 2, .cols = 64 };

	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR, 0), 0);
	CHECK_RET(mxa_dequantize(dev, &m, &dd, 0), 0);
	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR,
			       MXA_PREF_NATIVE), native_ret(MXA_OP_QUANTIZE));
	CHECK_RET(mxa_dequantize(dev, &m, &dd, MXA_PREF_NATIVE),
		  native_ret(MXA_OP_DEQUANTIZE));
	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR,
			       MXA_PREF_EMULATED), 0);
	CHECK_RET(mxa_dequantize(dev, &m, &dd, MXA_PREF_EMULATED), 0);
	CHECK_RET(mxa_quantize(NULL, &src, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, NULL, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, NULL, MXA_SCALE_FLOOR, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, &m, 4, 0), -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, &m, (enum mxa_scale_mode)-1, 0),
		  -EINVAL);
	CHECK_RET(mxa_quantize(dev, &src, &m, MXA_SCALE_FLOOR, 3), -EINVAL);
	s = src;
	s.dtype = 7;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	s = src;
	s.rows = 1;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	s = src;
	s.cols = 32;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	q = m;
	s = src;
	q.cols = s.cols = 40;
	CHECK_RET(mxa_quantize(dev, &s, &q, MXA_SCALE_FLOOR, 0), -EINVAL);
	q = m;
	q.elem = 0;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EINVAL);
	q = m;
	q.scale_offset = 1;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EOVERFLOW);
	q = m;
	q.scale_layout = MXA_LAYOUT_SWIZZLED;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EOVERFLOW);
	s = src;
	s.stride = 4 * 64 - 4;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EINVAL);
	s = src;
	s.offset = SIZE_MAX - 7;
	CHECK_RET(mxa_quantize(dev, &s, &m, MXA_SCALE_FLOOR, 0), -EOVERFLOW);
	/* Quantizing into the source buffer's own bytes. */
	q = m;
	q.data = src_buf;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EINVAL);
	/* data and scales overlapping each other. */
	q = m;
	q.scale = data;
	q.scale_offset = 120;
	CHECK_RET(mxa_quantize(dev, &src, &q, MXA_SCALE_FLOOR, 0), -EINVAL);

	CHECK_RET(mxa_dequantize(NULL, &m, &dd, 0), -EINVAL);
	CHECK_RET(mxa_dequantize(dev, NULL, &dd, 0), -EINVAL);
	CHECK_RET(mxa_dequantize(dev, &m, NULL, 0), -EINVAL);
	CHECK_RET(mxa_dequantize(dev, &m, &dd, 9), -EINVAL);
	s = dd;
	s.cols = 32;
	CHECK_RET(mxa_dequantize(dev, &m, &s, 0), -EINVAL);
	s = dd;
	s.dtype = MXA_DTYPE_BF16;
	s.offset = 1;
	CHECK_RET(mxa_dequantize(dev, &m, &s, 0), -EINVAL);
	s = dd;
	s.offset = 4;
	CHECK_RET(mxa_dequantize(dev, &m, &s, 0), -EOVERFLOW);
	q = m;
	q.data_stride = 1;
	CHECK_RET(mxa_dequantize(dev, &q, &dd, 0), -EINVAL);
	s = dd;
	s.buf = data;				/* over its own codes */
	s.dtype = MXA_DTYPE_BF16;
	s.rows = 1;
	q = m;
	q.rows = 1;
	CHECK_RET(mxa_dequantize(dev, &q, &s, 0), -EINVAL);

	mxa_buffer_free(src_buf);
	mxa_buffer_free(data);
	mxa_buffer_free(scale);
	mxa_buffer_free(out);
}

/* --- dispatch introspection and overrides -------------------------------- */

/*
 * NATIVE on a conformance device: mxa_plan() fails with -EOPNOTSUPP, no
 * kernel and a reason naming the device; mxa_query() answers NONE with the
 * same reason.
 */
static void refused_native(const struct mxa_op_desc *d, int ret,
			   const struct mxa_plan *plan)
{
	struct mxa_capability cap;

	CHECK(ret == -EOPNOTSUPP && plan->support == MXA_SUPPORT_NONE &&
	      !*plan->kernel && !strcmp(plan->device, dinfo.name) &&
	      memchr(plan->reason, 0, sizeof(plan->reason)) &&
	      strstr(plan->reason, dinfo.name),
	      "NATIVE op %d on %s: %d, support %d, kernel %.16s, reason %.200s",
	      (int)d->op, dinfo.name, ret, (int)plan->support, plan->kernel,
	      plan->reason);
	memset(&cap, 0xcc, sizeof(cap));
	CHECK_RET(mxa_query(dev, d, MXA_PREF_NATIVE, &cap), 0);
	CHECK(cap.support == MXA_SUPPORT_NONE && !*cap.kernel &&
	      !strcmp(cap.reason, plan->reason),
	      "query of NATIVE op %d: support %d kernel %.16s reason %.200s",
	      (int)d->op, (int)cap.support, cap.kernel, cap.reason);
}

static void test_plan_query(void)
{
	static const enum mxa_op ops[] = { MXA_OP_QUANTIZE,
					   MXA_OP_DEQUANTIZE, MXA_OP_GEMM };
	static const enum mxa_pref prefs[] = { MXA_PREF_AUTO, MXA_PREF_NATIVE,
					       MXA_PREF_EMULATED };
	/* A conformance device is emulated only: exact, never native. */
	const bool conf = dinfo.conformance;
	/* Dequantization is no accel device's op: never native there. */
	const bool accel = !strcmp(dinfo.backend, "accel");
	struct mxa_op_desc d;
	struct mxa_plan plan, native_plan;
	struct mxa_capability cap;
	unsigned int o, p, e, t;

	for (o = 0; o < 3; o++) {
		for (e = 0; e < 25; e++) {
			for (t = 0; t < 2; t++) {
				memset(&native_plan, 0, sizeof(native_plan));
				for (p = 0; p < 3; p++) {
					int ret;

					d = (struct mxa_op_desc){
						.op = ops[o],
						.a_elem = test_elems[e / 5],
						.b_elem = test_elems[e % 5],
						.dtype = t, .mode = e % 4,
						.m = 5, .n = 7, .k = 64,
					};
					memset(&plan, 0xcc, sizeof(plan));
					ret = mxa_plan(dev, &d, prefs[p], &plan);
					if ((conf || (accel &&
						      ops[o] == MXA_OP_DEQUANTIZE)) &&
					    prefs[p] == MXA_PREF_NATIVE) {
						refused_native(&d, ret, &plan);
						continue;
					}
					CHECK(ret == 0,
					      "plan op %u %u pref %u: %d (%s)",
					      o, e, p, ret, plan.reason);
					if (ret)
						continue;
					CHECK(!strcmp(plan.device, dinfo.name) &&
					      plan.pref == prefs[p] &&
					      *plan.kernel && *plan.reason &&
					      memchr(plan.reason, 0,
						     sizeof(plan.reason)),
					      "plan op %u pref %u: device %.8s kernel %.16s",
					      o, p, plan.device, plan.kernel);
					CHECK(plan.support != MXA_SUPPORT_NONE,
					      "plan op %u pref %u: none", o, p);
					if (prefs[p] == MXA_PREF_EMULATED || conf)
						CHECK(plan.exact == 1,
						      "%s op %u plans %s, not exact",
						      mxa_pref_name(prefs[p]), o,
						      plan.kernel);
					if (prefs[p] == MXA_PREF_NATIVE) {
						CHECK(plan.support ==
						      MXA_SUPPORT_NATIVE,
						      "NATIVE op %u on %s is %s",
						      o, dinfo.name, plan.kernel);
						native_plan = plan;
					}
					if (prefs[p] == MXA_PREF_AUTO &&
					    ops[o] == MXA_OP_GEMM)
						CHECK(plan.support == (conf ?
						      MXA_SUPPORT_EMULATED :
						      MXA_SUPPORT_NATIVE),
						      "AUTO gemm on %s: %s is %s",
						      dinfo.name, plan.kernel,
						      mxa_support_name(plan.support));
					memset(&cap, 0xcc, sizeof(cap));
					CHECK_RET(mxa_query(dev, &d, prefs[p],
							    &cap), 0);
					CHECK(cap.support == plan.support &&
					      !strcmp(cap.kernel, plan.kernel),
					      "query and plan disagree: %s vs %s",
					      cap.kernel, plan.kernel);
				}
				/* GEMM: native is not exact, emulated is. */
				if (ops[o] == MXA_OP_GEMM && !conf)
					CHECK(strcmp(native_plan.kernel,
						     plan.kernel),
					      "native and emulated gemm are both %s",
					      plan.kernel);
			}
		}
	}
	/* m, n, k may be 0 in a query about any shape. */
	d = (struct mxa_op_desc){ .op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
				  .b_elem = MXA_ELEM_E2M1 };
	CHECK_RET(mxa_query(dev, &d, MXA_PREF_NATIVE, &cap), 0);

	/* Malformed questions. */
	CHECK_RET(mxa_plan(NULL, &d, 0, &plan), -EINVAL);
	CHECK_RET(mxa_plan(dev, NULL, 0, &plan), -EINVAL);
	CHECK_RET(mxa_plan(dev, &d, 0, NULL), -EINVAL);
	CHECK_RET(mxa_query(NULL, &d, 0, &cap), -EINVAL);
	CHECK_RET(mxa_query(dev, NULL, 0, &cap), -EINVAL);
	CHECK_RET(mxa_query(dev, &d, 0, NULL), -EINVAL);
	CHECK_RET(mxa_query(dev, &d, 3, &cap), -EINVAL);
	CHECK_RET(mxa_plan(dev, &d, (enum mxa_pref)-1, &plan), -EINVAL);
	d.op = 3;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	d.op = MXA_OP_GEMM;
	d.b_elem = 0;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	d.b_elem = MXA_ELEM_E2M1;
	d.a_elem = 9;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	d.a_elem = MXA_ELEM_E4M3;
	d.dtype = 2;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	d.dtype = MXA_DTYPE_F32;
	d.k = 48;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	d.k = 64;
	d.flags = 2;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	d.flags = MXA_GEMM_ACCUMULATE;
	CHECK_RET(mxa_query(dev, &d, 0, &cap), 0);
	d = (struct mxa_op_desc){ .op = MXA_OP_QUANTIZE,
				  .a_elem = MXA_ELEM_E4M3, .mode = 4 };
	CHECK_RET(mxa_query(dev, &d, 0, &cap), -EINVAL);
	/* b_elem and mode mean nothing outside gemm and quantize. */
	d = (struct mxa_op_desc){ .op = MXA_OP_DEQUANTIZE,
				  .a_elem = MXA_ELEM_E5M2, .b_elem = 77,
				  .mode = 77 };
	CHECK_RET(mxa_query(dev, &d, 0, &cap), 0);
}

static const char *planned(enum mxa_pref pref, char *buf, size_t size)
{
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
		.b_elem = MXA_ELEM_E4M3, .m = 1, .n = 1, .k = 32,
	};
	struct mxa_plan plan;
	int ret = mxa_plan(dev, &d, pref, &plan);

	snprintf(buf, size, "%s", ret ? "(error)" : plan.kernel);
	return buf;
}

static void test_env_overrides(void)
{
	char emu[MXA_NAME_MAX], nat[MXA_NAME_MAX], got[MXA_NAME_MAX];
	char au[MXA_NAME_MAX];
	const bool native = has_native(MXA_OP_GEMM);
	struct mxa_capability cap;
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
		.b_elem = MXA_ELEM_E4M3, .m = 1, .n = 1, .k = 32,
	};
	struct mxa_plan plan;
	struct req r;

	unsetenv("MXACCEL_KERNEL");
	planned(MXA_PREF_EMULATED, emu, sizeof(emu));
	planned(MXA_PREF_NATIVE, nat, sizeof(nat));
	planned(MXA_PREF_AUTO, au, sizeof(au));
	/* Where a native gemm exists, AUTO takes it. */
	CHECK(!native || !strcmp(au, nat), "AUTO plans %s, NATIVE %s", au,
	      nat);
	CHECK(native || !strcmp(nat, "(error)"),
	      "NATIVE plans %s though the query says unsupported", nat);
	req_init(&r);

	/* A preference name overrides the caller's preference. */
	setenv("MXACCEL_KERNEL", "emulated", 1);
	CHECK(!strcmp(planned(MXA_PREF_NATIVE, got, sizeof(got)), emu),
	      "MXACCEL_KERNEL=emulated plans %s, not %s", got, emu);
	setenv("MXACCEL_KERNEL", "native", 1);
	CHECK(!strcmp(planned(MXA_PREF_EMULATED, got, sizeof(got)), nat),
	      "MXACCEL_KERNEL=native plans %s, not %s", got, nat);
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_EMULATED, &plan),
		  native ? 0 : -EOPNOTSUPP);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_EMULATED),
		  native ? 0 : -EOPNOTSUPP);
	/* A kernel name forces that kernel. */
	setenv("MXACCEL_KERNEL", emu, 1);
	CHECK(!strcmp(planned(MXA_PREF_AUTO, got, sizeof(got)), emu),
	      "MXACCEL_KERNEL=%s plans %s", emu, got);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_NATIVE), 0);

	/* Unknown values are errors everywhere, never a silent default. */
	setenv("MXACCEL_KERNEL", "nonsense", 1);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO), -EINVAL);
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), -EINVAL);
	CHECK_RET(mxa_query(dev, &d, MXA_PREF_AUTO, &cap), -EINVAL);
	setenv("MXACCEL_KERNEL", "AUTO", 1);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO), -EINVAL);
	{
		struct mxa_fence *f = NULL;

		CHECK_RET(mxa_gemm_async(dev, &r.a, &r.b, &r.c, 0,
					 MXA_PREF_AUTO, &f), -EINVAL);
		CHECK(!f, "failed async gemm left a fence");
	}
	/*
	 * A kernel forces only the operation it implements; the others
	 * resolve as usual (so one variable can pin the gemm kernel of a
	 * program that also quantizes).
	 */
	setenv("MXACCEL_KERNEL", emu, 1);
	d.op = MXA_OP_QUANTIZE;
	CHECK_RET(mxa_plan(dev, &d, MXA_PREF_AUTO, &plan), 0);
	CHECK(strcmp(plan.kernel, emu), "MXACCEL_KERNEL=%s forced quantize",
	      emu);
	d.op = MXA_OP_GEMM;
	setenv("MXACCEL_KERNEL", plan.kernel, 1);
	CHECK(!strcmp(planned(MXA_PREF_AUTO, got, sizeof(got)), au),
	      "MXACCEL_KERNEL=<a quantize kernel> changed the gemm plan to %s",
	      got);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO), 0);
	/* An empty value means unset. */
	setenv("MXACCEL_KERNEL", "", 1);
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO), 0);
	unsetenv("MXACCEL_KERNEL");
	CHECK_RET(mxa_gemm(dev, &r.a, &r.b, &r.c, 0, MXA_PREF_AUTO), 0);
	req_free(&r);
}

/* --- asynchronous GEMM ----------------------------------------------------- */

static void test_async(void)
{
	const uint32_t m = 96, n = 96, k = 1024;
	struct test_mx a, b;
	struct mxa_matrix ma, mb;
	struct mxa_dense c[4], cs;
	struct mxa_fence *f[4] = { NULL };
	uint32_t *want = calloc((size_t)m * n, 4), *got = calloc((size_t)m * n, 4);
	unsigned int i, polls_busy = 0;
	size_t j;
	int ret;

	test_seed(0x6173796e63ull);
	test_mx_alloc(&a, MXA_ELEM_E5M2, m, k);
	test_mx_alloc(&b, MXA_ELEM_E2M3, n, k);
	for (j = 0; j < (size_t)m * k; j++)
		a.code[j] = test_rand_code(MXA_ELEM_E5M2, false);
	for (j = 0; j < (size_t)n * k; j++)
		b.code[j] = test_rand_code(MXA_ELEM_E2M3, false);
	memset(a.scale, 127, (size_t)m * k / 32);
	memset(b.scale, 126, (size_t)n * k / 32);
	if (test_mx_upload(dev, &a, NULL, &ma) ||
	    test_mx_upload(dev, &b, NULL, &mb) ||
	    test_dense_upload(dev, MXA_DTYPE_F32, m, n, NULL, 0, 0, &cs)) {
		CHECK(0, "async setup failed");
		return;
	}
	CHECK_RET(mxa_gemm(dev, &ma, &mb, &cs, 0, MXA_PREF_EMULATED), 0);
	test_dense_download(&cs, want);

	/* Several jobs in flight at once, then poll, then wait. */
	for (i = 0; i < 4; i++) {
		if (test_dense_upload(dev, MXA_DTYPE_F32, m, n, NULL, 0, 0,
				      &c[i])) {
			CHECK(0, "cannot allocate C");
			return;
		}
		ret = mxa_gemm_async(dev, &ma, &mb, &c[i], 0,
				     MXA_PREF_EMULATED, &f[i]);
		CHECK(ret == 0 && f[i], "gemm_async %u: %d", i, ret);
	}
	for (i = 0; i < 4; i++) {
		if (!f[i])
			continue;
		ret = mxa_fence_wait(f[i], 0);
		CHECK(ret == 0 || ret == -ETIME, "poll: %d", ret);
		polls_busy += ret == -ETIME;
		ret = mxa_fence_wait(f[i], 1000);	/* 1 us */
		CHECK(ret == 0 || ret == -ETIME, "short wait: %d", ret);
		CHECK_RET(mxa_fence_wait(f[i], -1), 0);
		CHECK_RET(mxa_fence_wait(f[i], 0), 0);	/* stays signalled */
		CHECK_RET(mxa_fence_wait(f[i], 5000000000ll), 0);
		CHECK_RET(test_dense_download(&c[i], got), 0);
		CHECK(!memcmp(want, got, (size_t)m * n * 4),
		      "async gemm %u differs from the synchronous one", i);
		mxa_fence_free(f[i]);
	}
	printf("async: %u of 4 polls found the job running\n", polls_busy);
	CHECK_RET(mxa_fence_wait(NULL, 0), -EINVAL);

	/* Freeing a fence whose job may still run waits for it. */
	f[0] = NULL;
	CHECK_RET(mxa_gemm_async(dev, &ma, &mb, &c[0], MXA_GEMM_ACCUMULATE,
				 MXA_PREF_AUTO, &f[0]), 0);
	mxa_fence_free(f[0]);

	/* Validation errors come back at submission, with no fence. */
	f[1] = (struct mxa_fence *)&f[1];
	mb.cols = 32;
	CHECK_RET(mxa_gemm_async(dev, &ma, &mb, &c[1], 0, MXA_PREF_AUTO,
				 &f[1]), -EINVAL);
	CHECK(!f[1], "failed gemm_async left *fence set");
	mb.cols = k;

	for (i = 0; i < 4; i++)
		test_dense_release(&c[i]);
	test_dense_release(&cs);
	test_mx_release(&ma);
	test_mx_release(&mb);
	test_mx_free(&a);
	test_mx_free(&b);
	free(want);
	free(got);
}

int main(void)
{
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_DEVICE");
	unsetenv("MXACCEL_THREADS");
	dev = test_open_device();
	dinfo = test_device_info(dev);
	is_cpu = !strcmp(dinfo.backend, "cpu");
	is_accel = !strcmp(dinfo.backend, "accel");
	test_names();
	test_errors_and_version();
	test_sizes();
	test_devices();
	test_buffers();
	test_dmabuf();
	test_gemm_validation();
	test_quantize_validation();
	test_plan_query();
	test_env_overrides();
	test_async();
	mxa_device_close(dev);
	return test_finish();
}
