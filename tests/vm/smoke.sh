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
#      with status 1 and print the WARNING line: the dmesg scan works.
#
# Usage: tests/vm/smoke.sh [6.1] [6.12]     (default: both)
# Prints TAP; exits non-zero if any check failed.

set -eu
. "$(dirname "$0")/lib.sh"

N=0
FAILED=0

tap() { # STATUS(0=ok) DESCRIPTION
	N=$((N + 1))
	if [ "$1" = 0 ]; then
		echo "ok $N - $2"
	else
		echo "not ok $N - $2"
		FAILED=$((FAILED + 1))
	fi
}

write_sources() {
	local dir=$1
	cat >"$dir/hello.c" <<-'EOF'
		// SPDX-License-Identifier: MIT
		#include <linux/bug.h>
		#include <linux/module.h>

		static bool warn;
		module_param(warn, bool, 0444);

		static int __init hello_init(void)
		{
			WARN_ON(warn);
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
		--insmod hello.ko --cmd ./tap-hello --timeout 120) || status=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	tap "$status" "$series: payload passes, exit status 0 (got $status)"
	grep -q '^ok 5 - threads run$' <<<"$out" && status=0 || status=1
	tap "$status" "$series: payload TAP output comes back"
}

check_warn_detected() {
	local series=$1 dir=$2 status=0 err
	err=$("$VM_DIR/run.sh" --kernel "$series" --payload "$dir/payload" \
		--insmod 'hello.ko warn=1' --cmd true --timeout 120 2>&1 >/dev/null) || status=$?
	printf '%s\n' "$err" | grep -E 'WARNING:|problems' | sed 's/^/# /'
	tap "$([ "$status" = 1 ]; echo $?)" \
		"$series: WARN_ON in the guest fails the run with status 1 (got $status)"
	grep -q 'WARNING:.*hello' <<<"$err" && status=0 || status=1
	tap "$status" "$series: the WARNING line is reported"
}

main() {
	local series
	[ $# -gt 0 ] || set -- 6.1 6.12
	SMOKE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/mxaccel-vm-smoke.XXXXXX")
	trap 'rm -rf "$SMOKE_DIR"' EXIT
	for series in "$@"; do
		case $series in 6.1 | 6.12) ;; *) die "usage: ${0##*/} [6.1] [6.12]" ;; esac
		rm -rf "${SMOKE_DIR:?}"/*
		write_sources "$SMOKE_DIR"
		build_payload "$series" "$SMOKE_DIR"
		check_clean_run "$series" "$SMOKE_DIR"
		check_warn_detected "$series" "$SMOKE_DIR"
	done
	echo "1..$N"
	[ "$FAILED" = 0 ]
}

main "$@"
