#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/kernel-btf.sh's checks on the host, on small objects made here:
#   check   a module without .BTF is one line naming what the build
#           directory lacks (CNF_XDP=auto, the default), an error listing
#           it (CNF_XDP=y), a note (CNF_XDP=n); one with .BTF passes,
#           unless its .BTF_ids are all zeros (unresolved)
#   relink  a module without .BTF, or older than the kernel's BTF, is
#           removed (to be linked again, with BTF) only when the build
#           directory can make BTF
# KTAP out, "# Totals:" at the end (tests/run_unit.sh sums it).
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BTF_SH=$TOP/scripts/kernel-btf.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
N=0 PASS=0 FAIL=0

# result NAME RC: "ok"/"not ok" for NAME.
result() {
	N=$((N + 1))
	if (($2 == 0)); then
		echo "ok $N $1"
		PASS=$((PASS + 1))
	else
		echo "not ok $N $1"
		FAIL=$((FAIL + 1))
	fi
}

# has LABEL TEXT PATTERN...: TEXT holds every PATTERN (fixed strings).
has() {
	local label=$1 text=$2 p
	shift 2
	for p; do
		[[ $text == *"$p"* ]] || { echo "# $label: no '$p' in: $text"; return 1; }
	done
}

echo "TAP version 13"
echo "1..10"

# A module stand-in without .BTF, one with, and build directories: an
# empty one (nothing for BTF), one with everything kbuild needs.
echo 'int cnf_btf_test_fn(void) { return 1; }' >"$T/m.c"
cc -c -o "$T/plain.ko" "$T/m.c" || { echo "Bail out! cc"; exit 1; }
printf 'BTF stand-in' >"$T/btf.bin"
objcopy --add-section .BTF="$T/btf.bin" "$T/plain.ko" "$T/btf.ko" ||
	{ echo "Bail out! objcopy --add-section"; exit 1; }
mkdir -p "$T/none" "$T/full/tools/bpf/resolve_btfids"
echo 'CONFIG_DEBUG_INFO_BTF_MODULES=y' >"$T/full/.config"
: >"$T/full/vmlinux"
printf '#!/bin/sh\n' >"$T/full/tools/bpf/resolve_btfids/resolve_btfids"
chmod +x "$T/full/tools/bpf/resolve_btfids/resolve_btfids"

out=$(CNF_XDP=y bash "$BTF_SH" check "$T/none" "$T/plain.ko" 2>&1)
rc=$?
((rc != 0)) && has "no .BTF" "$out" "plain.ko has no .BTF section" \
	CONFIG_DEBUG_INFO_BTF_MODULES "$T/none/vmlinux" \
	"$T/none/tools/bpf/resolve_btfids/resolve_btfids" "without CNF_XDP=y"
result "check: CNF_XDP=y: a module without .BTF is an error naming what is missing" $?

out=$(bash "$BTF_SH" check "$T/none" "$T/plain.ko" 2>&1)
rc=$?
((rc == 0)) && [[ $(wc -l <<<"$out") == 1 ]] &&
	has "auto" "$out" "note: plain.ko built without its XDP/tc kfuncs: " \
	"CONFIG_DEBUG_INFO_BTF_MODULES, vmlinux, resolve_btfids" "CNF_XDP=y" ||
	echo "# status $rc: $out"
result "check: by default a module without .BTF is built, one line naming what is missing" $?

out=$(CNF_XDP=n bash "$BTF_SH" check "$T/none" "$T/plain.ko" 2>&1)
rc=$?
((rc == 0)) && has "CNF_XDP=n" "$out" "note: plain.ko has no .BTF section"
result "check: CNF_XDP=n makes it a note" $?

out=$(bash "$BTF_SH" check "$T/none" "$T/btf.ko" 2>&1)
rc=$?
((rc == 0)) && [[ -z $out ]] || echo "# status $rc: $out"
((rc == 0)) && [[ -z $out ]]
result "check: a module with .BTF passes, silently" $?

# .BTF_ids as resolve_btfids leaves it (a kfunc set of 2: cnt, flags,
# then id/flags pairs) and as it is before (all zeros).
printf '\002\000\000\000\000\000\000\000\001\000\000\000' >"$T/ids.bin"
head -c 12 /dev/zero >"$T/ids0.bin"
if ! objcopy --add-section .BTF_ids="$T/ids.bin" "$T/btf.ko" "$T/ids.ko" ||
   ! objcopy --add-section .BTF_ids="$T/ids0.bin" "$T/btf.ko" "$T/ids0.ko"; then
	echo "Bail out! objcopy --add-section .BTF_ids"
	exit 1
fi
bash "$BTF_SH" check "$T/none" "$T/ids.ko" 2>/dev/null
r1=$?
out=$(bash "$BTF_SH" check "$T/full" "$T/ids0.ko" 2>&1)
r2=$?
((r1 == 0 && r2 != 0)) && has ".BTF_ids" "$out" "all zeros" resolve_btfids
result "check: .BTF_ids resolved passes, all zeros fails" $?

xz -k "$T/plain.ko" "$T/btf.ko"
bash "$BTF_SH" check "$T/none" "$T/btf.ko.xz" 2>/dev/null
r1=$?
CNF_XDP=y bash "$BTF_SH" check "$T/none" "$T/plain.ko.xz" 2>/dev/null
r2=$?
((r1 == 0 && r2 != 0)) || echo "# with .BTF: status $r1, without: $r2"
((r1 == 0 && r2 != 0))
result "check: .ko.xz (DKMS on 6.12) read through xz" $?

out=$(bash "$BTF_SH" check "$T/full" "$T/plain.ko" 2>&1)
rc=$?
((rc != 0)) && has "linked before" "$out" "make clean"
result "check: without .BTF although the build dir has it all: make clean" $?

cp "$T/plain.ko" "$T/a.ko" && cp "$T/btf.ko" "$T/b.ko"
bash "$BTF_SH" relink "$T/full" "$T/a.ko" "$T/b.ko"
[[ ! -e $T/a.ko && -e $T/b.ko ]] || echo "# relink with a full build dir: a.ko $([[ -e $T/a.ko ]] && echo kept || echo removed), b.ko $([[ -e $T/b.ko ]] && echo kept || echo removed)"
[[ ! -e $T/a.ko && -e $T/b.ko ]]
result "relink: a module without .BTF removed when the build dir can make it" $?

cp "$T/btf.ko" "$T/b.ko"
touch -d '1 hour ago' "$T/b.ko"
bash "$BTF_SH" relink "$T/full" "$T/b.ko"
[[ ! -e $T/b.ko ]] || echo "# relink: b.ko older than vmlinux kept"
[[ ! -e $T/b.ko ]]
result "relink: a module older than the build dir's vmlinux removed" $?

cp "$T/plain.ko" "$T/a.ko"
bash "$BTF_SH" relink "$T/none" "$T/a.ko"
r1=$?
CNF_XDP=n bash "$BTF_SH" relink "$T/full" "$T/a.ko"
r2=$?
[[ -e $T/a.ko ]] && ((r1 == 0 && r2 == 0)) || echo "# relink: a.ko removed or status $r1/$r2"
[[ -e $T/a.ko ]] && ((r1 == 0 && r2 == 0))
result "relink: kept when the build dir cannot make BTF or CNF_XDP=n" $?

echo "# Totals: pass:$PASS fail:$FAIL xfail:0 xpass:0 skip:0 error:0"
((FAIL == 0))
