// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo_nf filter core: exact cuckoo filters (Fan et al., CoNEXT 2014) of
 * IPv4 and IPv6 prefixes, a few tables per family.
 *
 *   types.h   families, keys, limits, stats, budget, tally
 *   hash.h    H: tabulation (IPv4), multiply-add-shift (IPv6)
 *   table.c   one table: cuckoo paths, deletes, the stash; finding a key
 *             (table.h: slot layouts, where a key lives, bucket tests)
 *   core.h    struct cnf_filter, its maps and directory, the tier lengths
 *   budget.c  a filter's memory, and the budget filters count against
 *   ftable.c  a filter's tables grown and shrunk, an add undone; the maps
 *   prefix.h  which tier a prefix expands into, its keys there (inline)
 *   store.c   the prefix store: what the tiers cannot tell back
 *   v6dir.c   the IPv6 directory of the long tiers: made, marked, anew
 *   tier.c    how the tiers and maps follow the prefixes: an add
 *             prepared, published or undone; a delete's parts
 *   walk.c    the prefixes walked, at once or in steps
 *   filter.c  (this file) the API (filter.h): a filter made, prefixes
 *             added, deleted, found, batches announced, flushed,
 *             destroyed; stats; the lookups
 * Each .c has a header of its own declaring what it defines, and includes
 * go one way, down this list: filter -> walk -> tier -> v6dir, store ->
 * prefix, ftable -> budget -> core -> table -> hash, types.  make lint
 * fails on a circle of files or of units (x.c with x.h) in the core
 * (scripts/include-cycles.py).
 */
#include "budget.h"
#include "filter.h"
#include "ftable.h"
#include "prefix.h"
#include "store.h"
#include "tier.h"
#include "v6dir.h"
#include "walk.h"

/* The address tier of @fam: always there. */
static struct cnf_table *cnf_addr_tier(const struct cnf_filter *f,
				       enum cnf_family fam)
{
	return cnf_deref(f, &f->tier[fam][cnf_family_bits(fam)]);
}

/* ---- filter ---- */

/**
 * cnf_filter_prefetch - an address will be added or deleted soon
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix
 *
 * The buckets of an address start loading into the cache; a batch that
 * calls this CNF_PREFETCH_AHEAD keys ahead overlaps the cache misses of its
 * changes.  Shorter prefixes are left alone.
 */
void cnf_filter_prefetch(struct cnf_filter *f, const struct cnf_key *key)
{
	cnf_assert_held(&f->lock);
	if (key->family < CNF_NFAMILIES &&
	    key->len == cnf_family_bits(key->family))
		cnf_table_prefetch(cnf_addr_tier(f, key->family), key);
}

/**
 * cnf_filter_reserve - grow now for many addresses
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family
 * @entries: addresses of @fam that should fit without growing again
 *
 * Return: 0; -ENOSPC past the memory limit or the largest table; -ENOMEM;
 * -EINVAL for an unknown family.  On error @f is unchanged.
 */
int cnf_filter_reserve(struct cnf_filter *f, enum cnf_family fam, u64 entries)
{
	struct cnf_table *t;
	unsigned int log;

	cnf_assert_held(&f->lock);
	if (fam >= CNF_NFAMILIES)
		return -EINVAL;
	t = cnf_addr_tier(f, fam);
	log = cnf_log_for(cnf_family_layout(fam), entries, t->log);
	if (log == t->log)
		return 0;
	if (cnf_table_limit(cnf_max_log(cnf_family_layout(fam))) < entries)
		return -ENOSPC;
	return cnf_ftable_grow(f, &f->tier[fam][cnf_family_bits(fam)], log);
}

/**
 * cnf_filter_expect_tally - the keys a batch brings to each table
 * @f: the filter, under cnf_filter_lock()
 * @tally: the batch's tally, kept until cnf_filter_expect(@f, 0)
 *
 * Nothing grows now: a table that fills during the batch grows for the
 * tally's keys, at once or in steps once copies came (cnf_tally_step()),
 * and one that holds the batch's keys already (a list added again, as a
 * reload does) does not grow at all.
 */
void cnf_filter_expect_tally(struct cnf_filter *f,
			     const struct cnf_tally *tally)
{
	BUILD_BUG_ON(ARRAY_SIZE(tally->keys[0]) != CNF_TIERS);
	BUILD_BUG_ON(ARRAY_SIZE(tally->stored[0]) != CNF_STORE_TABLES);
	cnf_assert_held(&f->lock);
	f->tally = tally;
	cnf_v6dir_expect(f);
}

/* A table a batch left less than a quarter full: as small as holds it. */
static void cnf_batch_shrink(struct cnf_filter *f, struct cnf_table __rcu **tp)
{
	const struct cnf_table *t = cnf_deref(f, tp);

	if (t)
		cnf_shrink_below(f, tp, 4, t->count);
}

