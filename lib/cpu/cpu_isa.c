// SPDX-License-Identifier: MIT
/*
 * Which instruction-set level the CPU backend runs: detected from cpuid
 * and the OS's saved register state once per process, overridable per
 * device with $MXACCEL_CPU_ISA.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cpu_isa.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define CPU_X86 1
#else
#define CPU_X86 0
#endif

static const struct cpu_isa isa_ref = {
	.level = CPU_ISA_REF,
	.name = "ref",
	.uk_bf16 = &cpu_uk_ref_bf16,
	.uk_i8 = &cpu_uk_ref_i8,
	.uk_ue4m3 = &cpu_uk_ref_bf16,
	.quant = &cpu_quant_ref,
	.decode = cpu_decode_rows_ref,
};

#if CPU_X86
static const struct cpu_isa isa_avx2 = {
	.level = CPU_ISA_AVX2,
	.name = "avx2",
	.uk_bf16 = &cpu_uk_avx2_bf16,
	.uk_i8 = &cpu_uk_avx2_i8,
	.uk_ue4m3 = &cpu_uk_avx2_bf16,
	.quant = &cpu_quant_avx2,
	.decode = cpu_decode_rows_ref,
};

static const struct cpu_isa isa_avx512vnni = {
	.level = CPU_ISA_AVX512VNNI,
	.name = "avx512vnni",
	.uk_bf16 = &cpu_uk_avx512_fma,
	.uk_i8 = &cpu_uk_avx512_vnni,
	.uk_ue4m3 = &cpu_uk_avx512_fma,
	.quant = &cpu_quant_avx512,
	.decode = cpu_decode_rows_avx512,
};

static const struct cpu_isa isa_avx512bf16 = {
	.level = CPU_ISA_AVX512BF16,
	.name = "avx512bf16",
	.uk_bf16 = &cpu_uk_avx512_bf16dot,
	.uk_i8 = &cpu_uk_avx512_vnni,
	.uk_ue4m3 = &cpu_uk_avx512_bf16dot,
	.quant = &cpu_quant_avx512,
	.decode = cpu_decode_rows_avx512,
	.decode_bf16 = cpu_decode_rows_avx512bf16,
	.decode_tiles = cpu_decode_tiles_avx512bf16,
	.decode_tiles_m = { CPU_DECODE_TILES_AVX512_MIN_M,
			    CPU_DECODE_TILES_AVX512_MAX_M },
};

/*
 * Tile multiplies for every pair: e2m1 and e2m3 values are exact in
 * bf16 too, so their int8 panels give way to the bf16 tiles, which run
 * at the rate of the int8 ones for one block of K per instruction.
 */
static const struct cpu_isa isa_amx = {
	.level = CPU_ISA_AMX,
	.name = "amx",
	.uk_bf16 = &cpu_uk_amx_bf16,
	.uk_i8 = &cpu_uk_amx_bf16,
	/*
	 * The tile packer (kernels/amx/amx_pack.c) folds E8M0 exponents
	 * only; NVFP4 operands take the generic packer's folded bf16
	 * panels and the FMA kernel, the faster of the two AVX-512 ones on
	 * Intel's cores (bf16dot_is_slow() below), the only ones with AMX.
	 */
	.uk_ue4m3 = &cpu_uk_avx512_fma,
	.quant = &cpu_quant_avx512,
	.decode = cpu_decode_rows_avx512,
	.decode_bf16 = cpu_decode_rows_avx512bf16,
	.decode_tiles = cpu_decode_amx,
	.decode_tiles_m = { 1, CPU_DECODE_AMX_MAX_M },
};
#endif

/* Indexed by enum cpu_isa_level; NULL where this build has no kernels. */
static const struct cpu_isa *const isas[] = {
	[CPU_ISA_REF] = &isa_ref,
#if CPU_X86
	[CPU_ISA_AVX2] = &isa_avx2,
	[CPU_ISA_AVX512VNNI] = &isa_avx512vnni,
	[CPU_ISA_AVX512BF16] = &isa_avx512bf16,
	[CPU_ISA_AMX] = &isa_amx,
#else
	[CPU_ISA_AMX] = NULL,
#endif
};

_Static_assert(MXA_ARRAY_SIZE(isas) == CPU_ISA_COUNT,
	       "one entry of isas[] per enum cpu_isa_level");

