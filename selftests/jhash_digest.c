// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace side of selftests/jhash.sh: the digest of
 * selftests/modules/cnf_jhash_digest.h computed with the jhash of
 * userspace/lib/compat_user.h, the one the filter core uses in tests,
 * fuzzers and benchmarks.
 *
 *   jhash_digest SEED    prints "HASHES DIGEST" in decimal, like the
 *                        module's parameters
 */
#include "compat_user.h"
#include "cnf_jhash_digest.h"

int main(int argc, char **argv)
{
	unsigned long long digest;
	char *end;
	unsigned long seed;
	u32 hashes;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SEED\n", argv[0]);
		return 2;
	}
	errno = 0;
	seed = strtoul(argv[1], &end, 0);
	if (errno || *end || end == argv[1] || seed > 0xffffffffUL) {
		fprintf(stderr, "%s: bad seed '%s'\n", argv[0], argv[1]);
		return 2;
	}
	digest = cnf_jhash_digest(seed, &hashes);
	printf("%u %llu\n", hashes, digest);
	return 0;
}