/*
 * The tables of @f at the end of a batch: their growth for its tally
 * (cnf_tally_step()) may have outrun the keys that landed, if the rest
 * were copies.  Such a table is rebuilt to fit its keys, as if only they
 * had come: it is then at least half full (unless at its initial size), as
 * growth leaves a table, and gets the hysteresis of one: its keys must
 * double to grow it, or deletes leave a sixteenth to shrink it.  A table
 * growth left half full is not touched.
 */
static void cnf_shrink_all(struct cnf_filter *f)
{
	unsigned int fam, i;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		for (i = 0; i < CNF_TIERS; i++)
			cnf_batch_shrink(f, &f->tier[fam][i]);
		for (i = 0; i < CNF_STORE_TABLES; i++)
			cnf_batch_shrink(f, &f->store[fam][i]);
	}
	cnf_v6dir_fit(f);
}

/**
 * cnf_filter_expect - about this many adds follow
 * @f: the filter, under cnf_filter_lock()
 * @adds: how many; 0 when the batch is done
 *
 * Without a tally (cnf_filter_expect_tally()), growth then sizes for
 * them, within 8 times the table's size per step: a batch's entries may
 * be duplicates, or fail.  At the batch's end (0),
 * its tally (cnf_filter_expect_tally()) goes too, and when the adds
 * announced have all been made (cnf_filter_add() counts them), so that no
 * part of the batch follows under a later call, the tables its copies
 * left mostly empty shrink (a batch without copies grew its tables for
 * keys that all landed), and the next batch starts trusting its tally
 * again.  A batch cut short keeps its tables, as one that follows
 * in parts (a chunk at a time, each announcing what is left) keeps them,
 * and what its copies taught, between its parts.
 */
void cnf_filter_expect(struct cnf_filter *f, u64 adds)
{
	cnf_assert_held(&f->lock);
	if (!adds && f->expect && f->expect_adds >= f->expect) {
		if (f->expect_dups)
			cnf_shrink_all(f);
		f->expect_dups = 0;
	}
	f->expect = adds;
	f->expect_adds = 0;
	if (!adds)
		f->tally = NULL;
}

/**
 * cnf_filter_size - what a filter takes beside its tables
 *
 * Return: bytes of its struct, which cnf_filter_bytes() leaves out.
 */
size_t cnf_filter_size(void)
{
	return sizeof(struct cnf_filter);
}

/* Every table but the address tiers goes; nothing is stored any more. */
static void cnf_filter_empty(struct cnf_filter *f)
{
	unsigned int fam, len, i;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		for (len = 0; len < CNF_TIERS; len++)
			if (len != cnf_family_bits(fam) &&
			    cnf_deref(f, &f->tier[fam][len]))
				cnf_ftable_drop(f, &f->tier[fam][len]);
		for (i = 0; i < CNF_STORE_TABLES; i++)
			if (cnf_deref(f, &f->store[fam][i]))
				cnf_ftable_drop(f, &f->store[fam][i]);
		for (len = 0; len < CNF_ACTIVE_WORDS; len++)
			WRITE_ONCE(f->active[fam][len], 0);
		if (fam == CNF_V6)
			WRITE_ONCE(f->long_tiers, 0);
		if (cnf_map_deref(f, fam))
			cnf_map_drop(f, fam);
		memset(f->nlen[fam], 0, sizeof(f->nlen[fam]));
		f->prefixes[fam] = 0;
	}
	cnf_v6dir_publish(f, NULL);
}

/**
 * cnf_filter_flush - remove every prefix
 * @f: the filter, under cnf_filter_lock()
 *
 * The tables go back to their initial size.
 *
 * Return: 0, or -ENOMEM (@f unchanged).
 */
int cnf_filter_flush(struct cnf_filter *f)
{
	struct cnf_table *fresh[CNF_NFAMILIES] = { NULL };
	unsigned int fam;

	cnf_assert_held(&f->lock);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		fresh[fam] = cnf_ftable_alloc(f, cnf_family_layout(fam),
					      f->initial_log, true,
					      &f->thash4);
		if (!fresh[fam])
			goto err_alloc;
	}
	cnf_filter_empty(f);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_table *old = cnf_addr_tier(f, fam);

		rcu_assign_pointer(f->tier[fam][cnf_family_bits(fam)],
				   fresh[fam]);
		cnf_table_retire(old);
	}
	return 0;

err_alloc:
	while (fam--)
		cnf_table_free(fresh[fam]);
	return -ENOMEM;
}

/**
 * cnf_filter_set_limit - change the memory limit of a filter's budget
 * @f: the filter, under cnf_filter_lock() and its budget's lock
 * @bytes: the new limit, covering the tables, the old ones during a
 *	rebuild, and the charges
 *
 * Return: 0, or -EINVAL when the budget already uses more than @bytes.
 */