static const char *const level_names[] = {
	[CPU_ISA_REF] = "ref",
	[CPU_ISA_AVX2] = "avx2",
	[CPU_ISA_AVX512VNNI] = "avx512vnni",
	[CPU_ISA_AVX512BF16] = "avx512bf16",
	[CPU_ISA_AMX] = "amx",
};

_Static_assert(MXA_ARRAY_SIZE(level_names) == CPU_ISA_COUNT,
	       "one name per enum cpu_isa_level");

/* The best level the CPU runs, and the one a device gets by default. */
static enum cpu_isa_level detected, preferred;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
/* Why not amx (cpu_isa_amx_unused()); empty when amx runs. */
static char amx_unused[160];

#if CPU_X86
/* cpuid bits (Intel SDM vol. 2A, CPUID), spelled out for old headers. */
#define L1_ECX_FMA		(1u << 12)
#define L1_ECX_OSXSAVE		(1u << 27)
#define L1_ECX_AVX		(1u << 28)
#define L7_EBX_AVX2		(1u << 5)
#define L7_EBX_AVX512F		(1u << 16)
#define L7_EBX_AVX512DQ		(1u << 17)
#define L7_EBX_AVX512BW		(1u << 30)
#define L7_EBX_AVX512VL		(1u << 31)
#define L7_ECX_AVX512VNNI	(1u << 11)
#define L71_EAX_AVX512BF16	(1u << 5)
#define L7_EDX_AMX_BF16		(1u << 22)
#define L7_EDX_AMX_TILE		(1u << 24)
#define L7_EDX_AMX_INT8		(1u << 25)
/*
 * XCR0: SSE and AVX state; opmask, ZMM0-15 upper halves, ZMM16-31;
 * XTILECFG and XTILEDATA (bits 17, 18).
 */
#define XCR0_AVX		0x06u
#define XCR0_AVX512		0xe6u
#define XCR0_AMX		0x60000u
/* Linux's arch_prctl(2) request and the tile data's state component. */
#define ARCH_REQ_XCOMP_PERM	0x1023
#define XFEATURE_XTILEDATA	18

static uint32_t xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return lo;
}

static enum cpu_isa_level detect_x86(void)
{
	unsigned int a, b, c, d, b7 = 0, c7 = 0, a71 = 0;
	bool avx512;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return CPU_ISA_REF;
	if (!(c & L1_ECX_OSXSAVE) || !(c & L1_ECX_AVX) || !(c & L1_ECX_FMA) ||
	    (xcr0() & XCR0_AVX) != XCR0_AVX)
		return CPU_ISA_REF;
	if (__get_cpuid_max(0, NULL) >= 7) {
		__cpuid_count(7, 0, a, b7, c7, d);
		if (a >= 1)
			__cpuid_count(7, 1, a71, b, c, d);
	}
	if (!(b7 & L7_EBX_AVX2))
		return CPU_ISA_REF;
	avx512 = (b7 & L7_EBX_AVX512F) && (b7 & L7_EBX_AVX512DQ) &&
		 (b7 & L7_EBX_AVX512BW) && (b7 & L7_EBX_AVX512VL) &&
		 (xcr0() & XCR0_AVX512) == XCR0_AVX512;
	if (!avx512 || !(c7 & L7_ECX_AVX512VNNI))
		return CPU_ISA_AVX2;
	if (!(a71 & L71_EAX_AVX512BF16))
		return CPU_ISA_AVX512VNNI;
	return CPU_ISA_AVX512BF16;
}

/*
 * AMX on top of avx512bf16: the three cpuid bits, tile state enabled in
 * XCR0 by the OS, and the process's permission to use tile data, which
 * Linux (5.16 and later) grants on request; the request is made here,
 * once per process, and is refused on older kernels or under a seccomp
 * policy.  On AMD (no AMX) the cpuid bits are clear.
 */
