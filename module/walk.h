/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Walks of a filter's prefixes (walk.c): every function has its
 * kernel-doc where it is defined.
 */
#ifndef _CNF_WALK_H
#define _CNF_WALK_H

#include "types.h"

struct cnf_filter;

int cnf_filter_walk(struct cnf_filter *f,
		    int (*fn)(void *ctx, const struct cnf_key *key), void *ctx);

/*
 * A walk of a filter's prefixes in steps, each under cnf_filter_lock(),
 * between which the filter may change (cnf_walk_step() argues what it
 * gives).  Fields are the walk's, but @f and @next, which the filter's
 * writers change under its lock.
 * @part:    the table being walked: of each family, the tiers by length,
 *           then the store tables.
 * @bucket:  the next bucket of that table to walk.
 * @serial:  that table's cnf_table.serial; 0 before its first step.
 * @rewinds: times that table was walked again from its first bucket.
 * @seen:    the filter's moves (cnf_moves.n) the walk has taken into account.
 * @again:   a prefix may have been given more than once.
 * @done:    every prefix was given.
 * @f:       the filter; NULL once it was destroyed.
 * @next:    the filter's next walk.
 */
struct cnf_walk {
	u32 part;
	u32 bucket;
	u32 serial;
	u32 rewinds;
	u64 seen;
	bool again;
	bool done;
	struct cnf_filter *f;
	struct cnf_walk *next;
};

/*
 * A step of a walk whose table was walked again from its first bucket
 * this many times walks the rest of it at once (cnf_walk_step()).
 */
#define CNF_WALK_REWINDS	4

/**
 * cnf_walk_churned - would the next step of a walk perhaps take a whole table
 * @w: the walk, begun
 *
 * A walk whose filter changes under it faster than it goes gets here; a
 * caller that holds a lock others wait for ends it rather than step on,
 * since the next step may walk a whole table in one hold.
 *
 * Return: true when its table was walked again CNF_WALK_REWINDS times.
 */
static inline bool cnf_walk_churned(const struct cnf_walk *w)
{
	return w->rewinds >= CNF_WALK_REWINDS;
}

int cnf_walk_begin(struct cnf_filter *f, struct cnf_walk *w);
int cnf_walk_step(struct cnf_walk *w, u32 buckets,
		  int (*fn)(void *ctx, const struct cnf_key *key), void *ctx);
void cnf_walk_end(struct cnf_walk *w);

#endif /* _CNF_WALK_H */
