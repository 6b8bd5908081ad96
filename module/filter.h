/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckoo_nf filter core: exact cuckoo filters of IPv4 and IPv6 prefixes.
 *
 * The same source builds into the kernel module and into userspace tests,
 * fuzzers and benchmarks; compat.h maps the few kernel services it uses.
 *
 * Concurrency: lookups run under rcu_read_lock() on any number of CPUs, take
 * no lock and never block.  Changes (add, del, reserve, flush, set_limit,
 * walk) hold the filter's writer lock, cnf_filter_lock(); one writer at a
 * time.  See lookup.c for how a lookup stays exact while entries move.
 */
#ifndef _CNF_FILTER_H
#define _CNF_FILTER_H

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
 * Every function has its kernel-doc where it is defined: filter.c (the
 * filter, its writers) and lookup.c (the readers).
 */
struct cnf_filter *cnf_filter_create(u64 initial_capacity, u64 mem_limit);
struct cnf_filter *cnf_filter_create_in(u64 initial_capacity,
					struct cnf_budget *b);
void cnf_budget_init(struct cnf_budget *b, u64 limit);
u64 cnf_budget_used(const struct cnf_budget *b);
int cnf_budget_set_limit(struct cnf_budget *b, u64 bytes);
int cnf_budget_charge(struct cnf_budget *b, u64 bytes);
void cnf_budget_uncharge(struct cnf_budget *b, u64 bytes);
int cnf_budget_merge(struct cnf_budget *to, struct cnf_budget *from);
size_t cnf_filter_size(void);
u64 cnf_filter_max_capacity(void);
void cnf_filter_destroy(struct cnf_filter *f);

void cnf_filter_lock(struct cnf_filter *f);
void cnf_filter_lock_nested(struct cnf_filter *f);
int cnf_filter_lock_killable(struct cnf_filter *f);
void cnf_filter_unlock(struct cnf_filter *f);

/* Writers, under cnf_filter_lock().  On error the filter is unchanged. */
int cnf_filter_add(struct cnf_filter *f, const struct cnf_key *key);
/*
 * An add in two steps, for a change of two filters that must fail before
 * lookups see any of it: prepare each, then commit (or abort) each.
 */
int cnf_filter_add_prepare(struct cnf_filter *f, const struct cnf_key *key);
int cnf_filter_add_commit(struct cnf_filter *f, const struct cnf_key *key);
void cnf_filter_add_abort(struct cnf_filter *f, const struct cnf_key *key);
int cnf_filter_del(struct cnf_filter *f, const struct cnf_key *key);
bool cnf_filter_has(struct cnf_filter *f, const struct cnf_key *key);
int cnf_filter_match(struct cnf_filter *f, const struct cnf_key *key,
		     struct cnf_key *match);
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

void cnf_tally_add(struct cnf_tally *tally, const struct cnf_key *key);
void cnf_filter_expect_tally(struct cnf_filter *f,
			     const struct cnf_tally *tally);
/* How many keys ahead of its changes a batch should prefetch. */
#define CNF_PREFETCH_AHEAD	8
void cnf_filter_prefetch(struct cnf_filter *f, const struct cnf_key *key);
int cnf_filter_reserve(struct cnf_filter *f, enum cnf_family family,
		       u64 entries);
void cnf_filter_expect(struct cnf_filter *f, u64 adds);
int cnf_filter_flush(struct cnf_filter *f);
int cnf_filter_set_limit(struct cnf_filter *f, u64 bytes);
u64 cnf_filter_bytes(const struct cnf_filter *f);
int cnf_filter_walk(struct cnf_filter *f,
		    int (*fn)(void *ctx, const struct cnf_key *key), void *ctx);
void cnf_filter_stats(struct cnf_filter *f, struct cnf_filter_stats *st);
u64 cnf_filter_count(struct cnf_filter *f, enum cnf_family family);

/*
 * Readers, under rcu_read_lock(); exact: true only for an address a stored
 * prefix covers.
 */
bool cnf_filter_lookup4(const struct cnf_filter *f, __be32 addr);
bool cnf_filter_lookup6(const struct cnf_filter *f,
			const struct in6_addr *addr);
bool cnf_filter_contains(const struct cnf_filter *f,
			 const struct cnf_key *key);
/* Group size of cnf_filter_lookup4_batch(). */
#define CNF_LOOKUP_BATCH	32
void cnf_filter_lookup4_batch(const struct cnf_filter *f, const __be32 *addrs,
			      unsigned int n, bool *hits);

#endif /* _CNF_FILTER_H */