static bool amx_usable(void)
{
	unsigned int a, b, c, d = 0;
	long ret;

	if (__get_cpuid_max(0, NULL) >= 7)
		__cpuid_count(7, 0, a, b, c, d);
	if ((d & (L7_EDX_AMX_BF16 | L7_EDX_AMX_TILE | L7_EDX_AMX_INT8)) !=
	    (L7_EDX_AMX_BF16 | L7_EDX_AMX_TILE | L7_EDX_AMX_INT8)) {
		snprintf(amx_unused, sizeof(amx_unused),
			 "the CPU has no AMX-TILE/BF16/INT8");
		return false;
	}
	if ((xcr0() & XCR0_AMX) != XCR0_AMX) {
		snprintf(amx_unused, sizeof(amx_unused),
			 "the OS does not enable tile state (XCR0 0x%x)",
			 xcr0());
		return false;
	}
	ret = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
	if (ret) {
		snprintf(amx_unused, sizeof(amx_unused),
			 "arch_prctl(ARCH_REQ_XCOMP_PERM) refused: %s",
			 strerror(errno));
		return false;
	}
	return true;
}

/*
 * Intel's cores (Cooper Lake, Sapphire and Emerald Rapids) issue
 * vdpbf16ps on one port, at half the rate of vfmadd231ps on two: there
 * the FMA kernel of the avx512vnni level is the faster one for bf16
 * panels (Documentation/bench-cpu.rst has the numbers).  AMD's Zen 4
 * runs both at one zmm per cycle, so vdpbf16ps doubles the rate.
 */
static bool bf16dot_is_slow(void)
{
	unsigned int max, ebx, ecx, edx;

	if (!__get_cpuid(0, &max, &ebx, &ecx, &edx))
		return false;
	/* "GenuineIntel" */
	return ebx == 0x756e6547 && edx == 0x49656e69 && ecx == 0x6c65746e;
}
#endif

static void detect(void)
{
#if CPU_X86
	detected = detect_x86();
	if (detected == CPU_ISA_AVX512BF16 && amx_usable())
		detected = CPU_ISA_AMX;
	else if (detected < CPU_ISA_AVX512BF16)
		snprintf(amx_unused, sizeof(amx_unused),
			 "the CPU (or OS) has no AVX-512 BF16, so no AMX");
#else
	detected = CPU_ISA_REF;
	snprintf(amx_unused, sizeof(amx_unused), "not an x86-64 build");
#endif
	while (!isas[detected])
		detected--;
	preferred = detected;
#if CPU_X86
	if (preferred == CPU_ISA_AVX512BF16 && bf16dot_is_slow())
		preferred = CPU_ISA_AVX512VNNI;
#endif
	if (amx_unused[0])
		mxa__dbg("cpu: amx level not used: %s; best level %s",
			 amx_unused, level_names[detected]);
}

const char *cpu_isa_amx_unused(void)
{
	pthread_once(&detect_once, detect);
	return amx_unused[0] ? amx_unused : NULL;
}

int cpu_isa_select(const struct cpu_isa **out, bool *forced)
{
	const char *s = getenv("MXACCEL_CPU_ISA");
	unsigned int l;

	pthread_once(&detect_once, detect);
	*forced = s && *s && strcmp(s, "auto");
	if (!*forced) {
		*out = isas[preferred];
		return 0;
	}
	for (l = 0; l < CPU_ISA_COUNT; l++) {
		if (strcmp(s, level_names[l]))
			continue;
		if (l == CPU_ISA_AMX && amx_unused[0])
			return mxa__err(-EOPNOTSUPP,
					"MXACCEL_CPU_ISA=amx: %s; the best here is %s",
					amx_unused, level_names[detected]);
		if (l > detected || !isas[l])
			return mxa__err(-EOPNOTSUPP,
					"MXACCEL_CPU_ISA=%s: this CPU (or build) lacks it; the best here is %s",
					s, level_names[detected]);
		*out = isas[l];
		return 0;
	}
	return mxa__err(-EINVAL,
			"MXACCEL_CPU_ISA='%s' is not one of auto, ref, avx2, avx512vnni, avx512bf16, amx",
			s);
}

const struct cpu_ukernel *cpu_isa_ukernel(const struct cpu_isa *isa,
					  enum mxcore_elem a, bool a_ue4m3,
					  enum mxcore_elem b, bool b_ue4m3)
{
	bool a8 = a == MXCORE_E2M1 || a == MXCORE_E2M3;
	bool b8 = b == MXCORE_E2M1 || b == MXCORE_E2M3;

	if (a_ue4m3 || b_ue4m3)
		return isa->uk_ue4m3;
	return a8 && b8 ? isa->uk_i8 : isa->uk_bf16;
}
