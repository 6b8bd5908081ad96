#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The module built against Debian sid's newest cloud kernel headers (7.2
# when written), W=1, inside a sid root: those headers are configured for
# gcc 16, which Debian 12 does not have.  Build only: no VM boots it.
#
#   sid-build.sh root    make the root (mmdebstrap, as root; about 70
#                        minutes on 2 busy cores, 460 MB) in
#                        build/cache/sid-root
#   sid-build.sh build   build the module there; exit 4 (skipped) when
#                        the root is missing
#
# Sid's Release file may be past its Valid-Until (a snapshot of the
# registry): apt is told not to mind.  The sources are copied into the
# root (/src): no build product of the tree is used or touched.  The root
# needs /proc while it builds (objtool reads its stack limit there).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SID=$ROOT/build/cache/sid-root
KSFT_SKIP=4

log() { echo "sid-build: $*" >&2; }

make_root() {
	local tmp=$SID.tmp
	((EUID == 0)) || { log "mmdebstrap needs root"; exit 1; }
	command -v mmdebstrap >/dev/null ||
		apt-get -o DPkg::Lock::Timeout=600 install -y -qq mmdebstrap >&2
	rm -rf "$tmp"
	nice -n 10 mmdebstrap --variant=apt \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--include=make,gcc,libc6-dev,linux-headers-cloud-amd64,dwarves,kmod,libelf-dev \
		sid "$tmp" http://deb.debian.org/debian
	rm -rf "$SID"
	mv "$tmp" "$SID"
}

build() {
	local kdir rel rc
	kdir=$(find "$SID/usr/src" -maxdepth 1 -name 'linux-headers-*-cloud-amd64' 2>/dev/null |
		sort -V | tail -n1)
	if [[ -z $kdir ]]; then
		log "no sid root with cloud headers in $SID (scripts/sid-build.sh root): skipped"
		exit "$KSFT_SKIP"
	fi
	rel=${kdir##*/linux-headers-}
	log "building against $rel in $SID"
	rm -rf "$SID/src"
	mkdir -p "$SID/src"
	tar -C "$ROOT" --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' -cf - \
		Kbuild dkms.conf module uapi | tar -C "$SID/src" -xf -
	mountpoint -q "$SID/proc" || mount -t proc proc "$SID/proc"
	set +e
	nice -n 10 chroot "$SID" make -C "/usr/src/linux-headers-$rel" M=/src \
		W=1 modules 2>&1 | tee "$ROOT/build/sid-build.log"
	rc=${PIPESTATUS[0]}
	set -e
	umount "$SID/proc"
	((rc == 0)) || { log "build failed (build/sid-build.log)"; exit 1; }
	# W=1: any warning in our files fails it.
	if grep -E '^(/src/)?(module|uapi)/[^ ]*:[0-9]+:[0-9]+: (warning|error):' "$ROOT/build/sid-build.log"; then
		log "warnings (build/sid-build.log)"
		exit 1
	fi
	log "$rel: W=1 clean, $(modinfo -F vermagic "$SID/src/cuckoo_nf.ko")"
}

case ${1:-} in
root) make_root ;;
build) build ;;
*) echo "usage: sid-build.sh root | build" >&2; exit 2 ;;
esac
