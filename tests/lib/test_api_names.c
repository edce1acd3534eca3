// SPDX-License-Identifier: MIT
/*
 * Names and strings of the public API: every parser accepts exactly the
 * documented names and prints them back, rejects unknown and NULL names
 * (and NULL outputs) with -EINVAL without writing its output, every printer
 * answers NULL outside its enum; the recipes parse, print back and are
 * listed once each by mxa_recipe_at(); mxa_strerror() has a message for any
 * int and mxa_version() matches the header.  Calls that may crash run in a
 * child process, so that a crash is one failed check.
 *
 * Pure functions of the library, the same on every device: this program
 * opens none and runs on the host only.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

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

int main(void)
{
	test_names();
	test_errors_and_version();
	return test_finish();
}
