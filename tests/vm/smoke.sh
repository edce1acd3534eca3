#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Smoke test of the VM runner itself, independent of mxaccel: builds a
# trivial "hello" module and a dynamically linked TAP program in a
# temporary directory (not in the repo) against each kernel's headers,
# boots each kernel with them and checks that
#   1. the drm modules and hello load, the program runs (shared libraries
#      and threads work), run.sh exits 0 with a clean dmesg;
#   2. loading hello with warn=1 (a WARN_ON in its init) makes run.sh fail
#      with status 1 and print the WARNING line: the dmesg scan works;
#   3. on 6.12-debug, where check 1 also shows that a clean run passes the
#      kmemleak scan and ends with lockdep on: oob=1 (a 1-byte write past
#      a kmalloc(16)) fails the run with the KASAN report and lockdep's
#      switching off, and leak=1 (8 unreferenced kmalloc(128)s) fails it
#      with kmemleak's "new suspected memory leaks".
#
# Usage: tests/vm/smoke.sh [6.1] [6.12] [6.12-debug]  (default: 6.1 6.12)
# Prints TAP; exits non-zero if any check failed.

set -eu
. "$(dirname "$0")/lib.sh"


write_sources() {
	local dir=$1
	cat >"$dir/hello.c" <<-'EOF'
		// SPDX-License-Identifier: MIT
		#include <linux/bug.h>
		#include <linux/module.h>
		#include <linux/slab.h>

		static bool warn, oob, leak;
		module_param(warn, bool, 0444);
		module_param(oob, bool, 0444);
		module_param(leak, bool, 0444);

		/* Outside __init, so that the reports name them. */
		static noinline void hello_oob(void)
		{
			volatile char *p = kmalloc(16, GFP_KERNEL);

			if (p)
				p[16] = 1;
			kfree((void *)p);
		}

		/* Several: a stale copy of one pointer may survive somewhere. */
		static noinline void hello_leak(void)
		{
			int i;

			for (i = 0; i < 8; i++)
				pr_info("hello: leaking %p\n", kmalloc(128, GFP_KERNEL));
		}

		static int __init hello_init(void)
		{
			WARN_ON(warn);
			if (oob)
				hello_oob();
			if (leak)
				hello_leak();
			pr_info("hello: loaded\n");
			return 0;
		}

		static void __exit hello_exit(void)
		{
		}

		module_init(hello_init);
		module_exit(hello_exit);
		MODULE_DESCRIPTION("VM runner smoke test");
		MODULE_LICENSE("Dual MIT/GPL");
	EOF
	echo 'obj-m := hello.o' >"$dir/Kbuild"
	cat >"$dir/tap-hello.c" <<-'EOF'
		// SPDX-License-Identifier: MIT
		#include <pthread.h>
		#include <stdio.h>
		#include <string.h>

		static int loaded(const char *name)
		{
			char line[512];
			size_t n = strlen(name);
			int found = 0;
			FILE *f = fopen("/proc/modules", "r");

			while (f && fgets(line, sizeof(line), f))
				found |= !strncmp(line, name, n) && line[n] == ' ';
			if (f)
				fclose(f);
			return found;
		}

		static int token;

		static void *worker(void *arg)
		{
			return arg;
		}

		int main(void)
		{
			static const char *const mods[] = {
				"drm", "drm_shmem_helper", "gpu_sched", "hello",
			};
			pthread_t t;
			void *r = NULL;
			int i, ok, failed = 0;

			printf("TAP version 13\n1..%zu\n", sizeof(mods) / sizeof(mods[0]) + 1);
			for (i = 0; i < (int)(sizeof(mods) / sizeof(mods[0])); i++) {
				ok = loaded(mods[i]);
				failed += !ok;
				printf("%sok %d - %s loaded\n", ok ? "" : "not ", i + 1, mods[i]);
			}
			ok = !pthread_create(&t, NULL, worker, &token) && !pthread_join(t, &r) && r == &token;
			failed += !ok;
			printf("%sok %d - threads run\n", ok ? "" : "not ", i + 1);
			return failed != 0;
		}
	EOF
}

