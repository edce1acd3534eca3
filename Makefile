# SPDX-License-Identifier: MIT
#
# mxaccel: one entry point.  `make demo` runs the demonstration, `make check`
# runs every test (installing missing Debian packages first when run as root)
# and ends with one line "N passed, N failed, N skipped".

VERSION := 0.2.0
SOVERSION := 0

CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=

# SANITIZE=1: ASan + UBSan build in its own tree, tests run against it.
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD ?= build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=all
else
BUILD ?= build/rel
SAN_FLAGS :=
endif

# V=1 shows full commands.
ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wpointer-arith -Wvla \
	-Wno-format-truncation
BASE_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(SAN_FLAGS) -pthread \
	       -D_GNU_SOURCE -Ilib/include -Ilib/core -Ilib/src -Iuapi/drm \
	       -I/usr/include/libdrm
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -DMXA_BUILD
LDFLAGS_ALL := $(LDFLAGS) $(SAN_FLAGS) -pthread

CORE_SRCS := $(wildcard lib/core/*.c)
LIB_SRCS := $(CORE_SRCS) $(wildcard lib/src/*.c) $(wildcard lib/cpu/*.c) \
	    $(wildcard lib/cpu/kernels/*/*.c) \
	    $(wildcard lib/accel/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)

SONAME := libmxaccel.so.$(SOVERSION)
SHLIB := $(BUILD)/lib/libmxaccel.so.$(VERSION)
STLIB := $(BUILD)/lib/libmxaccel.a
PCFILE := $(BUILD)/lib/libmxaccel.pc

# The CUDA backend is a plugin the library loads at run time (design
# section 5), built when nvcc is found: $(NVCC), else nvcc on the PATH, else
# /usr/local/cuda/bin/nvcc.  NVCC= (empty) skips it.  cudart is linked
# statically (the plugin needs only the driver, libcuda.so.1); cuBLAS is
# loaded with dlopen when first used.  sm_90a machine code for Hopper's
# wgmma kernel, plus compute_80 PTX so that the portable kernels (quantize,
# exact GEMM, dequantize + cuBLAS) also run on other GPUs.
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) \
	 $(wildcard /usr/local/cuda/bin/nvcc))
CUDA_GENCODE ?= -gencode arch=compute_90a,code=sm_90a \
		-gencode arch=compute_80,code=compute_80
