#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The userspace jhash (userspace/lib/compat_user.h) returns the kernel's
# values: cnf_jhash_test.ko hashes a pseudo-random input set with the
# kernel's jhash/jhash2/jhash_1word/2words/3words and exposes a 64-bit
# digest as a module parameter; jhash_digest computes the same digest with
# the userspace jhash.  Any mismatch fails, for each of several seeds.
set -u

cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1
# shellcheck source=lib.sh
source ./lib.sh
KO=modules/cnf_jhash_test.ko
PARAMS=/sys/module/cnf_jhash_test/parameters

[[ $(id -u) == 0 ]] || skip "needs root to insert $KO"
# Both halves are built with the suite (make test-modules selftests-build):
# a missing one is a build failure, not a reason to skip.
if [[ ! -f $KO ]]; then
	echo "FAIL: $KO not built (make test-modules)"
	exit 1
fi
if [[ ! -x ./jhash_digest ]]; then
	echo "FAIL: jhash_digest not built (make -C selftests)"
	exit 1
fi

cleanup() {
	mod_loaded cnf_jhash_test && rmmod cnf_jhash_test
}
trap cleanup EXIT

fail=0
# Fixed seeds (0, 1, edges) and one that changes per run (logged).
for seed in 0 1 2 3735928559 4294967295 $(( (RANDOM << 16 | RANDOM) & 0xffffffff )); do
	if ! insmod "$KO" seed="$seed"; then
		echo "FAIL: insmod $KO seed=$seed"
		exit 1
	fi
	khashes=$(<"$PARAMS/hashes")
	kdigest=$(<"$PARAMS/digest")
	rmmod cnf_jhash_test || { echo "FAIL: rmmod cnf_jhash_test"; exit 1; }
	out=$(./jhash_digest "$seed") || { echo "FAIL: jhash_digest $seed"; exit 1; }
	uhashes=${out%% *}
	udigest=${out#* }
	if [[ -z $khashes || $khashes == 0 || $khashes != "${uhashes:-}" ]]; then
		echo "FAIL: seed $seed: kernel hashed ${khashes:-?} inputs, userspace ${uhashes:-?}"
		fail=1
	elif [[ $kdigest != "${udigest:-}" ]]; then
		echo "FAIL: seed $seed: kernel digest $kdigest, userspace ${udigest:-?}"
		fail=1
	else
		echo "ok: seed $seed: $khashes hashes, digest $kdigest on both sides"
	fi
done
exit $fail
