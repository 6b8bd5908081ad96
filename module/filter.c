// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo_nf filter core: an exact cuckoo filter (Fan et al., CoNEXT 2014)
 * of IPv4 and IPv6 addresses, one table per family.
 *
 *   hash.h    where a key lives: its buckets and its slot, and back
 *   table.h   the table, its slot layouts and bucket tests
 *   table.c   one table's writers: cuckoo paths, deletes, the stash
 *   lookup.c  the readers: the packet path, and why it stays exact
 *   filter.c  (this file) the filter: growth, shrinking, memory limit, API
 *
 * A table that reaches its load limit, or finds no cuckoo path for a key,
 * is rebuilt twice as large (or as large as a batch announced) with a new
 * seed; past the memory limit the key goes to a small stash, and when that
 * is full the add fails with the filter unchanged.  A table that deletes
 * leave mostly empty is rebuilt smaller.
 */
#include "hash.h"

/* The filter's table of @fam, to its writers. */
static struct cnf_table *cnf_tab(const struct cnf_filter *f,
				 enum cnf_family fam)
{
	return rcu_dereference_protected(f->tab[fam], lockdep_is_held(&f->lock));
}

/* ---- growth ---- */

struct cnf_rebuild {
	struct cnf_table *t;
	struct cnf_path_node *path;
};

/* Into the buckets, else the stash: 0 or -ENOSPC. */
static int cnf_place(struct cnf_table *t, struct cnf_path_node *path,
		     const struct cnf_key *key)
{
	if (!cnf_table_insert(t, path, key) || cnf_stash_put(t, key))
		return 0;
	return -ENOSPC;
}

static int cnf_rebuild_one(void *ctx, const struct cnf_key *key)
{
	struct cnf_rebuild *rb = ctx;

	return cnf_place(rb->t, rb->path, key);
}

/* What counts against the memory limit: the tables and the charges. */
static u64 cnf_filter_bytes(const struct cnf_filter *f)
{
	u64 bytes = f->charged;
	unsigned int fam;

	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		bytes += cnf_tab(f, fam)->bytes;
	return bytes;
}

/*
 * Smallest log of @fam whose table holds @entries within the load limit,
 * at least @min_log; past the family's largest table, that one.
 */
static unsigned int cnf_log_for(enum cnf_family fam, u64 entries,
				unsigned int min_log)
{
	unsigned int log = min_log, max = cnf_max_log(fam);

	while (log < max && cnf_table_limit(log) < entries)
		log++;
	return log;
}

/*
 * Replace @fam's table by one of at least 2^@log buckets holding the same
 * keys; a size whose rebuild does not fit is retried one size up.  New seeds
 * each time: an unlucky (or crafted) key set does not stay unlucky.  The old
 * table stays in use until the new one is complete, and is freed after a
 * grace period: both count against the memory limit.  Fails with -ENOSPC
 * beyond the memory limit or the family's largest table, -ENOMEM.
 */
static int cnf_filter_rebuild(struct cnf_filter *f, enum cnf_family fam,
			      unsigned int log)
{
	struct cnf_table *old = cnf_tab(f, fam);
	u64 in_use = cnf_filter_bytes(f);
	struct cnf_rebuild rb = { .path = f->path };

	for (; log <= cnf_max_log(fam); log++) {
		if (in_use + cnf_table_bytes(fam, log) > f->mem_limit)
			return -ENOSPC;
		rb.t = cnf_table_alloc(fam, log);
		if (!rb.t)
			return -ENOMEM;
		if (!cnf_table_walk(old, cnf_rebuild_one, &rb))
			break;
		cnf_table_free(rb.t);
		rb.t = NULL;
	}
	if (!rb.t)
		return -ENOSPC;
	rcu_assign_pointer(f->tab[fam], rb.t);
	cnf_table_retire(old);
	return 0;
}

static int cnf_filter_grow(struct cnf_filter *f, enum cnf_family fam,
			   unsigned int log)
{
	int err = cnf_filter_rebuild(f, fam, log);

	if (!err)
		f->grows[fam]++;
	return err;
}

/*
 * The size to grow @t to: twice as large, or large enough for the adds a
 * batch announced (cnf_filter_expect()), but never more than 8 times its
 * size in one step: announced adds may be duplicates, or fail.
 */
static unsigned int cnf_grow_log(const struct cnf_filter *f,
				 const struct cnf_table *t)
{
	u64 want = t->count + 1 + f->expect;

	want = min_t(u64, want, 8 * t->limit);
	return cnf_log_for(t->family, want, t->log + 1);
}

