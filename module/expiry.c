// SPDX-License-Identifier: GPL-2.0
/*
 * Timeouts of entries (see expiry.h).  Everything here runs under the
 * namespace's cnf_net_lock(), but the work's first step, which only tries
 * to take it, and what is done with timeouts only the caller has (being
 * built aside, or taken out of a set to be freed).
 *
 * The work removes what ran out a batch at a time, each batch a change of
 * one set (cnf_change_begin() ... cnf_change_end()) as a delete is, and
 * lets go of the lock between batches: thousands of entries running out in
 * the same second make a few short holds, never one long one, and never
 * touch softirq context.
 */
#include "cnf.h"

#include <linux/jiffies.h>
#include <linux/slab.h>

/*
 * The work never sleeps longer than this, whatever the next deadline: the
 * timer wheel lets a timer queued far ahead fire late by up to an eighth of
 * its delay (seconds, for a delay of minutes), while an entry must stop
 * matching within a second of its deadline.  Queued at most two seconds
 * ahead, a timer fires at most some tens of milliseconds late.
 */
#define CNF_EXPIRY_MAX_SLEEP	(2 * HZ)
/* Entries removed per hold of the namespace's lock. */
#define CNF_EXPIRY_BATCH	256
/* How soon the work tries again when the lock was taken. */
#define CNF_EXPIRY_RETRY	(HZ / 100 ?: 1)
/* An entry removed later than this after its deadline counts as late. */
#define CNF_EXPIRY_LATE_MS	1000

/* A timed entry, in both trees of its set's struct cnf_timeouts. */
struct cnf_timed {
	struct rb_node by_key;
	struct rb_node by_deadline;
	u64 deadline;		/* get_jiffies_64() it runs out at */
	struct cnf_key key;
};

static struct kmem_cache *cnf_timed_cache;

/* What a timed entry costs, as charged to the namespace's memory limit. */
static u64 cnf_timed_size(void)
{
	return kmem_cache_size(cnf_timed_cache);
}

/* Keys in an order of their own: family, length, then address bytes. */
static int cnf_key_cmp(const struct cnf_key *a, const struct cnf_key *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	if (a->family == CNF_V4)
		return memcmp(&a->v4, &b->v4, sizeof(a->v4));
	return memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

static struct cnf_timed *cnf_timed_find(const struct cnf_timeouts *t,
					const struct cnf_key *key)
{
	struct rb_node *n = t->by_key.rb_node;

	while (n) {
		struct cnf_timed *e = rb_entry(n, struct cnf_timed, by_key);
		int c = cnf_key_cmp(key, &e->key);

		if (!c)
			return e;
		n = c < 0 ? n->rb_left : n->rb_right;
	}
	return NULL;
}

/* @e's key is not in @t yet. */
static void cnf_timed_link_key(struct cnf_timeouts *t, struct cnf_timed *e)
{
	struct rb_node **p = &t->by_key.rb_node, *parent = NULL;

	while (*p) {
		struct cnf_timed *o;

		parent = *p;
		o = rb_entry(parent, struct cnf_timed, by_key);
		p = cnf_key_cmp(&e->key, &o->key) < 0 ?
		    &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&e->by_key, parent, p);
	rb_insert_color(&e->by_key, &t->by_key);
}

static bool cnf_timed_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct cnf_timed, by_deadline)->deadline <
	       rb_entry(b, struct cnf_timed, by_deadline)->deadline;
}

static struct cnf_timed *cnf_timed_first(const struct cnf_timeouts *t)
{
	struct rb_node *n = rb_first_cached(&t->by_deadline);

	return n ? rb_entry(n, struct cnf_timed, by_deadline) : NULL;
}

/* @b NULL: the budget goes away with the entries (cnf_sets_free()). */
static void cnf_timed_free(struct cnf_timeouts *t, struct cnf_timed *e,
			   struct cnf_budget *b)
{
	rb_erase(&e->by_key, &t->by_key);
	rb_erase_cached(&e->by_deadline, &t->by_deadline);
	t->n--;
	if (b)
		cnf_budget_uncharge(b, cnf_timed_size());
	kmem_cache_free(cnf_timed_cache, e);
}

/* ---- the work ---- */

/* Have the work run at @when, or sooner should it be due sooner. */
static void cnf_expiry_queue(struct cnf_expiry *e, u64 when)
{
	u64 now = get_jiffies_64();
	unsigned long delay = 0;

	if (when > now)
		delay = min_t(u64, when - now, CNF_EXPIRY_MAX_SLEEP);
	e->due = now + delay;
	mod_delayed_work(system_wq, &e->work, delay);
}

