// SPDX-License-Identifier: GPL-2.0
/*
 * Walking a filter's prefixes: in one hold of its lock, or in steps
 * between which the filter may change.  A prefix of a tier length is
 * given from its tier, any other from the store.
 */
#include "budget.h"
#include "ftable.h"
#include "prefix.h"
#include "store.h"
#include "tier.h"
#include "walk.h"

/* ---- walking the prefixes ---- */

struct cnf_prefix_walk {
	struct cnf_filter *f;
	enum cnf_family fam;
	unsigned int tl;
	int (*fn)(void *ctx, const struct cnf_key *key);
	void *ctx;
};

/* A key of a tier stands for a prefix of its length when it is native. */
static int cnf_walk_tier_key(void *ctx, const struct cnf_key *k)
{
	struct cnf_prefix_walk *w = ctx;
	struct cnf_key p;

	cnf_table_key_prefix(w->fam, w->tl, k, &p);
	if (cnf_derived(w->f, &p, CNF_TIERS))
		return 0;	/* the store has it if it was added */
	return w->fn(w->ctx, &p);
}

static int cnf_walk_store_key(void *ctx, const struct cnf_key *k)
{
	struct cnf_prefix_walk *w = ctx;
	struct cnf_key p;

	cnf_store_key_prefix(w->fam, k, &p);
	return w->fn(w->ctx, &p);
}

/**
 * cnf_filter_walk - call a function for every prefix
 * @f: the filter, under cnf_filter_lock()
 * @fn: called with @ctx and each prefix, IPv4 first, each once
 * @ctx: passed to @fn
 *
 * Return: 0, or @fn's first non-zero return, which stops the walk.
 */