/*
 * A table that deletes left mostly empty (a sixteenth of its slots in use)
 * is rebuilt at a size it fills to half, not below the initial size.  Best
 * effort: a failure keeps the larger table.
 */
static void cnf_maybe_shrink(struct cnf_filter *f, enum cnf_family fam)
{
	const struct cnf_table *t = cnf_tab(f, fam);
	unsigned int log;

	if (t->log <= f->initial_log ||
	    t->count >= cnf_table_capacity(t->log) / 16)
		return;
	log = cnf_log_for(fam, 2 * t->count, f->initial_log);
	if (log < t->log)
		cnf_filter_rebuild(f, fam, log);
}

/* ---- filter ---- */

static int cnf_family_check(const struct cnf_key *key)
{
	return key->family < CNF_NFAMILIES ? 0 : -EINVAL;
}

/*
 * An absent key that @f's table has no room for: past its load limit
 * (@grow_first), or without a cuckoo path.
 */
static noinline int cnf_add_slow(struct cnf_filter *f,
				 const struct cnf_key *key, bool grow_first)
{
	struct cnf_table *t = cnf_tab(f, key->family);
	int err;

	/* Past the load limit, grow first; if that fails, any room will do. */
	if (grow_first) {
		if (!cnf_filter_grow(f, key->family, cnf_grow_log(f, t)))
			t = cnf_tab(f, key->family);
		if (!cnf_table_insert(t, f->path, key))
			return 0;
	}
	err = cnf_filter_grow(f, key->family, t->log + 1);
	if (!err)
		return cnf_place(cnf_tab(f, key->family), f->path, key);
	return cnf_stash_put(t, key) ? 0 : err;
}

/**
 * cnf_filter_add - add an address
 * @f: the filter, under cnf_filter_lock()
 * @key: the address
 *
 * The table grows when full; past the memory limit the key goes to the
 * stash.
 *
 * Return: 0; -EEXIST if @f holds @key; -ENOSPC past the memory limit or
 * the largest table; -ENOMEM; -EINVAL for an unknown family.  On error @f
 * is exactly as before.
 */
int cnf_filter_add(struct cnf_filter *f, const struct cnf_key *key)
{
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_family_check(key);
	if (err)
		return err;
	err = cnf_table_add(cnf_tab(f, key->family), f->path, key);
	if (err == -E2BIG || err == -ENOSPC)
		return cnf_add_slow(f, key, err == -E2BIG);
	return err;
}

/**
 * cnf_filter_prefetch - an address will be added or deleted soon
 * @f: the filter, under cnf_filter_lock()
 * @key: the address
 *
 * Its buckets start loading into the cache; a batch that calls this
 * CNF_PREFETCH_AHEAD keys ahead overlaps the cache misses of its changes.
 */
void cnf_filter_prefetch(struct cnf_filter *f, const struct cnf_key *key)
{
	cnf_assert_held(&f->lock);
	if (!cnf_family_check(key))
		cnf_table_prefetch(cnf_tab(f, key->family), key);
}

/**
 * cnf_filter_del - delete an address
 * @f: the filter, under cnf_filter_lock()
 * @key: the address
 *
 * A table that deletes leave mostly empty shrinks.
 *
 * Return: 0; -ENOENT if @f does not hold @key; -EINVAL for an unknown
 * family.  On error @f is unchanged.
 */
int cnf_filter_del(struct cnf_filter *f, const struct cnf_key *key)
{
	struct cnf_table *t;
	bool stashing;
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_family_check(key);
	if (err)
		return err;
	t = cnf_tab(f, key->family);
	/* A stash in use means the limit stopped growth: keep the size. */
	stashing = t->stash_n;
	err = cnf_table_del(t, f->path, key);
	if (!err && !stashing)
		cnf_maybe_shrink(f, key->family);
	return err;
}

/**
 * cnf_filter_reserve - grow now for many keys
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family
 * @entries: keys of @fam that should fit without growing again
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
	t = cnf_tab(f, fam);
	log = cnf_log_for(fam, entries, t->log);
	if (log == t->log)
		return 0;
	if (cnf_table_limit(cnf_max_log(fam)) < entries)
		return -ENOSPC;
	return cnf_filter_grow(f, fam, log);
}

/**
 * cnf_filter_expect - about this many adds follow
 * @f: the filter, under cnf_filter_lock()
 * @adds: how many; 0 when the batch is done
 *
 * Growth then sizes for them, within 8 times the table's size per step:
 * a batch's entries may be duplicates, or fail.
 */
void cnf_filter_expect(struct cnf_filter *f, u64 adds)
{
	cnf_assert_held(&f->lock);
	f->expect = adds;
}

