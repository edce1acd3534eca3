/* SPDX-License-Identifier: MIT */
/*
 * Minimal test helpers shared by the library tests: checks that record a
 * failure and continue, a seeded PRNG, file loading, and locating golden
 * vectors.  A test's main() ends with `return test_finish();`: 0 pass,
 * 1 fail.  TEST_SKIP (77) skips.
 */
#ifndef MXA_TESTLIB_H
#define MXA_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mxaccel.h"

#define TEST_SKIP 77

#define TEST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern int test_failures;

void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* CHECK(cond, "fmt", ...): on failure print location and message. */
#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond))                                          \
			test_fail(__FILE__, __LINE__, __VA_ARGS__);   \
	} while (0)

/* CHECK_ERR(call, errno): call must return exactly -errno (or 0). */
#define CHECK_RET(call, want)                                         \
	do {                                                          \
		int __r = (call);                                     \
		if (__r != (want))                                    \
			test_fail(__FILE__, __LINE__,                 \
				  "%s returned %d, want %d", #call,   \
				  __r, (int)(want));                  \
	} while (0)

/* Print the summary and return the process exit status. */
int test_finish(void);

/* splitmix64, seeded from $MXACCEL_TEST_SEED or the given default. */
void test_seed(uint64_t dflt);
uint64_t test_rand(void);
/* Uniform in [0, n). */
uint32_t test_rand_below(uint32_t n);
/* A random fp32 in [-scale, scale] (a float, not its bits). */
float test_rand_float(float scale);

/* Read a whole file; NULL (and *size 0) if it cannot be read. */
void *test_read_file(const char *path, size_t *size);

/*
 * Golden vector directories: the compact subset kept in the repository and,
 * when present, the full torchao set beside the repository
 * (../shared/testdata/mx_golden or $MXACCEL_GOLDEN_DIR).  Returns the number
 * of directories written to dirs (at most 2).
 */
int test_golden_dirs(const char *dirs[2]);

/* --- fp32 / bf16 bit patterns ------------------------------------------- */

static inline uint32_t test_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float test_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* A bf16 pattern (low 16 bits) widened exactly to fp32 bits. */
static inline uint32_t test_bf16_to_f32(uint32_t h)
{
	return (h & 0xffff) << 16;
}

/* NaN test on fp32 bits (mbits 23) or bf16 bits (mbits 7). */
static inline bool test_isnan_bits(uint32_t x, unsigned int mbits)
{
	uint32_t mask = (1u << (8 + mbits)) - 1;

	return (x & mask) > (0xffu << mbits);
}

/*
 * Round a double to fp32 (mbits 23) or bf16 (mbits 7) bits: to nearest,
 * ties to even, gradual underflow, overflow to Inf.  Only meaningful when v
 * is the exact value (a double holding a short dyadic rational), so that
 * this is a single rounding.  NaN gives the default quiet NaN.
 */
uint32_t test_round_float(double v, unsigned int mbits);

/* The value of fp32 (mbits 23) or bf16 (mbits 7) bits as a double. */
double test_float_value(uint32_t bits, unsigned int mbits);

/* --- MX element codes, decoded from the OCP MX v1.0 tables -------------- */

/*
 * Written from the specification, independently of lib/core, so that tests
 * check the library against a second implementation.
 */
enum test_class {
	TEST_FINITE = 0,
	TEST_NAN,
	TEST_PINF,
	TEST_NINF,
};

struct test_elem_info {
	const char *name;
	unsigned int ebits, mbits, bias;
	unsigned int code_bits;	/* 8, 6 or 4 */
	double max;		/* largest finite value */
	bool has_inf;		/* e5m2 */
	bool has_nan;		/* e4m3 (S.1111.111), e5m2 */
};

extern const enum mxa_elem test_elems[5];
extern const enum mxa_scale_mode test_modes[4];
extern const char *const test_mode_names[4];

const struct test_elem_info *test_elem(enum mxa_elem elem);
/* Number of codes: 256, 64 or 16. */
unsigned int test_elem_ncodes(enum mxa_elem elem);
/* The code's sign bit. */
uint8_t test_elem_sign(enum mxa_elem elem);
/* Largest finite positive code. */
uint8_t test_elem_max_code(enum mxa_elem elem);
/*
 * Decode: returns the class; for finite codes value = k * 2^e exactly (k
 * signed, |k| < 16; a zero code gives k = 0 and *neg_zero for -0).
 */
enum test_class test_elem_decode(enum mxa_elem elem, uint8_t code,
				 int64_t *k, int *e, bool *neg_zero);