int cnf_filter_set_limit(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	return cnf_budget_set_limit(f->budget, bytes);
}

/**
 * cnf_filter_count - how many prefixes of a family
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family
 *
 * Return: the count; 0 for an unknown family.
 */
u64 cnf_filter_count(struct cnf_filter *f, enum cnf_family fam)
{
	cnf_assert_held(&f->lock);
	return fam < CNF_NFAMILIES ? f->prefixes[fam] : 0;
}

static void cnf_table_stats_add(const struct cnf_table *t,
				struct cnf_table_stats *ts)
{
	ts->capacity += cnf_table_capacity(t->log);
	ts->bytes += t->bytes;
	ts->stashed += t->stash_n;
}

static void cnf_family_stats(struct cnf_filter *f, enum cnf_family fam,
			     struct cnf_table_stats *ts)
{
	const struct cnf_map *m = cnf_map_deref(f, fam);
	const struct cnf_table *t;
	unsigned int len, i;

	for (i = 0; i < CNF_STORE_TABLES; i++) {
		t = cnf_deref(f, &f->store[fam][i]);
		if (t)
			cnf_table_stats_add(t, ts);
	}
	/* A map's bits are its keys and slots. */
	if (m) {
		ts->capacity += 1U << CNF_MAP_BITS;
		ts->bytes += m->bytes;
		ts->keys += m->bits;
	}
	for (len = 0; len < CNF_TIERS; len++) {
		t = cnf_deref(f, &f->tier[fam][len]);
		if (t) {
			cnf_table_stats_add(t, ts);
			ts->keys += t->count;
		}
		ts->lengths += f->nlen[fam][len] != 0;
	}
	for (len = 0; len < CNF_ACTIVE_WORDS; len++)
		ts->tables += hweight64(f->active[fam][len]);
	if (fam == CNF_V6 && cnf_v6dir_deref(f))
		ts->bytes += cnf_v6dir_deref(f)->bytes;
	if (fam == CNF_V4 && f->thash4)
		ts->bytes += cnf_thash4_bytes();
	ts->entries = f->prefixes[fam];
	ts->grows = f->grows[fam];
}

/**
 * cnf_filter_stats - the filter's sizes and counters
 * @f: the filter, under cnf_filter_lock()
 * @st: filled in
 */
void cnf_filter_stats(struct cnf_filter *f, struct cnf_filter_stats *st)
{
	unsigned int fam;

	cnf_assert_held(&f->lock);
	memset(st, 0, sizeof(*st));
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		cnf_family_stats(f, fam, &st->fam[fam]);
	st->mem_limit = f->budget->limit;
}

/**
 * cnf_filter_lock - become the filter's one writer
 * @f: the filter
 *
 * Every change and walk runs under it; lookups do not need it.
 */
void cnf_filter_lock(struct cnf_filter *f)
{
	cnf_mutex_lock(&f->lock);
}

/**
 * cnf_filter_lock_nested - cnf_filter_lock() while holding another's
 * @f: the filter
 *
 * For copying one filter into another: the copy's lock inside the
 * source's, never the other way round.
 */
void cnf_filter_lock_nested(struct cnf_filter *f)
{
	cnf_mutex_lock_nested(&f->lock);
}

/**
 * cnf_filter_lock_killable - cnf_filter_lock(), unless a fatal signal comes
 * @f: the filter
 *
 * Return: 0 with the lock held, or -EINTR.
 */
int cnf_filter_lock_killable(struct cnf_filter *f)
{
	return cnf_mutex_lock_killable(&f->lock);
}

/**
 * cnf_filter_unlock - end what cnf_filter_lock() began
 * @f: the filter
 */
void cnf_filter_unlock(struct cnf_filter *f)
{
	cnf_mutex_unlock(&f->lock);
}

/**
 * cnf_filter_max_capacity - the most keys per family a filter can hold
 *
 * Return: the load limit of the smaller family's largest table.
 */
u64 cnf_filter_max_capacity(void)
{
	return cnf_table_limit(min(cnf_max_log(CNF_LAYOUT32),
				   cnf_max_log(CNF_LAYOUT128)));
}

/**
 * cnf_filter_create_in - a new, empty filter within a shared budget
 * @initial_capacity: keys per family the first tables hold without growing,
 *	at most cnf_filter_max_capacity(); flush returns to this size
 * @b: the budget, under the lock that serialises its filters; NULL for a
 *	budget of the filter's own, without a limit
 *
 * Its first tables count against @b, which may go over its limit by them:
 * the caller checks cnf_budget_used() when that matters.
 *
 * Return: the filter, or NULL when memory is short.
 */
struct cnf_filter *cnf_filter_create_in(u64 initial_capacity,
					struct cnf_budget *b)
{
	struct cnf_filter *f = cnf_zalloc(sizeof(*f));
	unsigned int fam;