/**
 * cnf_expiry_arm - queue the work for the namespace's next deadline
 * @st: the namespace's state, under cnf_net_lock()
 *
 * After changes that may have removed the entry the work was queued for;
 * a work queued with nothing left to do finds nothing and stops.
 */
void cnf_expiry_arm(struct cnf_state *st)
{
	struct cnf_sets *ss = &st->sets;
	u64 next = 0;
	unsigned int i;

	for (i = 0; i < ss->n; i++) {
		struct cnf_timed *e = cnf_timed_first(&ss->set[i]->timeouts);

		if (e && (!next || e->deadline < next))
			next = e->deadline;
	}
	if (next)
		cnf_expiry_queue(&st->expiry, next);
	else
		st->expiry.due = 0;
}

static void cnf_expiry_count(struct cnf_expiry *e, u64 late)
{
	u32 ms = jiffies_to_msecs(min_t(u64, late, MAX_JIFFY_OFFSET));

	e->expired++;
	if (ms > CNF_EXPIRY_LATE_MS)
		e->late++;
	e->max_late_ms = max(e->max_late_ms, ms);
}

/*
 * Remove up to @max entries of @set that ran out; returns how many.  What
 * the change retires (a union its kind no longer needs) goes in @m's.
 */
static unsigned int cnf_expire_set(struct cnf_state *st, struct cnf_set *set,
				   unsigned int max, struct cnf_mend *m)
{
	struct cnf_timeouts *t = &set->timeouts;
	u64 now = get_jiffies_64();
	unsigned int done = 0;
	struct cnf_change c;
	struct cnf_timed *e;

	e = cnf_timed_first(t);
	if (!e || e->deadline > now)
		return 0;
	/* Deletes only: a change that cannot fail. */
	if (WARN_ON_ONCE(cnf_change_begin(&c, &st->sets, set, 0, m)))
		return 0;
	while (done < max && (e = cnf_timed_first(t)) && e->deadline <= now) {
		WARN_ON_ONCE(cnf_change_del(&c, &e->key));
		cnf_expiry_count(&st->expiry, now - e->deadline);
		cnf_timed_free(t, e, &st->sets.budget);
		done++;
	}
	cnf_change_end(&c);
	return done;
}

static void cnf_expiry_work(struct work_struct *work)
{
	struct cnf_expiry *e = container_of(to_delayed_work(work),
					    struct cnf_expiry, work);
	struct cnf_state *st = container_of(e, struct cnf_state, expiry);
	struct mutex *lock = cnf_net_lock(e->net);
	unsigned int i, left = CNF_EXPIRY_BATCH;
	struct cnf_mend m;

	/*
	 * A holder of the lock may be waiting for this work to finish
	 * (cnf_expiry_stop()): never wait for the lock here.
	 */
	if (!mutex_trylock(lock)) {
		queue_delayed_work(system_wq, &e->work, CNF_EXPIRY_RETRY);
		return;
	}
	/* Deletes only: the mend never begins, it only takes what is retired. */
	cnf_mend_init(&m);
	for (i = 0; i < st->sets.n && left; i++)
		left -= cnf_expire_set(st, st->sets.set[i], left, &m);
	/* A batch that ran out of room leaves a deadline due now: again. */
	cnf_expiry_arm(st);
	mutex_unlock(lock);
	/* A union dropped: freed after a grace period, without the lock. */
	cnf_retired_free(&m.retired);
}

/**
 * cnf_expiry_init - a namespace's expiry, nothing queued
 * @e: in a zeroed struct cnf_state
 * @net: the namespace
 */
void cnf_expiry_init(struct cnf_expiry *e, struct net *net)
{
	INIT_DELAYED_WORK(&e->work, cnf_expiry_work);
	e->net = net;
}

/**
 * cnf_expiry_stop - wait for the work and keep it from running again
 * @e: the expiry of a state being freed
 *
 * May be called under cnf_net_lock(): the work only tries to take it.
 */
void cnf_expiry_stop(struct cnf_expiry *e)
{
	cancel_delayed_work_sync(&e->work);
	e->due = 0;
}

/* ---- timed entries ---- */

/*
 * Give @key a timeout of @seconds in @t, charged to @b; 0 drops it.
 * *@deadline: the new deadline, 0 for none.
 */
static int cnf_timed_set(struct cnf_timeouts *t, struct cnf_budget *b,
			 const struct cnf_key *key, u32 seconds, u64 *deadline)
{
	struct cnf_timed *e = cnf_timed_find(t, key);
	int err;

	*deadline = 0;
	if (!seconds) {
		if (e)
			cnf_timed_free(t, e, b);
		return 0;
	}
	if (e) {
		rb_erase_cached(&e->by_deadline, &t->by_deadline);
	} else {
		err = cnf_budget_charge(b, cnf_timed_size());
		if (err)
			return err;
		e = kmem_cache_alloc(cnf_timed_cache, GFP_KERNEL_ACCOUNT);
		if (!e) {
			cnf_budget_uncharge(b, cnf_timed_size());
			return -ENOMEM;
		}
		e->key = *key;
		cnf_timed_link_key(t, e);
		t->n++;
	}
	e->deadline = get_jiffies_64() + (u64)seconds * HZ;
	rb_add_cached(&e->by_deadline, &t->by_deadline, cnf_timed_less);
	*deadline = e->deadline;
	return 0;
}

