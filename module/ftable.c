// SPDX-License-Identifier: GPL-2.0
/*
 * A filter's tables, one at a time: made, grown and shrunk as they fill,
 * the tables an add replaced kept to undo it, and the /16 maps.
 *
 * A table that reaches its load limit, or finds no cuckoo path for a key,
 * is rebuilt twice as large (or as large as a batch announced) with a new
 * seed; past the memory limit the key goes to a small stash, and when that
 * is full the add fails with the filter unchanged.  A table that deletes,
 * or the duplicates of a batch, leave mostly empty is rebuilt smaller.
 */
#include "budget.h"
#include "ftable.h"

/**
 * cnf_deref - a table of a filter, to its writers
 * @f: the filter, under cnf_filter_lock()
 * @tp: where @f points to the table: a tier or a store
 *
 * Return: the table, or NULL.
 */
struct cnf_table *cnf_deref(const struct cnf_filter *f,
			    struct cnf_table __rcu *const *tp)
{
	return rcu_dereference_protected(*tp, lockdep_is_held(&f->lock));
}

/*
 * A new table for @f (cnf_table_alloc()), numbered and recording its
 * moves for @f's walks (struct cnf_moves).
 */
struct cnf_table *cnf_ftable_alloc(struct cnf_filter *f,
				   enum cnf_layout layout,
				   unsigned int log, bool summary,
				   u32 **thash4)
{
	struct cnf_table *t = cnf_table_alloc(layout, log, summary, thash4);

	if (t) {
		t->serial = ++f->serials;
		t->moves = &f->moves;
	}
	return t;
}

/* ---- undoing an add ---- */

/*
 * @old, which @tp pointed to, is out of the readers' sight: keep it if it
 * is the first table an add under way replaced there, else free it.
 */
static void cnf_replaced(struct cnf_filter *f, struct cnf_table __rcu **tp,
			 struct cnf_table *old)
{
	unsigned int i;

	if (f->undo_on) {
		for (i = 0; i < f->undo_n && f->undo[i].tp != tp; i++)
			;
		if (i == f->undo_n &&
		    !WARN_ON_ONCE(i == ARRAY_SIZE(f->undo))) {
			f->undo[f->undo_n++] = (struct cnf_undo){ tp, old };
			return;
		}
	}
	cnf_table_retire(old);
}

/**
 * cnf_undo_begin - start an add that may have to be undone
 * @f: the filter, under cnf_filter_lock()
 *
 * Until cnf_undo_commit() or cnf_undo_rollback(), tables the add replaces
 * are kept: they count against the memory limit, as during any rebuild.
 */
void cnf_undo_begin(struct cnf_filter *f)
{
	f->undo_n = 0;
	f->undo_on = true;
}

/**
 * cnf_undo_commit - the add stands: free the tables it replaced
 * @f: the filter, under cnf_filter_lock()
 */
void cnf_undo_commit(struct cnf_filter *f)
{
	while (f->undo_n)
		cnf_table_retire(f->undo[--f->undo_n].old);
	f->undo_on = false;
}

static bool cnf_in_table(void *ctx, const struct cnf_key *key)
{
	const struct cnf_table *t = ctx;

	return cnf_table_contains(t, key);
}

/**
 * cnf_undo_rollback - put back the tables a failed add replaced
 * @f: the filter, under cnf_filter_lock(), its add's keys taken out again
 *
 * A kept table is the one from before the add, but for keys of the add
 * that went in before it was replaced: those the current table no longer
 * holds.  A table the add created and emptied is gone: so is what it
 * replaced.
 */
