#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In the VM, for make check-dkms (scripts/check-dkms.sh): the module DKMS
# built on the host for this kernel, shipped by `run --no-insmod` with
# CNF_KO=/lib/modules/KVER/updates/dkms/NAME, goes back to that place,
# and modprobe must load it from there.  Then its version, sysfs's and
# cuckooctl's view must be VERSION, and an address must go in and out.
#
#   dkms-modprobe.sh VERSION NAME     (NAME: cuckoo_nf.ko or cuckoo_nf.ko.xz)
set -uo pipefail

want=$1 name=$2
dir=/lib/modules/$(uname -r)/updates/dkms
fail() { echo "FAIL: $*"; exit 1; }

{ mkdir -p "$dir" && cp "$CNF_KO" "$dir/$name"; } || fail "cannot place $dir/$name"
depmod -a || fail "depmod"
path=$(modinfo -n cuckoo_nf) || fail "modinfo -n cuckoo_nf: not found"
[[ $path == "$dir/$name" ]] || fail "modprobe would load $path, not $dir/$name"
modprobe cuckoo_nf || fail "modprobe cuckoo_nf"
grep -q '^cuckoo_nf ' /proc/modules || fail "cuckoo_nf not loaded"
echo "PASS: modprobe cuckoo_nf loaded $path"
v=$(modinfo -F version cuckoo_nf)
[[ $v == "$want" ]] || fail "modinfo -F version: $v, want $want"
[[ $(cat /sys/module/cuckoo_nf/version) == "$want" ]] || fail "sysfs version"
out=$(cuckooctl --version) || fail "cuckooctl --version"
[[ $out == *"module: $want (ABI 1)"* ]] || fail "cuckooctl --version: $out"
echo "PASS: version $want: modinfo, sysfs and cuckooctl --version agree"
{ cuckooctl add 192.0.2.1 >/dev/null && cuckooctl test 192.0.2.1 >/dev/null &&
	cuckooctl reset; } || fail "add/test/reset"
modprobe -r cuckoo_nf || fail "modprobe -r"
echo "PASS: add, test, reset, modprobe -r"
