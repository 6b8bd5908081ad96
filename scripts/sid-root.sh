#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The newest kernel Debian ships: its unstable suite's (sid) cloud kernel,
# 7.2 today.  Its headers were configured with sid's gcc (16 for 7.2), whose
# flags Debian 12's gcc refuses, so a module for it is built the way sbuild
# builds a package for another suite: in a small sid root, made by
# mmdebstrap and cached in build/cache/sid-root/, holding the kernel's
# image, modules and headers and the toolchain that built them.  The VM
# boots that image with those modules (selftests/vm/run); kbuild runs in
# the root, the tree bind-mounted at its own path, so that what it builds
# lands in the tree as for any other kernel.
#
#   sid-root.sh make        make the root, once (as root: about 4 minutes
#                           and 700 MB the first time), print its path
#   sid-root.sh path        print its path; exit 1 when it is not made
#   sid-root.sh release     print the release of its kernel
#   sid-root.sh has REL     exit 0 when REL is its kernel's release
#   sid-root.sh run CMD...  run CMD in the root (as root), the tree and
#                           /proc mounted, in the current directory
#
# SID_SERIES is the kernel series expected: when sid moves on (7.3), this
# line changes, and the root is made again (the recipe's hash names it).
set -euo pipefail

SID_SERIES=7.2
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MIRROR=${CNF_SID_MIRROR:-http://deb.debian.org/debian}
# gcc and make for kbuild, pahole and libelf for module BTF, sparse for
# make lint's C=1 (W=1 needs nothing more); dkms, and the openssl it signs
# modules with, for make check-dkms's package on this kernel; the
# metapackages are sid's newest cloud kernel.
PKGS=make,gcc,libc6-dev,pahole,libelf-dev,sparse,dkms,openssl,linux-image-cloud-amd64,linux-headers-cloud-amd64
RECIPE=$(printf '%s\n' "$SID_SERIES" "$PKGS" | sha256sum | cut -c1-12)
DIR=$ROOT/build/cache/sid-root-$RECIPE

die() { echo "sid-root: $*" >&2; exit 1; }

release() {
	local d k
	for d in "$DIR"/lib/modules/"$SID_SERIES".*-cloud-amd64; do
		k=${d##*/}
		[[ -d $d/build && -f $DIR/boot/vmlinuz-$k ]] && echo "$k"
	done | sort -V | tail -n1
}

# fix_root DIR: what the root's headers lack for make lint's C=1.
fix_root() {
	local d
	for d in "$1"/usr/src/linux-headers-*-common; do
		[[ -e $d/scripts/checker-valid.sh ]] ||
			install -m 755 "$ROOT/scripts/checker-valid.sh" "$d/scripts/"
	done
}

make_root() {
	local tmp=$DIR.tmp
	if [[ -f $DIR/.done ]]; then
		fix_root "$DIR"
		return 0
	fi
	((EUID == 0)) || die "making the root needs root (mmdebstrap as root)"
	command -v mmdebstrap >/dev/null || die "no mmdebstrap (apt install mmdebstrap)"
	rm -rf "$tmp"
	# The registry's sid Release file may be past its Valid-Until date:
	# it is a mirror of a given day, checked by its signature all the same.
	mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
		--include="$PKGS" sid "$tmp" "$MIRROR" >&2
	fix_root "$tmp"
	mv "$tmp" "$DIR"
	[[ -n $(release) ]] ||
		die "no $SID_SERIES cloud kernel with headers in $DIR: sid has moved on? (SID_SERIES in $0)"
	touch "$DIR/.done"
}

# umount_all: what run_in_root mounted.  A bind mount of the tree left
# inside build/ would put the tree under itself, for an rm -rf of build/
# to delete.
umount_all() {
	umount "$DIR$ROOT" 2>/dev/null || true
	umount "$DIR/proc" 2>/dev/null || true
}

# run CMD...: CMD in the root, with the tree at its own path and /proc,
# one at a time (the mounts are the root's), unmounted after.
run_in_root() {
	local rc=0
	((EUID == 0)) || die "running in the root needs root (chroot)"
	[[ -f $DIR/.done ]] || die "no sid root: scripts/sid-root.sh make"
	exec 9>"$DIR.lock"
	flock 9
	trap umount_all EXIT
	mkdir -p "$DIR$ROOT"
	mount --bind "$ROOT" "$DIR$ROOT"
	mount -t proc proc "$DIR/proc"
	# The inner shell expands its own arguments.
	# shellcheck disable=SC2016
	chroot "$DIR" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@" ||
		rc=$?
	umount_all
	trap - EXIT
	return "$rc"
}

case ${1:-} in
make) make_root; echo "$DIR" ;;
path) [[ -f $DIR/.done ]] || exit 1; echo "$DIR" ;;
release) [[ -f $DIR/.done ]] || exit 1; release ;;
has) [[ -f $DIR/.done && -n ${2:-} && $(release) == "$2" ]] ;;
run) shift; run_in_root "$@" ;;
*) echo "usage: $0 make|path|release|has REL|run CMD..." >&2; exit 2 ;;
esac
