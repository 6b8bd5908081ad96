/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A filter and the parts it points to: its tiers, stores, /16 maps and
 * IPv6 directory.  Types only, private to the core: every file of the core
 * that works on a filter's insides includes it; users see filter.h, where
 * struct cnf_filter is opaque.
 */
#ifndef _CNF_CORE_H
#define _CNF_CORE_H

#include "table.h"

/* One lookup table per prefix length a family can have: see prefix.h. */
#define CNF_TIERS		(CNF_V6_BITS + 1)
#define CNF_ACTIVE_WORDS	((CNF_TIERS + 63) / 64)

/* The /16 map (prefix.h): a bit per /16 of a family's addresses. */
#define CNF_MAP_BITS		16
#define CNF_MAP_WORDS		((1U << CNF_MAP_BITS) / 64)
/* Bits between IPv4 tier lengths past the map: /20, /24, /28, /32. */
#define CNF_V4_TIER_STEP	4
/*
 * Bits between IPv6 tier lengths: 8, but 4 from /32 to /64, where lists
 * have most of their lengths.  A prefix expands into 2^7 keys at most.
 */
#define CNF_V6_TIER_STEP	8
#define CNF_V6_FINE_STEP	4
#define CNF_V6_FINE_END		64

/*
 * A family's store tables (store.c), by the bits of their keys: one-word
 * keys, a table per IPv4 tier length that bounds them (16 to 32 bits: the
 * prefixes of up to 15 bits, then those of 16 to 19, 20 to 23, 24 to 27
 * and 28 to 31 bits: cnf_store_index()), two-word keys and four-word ones
 * (IPv6 only).
 */
#define CNF_STORE_ONE_WORD \
	((CNF_V4_BITS - CNF_MAP_BITS) / CNF_V4_TIER_STEP + 1)
#define CNF_STORE_TABLES	(CNF_STORE_ONE_WORD + 2)

/*
 * The tables one add changes: its tier's and its family's stores (an IPv4
 * /31 is a one-word key, the /32 keys it covers that the store must keep
 * are two-word ones).
 */
#define CNF_UNDO_TABLES		(1 + CNF_STORE_TABLES)

/*
 * A /16 map.  Readers: under RCU, one word, READ_ONCE().  Writers: under
 * the filter's lock, a word at a time (WRITE_ONCE()), each store changing
 * only bits whose answer changes: a /16 covered before and after a change
 * reads as covered throughout it.
 */
struct cnf_map {
	u64 *words;		/* CNF_MAP_WORDS, an allocation of their own */
	u64 bits;		/* writer only: bits set */
	size_t bytes;
	struct rcu_head rcu;
};

/*
 * A filter.  Readers, under RCU: @active, then the tables and maps it names.
 * Everything else, and every change, under @lock.
 *
 * @tier:   per family, the lookup table of each tier length (prefix.h);
 *          NULL while a tier is empty, but the address tiers (/32, /128),
 *          which are always there.  Replaced with rcu_assign_pointer().
 * @active: per family, bit L set while tier L holds keys: lookups probe
 *          only those.  Set (release) before a tier's first key goes in,
 *          cleared after its last went; read with acquire.
 * @store:  per family, the prefixes the lookup tables cannot tell back
 *          (store.c), in a table of two-word keys and one of four-word
 *          keys (CNF_STORE_TABLES); writer only; NULL while empty.
 * @map:    per family, the /16 map of prefixes of up to CNF_MAP_BITS bits
 *          (prefix.h); NULL while there are none.  Published before its
 *          @active bit is set, unpublished after it is cleared.
 * @v6dir:  the IPv6 directory of the long tiers, once
 *          CNF_V6DIR_MIN_TIERS of them hold keys (or a batch's tally says they will); NULL
 *          before, and after the last long key went.  Made of the keys
 *          there, published (rcu_assign_pointer()), and so replaced.
 * @long_tiers: the directory bits of the long tiers that @active names:
 *          what lookups probe while there is no directory.  Changed
 *          (release) with @active, read with acquire.
 * @thash4: the tabulation the IPv4 tables share (hash.h), made of the
 *          seed of the first, the IPv4 address tier, when the filter is
 *          made (never by an add); freed with the filter.  A rebuild
 *          retried gives its table one of its own.
 * @nlen:   per family, prefixes stored of each length.
 * @budget: the memory limit @f counts against, shared or @own_budget;
 *          read and changed under the lock that serialises its filters.
 * @undo:   while an add is under way (cnf_undo_begin()), the first table
 *          it replaced at each place, out of the readers' sight: a failed
 *          add puts it back, so that it leaves the filter as it found it,
 *          its memory included.  Writer only.
 * @serials: tables made for the filter (cnf_table.serial).  Writer only.
 * @moves:  keys its tables moved while walks were under way.
 */
struct cnf_filter {
	struct cnf_table __rcu *tier[CNF_NFAMILIES][CNF_TIERS];
	u64 active[CNF_NFAMILIES][CNF_ACTIVE_WORDS];
	struct cnf_table __rcu *store[CNF_NFAMILIES][CNF_STORE_TABLES];
	struct cnf_map __rcu *map[CNF_NFAMILIES];
	struct cnf_v6dir __rcu *v6dir;
	u32 *thash4;
	u16 long_tiers;
	u32 nlen[CNF_NFAMILIES][CNF_TIERS];
	u64 prefixes[CNF_NFAMILIES];
	struct cnf_mutex lock;
	struct cnf_budget *budget;	/* see types.h */
	struct cnf_filter *budget_next;
	struct cnf_budget own_budget;	/* cnf_filter_create()'s */
	u64 expect;		/* adds announced by cnf_filter_expect() */
	u64 expect_adds;	/* cnf_filter_add()s since */
	u64 expect_dups;	/* adds under @tally refused as stored */
	const struct cnf_tally *tally;	/* cnf_filter_expect_tally()'s */
	u64 v6dir_base;		/* @v6dir's bits set when @tally came */
	u64 grows[CNF_NFAMILIES];
	struct cnf_undo {
		struct cnf_table __rcu **tp;
		struct cnf_table *old;
	} undo[CNF_UNDO_TABLES];
	u8 undo_n;
	bool undo_on;
	u8 initial_log;
	u32 serials;
	struct cnf_moves moves;
	struct cnf_path_node path[CNF_PATH_NODES];
};

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

#endif /* _CNF_CORE_H */