	if (!f)
		return NULL;
	cnf_mutex_init(&f->lock);
	f->initial_log = cnf_log_for(CNF_LAYOUT128, initial_capacity,
				     CNF_MIN_BUCKETS_LOG);
	cnf_budget_init(&f->own_budget, U64_MAX);
	f->budget = b ?: &f->own_budget;
	f->budget_next = f->budget->filters;
	f->budget->filters = f;
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_table *t = cnf_ftable_alloc(f,
						       cnf_family_layout(fam),
						       f->initial_log, true,
						       &f->thash4);

		if (!t)
			goto err_alloc;
		RCU_INIT_POINTER(f->tier[fam][cnf_family_bits(fam)], t);
	}
	return f;

err_alloc:
	cnf_filter_destroy(f);
	return NULL;
}

/**
 * cnf_filter_create - a new, empty filter with a budget of its own
 * @initial_capacity: as for cnf_filter_create_in()
 * @mem_limit: bytes the filter may use, see cnf_filter_set_limit()
 *
 * Return: the filter, or NULL when memory is short.
 */
struct cnf_filter *cnf_filter_create(u64 initial_capacity, u64 mem_limit)
{
	struct cnf_filter *f = cnf_filter_create_in(initial_capacity, NULL);

	if (f)
		f->own_budget.limit = mem_limit;
	return f;
}

/* Take @f off its budget's list. */
static void cnf_budget_leave(struct cnf_filter *f)
{
	struct cnf_filter **pp = &f->budget->filters;

	while (*pp && *pp != f)
		pp = &(*pp)->budget_next;
	if (*pp)
		*pp = f->budget_next;
}

/**
 * cnf_filter_retire - take an unpublished filter out of its shared budget
 * @f: a filter no writer changes any more and no plan names, under the
 *	lock of its budget
 *
 * Its walks end (they find it gone, as after cnf_filter_destroy()) and it
 * counts against its budget no more, like a retired table: what is left is
 * to wait for its readers and cnf_filter_destroy() it, which then needs no
 * lock.
 */
void cnf_filter_retire(struct cnf_filter *f)
{
	struct cnf_walk *w;

	for (w = f->moves.walks; w; w = w->next)
		w->f = NULL;
	f->moves.walks = NULL;
	cnf_budget_leave(f);
	f->budget = &f->own_budget;
	f->budget_next = f->own_budget.filters;
	f->own_budget.filters = f;
}

/**
 * cnf_filter_destroy - free a filter
 * @f: the filter, or NULL
 *
 * No reader may still see @f (e.g. after synchronize_rcu()); tables
 * retired earlier are freed by RCU callbacks.  Under the lock of its
 * budget, when shared.
 */
void cnf_filter_destroy(struct cnf_filter *f)
{
	unsigned int fam, len, i;
	struct cnf_walk *w;

	if (!f)
		return;
	/* A walk left over finds its filter gone (cnf_walk_step()). */
	for (w = f->moves.walks; w; w = w->next)
		w->f = NULL;
	cnf_free(f->moves.ring);
	cnf_budget_leave(f);
	cnf_v6dir_free(rcu_dereference_protected(f->v6dir, 1));
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		for (i = 0; i < CNF_STORE_TABLES; i++)
			cnf_table_free(rcu_dereference_protected(f->store[fam][i],
								 1));
		cnf_map_free(rcu_dereference_protected(f->map[fam], 1));
		for (len = 0; len < CNF_TIERS; len++)
			cnf_table_free(rcu_dereference_protected(f->tier[fam][len],
								 1));
	}
	/* After every table that shares it, retired ones included. */
	cnf_free(f->thash4);
	cnf_mutex_destroy(&f->lock);
	cnf_free(f);
}

/* ---- prefixes added, deleted, found ---- */
/* Is a bit of @p past its length set?  Read in place: once per add. */
static bool cnf_host_bits(const struct cnf_key *p)
{
	unsigned int w;

	if (p->family == CNF_V4)
		return p->len < 32 && ntohl(p->v4) & (~0U >> p->len);
	for (w = p->len / 32; w < 4; w++)
		if (ntohl(p->v6.s6_addr32[w]) &
		    (w == p->len / 32 ? ~0U >> p->len % 32 : ~0U))
			return true;
	return false;
}

static int cnf_prefix_check(const struct cnf_key *p)
{
	if (p->family >= CNF_NFAMILIES || p->len > cnf_family_bits(p->family) ||
	    cnf_host_bits(p))
		return -EINVAL;
	return 0;
}

/**
 * cnf_tally_add - count the keys a prefix will bring to its tables
 * @tally: the batch's tally
 * @key: a prefix the batch adds; an invalid one counts nothing
 *
 * A prefix of the /16 map brings no key (the map does not grow), but an
 * entry of the store, as a prefix shorter than its tier does.
 */