/**
 * cnf_filter_charge - count memory held for the filter against its limit
 * @f: the filter, under cnf_filter_lock()
 * @bytes: what its user holds (a dump's snapshot)
 *
 * Return: 0, or -ENOSPC past the memory limit (nothing charged).
 */
int cnf_filter_charge(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	if (cnf_filter_bytes(f) + bytes > f->mem_limit)
		return -ENOSPC;
	f->charged += bytes;
	return 0;
}

/**
 * cnf_filter_uncharge - give back what cnf_filter_charge() counted
 * @f: the filter, under cnf_filter_lock()
 * @bytes: as charged
 */
void cnf_filter_uncharge(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	f->charged -= min(bytes, f->charged);
}

/**
 * cnf_filter_flush - remove every address
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
		fresh[fam] = cnf_table_alloc(fam, f->initial_log);
		if (!fresh[fam])
			goto err_alloc;
	}
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_table *old = cnf_tab(f, fam);

		rcu_assign_pointer(f->tab[fam], fresh[fam]);
		cnf_table_retire(old);
	}
	return 0;

err_alloc:
	while (fam--)
		cnf_table_free(fresh[fam]);
	return -ENOMEM;
}

/**
 * cnf_filter_set_limit - change the memory limit
 * @f: the filter, under cnf_filter_lock()
 * @bytes: the new limit, covering both tables, the old table during a
 *	rebuild, and the charges
 *
 * Return: 0, or -EINVAL when @f already uses more than @bytes.
 */
int cnf_filter_set_limit(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	if (bytes < cnf_filter_bytes(f))
		return -EINVAL;
	f->mem_limit = bytes;
	return 0;
}

/**
 * cnf_filter_walk - call a function for every address
 * @f: the filter, under cnf_filter_lock()
 * @fn: called with @ctx and each address, IPv4 first
 * @ctx: passed to @fn
 *
 * Return: 0, or @fn's first non-zero return, which stops the walk.
 */
int cnf_filter_walk(struct cnf_filter *f,
		    int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	unsigned int fam;
	int err;

	cnf_assert_held(&f->lock);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		err = cnf_table_walk(cnf_tab(f, fam), fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

/**
 * cnf_filter_count - how many addresses of a family
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family
 *
 * Return: the count, stash included; 0 for an unknown family.
 */
u64 cnf_filter_count(struct cnf_filter *f, enum cnf_family fam)
{
	cnf_assert_held(&f->lock);
	return fam < CNF_NFAMILIES ? cnf_tab(f, fam)->count : 0;
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
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		const struct cnf_table *t = cnf_tab(f, fam);
		struct cnf_table_stats *ts = &st->fam[fam];

		ts->entries = t->count;
		ts->capacity = cnf_table_capacity(t->log);
		ts->bytes = t->bytes;
		ts->grows = f->grows[fam];
		ts->stashed = t->stash_n;
	}
	st->mem_limit = f->mem_limit;
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
	return cnf_table_limit(min(cnf_max_log(CNF_V4), cnf_max_log(CNF_V6)));
}

/**
 * cnf_filter_create - a new, empty filter
 * @initial_capacity: keys per family the first tables hold without growing,
 *	at most cnf_filter_max_capacity(); flush returns to this size
 * @mem_limit: bytes the filter may use, see cnf_filter_set_limit()
 *
 * Return: the filter, or NULL when memory is short.
 */
struct cnf_filter *cnf_filter_create(u64 initial_capacity, u64 mem_limit)
{
	struct cnf_filter *f = cnf_zalloc(sizeof(*f));
	unsigned int fam;

	if (!f)
		return NULL;
	cnf_mutex_init(&f->lock);
	f->initial_log = cnf_log_for(CNF_V6, initial_capacity,
				     CNF_MIN_BUCKETS_LOG);
	f->mem_limit = mem_limit;
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_table *t = cnf_table_alloc(fam, f->initial_log);

		if (!t)
			goto err_alloc;
		RCU_INIT_POINTER(f->tab[fam], t);
	}
	return f;

err_alloc:
	cnf_filter_destroy(f);
	return NULL;
}

/**
 * cnf_filter_destroy - free a filter
 * @f: the filter, or NULL
 *
 * No reader may still see @f (e.g. after synchronize_rcu()); tables
 * retired earlier are freed by RCU callbacks.
 */
void cnf_filter_destroy(struct cnf_filter *f)
{
	unsigned int fam;

	if (!f)
		return;
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		cnf_table_free(rcu_dereference_protected(f->tab[fam], 1));
	cnf_mutex_destroy(&f->lock);
	cnf_free(f);
}
