#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build the VM test initramfs (gzip'd newc cpio).
#
# Usage: tests/vm/initramfs.sh --moddir DIR --out FILE [options]
#
#   --moddir DIR     lib/modules/<kver> of the guest kernel, with modules.dep
#                    (the MODDIR printed by kernel.sh)
#   --out FILE       where to write the initramfs
#   --modules 'A B'  kernel modules to load, by name ('-' and '_' are the
#                    same); their dependencies are added from modules.dep
#                    and everything is loaded in dependency order.
#                    Default: 'drm drm_shmem_helper gpu-sched'
#   --payload DIR    copied to /payload in the guest, plus the shared
#                    libraries its ELF files need (found with ldd)
#   --insmod 'P [ARGS]'  a module inside the payload (path relative to
#                    DIR) loaded after --modules, with optional parameters;
#                    may be repeated
#   --cmd 'COMMAND'  run by the guest's sh in /payload; its status is the
#                    run's status
#   --mode run|shell run: power off after COMMAND (default); shell: then
#                    give an interactive shell on the console
#   --env NAME=VALUE exported to the payload (e.g. MXACCEL_TIME_SCALE=4);
#                    may be repeated
#
# Contents: static busybox with its applet links, /init (init.sh), the
# modules (decompressed: busybox insmod cannot read .ko.xz, which 6.12
# ships) and /etc/mxaccel-vm/{modules,cmd,env,mode}.  The payload travels
# inside the image rather than over 9p, so no virtio/9p modules are needed
# and results come back on the serial console.

set -eu
. "$(dirname "$0")/lib.sh"

MODDIR=
OUT=
MODULES='drm drm_shmem_helper gpu-sched'
PAYLOAD=
CMD=
MODE=run
INSMOD=()
ENV=()

usage() {
	sed -n '4,28p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--moddir) MODDIR=$2 ;;
		--out) OUT=$2 ;;
		--modules) MODULES=$2 ;;
		--payload) PAYLOAD=$2 ;;
		--insmod) INSMOD+=("$2") ;;
		--cmd) CMD=$2 ;;
		--mode) MODE=$2 ;;
		--env) ENV+=("$2") ;;
		*) usage ;;
		esac
		[ $# -ge 2 ] || usage
		shift 2
	done
	if [ -z "$MODDIR" ] || [ -z "$OUT" ]; then usage; fi
	[ -f "$MODDIR/modules.dep" ] || die "$MODDIR/modules.dep missing"
	[ -z "$PAYLOAD" ] || [ -d "$PAYLOAD" ] || die "payload $PAYLOAD is not a directory"
	case $MODE in run | shell) ;; *) usage ;; esac
	local e
	for e in ${ENV[@]+"${ENV[@]}"}; do
		[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env $e: not NAME=VALUE"
	done
}

