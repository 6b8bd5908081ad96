/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IPv6 directory of the long tiers: which of them may hold keys under
 * an address's first 32 bits.  Private to the core.
 */
#ifndef _CNF_V6DIR_H
#define _CNF_V6DIR_H

#include "core.h"

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
