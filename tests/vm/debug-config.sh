#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Write the .config of the 6.12-debug VM test kernel (KASAN, KFENCE,
# lockdep, kmemleak, debug objects, fault injection) in a kernel tree.
#
# Usage: tests/vm/debug-config.sh KERNEL_TREE
#
# Run by debug-kernel.sh; its checksum is part of that script's cache key,
# so any change here rebuilds the kernel.  debug-want.txt lists what must
# be set afterwards (checked by debug-kernel.sh, not here, so that a
# hand-run of this script can be inspected with menuconfig first).
#
# Starts from tinyconfig, not defconfig: every object is compiled with
# KASAN instrumentation, and tinyconfig leaves ~1,300 objects against
# defconfig's thousands (~11 min instead of an hour on 2 cores).

set -eu

tree=${1:?usage: debug-config.sh KERNEL_TREE}
cd "$tree"

# ARCH=x86_64 once makes tinyconfig 64-bit; later plain `make` keeps it.
make -s ARCH=x86_64 tinyconfig

cfg() {
	scripts/config --file .config "$@"
}

# Booting under qemu: SMP, printk, serial console, initramfs, devtmpfs,
# and what busybox and the test programs (threads, epoll, timers) use.
cfg -e SMP -e PRINTK -e PRINTK_TIME -e BUG -e EARLY_PRINTK \
	-e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE \
	-e BINFMT_ELF -e BINFMT_SCRIPT \
	-e BLK_DEV_INITRD -e RD_GZIP \
	-e DEVTMPFS -e DEVTMPFS_MOUNT -e PROC_FS -e SYSFS -e SHMEM -e TMPFS \
	-e MULTIUSER -e FUTEX -e EPOLL -e EVENTFD -e SIGNALFD -e TIMERFD \
	-e POSIX_TIMERS -e FILE_LOCKING -e UNIX98_PTYS

# ACPI: without it SeaBIOS' MP table shows the guest one CPU, and there is
# no HPET/PM timer (unstable TSC) and no poweroff.  Its _PRT stall under
# TCG is avoided with acpi=noirq on the command line (lib.sh).
cfg -e ACPI --set-val NR_CPUS 8

# A gzip'd image at -O2 and the ORC unwinder, for readable stack traces.
cfg -d KERNEL_XZ -e KERNEL_GZIP \
	-d CC_OPTIMIZE_FOR_SIZE -e CC_OPTIMIZE_FOR_PERFORMANCE \
	-d UNWINDER_GUESS -e UNWINDER_ORC -d SLUB_TINY

# Loadable, unsigned, uncompressed modules (busybox insmod reads plain
# .ko), force-unloadable for debugging by hand.
cfg -e MODULES -e MODULE_UNLOAD -e MODULE_FORCE_UNLOAD -d MODULE_SIG \
	-d MODULE_COMPRESS

# virtio-pci and 9p: not used by run.sh (the payload is in the
# initramfs), but make vm-shell users share host directories with them.
cfg -e PCI -e PCI_MSI -e VIRTIO_MENU -e VIRTIO -e VIRTIO_PCI \
	-e NET -e UNIX -e NETWORK_FILESYSTEMS -e NET_9P -e NET_9P_VIRTIO -e 9P_FS

# What mxaccel.ko links against.  The GEM shmem helper and the GPU
# scheduler have no prompt: vgem selects the first, etnaviv (needs only
# DRM && MMU, no COMPILE_TEST; loads harmlessly without a device tree) the
# second.  vgem also gives the dma-buf import tests an exporter.
cfg -m DRM -e DRM_ACCEL -d DRM_FBDEV_EMULATION \
	-m DRM_VGEM -m DRM_ETNAVIV -d DRM_ETNAVIV_THERMAL \
	-e DMA_SHARED_BUFFER -e SYNC_FILE -e SW_SYNC

# The detectors.  KASAN inline (faster at run time than outline, which
# matters more under TCG than the bigger image); lockdep with RCU checks;
# kmemleak (reports go through /sys/kernel/debug/kmemleak, see init.sh);
# KFENCE on top (it catches what KASAN's redzones miss on sampled
# objects, and lib.sh's kfence.sample_interval=1 samples a lot); debug
# objects on by default; fault injection knobs for error-path tests.
# KCOV is left out: nothing here collects coverage, and it instruments
# every basic block, which costs build time and, under TCG, run time.
cfg -e DEBUG_KERNEL -e DEBUG_FS -e DEBUG_FS_ALLOW_ALL \
	-e KALLSYMS -e KALLSYMS_ALL -e STACKTRACE -e DEBUG_BUGVERBOSE \
	-e KASAN -e KASAN_GENERIC -d KASAN_OUTLINE -e KASAN_INLINE -e KASAN_VMALLOC \
	-e KFENCE \
	-e PROVE_LOCKING -e DEBUG_ATOMIC_SLEEP \
	-e DEBUG_KMEMLEAK -d DEBUG_KMEMLEAK_DEFAULT_OFF \
	-e DEBUG_OBJECTS -e DEBUG_OBJECTS_WORK -e DEBUG_OBJECTS_TIMERS \
	-e DEBUG_OBJECTS_FREE -e DEBUG_OBJECTS_RCU_HEAD \
	--set-val DEBUG_OBJECTS_ENABLE_DEFAULT 1 \
	-e FAULT_INJECTION -e FAILSLAB -e FAIL_PAGE_ALLOC \
	-e FAULT_INJECTION_DEBUG_FS -e FAULT_INJECTION_STACKTRACE_FILTER \
	-e DEBUG_LIST -e DEBUG_SG -e DMA_API_DEBUG

# Hang and stack checks tinyconfig turns off; high-resolution timers like
# a real system (the driver's job timeouts are hrtimers or delayed work).
cfg -e VMAP_STACK -e HIGH_RES_TIMERS -e DETECT_HUNG_TASK \
	-e SOFTLOCKUP_DETECTOR -e WQ_WATCHDOG \
	-e DEBUG_PREEMPT -e DEBUG_IRQFLAGS -e BUG_ON_DATA_CORRUPTION \
	-e SCHED_STACK_END_CHECK -e SYMBOLIC_ERRNAME

# olddefconfig gives every symbol an edit above exposes its default, not
# n: switch off the big ones a serial-console VM does not need (INET,
# VT, input, ACPI's battery/fan/thermal drivers...).
cfg -d INET -d WIRELESS -d VT -d INPUT -d HID_SUPPORT -d VGA_ARB \
	-d PCIEASPM -d CPU_FREQ \
	-d SERIAL_8250_PCI -d SERIAL_8250_EXAR -d SERIAL_8250_LPSS \
	-d SERIAL_8250_MID -d SERIAL_8250_PERICOM \
	-d ACPI_AC -d ACPI_BATTERY -d ACPI_FAN -d ACPI_THERMAL \
	-d ACPI_TABLE_UPGRADE -d POWER_SUPPLY -d X86_PKG_TEMP_THERMAL

# Full preemption: more interleavings for lockdep and KASAN to see.
cfg -d PREEMPT_NONE -e PREEMPT

# A release string of its own (6.12.117-mxaccel-debug), so that its
# modules, build/module/<release>/ and logs never mix with Debian's.
cfg --set-str LOCALVERSION -mxaccel-debug -d LOCALVERSION_AUTO

make -s olddefconfig
