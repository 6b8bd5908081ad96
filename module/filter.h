/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckoo_nf filter core: exact cuckoo filters of IPv4 and IPv6 prefixes.
 *
 * The same source builds into the kernel module and into userspace tests,
 * fuzzers and benchmarks; compat.h maps the few kernel services it uses.
 *
 * Concurrency: lookups run under rcu_read_lock() on any number of CPUs, take
 * no lock and never block.  Changes (add, del, reserve, flush, set_limit,
 * walk.h's walks) hold the filter's writer lock, cnf_filter_lock(); one
 * writer at a time.  See table.c for how a lookup stays exact while entries move.
 */
#ifndef _CNF_FILTER_H
#define _CNF_FILTER_H

#include "types.h"

/*
 * Every function has its kernel-doc where it is defined, in filter.c.
 */
struct cnf_filter *cnf_filter_create(u64 initial_capacity, u64 mem_limit);
struct cnf_filter *cnf_filter_create_in(u64 initial_capacity,
					struct cnf_budget *b);
size_t cnf_filter_size(void);
u64 cnf_filter_max_capacity(void);
void cnf_filter_retire(struct cnf_filter *f);
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

/* A batch's tally (struct cnf_tally): counted first, then announced. */
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
