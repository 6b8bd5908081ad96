#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, linting and the VM test bench need, on Debian 12.
# Only missing packages are installed (after a single `apt-get update`), so a
# second run only asks dpkg and returns in well under a second.  Then extract
# the few files we use from Debian's kernel source tarball (kselftest headers,
# checkpatch) into build/cache/, once.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=$ROOT/build/cache
SRC_TARBALL=/usr/src/linux-source-6.1.tar.xz
SRC_DIR=$CACHE/linux-source-6.1

# The image and headers meta-packages must come from the same upload so the
# module we build loads in the kernel we boot: they are handled as a pair.
KERNEL_PKGS=(linux-image-cloud-amd64 linux-headers-cloud-amd64)
PKGS=(
	make gcc libc6-dev			# kbuild and the userspace tools
	kmod					# depmod/modprobe, host and VM
	qemu-system-x86 busybox-static cpio	# the VM and its initramfs
	linux-source-6.1 xz-utils		# kselftest headers, checkpatch
	sparse perl				# make lint
	liburcu-dev clang libclang-rt-14-dev	# userspace build, fuzzing
	python3
	iproute2 iputils-ping nftables ipset iptables jq bash dash coreutils
)

log() { echo "deps: $*" >&2; }

# Print the packages (from the arguments) that are not fully installed; one
# dpkg-query call for all of them keeps a no-op run fast.
missing_pkgs() {
	local -A ok=()
	local name st
	while read -r name st; do
		[[ $st == ii* ]] && ok[$name]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$@" 2>/dev/null || true)
	for name in "$@"; do
		[[ -n ${ok[$name]:-} ]] || echo "$name"
	done
}

pkg_version() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true
}

install_missing() {
	local -a wanted
	mapfile -t wanted < <(missing_pkgs "${PKGS[@]}")
	if [[ -n $(missing_pkgs "${KERNEL_PKGS[@]}") ||
	      $(pkg_version "${KERNEL_PKGS[0]}") != $(pkg_version "${KERNEL_PKGS[1]}") ]]; then
		wanted+=("${KERNEL_PKGS[@]}")
	fi
	((${#wanted[@]})) || return 0

	if ((EUID != 0)); then
		log "missing packages: ${wanted[*]}"
		log "run as root: apt-get update && apt-get install ${wanted[*]}"
		exit 1
	fi
	log "installing: ${wanted[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${wanted[@]}" >&2
}

# Extract only what we use from the 130 MB source tarball; the stamp records
# which tarball it came from so a linux-source upgrade re-extracts.
extract_source() {
	local stamp want tmp
	want=$(stat -c '%s %Y' "$SRC_TARBALL")
	stamp=$SRC_DIR/.cnf-stamp
	[[ -f $stamp && $(<"$stamp") == "$want" ]] && return 0

	log "extracting kselftest headers and checkpatch from $SRC_TARBALL"
	mkdir -p "$CACHE"
	tmp=$(mktemp -d -p "$CACHE")
	tar -C "$tmp" -xJf "$SRC_TARBALL" --wildcards \
		'linux-source-6.1/tools/testing/selftests/kselftest*' \
		'linux-source-6.1/scripts/checkpatch.pl' \
		'linux-source-6.1/scripts/spelling.txt' \
		'linux-source-6.1/scripts/const_structs.checkpatch'
	echo "$want" >"$tmp/linux-source-6.1/.cnf-stamp"
	rm -rf "$SRC_DIR"
	mv "$tmp/linux-source-6.1" "$SRC_DIR"
	rmdir "$tmp"
}

case ${1:-} in
# --debug: also what building the debug kernel needs (make check-debug).
--debug) PKGS+=(bc bison flex libelf-dev libssl-dev) ;;
# --kernels: Debian 12's 6.12 kernels, cloud and PREEMPT_RT (make
# check-kernels).  Their headers depend on the image of the same release,
# so these two pull in both, as pairs that match.  Not by default: a
# developer's machine would boot 6.12 next, and it takes minutes (5 min 23 s
# here for both, two initramfs builds included).
--kernels) PKGS+=(linux-headers-6.12-cloud-amd64 linux-headers-6.12-rt-amd64) ;;
esac
install_missing
extract_source
# Fail here, not halfway through a boot, if there is no usable VM kernel.
"$ROOT/selftests/vm/kver" >/dev/null