CUDA_SONAME := libmxaccel-cuda.so.$(SOVERSION)
CUDA_PLUGIN := $(BUILD)/lib/libmxaccel-cuda.so.$(VERSION)
CUDA_SRCS := $(wildcard lib/cuda/*.cu)
CUDA_OBJS := $(CUDA_SRCS:%.cu=$(BUILD)/obj/%.o)
NVCC_FLAGS := -std=c++20 -O3 $(CUDA_GENCODE) -Werror all-warnings \
	      -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra,-Werror \
	      -Xcompiler -Wno-missing-field-initializers,-Wno-format-truncation \
	      -D_GNU_SOURCE -Ilib/include -Ilib/src -Ilib/core \
	      '-DMXCORE_GEOM_FN=__host__ __device__'

CLI := $(BUILD)/bin/mxaccel
DEMO := $(BUILD)/bin/mxaccel-demo
# The PCI device model behind qemu's ivshmem-doorbell (tools/devmodel/).
DEVMODEL := $(BUILD)/tools/mxaccel-devmodel
DEVMODEL_OBJS := $(patsubst tools/%.c,$(BUILD)/tools/%.o,\
	$(wildcard tools/devmodel/*.c))
TOOL_LIBS := -L$(BUILD)/lib -lmxaccel -Wl,-rpath,'$$ORIGIN/../lib' -lm

TEST_SRCS := $(wildcard tests/lib/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/lib/%.c=$(BUILD)/tests/%)
# The CUDA backend's tests skip where no CUDA device is found.
CUDA_TEST_SRCS := $(wildcard tests/cuda/test_*.c)
TEST_BINS += $(CUDA_TEST_SRCS:tests/cuda/%.c=$(BUILD)/tests/%)
# The freestanding core's own tests (functions no public call reaches).
CORE_TEST_SRCS := $(wildcard tests/core/test_*.c)
TEST_BINS += $(CORE_TEST_SRCS:tests/core/%.c=$(BUILD)/tests/%)
# CPU kernels built into the test itself (the AMX ones on a C model of
# the tile unit), on x86-64 only.
ifeq ($(shell uname -m),x86_64)
CPU_TEST_SRCS := $(wildcard tests/cpu/test_*.c)
TEST_BINS += $(CPU_TEST_SRCS:tests/cpu/%.c=$(BUILD)/tests/%)
endif
# The CUDA quantize encoders checked on the host (no GPU needed), where nvcc
# is found; not in the sanitizer build, whose library needs its runtime.
ifneq ($(NVCC),)
ifneq ($(SANITIZE),1)
TEST_BINS += $(BUILD)/tests/test_cuda_encode
TEST_BINS += $(BUILD)/tests/test_cuda_group_tiles
endif
endif
# The CUDA exact GEMMs' kernels run on the host against the cpu's
# (tests/cuda/cuda_exact_host.cpp), likewise.
ifneq ($(NVCC),)
ifneq ($(SANITIZE),1)
TEST_BINS += $(BUILD)/tests/test_cuda_exact_host
endif
endif
# The CUDA benchmark program (tests/bench/cuda_bench.py runs it) and the
# read probe (Hopper only: cp.async.bulk), where nvcc is found.
CUDA_BENCH := $(patsubst tests/cuda/%.c,$(BUILD)/tests/%,\
	      $(wildcard tests/cuda/cuda_bench.c))
ifneq ($(NVCC),)
CUDA_BENCH += $(BUILD)/tests/read_probe
endif
TEST_COMMON := tests/lib/testlib.c
# The device model's host-side test: plays qemu against mxaccel-devmodel.
TEST_BINS += $(BUILD)/tests/test_devmodel
SCRIPT_TESTS := $(wildcard tests/abi/test_*.sh tests/cli/test_*.sh)
# Style does not depend on the build: checkpatch runs in the plain pass
# only (CI runs both passes, and its time is budgeted).
ifeq ($(SANITIZE),1)
SCRIPT_TESTS := $(filter-out tests/abi/test_checkpatch.sh,$(SCRIPT_TESTS))
endif
# The driver's tests boot Debian kernels under qemu; the sanitizer build is
# about the library and skips them.
ifneq ($(SANITIZE),1)
SCRIPT_TESTS += $(wildcard tests/vm/test_vm_*.sh)
CHECK_DEPS := e2e check-debug-kernel
# The Python package's pytest suite against torch and torchao from the
# package index (python/tests; its environment is cached outside the repo).
SCRIPT_TESTS += python/tests/test_pytorch.sh
endif

# The kernel module, built against KDIR (default: the running kernel) in a
# copy of its sources per kernel release, so builds for several kernels
# never share objects.
KDIR ?= /lib/modules/$(shell uname -r)/build
# The release the module's vermagic carries (Debian's kernel.release can
# differ: 6.1.192 for 6.1.0-57-amd64).
KREL = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' \
	 $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MODULE_SRCS := Kbuild $(wildcard driver/*.[ch] driver/*.sh) \
	       $(wildcard uapi/drm/*.h) $(wildcard hw/*.h) \
	       $(wildcard lib/core/*.[ch])

.PHONY: all lib tools tests demo check install uninstall clean deps module e2e \
	e2e-lib vm-shell vm-demo vm-bench vm-bench-pci cuda debug-kernel check-debug-kernel \
	vm-debug vm-fuzz

all: lib tools $(if $(NVCC),cuda)

lib: $(SHLIB) $(STLIB) $(PCFILE)

tools: $(CLI) $(DEMO) $(DEVMODEL)

tests: $(TEST_BINS) $(CUDA_BENCH)

ifneq ($(NVCC),)
cuda: $(CUDA_PLUGIN)
else
cuda:
	@echo "nvcc not found: set NVCC=/path/to/nvcc to build the CUDA plugin" >&2; exit 1
endif

$(BUILD)/obj/lib/cuda/%.o: lib/cuda/%.cu
	@mkdir -p $(dir $@)
	$(quiet) NVCC $<
	$(Q)$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@

$(CUDA_PLUGIN): $(CUDA_OBJS) lib/cuda/libmxaccel-cuda.map
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(NVCC) -shared -cudart static -o $@ $(CUDA_OBJS) \
		-Xlinker -soname,$(CUDA_SONAME) \
		-Xlinker --version-script=lib/cuda/libmxaccel-cuda.map \
		-Xlinker -z,defs -ldl -lpthread -lrt
	$(Q)ln -sf libmxaccel-cuda.so.$(VERSION) $(BUILD)/lib/$(CUDA_SONAME)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(SHLIB): $(LIB_OBJS) lib/libmxaccel.map
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs \
		-Wl,--version-script=lib/libmxaccel.map \
		$(LIB_OBJS) -o $@ $(LDFLAGS_ALL) -ldrm -ldl -lm
	$(Q)ln -sf libmxaccel.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	$(Q)ln -sf $(SONAME) $(BUILD)/lib/libmxaccel.so

$(STLIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(quiet) AR $@
	$(Q)rm -f $@
	$(Q)ar rcs $@ $(LIB_OBJS)

$(PCFILE): lib/libmxaccel.pc.in Makefile
	@mkdir -p $(dir $@)
	$(quiet) GEN $@
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    $< > $@

$(BUILD)/tools/%.o: tools/%.c lib/include/mxaccel.h
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(BASE_CFLAGS) -Itools -MMD -MP -c $< -o $@

CLI_OBJS := $(patsubst tools/%.c,$(BUILD)/tools/%.o,\
	$(filter-out tools/demo.c,$(wildcard tools/*.c)))

# The CLI alone links OpenBLAS: `mxaccel bench` measures SGEMM beside the
# library's GEMM.  The library never depends on it.  Likewise oneDNN
# (libdnnl-dev, OpenMP build) where its header is installed; without it
# the bench says "oneDNN not available" (tools/bench_dnnl.c).  Deferred
# (=, not :=): make deps may install the header after this Makefile is
# read, and the link must then see what the compile saw.
CLI_LIBS = -lopenblas $(if $(wildcard /usr/include/oneapi/dnnl/dnnl.h),-ldnnl -lgomp)

$(CLI): $(CLI_OBJS) $(SHLIB)
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CLI_OBJS) -o $@ $(LDFLAGS_ALL) $(TOOL_LIBS) $(CLI_LIBS)

$(DEMO): $(BUILD)/tools/demo.o $(SHLIB)
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $< -o $@ $(LDFLAGS_ALL) $(TOOL_LIBS)

$(BUILD)/tools/devmodel/%.o: tools/devmodel/%.c tools/devmodel/devmodel.h \
		hw/mxaccel_pci.h lib/include/mxaccel.h
	@mkdir -p $(dir $@)
	$(quiet) CC $<
	$(Q)$(CC) $(BASE_CFLAGS) -Ihw -MMD -MP -c $< -o $@

$(DEVMODEL): $(DEVMODEL_OBJS) $(SHLIB)
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(DEVMODEL_OBJS) -o $@ $(LDFLAGS_ALL) $(TOOL_LIBS) -lpthread

# Library tests link only the shared library (whose core symbols are
# hidden), so their references stay independent of lib/core.
$(BUILD)/tests/%: tests/lib/%.c $(TEST_COMMON) tests/lib/testlib.h $(SHLIB)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) $(BASE_CFLAGS) -Itests/lib $< $(TEST_COMMON) -o $@ \
		$(LDFLAGS_ALL) $(TOOL_LIBS)

$(BUILD)/tests/test_devmodel: tests/devmodel/test_devmodel.c \
		tests/devmodel/fakeqemu.c tests/devmodel/fakeqemu.h \
		$(TEST_COMMON) tests/lib/testlib.h hw/mxaccel_pci.h $(SHLIB) \
		$(DEVMODEL)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) $(BASE_CFLAGS) -Itests/lib -Ihw $(filter %.c,$^) -o $@ \
		$(LDFLAGS_ALL) $(TOOL_LIBS)

# Core tests link the static library, whose objects keep the core's
# hidden symbols.
$(BUILD)/tests/%: tests/core/%.c $(TEST_COMMON) tests/lib/testlib.h $(STLIB)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) $(BASE_CFLAGS) -Itests/lib $< $(TEST_COMMON) $(STLIB) -o $@ \
		$(LDFLAGS_ALL) -ldrm -ldl -lm

$(BUILD)/tests/%: tests/cpu/%.c tests/cpu/emul_test.h $(TEST_COMMON) \
		tests/lib/testlib.h $(STLIB) lib/cpu/kernels/decode_tiles.h \
		$(wildcard lib/cpu/kernels/amx/*)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) $(BASE_CFLAGS) -Itests/lib $< $(TEST_COMMON) $(STLIB) -o $@ \
		$(LDFLAGS_ALL) -ldrm -ldl -lm

$(BUILD)/tests/%: tests/cuda/%.c $(TEST_COMMON) tests/lib/testlib.h $(SHLIB)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) $(BASE_CFLAGS) -Itests/lib $< $(TEST_COMMON) -o $@ \
		$(LDFLAGS_ALL) $(TOOL_LIBS)

$(BUILD)/tests/read_probe: tests/bench/read_probe.cu
	@mkdir -p $(dir $@)
	$(quiet) NVCC $@
	$(Q)$(NVCC) -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a \
		-Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror $< -o $@

$(BUILD)/tests/test_cuda_encode: tests/cuda/test_cuda_encode.cu \
		lib/cuda/cuda_quant_encode.cuh $(SHLIB)
	@mkdir -p $(dir $@)
	$(quiet) NVCC $@
	$(Q)$(NVCC) -std=c++20 -O2 -Werror all-warnings \
		-Xcompiler -Wall,-Wextra,-Werror -D_GNU_SOURCE \
		-Ilib/include -Ilib/core -Ilib/cuda $< -o $@ \
		-L$(BUILD)/lib -lmxaccel -Xlinker -rpath,'$$ORIGIN/../lib'

$(BUILD)/tests/test_cuda_exact_host: tests/cuda/test_cuda_exact.c \
		tests/cuda/cuda_exact_host.cpp tests/cuda/cuda_exact_host.h \
		lib/cuda/cuda_exact.cuh lib/src/group_geom.h \
		$(TEST_COMMON) tests/lib/testlib.h $(SHLIB)
	@mkdir -p $(dir $@) $(BUILD)/obj/tests
	$(quiet) CXX $@
	$(Q)$(CXX) -std=c++20 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE \
		-Wno-missing-field-initializers \
		-Ilib/include -Ilib/src -Ilib/core -Ilib/cuda -Itests/cuda \
		-c tests/cuda/cuda_exact_host.cpp -o $(BUILD)/obj/tests/cuda_exact_host.o
	$(Q)$(CC) $(BASE_CFLAGS) -DCUDA_EXACT_HOST -Itests/lib \
		tests/cuda/test_cuda_exact.c $(TEST_COMMON) \
		$(BUILD)/obj/tests/cuda_exact_host.o -o $@ \
		$(LDFLAGS_ALL) $(TOOL_LIBS) -lstdc++
# The grouped GEMM's tile mapping checked on the host (no GPU needed).
$(BUILD)/tests/test_cuda_group_tiles: tests/cuda/test_cuda_group_tiles.cu \
		lib/cuda/cuda_sm90.cuh
	@mkdir -p $(dir $@)
	$(quiet) NVCC $@
	$(Q)$(NVCC) -std=c++20 -O2 -Werror all-warnings \
		-Xcompiler -Wall,-Wextra,-Werror -D_GNU_SOURCE \
		-Ilib/include -Ilib/src -Ilib/core -Ilib/cuda \
		'-DMXCORE_GEOM_FN=__host__ __device__' $< -o $@

module:
	@test -d $(KDIR) || { echo "KDIR=$(KDIR) is not a kernel build tree" >&2; exit 1; }
	@out=build/module/$(KREL); \
	mkdir -p $$out && \
	cp --parents -u $(MODULE_SRCS) $$out/ && \
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$$out modules && \
	echo "built $$out/mxaccel.ko"

# End-to-end tests that run inside the test VMs: static, so the guest
# needs no libraries.  Each links tests/e2e/common, whose ioctl() wrapper
# counts the SUBMITs the library makes.
E2E_SRCS := $(wildcard tests/e2e/*.c)
E2E_BINS := $(E2E_SRCS:tests/e2e/%.c=$(BUILD)/e2e/%)
E2E_COMMON := tests/e2e/common/e2e.c
E2E_DEPS := $(E2E_COMMON) tests/e2e/common/e2e.h $(STLIB) \
	    uapi/drm/mxaccel_accel.h
E2E_CC = $(CC) -static $(BASE_CFLAGS) -Itests/e2e/common $< $(E2E_COMMON) \
	 $(STLIB) -o $@ $(LDFLAGS_ALL) -Wl,--wrap=ioctl -ldrm -lm

$(BUILD)/e2e/%: tests/e2e/%.c $(E2E_DEPS)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(E2E_CC)

# The library tests again, static, for the VM: check.sh runs them there
# with MXACCEL_TEST_DEVICE=accel:0.
E2E_LIB_BINS := $(TEST_SRCS:tests/lib/%.c=$(BUILD)/e2e-lib/%)

$(BUILD)/e2e-lib/%: tests/lib/%.c $(TEST_COMMON) tests/lib/testlib.h $(STLIB)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(CC) -static $(BASE_CFLAGS) -Itests/lib $< $(TEST_COMMON) \
		$(STLIB) -o $@ $(LDFLAGS_ALL) -ldrm -lm

# Benchmarks that run in the VM (static): make vm-bench.
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(BENCH_SRCS:tests/bench/%.c=$(BUILD)/bench/%)

$(BUILD)/bench/%: tests/bench/%.c $(E2E_DEPS)
	@mkdir -p $(dir $@)
	$(quiet) CC $@
	$(Q)$(E2E_CC)

e2e: $(E2E_BINS) e2e-lib $(BENCH_BINS)

e2e-lib: $(E2E_LIB_BINS)

# An interactive shell in a VM with the module loaded: make vm-shell VM=6.12
# (VM=6.1, 6.12 or 6.12-debug).
VM ?= 6.12
vm-shell:
	@eval "$$(tests/vm/kernel.sh $(VM))" && \
	$(MAKE) -s module KDIR="$$KDIR" && \
	p=$$(mktemp -d) && cp "build/module/$$KVER/mxaccel.ko" $$p/ && \
	{ tests/vm/shell.sh --kernel $(VM) --payload $$p --insmod mxaccel.ko; \
	  rc=$$?; rm -rf $$p; exit $$rc; }

# The 6.12-debug VM kernel (KASAN, KFENCE, lockdep, kmemleak, fault
# injection): built from Debian's linux-source-6.12 by
# tests/vm/debug-kernel.sh, 8 to 12 minutes on 2 cores the first time,
# then taken from the cache (MXACCEL_CACHE, default /var/cache/mxaccel/vm).
debug-kernel:
	@tests/vm/kernel.sh 6.12-debug >/dev/null

# make check's copy, a prerequisite so that the build happens before
# tests/run-tests.sh starts and not under its per-test limit (the test,
# tests/vm/test_vm_6.12-debug.sh, never builds).  A failed build does not
# stop make check: that test then fails at once, the others still run.
check-debug-kernel:
	@tests/vm/kernel.sh 6.12-debug >/dev/null || \
		echo "make: building the 6.12-debug kernel failed;" \
			"test_vm_6.12-debug.sh will fail" >&2

# The seeded ioctl fuzzer on the debug kernel, one vCPU: FUZZ_ITERS ioctls
# in one process plus a quarter of that from processes killed mid-way
# (the default, 800000, makes the million of issue 15: about 12 minutes
# here); MXACCEL_FUZZ_SEED picks the seed.  Fails on any KASAN, lockdep,
# kmemleak or other report, like every VM run.
FUZZ_ITERS ?= 800000
vm-fuzz: debug-kernel
	@eval "$$(tests/vm/kernel.sh 6.12-debug)" && \
	$(MAKE) -s module KDIR="$$KDIR" && \
	p=$$(mktemp -d) && trap 'rm -rf "$$p"' EXIT && \
	cp "build/module/$$KVER/mxaccel.ko" $$p/ && \
	$(MAKE) -s -C tests/kselftest OUT=$$p/kselftest >&2 && \
	MXACCEL_VM_SMP=1 tests/vm/run.sh --kernel 6.12-debug --payload $$p \
		--insmod mxaccel.ko --timeout 7200 \
		--cmd "MXACCEL_FUZZ_ITERS=$(FUZZ_ITERS) MXACCEL_FUZZ_SEED=$${MXACCEL_FUZZ_SEED:-0x6d786163} /payload/kselftest/fuzz_test"

# The driver's and the library's VM tests on the debug kernel alone, with
# the demo and no make check time limit (the VM's own is 2400 s).
vm-debug: all e2e debug-kernel
	@MXACCEL_BUILD=$(BUILD) tests/vm/check.sh 6.12-debug

# The demo on the kernel device: boot VM (6.12 default) with the module,
# the CLI, the demo and libmxaccel.so, print `mxaccel info`, the GEMM plan
# for auto and for accel:0, and run the demo on accel:0.
vm-demo: all
	@eval "$$(tests/vm/kernel.sh $(VM))" && \
	$(MAKE) -s module KDIR="$$KDIR" && \
	p=$$(mktemp -d) && trap 'rm -rf "$$p"' EXIT && \
	mkdir -p $$p/bin $$p/lib && \
	cp "build/module/$$KVER/mxaccel.ko" tests/vm/vm-demo.sh $$p/ && \
	cp $(CLI) $(DEMO) $$p/bin/ && cp -a $(BUILD)/lib/libmxaccel.so* $$p/lib/ && \
	tests/vm/run.sh --kernel $(VM) --payload $$p \
		--insmod 'mxaccel.ko job_timeout_ms=120000' --devmodel '' \
		--cmd 'sh /payload/vm-demo.sh' --timeout 600

# Submit+wait latency of a tiny job against a null ioctl, in a VM on each
# kernel of VM_BENCH, one vCPU unless MXACCEL_VM_SMP says otherwise (under
# TCG, wakeups across vCPUs on a busy host make medians noisy; see
# Documentation/bench-accel.rst).
VM_BENCH ?= 6.1 6.12
vm-bench: e2e
	@for v in $(VM_BENCH); do \
		eval "$$(tests/vm/kernel.sh $$v)" && \
		$(MAKE) -s module KDIR="$$KDIR" && \
		p=$$(mktemp -d) && \
		cp "build/module/$$KVER/mxaccel.ko" $(BUILD)/bench/accel_latency $$p/ && \
		MXACCEL_VM_SMP=$${MXACCEL_VM_SMP:-1} \
		tests/vm/run.sh --kernel $$v --payload $$p --insmod mxaccel.ko \
			--cmd './accel_latency' --timeout 600; \
		s=$$?; rm -rf "$$p"; [ $$s = 0 ] || exit $$s; \
	done

# The MX PCI device (device model) against the same kernels on the host,
# GEMM throughput and submit-to-completion latency, in one run
# (Documentation/bench-accel.rst).
vm-bench-pci: all e2e
	@tests/bench/pci_bench.sh $(or $(VM),6.12)

demo: deps all
	$(DEMO)

# The cached Python environment of the PyTorch bridge (torch, torchao,
# pytest); prints its directory.  `make python-check` runs its tests.
.PHONY: python-env python-check
python-env:
	@scripts/python-env.sh

python-check: lib
	@MXACCEL_BUILD=$(BUILD) python/tests/test_pytorch.sh

deps:
	@scripts/install-deps.sh

# MXACCEL_NVCC tells tests/abi/test_cuda_plugin.sh whether the plugin was
# built (empty: no nvcc, or NVCC=).
check: deps all tests $(CHECK_DEPS)
	@MXACCEL_BUILD=$(BUILD) MXACCEL_NVCC='$(NVCC)' \
		tests/run-tests.sh $(TEST_BINS) $(SCRIPT_TESTS)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 lib/include/mxaccel.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libmxaccel.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libmxaccel.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/libmxaccel.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libmxaccel.pc
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	if [ -e $(CUDA_PLUGIN) ]; then \
		install -m 755 $(CUDA_PLUGIN) $(DESTDIR)$(LIBDIR)/ && \
		ln -sf libmxaccel-cuda.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(CUDA_SONAME); \
	fi

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/mxaccel.h \
	      $(DESTDIR)$(LIBDIR)/libmxaccel.so* $(DESTDIR)$(LIBDIR)/libmxaccel.a \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/libmxaccel.pc $(DESTDIR)$(BINDIR)/mxaccel \
	      $(DESTDIR)$(LIBDIR)/libmxaccel-cuda.so*

clean:
	rm -rf build driver/mxaccel_config.h

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(BUILD)/tools/demo.d \
	$(DEVMODEL_OBJS:.o=.d) \
	$(CUDA_OBJS:.o=.d)
