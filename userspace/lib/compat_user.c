// SPDX-License-Identifier: GPL-2.0
/*
 * State behind compat_user.h: random source, allocation accounting and
 * failure hook, and the interleaving test's access hooks.
 */
#include <sys/random.h>

#include "compat_user.h"

long cnf_user_fail_alloc_in = -1;
size_t cnf_user_bytes, cnf_user_bytes_peak;

#ifdef CNF_USER_INSTRUMENT
struct cnf_user_hooks cnf_user_hooks;
#endif

void cnf_user_free_now(void *p)
{
	char *base;

	if (!p)
		return;
	base = (char *)p - 64;
	__atomic_sub_fetch(&cnf_user_bytes, *(size_t *)base, __ATOMIC_RELAXED);
	free(base);
}

static bool fixed_random;
static u64 fixed_state;

void cnf_user_seed_random(u64 seed)
{
	fixed_random = true;
	fixed_state = seed;
}

u32 get_random_u32(void)
{
	u32 v;

	if (fixed_random) {
		/* splitmix64: reproducible runs for tests and fuzzers */
		u64 z = (fixed_state += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		return (u32)(z ^ (z >> 31));
	}
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		abort();
	return v;
}