# Print the modules.dep paths of the wanted modules and of everything they
# depend on, dependencies first.  modules.dep lists each module's full
# dependency closure, so a depth-first walk yields a valid load order.
resolve_load_order() {
	awk -v wanted="$1" '
	function norm(p,    n) {
		n = p
		sub(/.*\//, "", n)
		sub(/\.ko(\.(xz|zst|gz))?$/, "", n)
		gsub(/-/, "_", n)
		return n
	}
	function visit(p,    n, i, d) {
		if (p in done)
			return
		done[p] = 1
		n = split(deps[p], d, " ")
		for (i = n; i >= 1; i--)
			visit(d[i])
		print p
	}
	FILENAME ~ /modules\.builtin$/ { builtin[norm($1)] = 1; next }
	{
		p = $1
		sub(/:$/, "", p)
		deps[p] = ""
		for (i = 2; i <= NF; i++)
			deps[p] = deps[p] " " $i
		byname[norm(p)] = p
	}
	END {
		n = split(wanted, w, " ")
		for (i = 1; i <= n; i++) {
			m = w[i]
			gsub(/-/, "_", m)
			if (m in byname)
				visit(byname[m])
			else if (m in builtin)
				printf "%s is built in\n", w[i] > "/dev/stderr"
			else {
				printf "module %s not found\n", w[i] > "/dev/stderr"
				exit 1
			}
		}
	}' "$MODDIR/modules.builtin" "$MODDIR/modules.dep"
}

decompress_module() {
	local src=$1 dst=$2
	case $src in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
}

# Copy the modules under /lib/modules/<kver>/ with their tree paths and
# list them, in order, for /init.  A filtered modules.dep goes along so
# that busybox modprobe/modinfo also work in the shell.
install_modules() {
	local root=$1 kver rel ko order names
	kver=$(basename "$MODDIR")
	order=$(resolve_load_order "$MODULES") || die "cannot resolve modules '$MODULES'"
	for rel in $order; do
		ko=${rel%.xz}
		ko=${ko%.zst}
		ko=${ko%.gz}
		mkdir -p "$root/lib/modules/$kver/$(dirname "$ko")"
		decompress_module "$MODDIR/$rel" "$root/lib/modules/$kver/$ko"
		echo "/lib/modules/$kver/$ko" >>"$root/etc/mxaccel-vm/modules"
		grep "^$rel:" "$MODDIR/modules.dep" |
			sed -E 's/\.ko\.(xz|zst|gz)/.ko/g' >>"$root/lib/modules/$kver/modules.dep"
	done
	names=$(echo "$order" | sed 's|.*/||; s|\.ko.*||' | paste -sd' ')
	log "modules: ${names:-(none)}"
}

# The applet list comes from the binary itself, so it matches whatever
# busybox build is installed.
install_busybox() {
	local root=$1 bb applet
	bb=$(command -v busybox)
	mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin"
	cp "$bb" "$root/bin/busybox"
	"$bb" --list-full | while IFS= read -r applet; do
		case $applet in linuxrc | */busybox) continue ;; esac
		[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
	done
	# A dynamically linked busybox (package busybox) works too.
	install_libs_of "$root" "$bb"
}

is_elf() {
	[ "$(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]
}

# ldd prints "libx.so => /path (0x...)" and "/lib64/ld-linux... (0x...)".
# Libraries inside the payload itself are reached via LD_LIBRARY_PATH.
libs_needed_by() {
	ldd "$1" 2>/dev/null | awk '
		$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }
		$3 == "not" { print "MISSING " $1 }'
}

install_libs_of() {
	local root=$1 lib
	shift
	for lib in $(for f in "$@"; do libs_needed_by "$f"; done | sort -u); do
		# Skip the words of "MISSING name" lines and the payload's own.
		case $lib in /*) ;; *) continue ;; esac
		if [ -n "$PAYLOAD_ABS" ]; then
			case $lib in "$PAYLOAD_ABS"/*) continue ;; esac
		fi
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# glibc dlopen()s libgcc_s for pthread_cancel/pthread_exit unwinding; ldd
# cannot see that, so it goes along with any dynamically linked payload.
install_libgcc_s() {
	local root=$1 f
	f=$(gcc -print-file-name=libgcc_s.so.1 2>/dev/null || true)
	[ -f "$f" ] || f=/lib/x86_64-linux-gnu/libgcc_s.so.1
	[ -f "$f" ] || return 0
	mkdir -p "$root/lib/x86_64-linux-gnu"
	cp -L "$f" "$root/lib/x86_64-linux-gnu/libgcc_s.so.1"
}

# Directories of the payload that hold shared libraries, relative to it.
payload_lib_dirs() {
	(cd "$PAYLOAD_ABS" && find . -name '*.so*' -type f -printf '%h\n' | sort -u)
}

# "dir1 dir2" relative to the payload -> PREFIX/dir1:PREFIX/dir2
lib_path_under() {
	local prefix=$1 d
	shift
	for d in "$@"; do
		printf '%s\n' "$prefix/${d#./}"
	done | sed 's|/\.$||' | paste -sd:
}

install_payload() {
	local root=$1 elfs=() libdirs=() f needed
	mkdir -p "$root/payload"
	[ -n "$PAYLOAD" ] || return 0
	cp -a "$PAYLOAD_ABS/." "$root/payload/"
	while IFS= read -r -d '' f; do
		is_elf "$f" && elfs+=("$f")
	done < <(find "$PAYLOAD_ABS" -type f -print0)
	[ ${#elfs[@]} -gt 0 ] || return 0
	mapfile -t libdirs < <(payload_lib_dirs)
	# So that ldd resolves the payload's own libraries (and skips them).
	if [ ${#libdirs[@]} -gt 0 ]; then
		LD_LIBRARY_PATH=$(lib_path_under "$PAYLOAD_ABS" "${libdirs[@]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
		export LD_LIBRARY_PATH
		echo "export LD_LIBRARY_PATH=$(lib_path_under /payload "${libdirs[@]}")" >>"$root/etc/mxaccel-vm/env"
	fi
	# Kernel modules are ELF too; ldd prints nothing for them.
	needed=$(for f in "${elfs[@]}"; do libs_needed_by "$f"; done | sort -u)
	[ -n "$needed" ] || return 0
	if grep -q '^MISSING' <<<"$needed"; then
		log "warning: libraries not found on the host: $(sed -n 's/^MISSING //p' <<<"$needed" | paste -sd' ')"
	fi
	install_libs_of "$root" "${elfs[@]}"
	install_libgcc_s "$root"
}

# Payload modules load after the kernel's, in the order given.
install_payload_modules() {
	local root=$1 spec
	for spec in ${INSMOD[@]+"${INSMOD[@]}"}; do
		[ -f "$root/payload/${spec%% *}" ] || die "--insmod ${spec%% *}: not in the payload"
		echo "/payload/$spec" >>"$root/etc/mxaccel-vm/modules"
	done
}

install_skeleton() {
	local root=$1 e v
	mkdir -p "$root"/{dev,proc,sys,tmp,root,etc/mxaccel-vm}
	cp "$VM_DIR/init.sh" "$root/init"
	chmod 755 "$root/init"
	echo 'root:x:0:0:root:/tmp:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	printf '%s\n' "$CMD" >"$root/etc/mxaccel-vm/cmd"
	[ -n "$CMD" ] || : >"$root/etc/mxaccel-vm/cmd"
	echo "$MODE" >"$root/etc/mxaccel-vm/mode"
	: >"$root/etc/mxaccel-vm/modules"
	: >"$root/etc/mxaccel-vm/env"
	# Single-quoted for the guest's sh, with any ' in the value escaped.
	for e in ${ENV[@]+"${ENV[@]}"}; do
		v=${e#*=}
		printf "export %s='%s'\n" "${e%%=*}" "${v//\'/\'\\\'\'}" >>"$root/etc/mxaccel-vm/env"
	done
	# The kernel opens /dev/console before running /init; without the node
	# /init starts with no stdio until it mounts devtmpfs.
	if [ "$(id -u)" = 0 ]; then
		mknod -m 600 "$root/dev/console" c 5 1
		mknod -m 666 "$root/dev/null" c 1 3
	fi
}

# Sorted for a reproducible archive; gzip -1 because the image is rebuilt
# for every run and only read once.
write_cpio() {
	local root=$1 out=$2
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 >"$out.tmp"
	mv "$out.tmp" "$out"
}

main() {
	local t0 root
	t0=$(now)
	parse_args "$@"
	PAYLOAD_ABS=
	[ -z "$PAYLOAD" ] || PAYLOAD_ABS=$(cd "$PAYLOAD" && pwd)
	STAGING=$(mktemp -d "${TMPDIR:-/tmp}/mxaccel-initramfs.XXXXXX")
	trap 'rm -rf "$STAGING"' EXIT
	root=$STAGING
	install_skeleton "$root"
	install_busybox "$root"
	install_modules "$root"
	install_payload "$root"
	install_payload_modules "$root"
	write_cpio "$root" "$OUT"
	log "$OUT: $(du -h "$OUT" | cut -f1) in $(elapsed_since "$t0") s"
}

main "$@"