# Sets KDIR etc.; builds hello.ko and tap-hello into $dir/payload.
build_payload() {
	local series=$1 dir=$2 cc t0
	fetch_kernel "$series"
	t0=$(now)
	mkdir -p "$dir/payload"
	make -s -C "$KDIR" M="$dir" modules >&2
	cp "$dir/hello.ko" "$dir/payload/"
	# The headers only need gcc-12 itself; a user-space program also needs
	# libc6-dev, which gcc merely recommends.
	ensure_pkgs gcc libc6-dev
	cc=$(command -v gcc)
	"$cc" -O2 -Wall -pthread -o "$dir/payload/tap-hello" "$dir/tap-hello.c"
	log "$series: module and program built in $(elapsed_since "$t0") s"
}

check_clean_run() {
	local series=$1 dir=$2 status=0 out
	out=$("$VM_DIR/run.sh" --kernel "$series" --payload "$dir/payload" \
		--insmod hello.ko --cmd ./tap-hello --timeout "$TIMEOUT") || status=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	tap "$status" "$series: payload passes, exit status 0 (got $status)"
	grep -q '^ok 5 - threads run$' <<<"$out" && status=0 || status=1
	tap "$status" "$series: payload TAP output comes back"
}

check_warn_detected() {
	local series=$1 dir=$2 status=0 err
	err=$("$VM_DIR/run.sh" --kernel "$series" --payload "$dir/payload" \
		--insmod 'hello.ko warn=1' --cmd true --timeout "$TIMEOUT" 2>&1 >/dev/null) || status=$?
	printf '%s\n' "$err" | grep -E 'WARNING:|problems' | sed 's/^/# /'
	tap "$([ "$status" = 1 ]; echo $?)" \
		"$series: WARN_ON in the guest fails the run with status 1 (got $status)"
	grep -q 'WARNING:.*hello' <<<"$err" && status=0 || status=1
	tap "$status" "$series: the WARNING line is reported"
}

# A planted out-of-bounds write: KASAN's report fails the run, and init.sh
# sees that lockdep switched itself off after it.
check_kasan_detected() {
	local series=$1 dir=$2 status=0 err
	err=$("$VM_DIR/run.sh" --kernel "$series" --payload "$dir/payload" \
		--insmod 'hello.ko oob=1' --cmd true --timeout "$TIMEOUT" 2>&1 >/dev/null) || status=$?
	printf '%s\n' "$err" | grep -E 'KASAN|debug_locks' | sed 's/^/# /'
	tap "$([ "$status" = 1 ]; echo $?)" \
		"$series: an out-of-bounds write fails the run with status 1 (got $status)"
	grep -q 'BUG: KASAN: slab-out-of-bounds in hello_oob' <<<"$err" && status=0 || status=1
	tap "$status" "$series: the KASAN report is printed"
	grep -q 'lockdep: debug_locks is 0' <<<"$err" && status=0 || status=1
	tap "$status" "$series: lockdep switched off after it is reported"
}

# Planted leaks: init.sh's kmemleak scan finds them.
check_kmemleak_detected() {
	local series=$1 dir=$2 status=0 err
	err=$("$VM_DIR/run.sh" --kernel "$series" --payload "$dir/payload" \
		--insmod 'hello.ko leak=1' --cmd true --timeout "$TIMEOUT" 2>&1 >/dev/null) || status=$?
	printf '%s\n' "$err" | grep -E 'kmemleak: [0-9]+ new|unreferenced object' | head -n 3 | sed 's/^/# /'
	tap "$([ "$status" = 1 ]; echo $?)" \
		"$series: leaked allocations fail the run with status 1 (got $status)"
	grep -Eq 'kmemleak: [0-9]+ new suspected memory leaks' <<<"$err" && status=0 || status=1
	tap "$status" "$series: kmemleak's report is printed"
}

main() {
	local series
	[ $# -gt 0 ] || set -- 6.1 6.12
	SMOKE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mxaccel-vm-smoke.XXXXXX")
	trap 'rm -rf "$SMOKE_DIR"' EXIT
	for series in "$@"; do
		is_series "$series" || die "usage: ${0##*/} [6.1] [6.12] [6.12-debug]"
		series_settings "$series"
		TIMEOUT=$((120 * VM_TIME_SCALE))
		rm -rf "${SMOKE_DIR:?}"/*
		write_sources "$SMOKE_DIR"
		build_payload "$series" "$SMOKE_DIR"
		check_clean_run "$series" "$SMOKE_DIR"
		check_warn_detected "$series" "$SMOKE_DIR"
		case $series in
		*-debug)
			check_kasan_detected "$series" "$SMOKE_DIR"
			check_kmemleak_detected "$series" "$SMOKE_DIR"
			;;
		esac
	done
	echo "1..$N"
	[ "$FAILED" = 0 ]
}

main "$@"