void cnf_undo_rollback(struct cnf_filter *f)
{
	struct cnf_table *old, *now;

	f->undo_on = false;
	while (f->undo_n) {
		struct cnf_undo *u = &f->undo[--f->undo_n];

		old = u->old;
		now = cnf_deref(f, u->tp);
		if (!now) {
			cnf_table_retire(old);
			continue;
		}
		cnf_table_prune(old, f->path, cnf_in_table, now);
		rcu_assign_pointer(*u->tp, old);
		cnf_table_retire(now);
	}
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

/*
 * Smallest log of @layout whose table holds @entries within the load limit,
 * at least @min_log; past the layout's largest table, that one.
 */
unsigned int cnf_log_for(enum cnf_layout layout, u64 entries,
			 unsigned int min_log)
{
	unsigned int log = min_log, max = cnf_max_log(layout);

	while (log < max && cnf_table_limit(log) < entries)
		log++;
	return log;
}

/*
 * Replace the table at @tp by one of at least 2^@log buckets holding the
 * same keys; a size whose rebuild does not fit is retried one size up.  The
 * first try shares the filter's tabulation (IPv4 layouts), every retry
 * takes new seeds: an unlucky (or crafted) key set does not stay unlucky.
 * The old table stays in use until the new one is complete, and is freed
 * after a grace period: both count against the memory limit.  Fails with
 * -ENOSPC beyond the memory limit or the family's largest table, -ENOMEM.
 */
static int cnf_rebuild_within(struct cnf_filter *f,
			      struct cnf_table __rcu **tp, unsigned int log,
			      u64 limit)
{
	struct cnf_table *old = cnf_deref(f, tp);
	enum cnf_layout layout = cnf_table_layout(old);
	u64 in_use = cnf_budget_used(f->budget);
	struct cnf_rebuild rb = { .path = f->path };
	bool summary = old->summary;
	u32 **thash4 = &f->thash4;

	for (; log <= cnf_max_log(layout); log++, thash4 = NULL) {
		if (in_use + cnf_table_bytes(layout, log, summary, thash4) > limit)
			return -ENOSPC;
		rb.t = cnf_ftable_alloc(f, layout, log, summary, thash4);
		if (!rb.t)
			return -ENOMEM;
		if (!cnf_table_walk(old, cnf_rebuild_one, &rb))
			break;
		cnf_table_free(rb.t);
		rb.t = NULL;
	}
	if (!rb.t)
		return -ENOSPC;
	rcu_assign_pointer(*tp, rb.t);
	cnf_replaced(f, tp, old);
	return 0;
}

static int cnf_ftable_rebuild(struct cnf_filter *f,
			      struct cnf_table __rcu **tp, unsigned int log)
{
	return cnf_rebuild_within(f, tp, log, f->budget->limit);
}

/*
 * Is @tp a store table of @f?  Then store table *@i of family *@fam, else
 * tier *@i of family *@fam.
 */
static bool cnf_ftable_where(const struct cnf_filter *f,
			     struct cnf_table __rcu *const *tp,
			     unsigned int *fam, unsigned int *i)
{
	for (*fam = 0; *fam < CNF_NFAMILIES; (*fam)++)
		for (*i = 0; *i < CNF_STORE_TABLES; (*i)++)
			if (tp == &f->store[*fam][*i])
				return true;
	*fam = (tp - &f->tier[0][0]) / CNF_TIERS;
	*i = (tp - &f->tier[0][0]) % CNF_TIERS;
	return false;
}

/* The family whose figures a table of @f counts in. */
static enum cnf_family cnf_ftable_family(const struct cnf_filter *f,
					 struct cnf_table __rcu *const *tp)
{
	unsigned int fam, i;

	cnf_ftable_where(f, tp, &fam, &i);
	return fam;
}

int cnf_ftable_grow(struct cnf_filter *f, struct cnf_table __rcu **tp,
		    unsigned int log)
{
	int err = cnf_ftable_rebuild(f, tp, log);

	if (!err)
		f->grows[cnf_ftable_family(f, tp)]++;
	return err;
}

/* The address tiers (/32, /128) are always there; the others come and go. */
static bool cnf_ftable_is_address(const struct cnf_filter *f,
				  struct cnf_table __rcu *const *tp)
{
	return tp == &f->tier[CNF_V4][CNF_V4_BITS] ||
	       tp == &f->tier[CNF_V6][CNF_V6_BITS];
}

/*
 * The keys the batch under way brings to the table at @tp, by its tally
 * (cnf_filter_expect_tally()); 0 without one.
 */
static u64 cnf_tally_want(const struct cnf_filter *f,
			  struct cnf_table __rcu *const *tp)
{
	const struct cnf_tally *tally = f->tally;
	unsigned int fam, i;

	if (!tally)
		return 0;
	if (cnf_ftable_where(f, tp, &fam, &i))
		return tally->stored[fam][i];
	return tally->keys[fam][i];
}

/**
 * cnf_tally_step - how far a batch's tally lets a table grow now
 * @want: the keys the tally counts for the table
 * @have: the keys the table holds, at least 1
 * @copies: whether an add of the batch found its prefix stored already
 *
 * A tally counts every key a batch's adds bring: copies, and keys stored
 * already, too.  While every add of the batch so far brought a new prefix,
 * as in a published list, it is taken at its word: the table grows once,
 * to @want, when it first fills.  Once an add found its prefix stored
 * (@copies), it is an upper bound only, and sizing for it would size for
 * 2,000,000 copies of one address: the table grows by what landed, to
 * @want but not past CNF_TALLY_STEP times @have.  The steps are counted back from
 * @want, divided by CNF_TALLY_STEP as often as need be, so that on its way
 * to @want the largest table rebuilt is of 2 * @want / CNF_TALLY_STEP keys
 * at most (2: the rounding to a power of two).  Either way the end of the
 * batch gives back what its copies left empty (cnf_filter_expect()).
 *
 * Return: the keys to size the table for, at most @want.
 */
u64 cnf_tally_step(u64 want, u64 have, bool copies)
{
	if (!copies)
		return want;
	while (want > CNF_TALLY_STEP * have)
		want /= CNF_TALLY_STEP;
	return want;
}

/*
 * The size to grow the table at @tp to: twice as large, or for an address
 * tier large enough for the adds a batch announced (cnf_filter_expect()),
 * but never more than 8 times its size in one step: announced adds may be
 * duplicates, or fail.  A count of prefixes says little of the keys other
 * tables get, or of how many the addresses of a list are; a batch's tally
 * tells, for every table: then its step (cnf_tally_step()).  Either is a
 * guess, which the headroom bounds: a size whose rebuild would not fit the
 * memory limit gives way to the largest that does, down to twice as
 * large, so that a batch grows a table as far as adds one by one would,
 * and no less.
 */
static unsigned int cnf_grow_log(const struct cnf_filter *f,
				 struct cnf_table __rcu *const *tp)
{
	const struct cnf_table *t = cnf_deref(f, tp);
	enum cnf_layout layout = cnf_table_layout(t);
	u64 want = t->count + 1;
	unsigned int log;

	if (f->tally)
		want = max_t(u64, want, cnf_tally_step(cnf_tally_want(f, tp),
						       t->count + 1,
						       f->expect_dups));
	else if (cnf_ftable_is_address(f, tp))
		want = min_t(u64, want + f->expect, 8 * t->limit);
	log = cnf_log_for(layout, want, t->log + 1);
	while (log > t->log + 1U &&
	       !cnf_fits(f, cnf_table_bytes(layout, log, t->summary, true)))
		log--;
	return log;
}

/* The address tiers start at, and shrink back to, the initial size. */
static unsigned int cnf_floor_log(const struct cnf_filter *f,
				  struct cnf_table __rcu *const *tp)
{
	return cnf_ftable_is_address(f, tp) ? f->initial_log : CNF_MIN_BUCKETS_LOG;
}

/*
 * A table with fewer keys than 1/@part of its slots is rebuilt at the
 * smallest size that holds @room keys, not below its initial size.  Not
 * while its stash is in use: the memory limit stopped its growth, and the
 * keys there may need the room.  Best effort: a failure keeps the larger
 * table.
 */
void cnf_shrink_below(struct cnf_filter *f, struct cnf_table __rcu **tp,
		      unsigned int part, u64 room)
{
	const struct cnf_table *t = cnf_deref(f, tp);
	unsigned int log, floor = cnf_floor_log(f, tp);

	if (t->log <= floor || t->stash_n ||
	    t->count >= cnf_table_capacity(t->log) / part)
		return;
	log = cnf_log_for(cnf_table_layout(t), room, floor);
	if (log < t->log)
		cnf_ftable_rebuild(f, tp, log);
}

/*
 * A table that deletes left mostly empty (a sixteenth of its slots in use)
 * is rebuilt at a size it fills to half: before it is rebuilt again its
 * keys double (growth) or halve again, so that adds and deletes in turn
 * do not rebuild it each time.
 */
static void cnf_maybe_shrink(struct cnf_filter *f, struct cnf_table __rcu **tp)
{
	const struct cnf_table *t = cnf_deref(f, tp);

	cnf_shrink_below(f, tp, 16, 2 * t->count);
}

/*
 * Deletes left more bits in the summary of @t than it has keys, and more
 * than it has buckets: more than twice as many absent keys as need be
 * pass it.  A new summary costs the deletes that made it so a hash each.
 * Best effort: a failure keeps the stale one.
 */
static void cnf_maybe_refresh(struct cnf_filter *f, struct cnf_table *t)
{
	if (!t->summary || t->stale <= max_t(u64, t->count, t->mask + 1))
		return;
	if (cnf_fits(f, cnf_summary_bytes(cnf_table_layout(t), t->log, true)))
		cnf_summary_refresh(t);
}

/**
 * cnf_ftable_ensure - make sure a filter has a table at a place
 * @f: the filter, under cnf_filter_lock()
 * @tp: where it goes
 * @layout: the layout of a table made now, empty and of its smallest size,
 *	or during a batch the first step towards its tally's keys
 *	(cnf_filter_expect_tally())
 *
 * A batch's table grows as its keys land (cnf_tally_step()); but a table
 * of a few dozen keys filled to its load limit, then rebuilt, costs a
 * list of a thousand prefixes a fifth of its load time.  So a table a
 * batch makes takes its first step at once, as if it held
 * CNF_TALLY_FIRST keys (once the batch had copies, at most 64 times as
 * many, a few KiB), which the end of the batch gives back if they do not
 * come (cnf_filter_expect()).
 *
 * Return: 0; -ENOSPC past the memory limit; -ENOMEM.
 */
int cnf_ftable_ensure(struct cnf_filter *f, struct cnf_table __rcu **tp,
		      enum cnf_layout layout)
{
	unsigned int floor, log, fam, i;
	struct cnf_table *t;
	bool summary;

	if (cnf_deref(f, tp))
		return 0;
	/* The stores are for writers only. */
	summary = !cnf_ftable_where(f, tp, &fam, &i);
	floor = cnf_floor_log(f, tp);
	log = cnf_log_for(layout, cnf_tally_step(cnf_tally_want(f, tp),
						 CNF_TALLY_FIRST,
						 f->expect_dups), floor);
	if (!cnf_fits(f, cnf_table_bytes(layout, log, summary, true)))
		log = floor;
	if (!cnf_fits(f, cnf_table_bytes(layout, log, summary, true)))
		return -ENOSPC;
	t = cnf_ftable_alloc(f, layout, log, summary, &f->thash4);
	if (!t)
		return -ENOMEM;
	rcu_assign_pointer(*tp, t);
	return 0;
}

/*
 * Free a table of a filter; NULL afterwards.  Readers that still see it
 * keep it until a grace period has passed.
 */
void cnf_ftable_drop(struct cnf_filter *f, struct cnf_table __rcu **tp)
{
	struct cnf_table *t = cnf_deref(f, tp);

	RCU_INIT_POINTER(*tp, NULL);
	cnf_table_retire(t);
}

/**
 * cnf_ftable_release - free a table of a filter that holds nothing
 * @f: the filter, under cnf_filter_lock()
 * @tp: where the table is, if there is one
 *
 * The address tiers stay.
 */
void cnf_ftable_release(struct cnf_filter *f, struct cnf_table __rcu **tp)
{
	const struct cnf_table *t = cnf_deref(f, tp);

	if (t && !t->count && !cnf_ftable_is_address(f, tp))
		cnf_ftable_drop(f, tp);
}

/**
 * cnf_ftable_has - is a key in a table of a filter
 * @f: the filter, under cnf_filter_lock()
 * @tp: where the table is, if there is one
 * @key: a key of the table's layout
 *
 * Return: true if there is a table and it holds @key.
 */
bool cnf_ftable_has(const struct cnf_filter *f, struct cnf_table __rcu *const *tp,
		    const struct cnf_key *key)
{
	const struct cnf_table *t = cnf_deref(f, tp);

	return t && cnf_table_contains(t, key);
}

/*
 * An absent key that the table at @tp has no room for: past its load limit
 * (@grow_first), or without a cuckoo path.  Either way the table grows to
 * cnf_grow_log()'s size: the adds a batch announced come all the same.
 */
static noinline int cnf_add_slow(struct cnf_filter *f,
				 struct cnf_table __rcu **tp,
				 const struct cnf_key *key, bool grow_first)
{
	struct cnf_table *t = cnf_deref(f, tp);
	int err;

	/* Past the load limit, grow first; if that fails, any room will do. */
	if (grow_first) {
		if (!cnf_ftable_grow(f, tp, cnf_grow_log(f, tp)))
			t = cnf_deref(f, tp);
		if (!cnf_table_insert(t, f->path, key))
			return 0;
	}
	/* A table grown may have filled its stash with keys of its own. */
	for (;;) {
		err = cnf_ftable_grow(f, tp, cnf_grow_log(f, tp));
		if (err)
			return cnf_stash_put(t, key) ? 0 : err;
		t = cnf_deref(f, tp);
		if (!cnf_place(t, f->path, key))
			return 0;
	}
}

/**
 * cnf_ftable_add - add a key to a table of a filter, growing it when full
 * @f: the filter, under cnf_filter_lock()
 * @tp: where the table is
 * @key: a key of the table's layout
 *
 * Past the memory limit the key goes to the table's stash.
 *
 * Return: 0; -EEXIST if the table holds @key; -ENOSPC past the memory
 * limit or the largest table; -ENOMEM.  On error the table is unchanged.
 */
int cnf_ftable_add(struct cnf_filter *f, struct cnf_table __rcu **tp,
		   const struct cnf_key *key)
{
	int err = cnf_table_add(cnf_deref(f, tp), f->path, key);

	if (err == -E2BIG || err == -ENOSPC)
		return cnf_add_slow(f, tp, key, err == -E2BIG);
	return err;
}

/**
 * cnf_ftable_reserve - room in a table of a filter for keys about to go in
 * @f: the filter, under cnf_filter_lock()
 * @tp: where the table is
 * @keys: how many
 *
 * The table grows now, if they would take it past its load limit, to the
 * size its growth would have (or larger, to hold them all): then adding
 * them moves keys at most, and an add that makes several keys visible
 * fails, if it must, before the first.  The table replaced is the add's
 * to put back (cnf_undo_begin()).
 *
 * Return: 0; -ENOSPC past the memory limit or the largest table; -ENOMEM.
 */
int cnf_ftable_reserve(struct cnf_filter *f, struct cnf_table __rcu **tp,
		       u64 keys)
{
	const struct cnf_table *t = cnf_deref(f, tp);
	unsigned int log;

	if (!keys || t->count + keys <= t->limit)
		return 0;
	log = max_t(unsigned int, cnf_grow_log(f, tp),
		    cnf_log_for(cnf_table_layout(t), t->count + keys, t->log));
	if (cnf_table_limit(log) < t->count + keys)
		return -ENOSPC;
	return cnf_ftable_grow(f, tp, log);
}

/**
 * cnf_ftable_del - delete a key from a table of a filter
 * @f: the filter, under cnf_filter_lock()
 * @tp: where the table is, if there is one
 * @key: a key of the table's layout
 *
 * A table that deletes leave mostly empty shrinks.
 *
 * Return: 0, or -ENOENT if the table does not hold @key (unchanged).
 */
int cnf_ftable_del(struct cnf_filter *f, struct cnf_table __rcu **tp,
		   const struct cnf_key *key)
{
	struct cnf_table *t = cnf_deref(f, tp);
	bool stashing;
	int err;

	if (!t)
		return -ENOENT;
	/* A stash in use means the limit stopped growth: keep the size. */
	stashing = t->stash_n;
	err = cnf_table_del(t, f->path, key);

	if (!err && !stashing) {
		cnf_maybe_shrink(f, tp);
		cnf_maybe_refresh(f, cnf_deref(f, tp));
	}
	return err;
}

/* ---- the /16 maps ---- */

/**
 * cnf_map_deref - a family's /16 map, to its writers
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family
 *
 * Return: the map, or NULL.
 */
struct cnf_map *cnf_map_deref(const struct cnf_filter *f, enum cnf_family fam)
{
	return rcu_dereference_protected(f->map[fam], lockdep_is_held(&f->lock));
}

void cnf_map_free(struct cnf_map *m)
{
	if (!m)
		return;
	cnf_free(m->words);
	cnf_free(m);
}

static void cnf_map_free_rcu(struct rcu_head *head)
{
	cnf_map_free(container_of(head, struct cnf_map, rcu));
}

/**
 * cnf_map_ensure - make sure a family has a /16 map
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family
 *
 * A map made now is empty.
 *
 * Return: 0; -ENOSPC past the memory limit; -ENOMEM.
 */
int cnf_map_ensure(struct cnf_filter *f, enum cnf_family fam)
{
	size_t bytes = sizeof(struct cnf_map) + CNF_MAP_WORDS * sizeof(u64);
	struct cnf_map *m;

	if (cnf_map_deref(f, fam))
		return 0;
	if (!cnf_fits(f, bytes))
		return -ENOSPC;
	m = cnf_zalloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->words = cnf_zalloc(CNF_MAP_WORDS * sizeof(u64));
	if (!m->words) {
		cnf_free(m);
		return -ENOMEM;
	}
	m->bytes = bytes;
	rcu_assign_pointer(f->map[fam], m);
	return 0;
}

/* Unpublish a family's map; readers that still see it keep it a while. */
void cnf_map_drop(struct cnf_filter *f, enum cnf_family fam)
{
	struct cnf_map *m = cnf_map_deref(f, fam);

	RCU_INIT_POINTER(f->map[fam], NULL);
	cnf_call_rcu(&m->rcu, cnf_map_free_rcu);
}

/**
 * cnf_map_release - free a family's /16 map if it has no bit set
 * @f: the filter, under cnf_filter_lock()
 * @fam: the family; its map's @active bit already clear
 */
void cnf_map_release(struct cnf_filter *f, enum cnf_family fam)
{
	const struct cnf_map *m = cnf_map_deref(f, fam);

	if (m && !m->bits)
		cnf_map_drop(f, fam);
}
