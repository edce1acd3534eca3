/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the end-to-end programs that run in the test VM
 * (tests/e2e and tests/bench; all static): TAP output, a seeded PRNG,
 * random GEMM problems kept as host bytes and run on any device, raw
 * access to the mxaccel node, and a count of the SUBMIT ioctls a program
 * makes (every program is linked with -Wl,--wrap=ioctl; see the Makefile).
 */
#ifndef MXA_E2E_H
#define MXA_E2E_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxaccel.h"

/* Exit status of a program that found nothing to test (kselftest's). */
#define E2E_SKIP 4

/* --- TAP ------------------------------------------------------------------- */

extern int e2e_failures;

void e2e_plan(unsigned int tests);
/* A failed check inside a subtest: "# FAIL line: ..." */
void e2e_fail(int line, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A comment line. */
void e2e_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* End a subtest: ok unless a check failed since the previous one. */
void e2e_subtest(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * End a subtest that fails for a known reason: its failures become a TAP
 * TODO (reported, not counted) until the reason is fixed.
 */
void e2e_subtest_todo(const char *todo, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A subtest that does not apply here: "ok N - name # SKIP why". */
void e2e_subtest_skip(const char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 0 if nothing failed, else 1. */
int e2e_exit_status(void);

#define E2E_CHECK(cond, ...)                                     \
	do {                                                     \
		if (!(cond))                                     \
			e2e_fail(__LINE__, __VA_ARGS__);         \
	} while (0)

#define E2E_CHECK_RET(call, want)                                        \
	do {                                                             \
		int __r = (call);                                        \
		if (__r != (want))                                       \
			e2e_fail(__LINE__, "%s = %d (%s), want %d", #call, \
				 __r, mxa_strerror(__r), (int)(want));   \
	} while (0)

/*
 * Open a device or exit: with "1..0 # SKIP" and E2E_SKIP when it does not
 * exist (-ENODEV: no mxaccel node, e.g. outside the VM), "Bail out!" and
 * 1 on any other error.
 */
struct mxa_device *e2e_open(const char *name);

/* --- PRNG and time ------------------------------------------------------- */

void e2e_seed(uint64_t seed);
uint64_t e2e_rand(void);
/* Uniform in [0, n). */
uint32_t e2e_below(uint32_t n);
/* CLOCK_MONOTONIC in nanoseconds. */
int64_t e2e_now_ns(void);

/* --- random GEMM problems ------------------------------------------------ */

/* A GEMM as host bytes: inputs, and C before (read with ACCUMULATE). */
struct e2e_gemm {
	enum mxa_elem ea, eb;
	enum mxa_dtype dtype;
	enum mxa_scale_layout layout;
	uint32_t m, n, k, flags;
	size_t a_bytes, as_bytes, b_bytes, bs_bytes, c_bytes;
	uint8_t *a, *as, *b, *bs, *c_in;
};

/*
 * Random problem: every element pair and layout, fp32 or bf16 C, half of
 * them accumulating; 1..max_m x 1..max_n, K = 32..32*max_kb.  Codes are
 * any byte (NaN and Inf codes included; fp6 bits 6-7 set at random), one
 * scale in 16 is an extreme (2^-127, 2^-126, 2^127 or NaN).
 */
void e2e_gemm_random(struct e2e_gemm *g, uint32_t max_m, uint32_t max_n,
		     uint32_t max_kb);
void e2e_gemm_free(struct e2e_gemm *g);
/*
 * Run g on dev under pref in buffers of its own; C afterwards goes to out
 * (g->c_bytes).  Returns the library's error.
 */
int e2e_gemm_run(struct mxa_device *dev, const struct e2e_gemm *g,
		 enum mxa_pref pref, uint8_t *out);

/* --- buffers -------------------------------------------------------------- */

/* Allocate size bytes on dev holding src (NULL: zeros); NULL on failure. */
struct mxa_buffer *e2e_buffer(struct mxa_device *dev, const void *src,
			      size_t size);

/* --- the mxaccel node, raw ------------------------------------------------ */

/* Open the first mxaccel node (/dev/accel/accel*, /dev/dri/renderD*); -1. */
int e2e_node_open(void);
/*
 * The device under test: $MXACCEL_E2E_DEVICE (accel:N), default accel:0,
 * and its node.
 */
const char *e2e_device(void);
int e2e_device_node_open(void);
/* The nth mxaccel node (accel:N of the library), or -1. */
int e2e_node_open_nth(unsigned int nth);
/* ioctl() returning 0 or -errno, restarting on EINTR/EAGAIN. */
int e2e_ioctl(int fd, unsigned long request, void *arg);

/* --- SUBMIT accounting ---------------------------------------------------- */

/* SUBMIT ioctls this process made, and the ops they carried. */
uint64_t e2e_submits(void);
uint64_t e2e_submitted_ops(void);
/* The linker's names for ioctl() under -Wl,--wrap=ioctl. */
int __real_ioctl(int fd, unsigned long request, ...);
int __wrap_ioctl(int fd, unsigned long request, ...);

#endif /* MXA_E2E_H */
