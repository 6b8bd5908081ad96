/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a key lives: its two buckets and its slot, and back.
 *
 * A key's last word x (host order: an IPv4 address, the second word of a
 * CNF_LAYOUT64 key, the fourth of an IPv6 address) is split into
 * r = x >> log and l = x & mask; the words before it join r.  With
 * h = H(r), a hash keyed by a per-table random seed, its home bucket is
 * i1 = l ^ h and its alternate i2 = i1 ^ (rol32(h, 16) | 1): odd, so the
 * buckets always differ, and either bucket with the slot gives the other
 * (partial-key cuckoo hashing).  Outsiders cannot aim many
 * addresses at one bucket pair without the seed.  One hash per lookup: an
 * IPv4 r has at most 32 - log bits, so a second hash would add no pairs.
 *
 * A slot stores r (the upper words as they are, and x >> log, for two-word
 * keys xored with bits of the upper word: cnf_tag_mix()), the tag bits,
 * and nothing else: i1 follows from the bucket and the alternate
 * bit, l = i1 ^ H(r), x = (x >> log) << log | l.  So the key comes back
 * exactly from a slot and its bucket, a fingerprint hit is an exact match
 * (no false positives), and growth rebuilds a table from its own slots.
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

#include "table.h"

#define CNF_THASH_BITS		8
#define CNF_THASH_ENTRIES	256	/* of one chunk: 2^CNF_THASH_BITS */

/* Chunks of r: 14 bits at most in narrow slots, 29 in wide ones. */
static inline unsigned int cnf_thash_chunks(unsigned int width)
{
	return width == CNF_SLOT_V4_NARROW ? 2 : 4;
}

/* Entries of the tabulation of a table of @fam, 2^@log buckets; 0: none. */
static inline size_t cnf_thash_entries(enum cnf_layout layout,
				       unsigned int log)
{
	unsigned int width = cnf_slot_bytes(layout, log);

	if (cnf_layout_words(layout) != 1)
		return 0;
	return (size_t)cnf_thash_chunks(width) * CNF_THASH_ENTRIES;
}

/*
 * H(r) of an IPv4 table.  The top chunk needs no mask: its bits are all the
 * bits r has (cnf_thash_alloc()'s BUILD_BUG_ON()s).
 */
static __always_inline u32 cnf_thash4(const struct cnf_table *t,
				      unsigned int width, u32 r)
{
	const u32 *tab = t->thash, mask = CNF_THASH_ENTRIES - 1;
	/* Per-chunk tables: their offsets fold into the loads. */
	const u32 *tab1 = tab + CNF_THASH_ENTRIES, *tab2 = tab1 + CNF_THASH_ENTRIES;
	const u32 *tab3 = tab2 + CNF_THASH_ENTRIES;
	u32 r8 = r >> CNF_THASH_BITS;

	if (width == CNF_SLOT_V4_NARROW)
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
 * H of an IPv6 table: the @n words @k (2 or 4) times their own multipliers,
 * plus the addend, modulo 2^64, then mixed.  Multiply-add-shift with random
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
static __always_inline u32 cnf_hash6(const struct cnf_table *t, const u32 *k,
				     unsigned int n)
{
	u64 h = t->mul6[CNF_MUL6_WORDS - 1] + t->mul6[0] * k[0] +
		t->mul6[1] * k[1];

	if (n == 4)
		h += t->mul6[2] * k[2] + t->mul6[3] * k[3];
	h ^= h >> 32;
	return (h * 0x9e3779b97f4a7c15ULL) >> 32;
}

/*
 * What a two-word key's tag word holds is r xor bits of the upper word, of
 * the slot words @w: the keys of a tier of 33 to 64 bits are numbers below
 * 2^(L - 32) after their /32 (prefix.h), whose r has few bits or none, and
 * keys sharing a bucket would share a tag.  Mixed, their tags differ with
 * their /32s, and a probe's tag test flags little but the key's own slot.
 * The upper word is in the slot: r comes back.  Fits a narrow tag word.
 */
static __always_inline u32 cnf_tag_mix(unsigned int width, const u32 *w)
{
	if (cnf_width_words(width) != 2)
		return 0;
	return (w[0] ^ w[0] >> 16) & ((1U << CNF_NARROW_R_BITS) - 1);
}

/* r of slot words @w: their tag word without the tag bits, unmixed. */
static __always_inline u32 cnf_slot_r(unsigned int width, const u32 *w)
{
	return (w[cnf_width_words(width) - 1] >> 2) ^ cnf_tag_mix(width, w);
}

/* H of slot words @w: their upper words, and @r, the last word's part. */
static __always_inline u32 cnf_hash_r(const struct cnf_table *t,
				      unsigned int width, const u32 *w, u32 r)
{
	const unsigned int n = cnf_width_words(width);
	u32 k[4] = { w[0], w[1], w[2], w[3] };

	if (n == 1)
		return cnf_thash4(t, width, r);
	k[n - 1] = r;
	return cnf_hash6(t, k, n);
}

/* H(r), r being the part of the key slot words @w store; tags excluded. */
static __always_inline u32 cnf_hash(const struct cnf_table *t,
				    unsigned int width, const u32 *w)
{
	return cnf_hash_r(t, width, w, cnf_slot_r(width, w));
}

static __always_inline u32 cnf_alt_offset(const struct cnf_table *t, u32 h)
{
	return (rol32(h, 16) | 1) & t->mask;
}

/*
 * Encode @addr for @t, its cnf_width_words() words (a __be32 for IPv4
 * tables, the first two words of a struct in6_addr for CNF_LAYOUT64, all
 * four for CNF_LAYOUT128; no word past them is read): its slot words (home
 * tag) and its two buckets.  Returns H, which an IPv6 table's summary
 * takes (table.h).
 */
static __always_inline u32 cnf_locate(const struct cnf_table *t,
				      unsigned int width, const void *addr,
				      struct cnf_pos *p)
{
	const unsigned int n = cnf_width_words(width);
	const __be32 *a = addr;
	u32 x, h, *w = p->w;

	w[0] = n > 1 ? (__force u32)a[0] : 0;
	w[1] = n > 2 ? (__force u32)a[1] : 0;
	w[2] = n > 2 ? (__force u32)a[2] : 0;
	w[3] = 0;
	x = ntohl(a[n - 1]);
	w[n - 1] = ((x >> t->log) ^ cnf_tag_mix(width, w)) << 2 | CNF_TAG_VALID;
	h = cnf_hash_r(t, width, w, x >> t->log);
	p->b[0] = (x ^ h) & t->mask;
	p->b[1] = p->b[0] ^ cnf_alt_offset(t, h);
	return h;
}

/* The bucket the key in (bucket, slot) would move to; @w: its new slot. */
static __always_inline u32 cnf_slot_other(const struct cnf_table *t,
					  unsigned int width, u32 bucket,
					  unsigned int s, u32 *w)
{
	cnf_slot_read(t, width, bucket, s, w);
	*cnf_tag_word(width, w) ^= CNF_TAG_ALT;
	return bucket ^ cnf_alt_offset(t, cnf_hash(t, width, w));
}

#endif /* _CNF_HASH_H */