void cnf_tally_add(struct cnf_tally *tally, const struct cnf_key *key)
{
	unsigned int tl;

	if (cnf_prefix_check(key))
		return;
	tl = cnf_tier_of(key->family, key->len);
	if (tl != CNF_MAP_BITS)
		tally->keys[key->family][tl] += 1ULL << (tl - key->len);
	if (tl != key->len || tl == CNF_MAP_BITS)
		tally->stored[key->family][cnf_store_index(key)]++;
	tally->long_prefixes += cnf_tier_is_long(key->family, tl);
}

/**
 * cnf_filter_add - add a prefix
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix; bits past @key->len must be zero
 *
 * Overlapping prefixes are separate entries.  Tables grow when full; past
 * the memory limit keys go to the tables' stashes.  What can fail is done
 * before lookups see any of the prefix (cnf_filter_add_prepare()): a
 * prefix that expands into several keys either has room for all of them
 * in its tier, or is refused.
 *
 * Return: 0; -EEXIST if @f holds this prefix; -ENOSPC past the memory
 * limit or the largest table; -ENOMEM; -EINVAL for an unknown family, a
 * length past the family's width, or bits set past it.  On error @f is
 * exactly as before.
 */
int cnf_filter_add(struct cnf_filter *f, const struct cnf_key *key)
{
	int err;

	cnf_assert_held(&f->lock);
	f->expect_adds++;
	err = cnf_prefix_check(key);
	if (!err)
		err = cnf_tier_prepare(f, key, false);
	if (!err)
		err = cnf_tier_publish(f, key);
	/* A copy: the batch's tally is an upper bound (cnf_tally_step()). */
	f->expect_dups += err == -EEXIST && f->tally;
	return err;
}

/**
 * cnf_filter_add_prepare - the first step of an add made in two
 * @f: the filter, under cnf_filter_lock() until the second step
 * @key: the prefix, as for cnf_filter_add()
 *
 * For a change that adds a prefix to two filters, both seen by lookups:
 * each is prepared, then each committed.  What can fail is done here, and
 * nothing lookups see: the prefix's store entries, its tables made, and
 * room in its lookup table for all its keys, a single one included.  The
 * next change of @f is cnf_filter_add_commit() or cnf_filter_add_abort()
 * of @key.
 *
 * Return: as cnf_filter_add(); on error @f is as before, and there is no
 * second step.
 */
int cnf_filter_add_prepare(struct cnf_filter *f, const struct cnf_key *key)
{
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_prefix_check(key);
	return err ?: cnf_tier_prepare(f, key, true);
}

/**
 * cnf_filter_add_commit - the second step: the prepared prefix is added
 * @f: the filter, under the cnf_filter_lock() of the first step
 * @key: the prefix prepared
 *
 * Its keys take the room reserved for them: this fails only when one finds
 * no cuckoo path, its table cannot grow (the memory limit) and its stash
 * is full.
 *
 * Return: 0; -ENOSPC, -ENOMEM with @f as before the first step.
 */
int cnf_filter_add_commit(struct cnf_filter *f, const struct cnf_key *key)
{
	cnf_assert_held(&f->lock);
	return cnf_tier_publish(f, key);
}

/**
 * cnf_filter_add_abort - the second step: the prepared add is given up
 * @f: the filter, under the cnf_filter_lock() of the first step
 * @key: the prefix prepared
 *
 * @f is as before the first step, its memory included.
 */
void cnf_filter_add_abort(struct cnf_filter *f, const struct cnf_key *key)
{
	unsigned int tl = cnf_tier_of(key->family, key->len);

	cnf_assert_held(&f->lock);
	if (tl == CNF_MAP_BITS)
		cnf_map_unprepare(f, key);
	else if (tl != key->len)
		cnf_expanded_unprepare(f, key);
	else
		cnf_native_unprepare(f, key);
	cnf_undo_rollback(f);
}

/**
 * cnf_filter_del - delete a prefix
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix, as added
 *
 * Exactly that prefix goes: others that cover it, or that it covers, stay.
 * Tables that deletes leave mostly empty shrink.
 *
 * Return: 0; -ENOENT if @f does not hold this prefix; -EINVAL as for
 * cnf_filter_add().  On error @f is unchanged.
 */
int cnf_filter_del(struct cnf_filter *f, const struct cnf_key *key)
{
	unsigned int tl;
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_prefix_check(key);
	if (err)
		return err;
	tl = cnf_tier_of(key->family, key->len);
	if (tl == CNF_MAP_BITS) {
		if (!cnf_store_has(f, key))
			return -ENOENT;
		cnf_map_del(f, key);
	} else if (tl == key->len && cnf_tier_plain(f, key)) {
		err = cnf_tier_del(f, key);
		if (err)
			return err;
	} else if (!cnf_stored(f, key)) {
		return -ENOENT;
	} else if (tl == key->len) {
		cnf_del_native(f, key);
	} else {
		cnf_uncover_all(f, key, tl, 1U << (tl - key->len));
		cnf_store_del(f, key);
	}
	f->nlen[key->family][key->len]--;
	f->prefixes[key->family]--;
	return 0;
}