int cnf_filter_walk(struct cnf_filter *f,
		    int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	struct cnf_prefix_walk w = { .f = f, .fn = fn, .ctx = ctx };
	const struct cnf_table *t;
	unsigned int i;
	int err;

	cnf_assert_held(&f->lock);
	for (w.fam = 0; w.fam < CNF_NFAMILIES; w.fam++) {
		for (w.tl = 0; w.tl < CNF_TIERS; w.tl++) {
			t = cnf_deref(f, &f->tier[w.fam][w.tl]);
			if (!t)
				continue;
			err = cnf_table_walk(t, cnf_walk_tier_key, &w);
			if (err)
				return err;
		}
		for (i = 0; i < CNF_STORE_TABLES; i++) {
			t = cnf_deref(f, &f->store[w.fam][i]);
			if (!t)
				continue;
			err = cnf_table_walk(t, cnf_walk_store_key, &w);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- walking the prefixes in steps ---- */

/*
 * Why a walk in steps gives every prefix stored throughout it, and only
 * prefixes stored when they are given.  Each step runs under the filter's
 * lock and gives prefixes stored then.  A key stays in its table (the
 * tier of its length, or its store table) for as long as it is stored,
 * but moves between its two buckets (cuckoo paths), into a new table in
 * its place (growth, shrinking, a flush, a failed add put back) and out
 * of the stash.  The prefixes of tier lengths are given from their tiers
 * only, the others from the store only (cnf_walk_key()), whichever place
 * the store keeps them: whether a shorter prefix covers one changes only
 * where a prefix is kept, never where it is given.  So a prefix stored
 * throughout is missed only if its key moved from a bucket the walk had
 * not reached into one it had passed, between two steps.  Every step
 * therefore first walks again the buckets behind it that keys moved into
 * since the last (the filter's moves, struct cnf_moves), or, if more moved
 * than were recorded, or the table is another one, the table from its
 * first bucket; and it walks the stash, whose keys leave it for any
 * bucket, every time.  A prefix may so be given more than once
 * (cnf_walk.again).  Walking a table again costs a step more; one walked
 * again CNF_WALK_REWINDS times is walked to its end in one step, so that
 * changes of the filter between steps cannot keep a walk from ending.
 */

#define CNF_WALK_PARTS		(CNF_TIERS + CNF_STORE_TABLES)

/* What a step gives a key of a table as, see cnf_walk_key(). */
struct cnf_walk_ctx {
	struct cnf_filter *f;
	enum cnf_family fam;
	unsigned int tl;	/* the tier's length, or CNF_TIERS: a store */
	int (*fn)(void *ctx, const struct cnf_key *key);
	void *ctx;
};

/*
 * A prefix of a tier length from its tier, where its key is for as long
 * as it is stored, unless the key is only derived; any other from the
 * store.
 */
static int cnf_walk_key(void *ctx, const struct cnf_key *k)
{
	struct cnf_walk_ctx *c = ctx;
	struct cnf_key p;

	if (c->tl == CNF_TIERS) {
		cnf_store_key_prefix(c->fam, k, &p);
		if (cnf_tier_of(p.family, p.len) == p.len &&
		    p.len != CNF_MAP_BITS)
			return 0;	/* its tier gives it */
	} else {
		cnf_table_key_prefix(c->fam, c->tl, k, &p);
		if (cnf_derived(c->f, &p, CNF_TIERS) &&
		    !cnf_store_has(c->f, &p))
			return 0;
	}
	return c->fn(c->ctx, &p);
}

/* The table of part @part of @f, and how its keys are given. */
static struct cnf_table *cnf_walk_table(struct cnf_filter *f, u32 part,
					struct cnf_walk_ctx *c)
{
	unsigned int i = part % CNF_WALK_PARTS;

	c->fam = part / CNF_WALK_PARTS;
	c->tl = min_t(unsigned int, i, CNF_TIERS);
	if (i < CNF_TIERS)
		return cnf_deref(f, &f->tier[c->fam][i]);
	return cnf_deref(f, &f->store[c->fam][i - CNF_TIERS]);
}

/*
 * Moves a walk of @f records: one for every 64 prefixes, so that a small
 * filter, walked in a step or two, spends little on it, but at least
 * CNF_MOVES_RING_MIN and at most CNF_MOVES_RING, a power of two.
 */
static u32 cnf_moves_size(struct cnf_filter *f)
{
	u64 n = f->prefixes[CNF_V4] + f->prefixes[CNF_V6];
	u32 size = CNF_MOVES_RING_MIN;

	while (size < CNF_MOVES_RING && size < n / 64)
		size *= 2;
	return size;
}

/**
 * cnf_walk_begin - start walking a filter's prefixes in steps
 * @f: the filter, under cnf_filter_lock()
 * @w: the walk
 *
 * Until cnf_walk_end(), @f records where its keys move: up to
 * CNF_MOVES_RING words, counted in its memory while it has walks.
 *
 * Return: 0; -ENOSPC past the memory limit; -ENOMEM.
 */
int cnf_walk_begin(struct cnf_filter *f, struct cnf_walk *w)
{
	u32 size;

	cnf_assert_held(&f->lock);
	memset(w, 0, sizeof(*w));
	if (!f->moves.walks) {
		size = cnf_moves_size(f);
		if (!cnf_fits(f, size * sizeof(u64)))
			return -ENOSPC;
		f->moves.ring = cnf_zalloc(size * sizeof(u64));
		if (!f->moves.ring)
			return -ENOMEM;
		f->moves.mask = size - 1;
	}
	w->f = f;
	w->next = f->moves.walks;
	f->moves.walks = w;
	w->seen = f->moves.n;
	return 0;
}

/**
 * cnf_walk_end - stop a walk, done or not
 * @w: the walk, begun; under its filter's cnf_filter_lock(), if the
 *     filter is still there (@w->f)
 */
void cnf_walk_end(struct cnf_walk *w)
{
	struct cnf_filter *f = w->f;
	struct cnf_walk **pp;

	if (!f)
		return;
	cnf_assert_held(&f->lock);
	for (pp = &f->moves.walks; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	if (!f->moves.walks) {
		cnf_free(f->moves.ring);
		f->moves.ring = NULL;
	}
	w->f = NULL;
}

/*
 * The buckets behind the walk in its table @t that keys moved into since
 * its last step, walked again; false when more moved than the filter
 * recorded: the table must be walked again from its first bucket.
 */
static int cnf_walk_moved(struct cnf_walk *w, const struct cnf_table *t,
			  struct cnf_walk_ctx *c, bool *lost)
{
	const struct cnf_moves *m = &w->f->moves;
	u64 i, e;
	int err;

	*lost = m->n - w->seen > (u64)m->mask + 1;
	for (i = w->seen; i < m->n && !*lost; i++) {
		e = m->ring[i & m->mask];
		if (e >> 32 != t->serial)
			continue;
		/* Behind the walk it comes again, ahead of it maybe too. */
		w->again = true;
		if ((u32)e >= w->bucket)
			continue;
		err = cnf_table_walk_buckets(t, (u32)e, (u32)e + 1,
					     cnf_walk_key, c);
		if (err)
			return err;
	}
	return 0;
}

/**
 * cnf_walk_step - give the prefixes of some more of a filter's buckets
 * @w: the walk, begun, under its filter's cnf_filter_lock(); its filter
 *     is still there (@w->f)
 * @buckets: how many buckets to walk at most (but see below)
 * @fn: called with @ctx and each prefix, IPv4 first
 * @ctx: passed to @fn
 *
 * Every prefix stored from the walk's beginning to its end is given at
 * least once, and a prefix is given only while it is stored, in the step
 * that gives it (the comment above argues why).  A step walks again up to
 * CNF_MOVES_RING buckets that keys moved into, and the stash, besides
 * @buckets; and the rest of a table walked again too often.  @w->done
 * says when the walk is over.
 *
 * Return: 0, or @fn's first non-zero return: then the step gave some of
 * its prefixes but counts as not taken, and @w->again is set.
 */
int cnf_walk_step(struct cnf_walk *w, u32 buckets,
		  int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	struct cnf_walk_ctx c = { .f = w->f, .fn = fn, .ctx = ctx };
	const struct cnf_table *t;
	u32 from, end;
	bool lost;
	int err;

	cnf_assert_held(&w->f->lock);
	while (!w->done) {
		t = cnf_walk_table(w->f, w->part, &c);
		if (!t) {
			w->serial = 0;
			w->bucket = 0;
			w->rewinds = 0;
			w->done = ++w->part == CNF_NFAMILIES * CNF_WALK_PARTS;
			continue;
		}
		lost = false;
		err = 0;
		if (t->serial == w->serial)
			err = cnf_walk_moved(w, t, &c, &lost);
		else
			lost = w->serial;
		from = lost || t->serial != w->serial ? 0 : w->bucket;
		if (!err && lost && w->rewinds++ >= CNF_WALK_REWINDS)
			buckets = t->mask + 1;
		/* A key can leave the stash for a bucket behind the walk. */
		if (!err && t->stash_n) {
			w->again |= from > 0;
			err = cnf_table_walk_stash(t, cnf_walk_key, &c);
		}
		end = from + min_t(u32, buckets, t->mask + 1 - from);
		if (!err)
			err = cnf_table_walk_buckets(t, from, end, cnf_walk_key,
						     &c);
		if (err) {
			w->again = true;
			return err;
		}
		w->again |= lost;
		w->seen = w->f->moves.n;
		w->serial = t->serial;
		w->bucket = end;
		buckets -= end - from;
		if (end <= t->mask)
			return 0;
		w->serial = 0;
		w->bucket = 0;
		w->rewinds = 0;
		w->done = ++w->part == CNF_NFAMILIES * CNF_WALK_PARTS;
		if (!buckets)
			return 0;
	}
	return 0;
}
