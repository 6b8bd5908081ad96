/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter core's types: families and keys, the limits of a table, a
 * filter's figures, the memory budget filters share and a batch's tally.
 * Its users see them through filter.h; its layers, from the table up,
 * include this file, so that none of them needs the API above it.
 */
#ifndef _CNF_TYPES_H
#define _CNF_TYPES_H

#include "compat.h"

enum cnf_family {
	CNF_V4,
	CNF_V6,
	CNF_NFAMILIES,
};

/* Bits of an address of each family. */
#define CNF_V4_BITS		32
#define CNF_V6_BITS		128

/*
 * A prefix: @len leading bits of the address, the others zero; an address
 * is a prefix of CNF_V4_BITS or CNF_V6_BITS.  @v4 and @v6 are in network
 * byte order.  Lookups read only the address.
 */
struct cnf_key {
	u8 family;		/* enum cnf_family */
	u8 len;
	union {
		__be32 v4;
		struct in6_addr v6;
	};
};

/*
 * Limits of one filter; the memory limit (its budget's) covers both
 * families' tables, the old table while growth builds a new one, and
 * cnf_budget_charge()s.  A
 * family's largest address table is 1 GiB (see cnf_filter_max_capacity());
 * an IPv6 tier of 33 to 64 bits, or a prefix store of two-word keys, can
 * reach 1.5 GiB (cnf_max_log()).
 */
#define CNF_MIN_BUCKETS_LOG	3
#define CNF_BUCKET_SLOTS	4
#define CNF_MAX_KICKS		500
#define CNF_STASH_SLOTS		4

/* A family's figures; tables are its lookup tables and its prefix store. */
struct cnf_table_stats {
	u64 entries;		/* prefixes stored */
	u64 capacity;		/* slots in the tables */
	u64 bytes;		/* memory the tables use */
	u64 grows;		/* rebuilds at a larger size, reserve() too */
	u64 stashed;		/* keys in the tables' stashes */
	u64 keys;		/* keys in the lookup tables */
	u32 lengths;		/* distinct prefix lengths stored */
	u32 tables;		/* lookup tables a lookup probes */
};

struct cnf_filter_stats {
	struct cnf_table_stats fam[CNF_NFAMILIES];
	u64 mem_limit;
};

struct cnf_filter;

/*
 * A memory limit that several filters share: what their tables use, the
 * old tables while they are rebuilt, and the charges, all summed.  Its
 * filters' writers must be serialised by one lock of the caller's (their
 * own locks do not exclude each other), under which the budget is read and
 * changed.  A filter made by cnf_filter_create() has a budget of its own.
 */
struct cnf_budget {
	u64 limit;
	u64 charged;			/* held for users: dumps */
	struct cnf_filter *filters;	/* linked by their budget_next */
};

/*
 * The keys a batch of adds brings to each lookup table, counted before the
 * adds (cnf_tally_add() for each prefix), so that a table that fills grows
 * towards them in a step or two (cnf_filter_expect_tally()) instead of
 * doubling step by step: a list of 100K IPv6 prefixes as published expands
 * into some 800K keys.  Duplicates count as often as they come.
 */
struct cnf_tally {
	u64 keys[CNF_NFAMILIES][CNF_V6_BITS + 1];
	u64 stored[CNF_NFAMILIES][7];	/* prefixes each store table keeps */
	u64 long_prefixes;	/* of the IPv6 tiers a directory covers */
};

#endif /* _CNF_TYPES_H */