/**
 * cnf_filter_has - is a prefix stored
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix
 *
 * Return: true if @key was added (and not deleted) as it is; false also
 * for an invalid prefix.
 */
bool cnf_filter_has(struct cnf_filter *f, const struct cnf_key *key)
{
	cnf_assert_held(&f->lock);
	return !cnf_prefix_check(key) && cnf_stored(f, key);
}

/**
 * cnf_filter_match - the longest stored prefix covering a prefix
 * @f: the filter, under cnf_filter_lock()
 * @key: a prefix (an address: a prefix of the family's width)
 * @match: out: the stored prefix
 *
 * Return: 0; -ENOENT when no stored prefix covers @key; -EINVAL as for
 * cnf_filter_add().
 */
int cnf_filter_match(struct cnf_filter *f, const struct cnf_key *key,
		     struct cnf_key *match)
{
	int len, err;

	cnf_assert_held(&f->lock);
	err = cnf_prefix_check(key);
	if (err)
		return err;
	for (len = key->len; len >= 0; len--) {
		if (!f->nlen[key->family][len])
			continue;
		cnf_prefix_cut(key, len, match);
		if (cnf_stored(f, match))
			return 0;
	}
	return -ENOENT;
}

/* ---- lookups: the packet path ---- */

/*
 * Readers take no lock and never wait.  A lookup probes each tier that
 * holds keys (prefix.h) for the address cut to the tier's length, but the
 * long IPv6 tiers that the directory (v6dir.h) rules out.  Tables are
 * published with RCU and freed after a grace period; within a table, a
 * lookup stays exact while keys move (table.c: finding a key).
 */

/* The tiers of @fam that hold keys, @word'th 64 of them. */
static __always_inline u64 cnf_active(const struct cnf_filter *f,
				      enum cnf_family fam, unsigned int word)
{
	/* Pairs with cnf_active_set(): a tier seen has its table published. */
	return smp_load_acquire(&f->active[fam][word]);
}

/*
 * Is the /16 of an address whose first 32 bits are @top (host order) set
 * in map @m?  NULL: emptied since the tiers were read.
 */
static __always_inline bool cnf_map_has(const struct cnf_map *m, u32 top)
{
	u32 i = top >> (32 - CNF_MAP_BITS);

	return m && (READ_ONCE(m->words[i / 64]) >> (i % 64) & 1);
}

/*
 * Is the address whose first 32 bits are @top (host order) covered by
 * @fam's map or a key of its tiers of the IPv4 layout, those of @tiers?
 * The map first, then the tables: the loop tests no tier for the map.
 */
static __always_inline bool cnf_tiers32_have(const struct cnf_filter *f,
					     enum cnf_family fam, u64 tiers,
					     u32 top)
{
	const struct cnf_table *t;
	unsigned int tl;

	if ((tiers & BIT_ULL(CNF_MAP_BITS)) &&
	    cnf_map_has(rcu_dereference(f->map[fam]), top))
		return true;
	for (tiers &= ~BIT_ULL(CNF_MAP_BITS); tiers; tiers &= tiers - 1) {
		tl = __ffs64(tiers);
		t = rcu_dereference(f->tier[fam][tl]);
		/* NULL: emptied since the tiers were read. */
		if (t && cnf_table_has4(t, cnf_tier_key32(top, tl)))
			return true;
	}
	return false;
}

/* Every tier in @tiers, for a set with prefixes. */
static noinline bool cnf_lookup4_tiers(const struct cnf_filter *f,
				       __be32 addr, u64 tiers)
{
	return cnf_tiers32_have(f, CNF_V4, tiers, ntohl(addr));
}

/**
 * cnf_filter_lookup4 - does a stored prefix cover an IPv4 address
 * @f: the filter
 * @addr: the address, network byte order
 *
 * Under rcu_read_lock(), from any context; takes no lock.  Exact: true
 * only when a prefix added and not deleted covers @addr, whatever writers
 * do meanwhile.  One probe per tier that holds keys: at most four, and a
 * read of the /16 map.
 *
 * Return: true if a prefix of @f covers @addr.
 */
bool cnf_filter_lookup4(const struct cnf_filter *f, __be32 addr)
{
	u64 tiers = cnf_active(f, CNF_V4, 0);

	/* Addresses only: one table, the address tier, always there. */
	if (likely(tiers == BIT_ULL(CNF_V4_BITS)))
		return cnf_table_has4(rcu_dereference(f->tier[CNF_V4][CNF_V4_BITS]),
				      addr);
	return cnf_lookup4_tiers(f, addr, tiers);
}