/* The exact value as a double (NaN and +-Inf for special codes). */
double test_elem_value(enum mxa_elem elem, uint8_t code);
/* A random code; specials (NaN, Inf) only when allow_special. */
uint8_t test_rand_code(enum mxa_elem elem, bool allow_special);
/* 2^(s - 127) for an E8M0 scale, NaN for 0xff. */
double test_scale_value(uint8_t s);

/* --- matrices on a device ------------------------------------------------ */

/* Host copy of an MX matrix: one code per byte (unpacked), row-major. */
struct test_mx {
	enum mxa_elem elem;
	uint32_t rows, cols;
	uint8_t *code;		/* rows x cols */
	uint8_t *scale;		/* rows x cols / 32 */
};

/* How a test_mx is placed in device buffers. */
struct test_mx_place {
	enum mxa_scale_layout layout;
	size_t data_offset, data_pad;	/* pad: extra bytes per row */
	size_t scale_offset, scale_pad;	/* scale_pad: plain layout only */
};

void test_mx_alloc(struct test_mx *m, enum mxa_elem elem, uint32_t rows,
		   uint32_t cols);
void test_mx_free(struct test_mx *m);
/*
 * Allocate buffers on dev, store m there as place says (NULL: plain,
 * packed) and describe it in *out.  Padding bytes hold 0xa5.  Returns 0 or
 * the library's error.
 */
int test_mx_upload(struct mxa_device *dev, const struct test_mx *m,
		   const struct test_mx_place *place, struct mxa_matrix *out);
/* Free the buffers of a matrix made by test_mx_upload(). */
void test_mx_release(struct mxa_matrix *m);

/*
 * A dense matrix on dev: values are fp32 bits, or bf16 bits in the low 16
 * (NULL: zeros).  pad is extra bytes per row (a multiple of the element
 * size); padding bytes hold 0xa5.
 */
int test_dense_upload(struct mxa_device *dev, enum mxa_dtype dtype,
		      uint32_t rows, uint32_t cols, const uint32_t *bits,
		      size_t offset, size_t pad, struct mxa_dense *out);
/* Read the values back (rows x cols, bf16 in the low 16 bits). */
int test_dense_download(const struct mxa_dense *d, uint32_t *bits);
/* True when every padding byte of d (between rows and around) is 0xa5. */
bool test_dense_pad_intact(const struct mxa_dense *d);
void test_dense_release(struct mxa_dense *d);

/* Open the cpu device or exit with a failure. */
struct mxa_device *test_open_cpu(void);

/*
 * The device under test: $MXACCEL_TEST_DEVICE, default "cpu" (e.g.
 * MXACCEL_TEST_DEVICE=accel:0 in the test VM).  test_open_device() opens
 * it or exits with a failure (a device that was asked for and does not
 * open is an error, not a skip), and prints its name and description.
 * The tests adapt their expectations to what the device says about itself
 * (mxa_device_info(), mxa_query()), never to its name alone.
 */
const char *test_device_name(void);
struct mxa_device *test_open_device(void);
/* dev's info (zeroed if mxa_device_info() fails: a test failure). */
struct mxa_device_info test_device_info(struct mxa_device *dev);
/* True for the cpu backend's device. */
bool test_is_cpu(struct mxa_device *dev);
/* Does dev name a kernel for d under pref (mxa_query() says not NONE)? */
bool test_supports(struct mxa_device *dev, const struct mxa_op_desc *d,
		   enum mxa_pref pref);

/* Does dev have a NATIVE kernel for op (e4m3 x e4m3 for gemm)? */
bool test_has_native(struct mxa_device *dev, enum mxa_op op);
/* What a call under NATIVE returns on dev: 0, or -EOPNOTSUPP if refused. */
int test_native_ret(struct mxa_device *dev, enum mxa_op op);

/*
 * A valid GEMM request on dev: A 4 x 64 e4m3 (all 1.0), B 3 x 64 e2m1
 * (all 1.0), unit scales, C 4 x 3 fp32, each in its own buffer, so that
 * C = 64 everywhere.  test_req_init() exits with a failure if it cannot
 * allocate.
 */
struct test_req {
	struct mxa_matrix a, b;
	struct mxa_dense c;
	struct mxa_buffer *ab, *as, *bb, *bs, *cb;
};

void test_req_init(struct mxa_device *dev, struct test_req *r);
void test_req_free(struct test_req *r);

#endif /* MXA_TESTLIB_H */
