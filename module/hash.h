/* SPDX-License-Identifier: GPL-2.0 */
/*
 * H, the hash of the part r of a key that a slot stores, from which the
 * key's two buckets follow (table.h: cnf_locate()).  Functions of the key's
 * words and of a table's random parameters only: nothing here knows a
 * table, so every layer above can use them and none is below.
 *
 * For IPv6 keys, H is multiply-add-shift of r's words, mixed (cnf_hash6()).
 * For IPv4, H is simple
 * tabulation: r is cut into chunks of CNF_THASH_BITS bits and H(r) is the
 * xor of one entry per chunk, out of a table of jhash values per chunk under
 * the seed; cuckoo hashing works with it as with a random function
 * (Patrascu and Thorup, "The Power of Simple Tabulation Hashing", 2012).
 * Chunks are bytes: narrow slots (r of at most 14 bits) take two, wide
 * ones four, 1,024 entries (4 KB), which a filter's IPv4 tables share
 * (cnf_filter.thash4), the narrow ones reading the first two chunks' tables.
 * Two or four loads replace a jhash, so the packet path costs about the
 * same at every table size.  Three chunks of 10 bits would save a load,
 * and take 12 KB a filter.
 */
#ifndef _CNF_HASH_H
#define _CNF_HASH_H

#include "compat.h"

#define CNF_THASH_BITS		8
#define CNF_THASH_ENTRIES	256	/* of one chunk: 2^CNF_THASH_BITS */

/*
 * H of IPv6 tables (both layouts): one multiplier per word hashed, and the
 * addend, the last.
 */
#define CNF_MUL6_WORDS	5

/*
 * H(r) of an IPv4 table, of tabulation @tab in @chunks chunks (2 or 4).  The
 * top chunk needs no mask: its bits are all the bits r has
 * (cnf_thash_alloc()'s BUILD_BUG_ON()s).
 */
static __always_inline u32 cnf_thash4(const u32 *tab, unsigned int chunks,
				      u32 r)
{
	const u32 mask = CNF_THASH_ENTRIES - 1;
	/* Per-chunk tables: their offsets fold into the loads. */
	const u32 *tab1 = tab + CNF_THASH_ENTRIES, *tab2 = tab1 + CNF_THASH_ENTRIES;
	const u32 *tab3 = tab2 + CNF_THASH_ENTRIES;
	u32 r8 = r >> CNF_THASH_BITS;

	if (chunks == 2)
		return tab[r & mask] ^ tab1[r8];
	/*
	 * Hidden, r's second byte is not read from a high byte register,
	 * which only the four legacy registers have: the lookup would save
	 * one to have it.
	 */
	OPTIMIZER_HIDE_VAR(r8);
	return tab[r & mask] ^ tab1[r8 & mask] ^
	       tab2[r >> 2 * CNF_THASH_BITS & mask] ^ tab3[r >> 3 * CNF_THASH_BITS];
}

/*
 * H of an IPv6 table: the @n words @k (2 or 4) times their own multipliers
 * @mul6, plus the addend, modulo 2^64, then mixed.  Multiply-add-shift with random
 * 64-bit multipliers and addend is strongly universal (Dietzfelbinger,
 * 1996): any two keys collide with probability 2^-32 whatever they are, so
 * outsiders who choose addresses (the low 64 bits of a network they hold,
 * or the networks of a /32 they hold) cannot aim them at one bucket pair
 * without the table's multipliers.  Independent multiplies instead of
 * jhash2()'s forty dependent steps: the lookup's cache misses start sooner,
 * and more lookups are in flight at once.
 *
 * Universal is not enough for cuckoo hashing, though: on keys in arithmetic
 * progression, the keys an expanded prefix brings to its tier, the sum's
 * upper bits are a progression too, both buckets of every key move in step,
 * and a table fails to place a key at half its load (Dietzfelbinger and
 * Schellbach, "On risks of using cuckoo hashing with simple universal hash
 * classes", 2009).  A fixed bijection of the sum, an xor-shift and a
 * multiply, breaks that step and keeps distinct sums distinct.
 */
static __always_inline u32 cnf_hash6(const u64 *mul6, const u32 *k,
				     unsigned int n)
{
	u64 h = mul6[CNF_MUL6_WORDS - 1] + mul6[0] * k[0] + mul6[1] * k[1];

	if (n == 4)
		h += mul6[2] * k[2] + mul6[3] * k[3];
	h ^= h >> 32;
	return (h * 0x9e3779b97f4a7c15ULL) >> 32;
}

#endif /* _CNF_HASH_H */