/*
 * Is @addr, cut to the tier length @tl, a key of IPv6 tier table @t, of a
 * tier past 32 bits?  A table of two-word keys reads only those (prefix.h).
 */
static bool cnf_tier_has6(const struct cnf_table *t, unsigned int tl,
			  const struct in6_addr *addr)
{
	struct in6_addr cut;
	__be32 key[2];
	int ret;

	if (cnf_layout_words(cnf_tier_layout(tl)) == 2) {
		key[0] = addr->s6_addr32[0];
		key[1] = cnf_tier_key64(addr->s6_addr32[1], tl);
		ret = cnf_for_64_width(cnf_table_has, t, key);
		return likely(ret >= 0) ? ret : cnf_table_has_slow(t, key);
	}
	if (tl < CNF_V6_BITS) {
		cut = *addr;
		cnf_mask6(&cut, tl);
		addr = &cut;
	}
	return cnf_table_has6(t, addr);
}

/* Is @addr, cut to the tier length @tl, in IPv6 tier @tl, if it has keys? */
static bool cnf_tier_probe6(const struct cnf_filter *f, unsigned int tl,
			    const struct in6_addr *addr)
{
	const struct cnf_table *t = rcu_dereference(f->tier[CNF_V6][tl]);

	return t && cnf_tier_has6(t, tl, addr);
}

/*
 * The long tiers that may hold keys under an address whose first 32 bits
 * are @top, as directory bits: those its word in the directory names, or
 * without one, every long tier with keys.
 */
static __always_inline u32 cnf_long_tiers(const struct cnf_filter *f,
					  u32 top)
{
	const struct cnf_v6dir *d = rcu_dereference(f->v6dir);

	if (d) {
		/* Acquire: the tiers' reads come after, as after a probe. */
		return smp_load_acquire(&d->words[cnf_v6dir_index(d, top)]);
	}
	/* Pairs with cnf_active_set(), as cnf_active()'s read does. */
	return smp_load_acquire(&f->long_tiers);
}

/*
 * The tiers of up to 32 bits that hold keys, the long tiers that
 * cnf_long_tiers() names for @addr, and the /128 tier, for a set with
 * prefixes.  @low and @high: the first and last words of @active, as
 * cnf_filter_lookup6() read them.
 */
static noinline bool cnf_lookup6_tiers(const struct cnf_filter *f,
				       const struct in6_addr *addr,
				       u64 low, u64 high)
{
	u32 top = ntohl(addr->s6_addr32[0]), tiers;

	if (cnf_tiers32_have(f, CNF_V6, low & (BIT_ULL(33) - 1), top))
		return true;
	for (tiers = cnf_long_tiers(f, top); tiers; tiers &= tiers - 1)
		if (cnf_tier_probe6(f, cnf_v6dir_tier(__ffs(tiers)), addr))
			return true;
	return high && cnf_tier_probe6(f, CNF_V6_BITS, addr);
}

/**
 * cnf_filter_lookup6 - does a stored prefix cover an IPv6 address
 * @f: the filter
 * @addr: the address
 *
 * As cnf_filter_lookup4(); one probe per tier that holds keys, but the
 * long tiers the directory rules out for @addr (prefix.h).
 *
 * Return: true if a prefix of @f covers @addr.
 */
bool cnf_filter_lookup6(const struct cnf_filter *f, const struct in6_addr *addr)
{
	u64 low = cnf_active(f, CNF_V6, 0), high = cnf_active(f, CNF_V6, 2);

	BUILD_BUG_ON(CNF_V6_BITS / 64 != 2 || CNF_ACTIVE_WORDS != 3);
	/* Addresses only: the address tier alone, as for IPv4. */
	if (likely(!low && !cnf_active(f, CNF_V6, 1) &&
		   high == BIT_ULL(CNF_V6_BITS % 64)))
		return cnf_table_has6(rcu_dereference(f->tier[CNF_V6][CNF_V6_BITS]),
				      addr);
	return cnf_lookup6_tiers(f, addr, low, high);
}

/**
 * cnf_filter_contains - does a stored prefix cover an address
 * @f: the filter
 * @key: an address of either family (its length is not read)
 *
 * As cnf_filter_lookup4().
 *
 * Return: true if a prefix of @f covers @key; false for an unknown family.
 */
bool cnf_filter_contains(const struct cnf_filter *f, const struct cnf_key *key)
{
	if (key->family == CNF_V4)
		return cnf_filter_lookup4(f, key->v4);
	if (key->family == CNF_V6)
		return cnf_filter_lookup6(f, &key->v6);
	return false;
}

/* ---- batched IPv4 lookups ---- */

/* What a batched probe needs of an IPv4 key: its buckets and home tag. */
struct cnf_pos4 {
	const u64 *b[2];
	u32 tag;
};

