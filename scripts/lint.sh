#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: the kernel code must pass
#   - checkpatch.pl --strict (no error, warning or check),
#   - sparse (C=2: every file, built or not) and a W=1 build with no warning
#     and no modpost warning in our files (warnings inside the kernel's own
#     headers are not ours to fix and are ignored).
# The build runs on a fresh copy of the sources in build/lint/, so every file
# is compiled every time (a cached object would hide its warnings) and the
# normal build is left alone.  Uses the VM's kernel headers unless KDIR or
# KVER is given.
#
#   lint.sh --build    only the W=1 + sparse build (make check runs it for
#                      the 6.12 kernels installed beside the VM's)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHECKPATCH=$("$ROOT/scripts/kernel-source.sh" dir)/scripts/checkpatch.pl
LINT=$ROOT/build/lint
# Kernel modules of the tests and benchmarks (Makefile's KMOD_DIRS).
KMOD_DIRS="selftests/modules userspace/bench/kmod"
cd "$ROOT"

run_checkpatch() {
	local files=() f
	for f in module/*.c module/*.h uapi/linux/*.h selftests/modules/*.c \
		 userspace/bench/kmod/*.c; do
		# *.mod.c are kbuild's, generated.
		[[ -f $f && $f != *.mod.c ]] && files+=("$f")
	done
	if ((${#files[@]} == 0)); then
		echo "lint: checkpatch: no kernel sources found"
		return 1
	fi
	[[ -f $CHECKPATCH ]] || { echo "lint: $CHECKPATCH missing: run scripts/deps.sh"; return 1; }
	echo "lint: checkpatch --strict ${files[*]}"
	# --no-tree: we are not in a kernel tree; exits non-zero on any report.
	perl "$CHECKPATCH" --no-tree --strict --quiet --show-types \
		--no-summary -f "${files[@]}"
}

# Build a copy of the sources with W=1 and sparse; print our warnings.
run_build_checks() {
	local kdir out rc=0
	kdir=${KDIR:-/lib/modules/$(KVER=${KVER:-} scripts/kver)/build}
	rm -rf "$LINT"
	mkdir -p "$LINT"
	cp -a Kbuild dkms.conf module uapi "$LINT/"
	for d in $KMOD_DIRS; do
		[[ -d $d ]] || continue
		mkdir -p "$LINT/$(dirname "$d")"
		cp -a "$d" "$LINT/$d"
	done
	find "$LINT" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
	echo "lint: W=1 C=2 build against $kdir"
	out=$LINT/build.log
	make -C "$kdir" M="$LINT" W=1 C=2 modules >"$out" 2>&1 || rc=$?
	for d in $KMOD_DIRS; do
		[[ -f $LINT/$d/Kbuild ]] || continue
		make -C "$kdir" M="$LINT/$d" W=1 C=2 modules >>"$out" 2>&1 || rc=$?
	done
	if ((rc != 0)); then
		sed "s|$LINT/||g" "$out"
		echo "lint: build failed"
		return 1
	fi
	# Our files' warnings (compiler, sparse) and modpost's, with paths
	# made relative to the repository again.
	if grep -E "^$LINT/[^:]*:[0-9]+(:[0-9]+)?: (warning|error)|WARNING: modpost" "$out" |
			sed "s|$LINT/||g" | grep .; then
		echo "lint: warnings in our sources"
		return 1
	fi
}

if [[ ${1:-} == --build ]]; then
	# Each kernel its own copy: check runs them side by side.
	LINT=$ROOT/build/lint-$(KVER=${KVER:-} scripts/kver)
	if run_build_checks; then echo "lint: sparse + W=1: clean"; else echo "lint: sparse + W=1: FAILED"; exit 1; fi
	exit 0
fi

status=0
if run_checkpatch; then echo "lint: checkpatch: clean"; else echo "lint: checkpatch: FAILED"; status=1; fi
if run_build_checks; then echo "lint: sparse + W=1: clean"; else echo "lint: sparse + W=1: FAILED"; status=1; fi
exit "$status"