/**
 * cnf_timeout_set - give an entry a timeout, a new one, or none
 * @st: the namespace's state, under cnf_net_lock()
 * @t: the timed entries of the set that holds @key
 * @key: the entry
 * @seconds: from now; 0: the entry has no timeout (any it had is dropped)
 *
 * The work is queued for the new deadline if it comes first.
 *
 * Return: 0; -ENOSPC past the namespace's memory limit, -ENOMEM (@key
 * keeps the timeout it had).
 */
int cnf_timeout_set(struct cnf_state *st, struct cnf_timeouts *t,
		    const struct cnf_key *key, u32 seconds)
{
	u64 deadline;
	int err;

	err = cnf_timed_set(t, &st->sets.budget, key, seconds, &deadline);
	if (!err && deadline &&
	    (!st->expiry.due || deadline < st->expiry.due))
		cnf_expiry_queue(&st->expiry, deadline);
	return err;
}

/**
 * cnf_timeout_stage - give an entry of contents built aside a timeout
 * @t: the timed entries of the contents, which only the caller uses
 * @b: the budget the contents are built in, which only the caller uses
 * @key: the entry
 * @seconds: from now; 0: the entry has no timeout (any it had is dropped)
 *
 * As cnf_timeout_set(), without cnf_net_lock(), charged to @b, and
 * queueing nothing: whoever publishes the contents calls cnf_expiry_arm().
 *
 * Return: 0; -ENOSPC past @b's limit, -ENOMEM (@key keeps the timeout it
 * had).
 */
int cnf_timeout_stage(struct cnf_timeouts *t, struct cnf_budget *b,
		      const struct cnf_key *key, u32 seconds)
{
	u64 deadline;

	return cnf_timed_set(t, b, key, seconds, &deadline);
}

/**
 * cnf_timeout_deadline - when an entry runs out
 * @t: the timed entries of its set, under cnf_net_lock()
 * @key: the entry
 *
 * Return: its deadline (get_jiffies_64()), 0 when it has no timeout.
 */
u64 cnf_timeout_deadline(const struct cnf_timeouts *t,
			 const struct cnf_key *key)
{
	const struct cnf_timed *e = cnf_timed_find(t, key);

	return e ? e->deadline : 0;
}

/**
 * cnf_timeout_left - seconds until a deadline
 * @deadline: from cnf_timeout_deadline()
 *
 * Return: 0 for no deadline; else the seconds left, rounded up, at least 1
 * (an entry that ran out is still there until the work removes it).
 */
u32 cnf_timeout_left(u64 deadline)
{
	u64 now = get_jiffies_64();

	if (!deadline)
		return 0;
	if (deadline <= now)
		return 1;
	return min_t(u64, DIV_ROUND_UP_ULL(deadline - now, HZ), U32_MAX);
}

/**
 * cnf_timeouts_clear - forget every timeout of a set
 * @t: its timed entries, under cnf_net_lock(), or timed entries no set
 *     has and only the caller uses
 * @b: the budget they are charged to; NULL when it goes away with them or
 *     they are uncharged already
 */
void cnf_timeouts_clear(struct cnf_timeouts *t, struct cnf_budget *b)
{
	struct cnf_timed *e, *tmp;

	rbtree_postorder_for_each_entry_safe(e, tmp, &t->by_key, by_key)
		kmem_cache_free(cnf_timed_cache, e);
	if (b)
		cnf_budget_uncharge(b, t->n * cnf_timed_size());
	t->by_key = RB_ROOT;
	t->by_deadline = RB_ROOT_CACHED;
	t->n = 0;
}

/**
 * cnf_timeouts_bytes - memory a set's timeouts use
 * @t: its timed entries, under cnf_net_lock()
 *
 * Return: bytes, as charged to the memory limit.
 */
u64 cnf_timeouts_bytes(const struct cnf_timeouts *t)
{
	return t->n * cnf_timed_size();
}

int cnf_expiry_cache_init(void)
{
	cnf_timed_cache = KMEM_CACHE(cnf_timed, 0);
	return cnf_timed_cache ? 0 : -ENOMEM;
}

void cnf_expiry_cache_exit(void)
{
	kmem_cache_destroy(cnf_timed_cache);
}