static __always_inline void cnf_locate4_group(const struct cnf_table *t,
					      unsigned int width,
					      const __be32 *addrs,
					      unsigned int n,
					      struct cnf_pos4 *q)
{
	struct cnf_pos p;
	unsigned int i;

	for (i = 0; i < n; i++) {
		cnf_locate(t, width, &addrs[i], &p);
		q[i].b[0] = cnf_bucket_words(t, width, p.b[0]);
		q[i].b[1] = cnf_bucket_words(t, width, p.b[1]);
		q[i].tag = p.w[0];
		prefetch(q[i].b[0]);
		prefetch(q[i].b[1]);
	}
}

/*
 * What cnf_table_has_width() does, for a group: the hits stand, and the
 * misses go to the slow path if a write overlapped the group's read section
 * or the stash holds keys.
 */
static __always_inline void cnf_probe4_group(const struct cnf_table *t,
					     unsigned int width,
					     const __be32 *addrs,
					     const struct cnf_pos4 *q,
					     unsigned int n, bool *hits)
{
	unsigned int i, seq;
	bool slow;

	seq = raw_seqcount_begin(&t->seq);
	for (i = 0; i < n; i++)
		hits[i] = cnf_probe4(width, q[i].b[0], q[i].b[1], q[i].tag);
	slow = READ_ONCE(t->stash_n) != 0;
	slow |= read_seqcount_retry(&t->seq, seq);
	if (unlikely(slow))
		for (i = 0; i < n; i++)
			if (!hits[i])
				hits[i] = cnf_table_has4_slow(t, addrs[i]);
}

/*
 * Groups of CNF_LOOKUP_BATCH keys are located and their buckets prefetched
 * one group ahead of their probe, so that the cache misses of a large table
 * overlap with the work on the group before.
 */
static __always_inline void
cnf_table_has4_batch_width(const struct cnf_table *t, unsigned int width,
			   const __be32 *addrs, unsigned int n, bool *hits)
{
	struct cnf_pos4 q[2][CNF_LOOKUP_BATCH];
	unsigned int i, len, next, cur = 0;

	len = min_t(unsigned int, n, CNF_LOOKUP_BATCH);
	cnf_locate4_group(t, width, addrs, len, q[0]);
	for (i = 0; i < n; i += len, len = next, cur ^= 1) {
		next = min_t(unsigned int, n - i - len, CNF_LOOKUP_BATCH);
		cnf_locate4_group(t, width, addrs + i + len, next, q[cur ^ 1]);
		cnf_probe4_group(t, width, addrs + i, q[cur], len, hits + i);
	}
}

/*
 * Does IPv4 tier @tl (the map, or a table) cover each of @n addresses?
 * Or-ed into @hits: the tier is looked up once for them all.
 */
static void cnf_tier_has32_batch(const struct cnf_filter *f, unsigned int tl,
				 const __be32 *addrs, unsigned int n,
				 bool *hits)
{
	const struct cnf_table *t;
	const struct cnf_map *m;
	unsigned int i;

	if (tl == CNF_MAP_BITS) {
		m = rcu_dereference(f->map[CNF_V4]);
		for (i = 0; i < n; i++)
			hits[i] = hits[i] || cnf_map_has(m, ntohl(addrs[i]));
		return;
	}
	t = rcu_dereference(f->tier[CNF_V4][tl]);
	/* NULL: emptied since the tiers were read. */
	for (i = 0; t && i < n; i++)
		hits[i] = hits[i] ||
			  cnf_table_has4(t, cnf_tier_key32(ntohl(addrs[i]), tl));
}

/**
 * cnf_filter_lookup4_batch - many IPv4 lookups at once
 * @f: the filter
 * @addrs: @n addresses, network byte order
 * @n: how many
 * @hits: @n results: hits[i] for addrs[i]
 *
 * As cnf_filter_lookup4() for each address.  In the address tier, keys go
 * in groups of CNF_LOOKUP_BATCH, each prefetched while the group before is
 * probed, so that the cache misses of tables larger than the caches
 * overlap; the other tiers are probed one address at a time.
 */
void cnf_filter_lookup4_batch(const struct cnf_filter *f, const __be32 *addrs,
			      unsigned int n, bool *hits)
{
	u64 tiers = cnf_active(f, CNF_V4, 0);
	const struct cnf_table *t;

	memset(hits, 0, n * sizeof(*hits));
	t = rcu_dereference(f->tier[CNF_V4][CNF_V4_BITS]);
	if (t && (tiers & (1ULL << CNF_V4_BITS)))
		cnf_for_v4_width(cnf_table_has4_batch, t, addrs, n, hits);
	tiers &= ~(1ULL << CNF_V4_BITS);
	for (; tiers; tiers &= tiers - 1)
		cnf_tier_has32_batch(f, __ffs64(tiers), addrs, n, hits);
}
