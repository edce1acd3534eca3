// SPDX-License-Identifier: MIT
/*
 * Dispatch introspection and overrides: mxa_plan() and mxa_query() answer
 * for every op, element pair, dtype and preference, agree with each other,
 * plan exact kernels under EMULATED and on conformance devices and refuse
 * NATIVE there with a reason naming the device, and reject malformed
 * questions with -EINVAL; MXACCEL_KERNEL overrides the preference or forces
 * a kernel for the operation it implements only, and an unknown value is
 * an error everywhere, never a silent default.
 *
 * Runs on $MXACCEL_TEST_DEVICE (default cpu).  What differs between devices
 * is learnt through the API: mxa_device_info() (backend, worker threads,
 * conformance device) and mxa_query() (whether a NATIVE kernel exists);
 * on the cpu every check is as strict as the cpu's own contract.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct mxa_device *dev;
static struct mxa_device_info dinfo;	/* dev's */

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
	d.op = MXA_OP_GEMM_GROUPED + 1;	/* the first op that does not exist */
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
	const bool native = test_has_native(dev, MXA_OP_GEMM);
	struct mxa_capability cap;
	struct mxa_op_desc d = {
		.op = MXA_OP_GEMM, .a_elem = MXA_ELEM_E4M3,
		.b_elem = MXA_ELEM_E4M3, .m = 1, .n = 1, .k = 32,
	};
	struct mxa_plan plan;
	struct test_req r;

	unsetenv("MXACCEL_KERNEL");
	planned(MXA_PREF_EMULATED, emu, sizeof(emu));
	planned(MXA_PREF_NATIVE, nat, sizeof(nat));
	planned(MXA_PREF_AUTO, au, sizeof(au));
	/* Where a native gemm exists, AUTO takes it. */
	CHECK(!native || !strcmp(au, nat), "AUTO plans %s, NATIVE %s", au,
	      nat);
	CHECK(native || !strcmp(nat, "(error)"),
	      "NATIVE plans %s though the query says unsupported", nat);
	test_req_init(dev, &r);

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
	test_req_free(&r);
}

int main(void)
{
	unsetenv("MXACCEL_KERNEL");
	unsetenv("MXACCEL_DEVICE");
	unsetenv("MXACCEL_THREADS");
	dev = test_open_device();
	dinfo = test_device_info(dev);
	test_plan_query();
	test_env_overrides();
	mxa_device_close(dev);
	return test_finish();
}
