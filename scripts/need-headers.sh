#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# need-headers.sh KVER KDIR KDIR_ORIGIN: before make module, test-modules
# or install build for kernel KVER against KDIR (KDIR_ORIGIN is make's
# $(origin KDIR): "undefined" when it is /lib/modules/KVER/build).  Exits 0
# when KDIR is a kernel build directory; else names the package that has
# it and the way to build for another kernel, and exits 1.  Never picks
# another kernel itself: a module built for a kernel other than the one
# asked for would not load in it.
set -euo pipefail

(($# == 3)) || { echo "usage: need-headers.sh KVER KDIR KDIR_ORIGIN" >&2; exit 2; }
kver=$1 kdir=$2 origin=$3

[[ -f $kdir/Makefile ]] && exit 0

{
	if [[ $origin != undefined ]]; then
		echo "make: KDIR=$kdir is not a kernel build directory (no Makefile there):"
		echo "  give the build directory of the kernel (/lib/modules/RELEASE/build), or leave KDIR out."
		exit 1
	fi
	echo "make: no headers for kernel $kver: /lib/modules/$kver/build is missing."
	if [[ $kver == "$(uname -r)" ]]; then
		echo "  It is the running kernel's; install its headers:  apt install linux-headers-$kver"
	else
		echo "  Install its headers:  apt install linux-headers-$kver"
	fi
	with=()
	for d in /lib/modules/*/build; do
		[[ -f $d/Makefile ]] || continue
		d=${d%/build}
		with+=("${d##*/}")
	done
	if ((${#with[@]})); then
		echo "  or build for a kernel whose headers are here: make KVER=RELEASE (${with[*]})"
	else
		echo "  or build for another kernel: make KVER=RELEASE (no kernel here has headers)"
	fi
} >&2
exit 1
