// SPDX-License-Identifier: GPL-2.0
/*
 * cnf_jhash_test: the kernel's side of selftests/jhash.sh.  At load it
 * computes the digest of cnf_jhash_digest.h with the kernel's jhash and
 * shows it in /sys/module/cnf_jhash_test/parameters/digest (and the kernel
 * log); userspace computes the same digest with its own jhash and compares.
 *
 *   insmod cnf_jhash_test.ko seed=N
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/types.h>

#include "cnf_jhash_digest.h"

static uint seed = 1;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "seed of the pseudo-random inputs (default 1)");

static unsigned long long digest;
module_param(digest, ullong, 0444);
MODULE_PARM_DESC(digest, "out: the digest of all the hashes computed at load");

static uint hashes;
module_param(hashes, uint, 0444);
MODULE_PARM_DESC(hashes, "out: how many hashes went into the digest");

static int __init cnf_jhash_test_init(void)
{
	digest = cnf_jhash_digest(seed, &hashes);
	pr_info("seed %u: %u hashes, digest %016llx\n", seed, hashes, digest);
	return 0;
}

static void __exit cnf_jhash_test_exit(void)
{
}

module_init(cnf_jhash_test_init);
module_exit(cnf_jhash_test_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cuckoo_nf selftest: digest of the kernel's jhash values");
