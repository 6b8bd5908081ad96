/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IPv6 directory of the long tiers: which of them may hold keys under
 * an address's first 32 bits.  Private to the core.
 */
#ifndef _CNF_V6DIR_H
#define _CNF_V6DIR_H

#include "table.h"

/*
 * The directory of a filter's long tiers, the IPv6 tiers past 32 bits but
 * the address tier (prefix.h): a word per hash of an address's first 32
 * bits, in which bit cnf_v6dir_bit(L) is set while tier L may hold a key
 * that starts with such 32 bits.  A filter has one once a few long tiers
 * hold keys (CNF_V6DIR_MIN_TIERS): with fewer, probing them costs about what
 * reading it does, and its bytes would be spent in vain.  A lookup probes only the long tiers its
 * word names, so an address outside the /32s that long prefixes fall in
 * probes none of them.  Readers: under RCU, a word with acquire.  Writers:
 * under the filter's lock, a bit set (WRITE_ONCE()) before its first key
 * goes in; deletes leave theirs.  Once an add has set @grow_at bits, a new
 * directory of the keys replaces the whole (rcu_assign_pointer(); the old
 * one is freed after a grace period), so that a word has about half a bit
 * set at most: a lookup's long probes cost about one bucket's summary word
 * per two addresses.  Only an add that stands makes one, during a batch
 * sized for its long prefixes (cnf_v6dir_expect()), or the end of a batch
 * that left it too large (cnf_v6dir_fit()): a failed add leaves the
 * filter's memory as it was.
 */
#define CNF_V6DIR_MIN_TIERS	3

struct cnf_v6dir {
	u16 *words;		/* 1 << @log, an allocation of their own */
	u64 mul;		/* odd: cnf_v6dir_index()'s multiplier */
	unsigned int log;
	u64 bits;		/* writer only: bits set, stale ones included */
	u64 grow_at;		/* writer only: bits that call for a new one */
	size_t bytes;
	struct rcu_head rcu;
};

/* The word of @d for an address whose first 32 bits are @top. */
static __always_inline u32 cnf_v6dir_index(const struct cnf_v6dir *d, u32 top)
{
	return (top * d->mul) >> (64 - d->log);
}

/* Is tier @tl of @fam a long tier, one that the directory covers? */
static inline bool cnf_tier_is_long(enum cnf_family fam, unsigned int tl)
{
	return fam == CNF_V6 && tl > 32 && tl < CNF_V6_BITS;
}

/* Directory bits of the fine tiers, /36 to /64: the tiers after them follow. */
#define CNF_V6DIR_FINE_BITS	((CNF_V6_FINE_END - 32) / CNF_V6_FINE_STEP)

/*
 * The bit of long tier @tl in a directory word: /36 is bit 0, /64 bit 7,
 * /72 bit 8, /120 bit 14, /127 bit 15.
 */
static __always_inline u16 cnf_v6dir_bit(unsigned int tl)
{
	if (tl <= CNF_V6_FINE_END)
		return 1U << (tl - 33) / CNF_V6_FINE_STEP;
	return 1U << (CNF_V6DIR_FINE_BITS +
		      (tl - CNF_V6_FINE_END - 1) / CNF_V6_TIER_STEP);
}

/* The long tier of directory bit @b. */
static __always_inline unsigned int cnf_v6dir_tier(unsigned int b)
{
	if (b < CNF_V6DIR_FINE_BITS)
		return 32 + (b + 1) * CNF_V6_FINE_STEP;
	return min_t(unsigned int, CNF_V6_FINE_END +
		     (b - CNF_V6DIR_FINE_BITS + 1) * CNF_V6_TIER_STEP,
		     CNF_V6_BITS - 1);
}

struct cnf_v6dir *cnf_v6dir_deref(const struct cnf_filter *f);
void cnf_v6dir_free(struct cnf_v6dir *d);
void cnf_v6dir_publish(struct cnf_filter *f, struct cnf_v6dir *d);
void cnf_v6dir_maintain(struct cnf_filter *f);
void cnf_v6dir_mark(struct cnf_filter *f, const struct cnf_key *p,
		    unsigned int tl);
void cnf_v6dir_expect(struct cnf_filter *f);
void cnf_v6dir_fit(struct cnf_filter *f);
void cnf_v6dir_release(struct cnf_filter *f);

#endif /* _CNF_V6DIR_H */
