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
ALL_TESTS="test_jhash_seeds"
KO=modules/cnf_jhash_test.ko
PARAMS=/sys/module/cnf_jhash_test/parameters

# one_seed SEED: the kernel's and the userspace digests of SEED agree.
one_seed() {
	local seed=$1 khashes kdigest out uhashes udigest
	if ! insmod "$KO" seed="$seed"; then
		fail "insmod $KO seed=$seed"
		return 1
	fi
	khashes=$(<"$PARAMS/hashes")
	kdigest=$(<"$PARAMS/digest")
	rmmod cnf_jhash_test || { fail "rmmod cnf_jhash_test"; return 1; }
	out=$(./jhash_digest "$seed") || { fail "jhash_digest $seed"; return 1; }
	uhashes=${out%% *}
	udigest=${out#* }
	if [[ -z $khashes || $khashes == 0 || $khashes != "${uhashes:-}" ]]; then
		fail "seed $seed: kernel hashed ${khashes:-?} inputs, userspace ${uhashes:-?}"
	elif [[ $kdigest != "${udigest:-}" ]]; then
		fail "seed $seed: kernel digest $kdigest, userspace ${udigest:-?}"
	else
		pass "seed $seed: $khashes hashes, digest $kdigest on both sides"
	fi
}

test_jhash_seeds() {
	local seed
	# Fixed seeds (0, 1, edges) and one that changes per run (logged).
	for seed in 0 1 2 3735928559 4294967295 $(( (RANDOM << 16 | RANDOM) & 0xffffffff )); do
		one_seed "$seed" || return
	done
}

require_root
# Both halves are built with the suite (make test-modules selftests-build):
# a missing one is a build failure, not a reason to skip.
[[ -f $KO ]] || ktap_bail "$KO not built (make test-modules)"
[[ -x ./jhash_digest ]] || ktap_bail "jhash_digest not built (make -C selftests)"
defer rmmod cnf_jhash_test
run_tests
