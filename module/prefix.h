/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prefixes, and the lookup tables they expand into (controlled prefix
 * expansion, Srinivasan and Varghese, 1999).
 *
 * A family has a few tier lengths.  A prefix of length l is stored in the
 * tier of the shortest tier length L >= l, as the 2^(L - l) prefixes of
 * length L it covers: its keys.  A lookup takes the address's first L bits
 * for each tier that holds keys, and probes that tier's exact cuckoo table
 * once: a packet costs one probe per non-empty tier, whatever lengths the
 * prefixes have.  The /16 tier of both families is no table but a map, a
 * bit per /16 (8 KB, made when a prefix of up to 16 bits first comes): a
 * prefix of up to 16 bits sets the bits of the /16s it covers, and a
 * lookup reads one bit there instead of probing.
 *
 *   IPv4  the /16 map (lengths 0-16), then every 4 bits: /20 (17-20),
 *         /24 (21-24), /28 (25-28), /32 (29-32).  At most four probes and
 *         a map read; a prefix expands into at most 8 keys (a /17, /21,
 *         /25 or /29), or sets up to 65,536 bits (a /0).  Blocklists are
 *         mostly /16 to /24, with tails of /25 to /31: without the /28
 *         tier a probe less, but a /25 takes 128 /32 keys, and lists as
 *         published 5 keys per prefix instead of 3 (and twice the memory).
 *   IPv6  the /16 map (lengths 0-16), /24 and /32, then every 4 bits,
 *         /36 to /64, where lists have most of their lengths (RIR
 *         allocations and assignments: /29 to /48, /56, /64), then every 8
 *         bits, /72 to /120, /127 (121-127) and /128 (128).  A prefix
 *         expands into at most 128 keys (a /25, a /65): they cost 2 KB at
 *         most; one of /33 to /64, into 8 at most.  The tiers past 32 bits
 *         but /128, the long ones (16), are probed only where the directory
 *         (v6dir.h) says they may hold keys under the address's first 32
 *         bits, once three of them hold keys.  So an address probes the
 *         /24 and /32 tiers, the map, the /128 tier, and the long tiers
 *         that hold keys in its /32, plus at most half a tier on average
 *         that a directory word names in vain: a list of /19 to /48
 *         allocations, /56 and /64 assignments and hosts costs an address
 *         outside the /32s of its long prefixes three probes and the map.
 *         Any list probes at most 19 tables and the map.
 *
 * Keys of tiers of at most 32 bits live in IPv4-layout tables (the first L
 * bits as a number, below 2^L: the /20 and /24 tiers' tables take 2-byte
 * slots from 2^6 and 2^10 buckets on, table.h), longer ones in IPv6-layout
 * tables: those of at most 64 bits in tables of two-word keys (the first
 * 32 bits, then the next L - 32 as a number), whose slots are 6 bytes once
 * r = that number >> log fits 14 bits (from 2^2 buckets on for /48, 2^10
 * for /56), 8 bytes before; the others in CNF_LAYOUT128 tables (the
 * address with the bits past L cleared, 16-byte slots).  The /32 and /128
 * tiers are the address tiers: a set of addresses costs what it did before
 * prefixes, one probe.
 *
 * Which prefixes a tier's keys came from is what the store keeps
 * (store.c); how the tiers follow the prefixes stored is tier.c's.
 * Functions of the prefixes' and tiers' arithmetic only, inline.
 */
#ifndef _CNF_PREFIX_H
#define _CNF_PREFIX_H

#include "core.h"

static inline unsigned int cnf_family_bits(enum cnf_family fam)
{
	return fam == CNF_V4 ? CNF_V4_BITS : CNF_V6_BITS;
}

/*
 * The tier length of the tier that holds prefixes of length @len:
 * CNF_MAP_BITS for the /16 map.  The /128 tier holds only addresses: the
 * store (store.c) cannot tell a /128 key from a /128 address.
 */
static inline unsigned int cnf_tier_of(enum cnf_family fam, unsigned int len)
{
	unsigned int step;

	if (len <= CNF_MAP_BITS)
		return CNF_MAP_BITS;
	if (fam == CNF_V6 && len > CNF_V6_BITS - CNF_V6_TIER_STEP)
		return len == CNF_V6_BITS ? len : CNF_V6_BITS - 1;
	if (fam == CNF_V4)
		step = CNF_V4_TIER_STEP;
	else if (len > 32 && len <= CNF_V6_FINE_END)
		step = CNF_V6_FINE_STEP;
	else
		step = CNF_V6_TIER_STEP;
	return (len + step - 1) / step * step;
}

/* The layout of the table of the tier of length @tl: see table.h. */
static inline enum cnf_layout cnf_tier_layout(unsigned int tl)
{
	return tl <= CNF_LAYOUT64 ? (enum cnf_layout)tl : CNF_LAYOUT128;
}

/*
 * The second word of the key, in a tier of length @tl of 33 to 64 bits, of
 * an address whose second word is @w1: its bits 32 to @tl - 1 as a number.
 */
static __always_inline __be32 cnf_tier_key64(__be32 w1, unsigned int tl)
{
	return htonl(ntohl(w1) >> (64 - tl));
}

/*
 * The key, in an IPv4-layout tier of length @tl (past the map's 16 bits),
 * of an address whose first 32 bits are @top (host order).
 */
static __always_inline __be32 cnf_tier_key32(u32 top, unsigned int tl)
{
	return htonl(top >> (32 - tl));
}

/* @a with every bit past the first @len cleared. */
static __always_inline void cnf_mask6(struct in6_addr *a, unsigned int len)
{
	unsigned int w;

	for (w = 0; w < 4; w++, len = len > 32 ? len - 32 : 0)
		if (len < 32)
			a->s6_addr32[w] &= len ? htonl(~0U << (32 - len)) : 0;
}

/* Prefix lengths that expand into the tier of length @tl: [floor, tl]. */
static inline unsigned int cnf_tier_floor(enum cnf_family fam, unsigned int tl)
{
	unsigned int len = tl;

	while (len && cnf_tier_of(fam, len - 1) == tl)
		len--;
	return len;
}

/* @p cut to its first @len bits. */
static inline void cnf_prefix_cut(const struct cnf_key *p, unsigned int len,
				  struct cnf_key *q)
{
	*q = *p;
	q->len = len;
	if (p->family == CNF_V4)
		q->v4 = len ? p->v4 & htonl(~0U << (32 - len)) : 0;
	else
		cnf_mask6(&q->v6, len);
}

/* First 32 bits of a prefix of either family, host order. */
static inline u32 cnf_prefix_top(const struct cnf_key *p)
{
	return ntohl(p->family == CNF_V4 ? p->v4 : p->v6.s6_addr32[0]);
}

#endif /* _CNF_PREFIX_H */
