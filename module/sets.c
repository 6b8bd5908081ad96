// SPDX-License-Identifier: GPL-2.0
/*
 * Named sets: the registry, the kinds' unions and the plan the hooks read
 * (see sets.h).  Everything here runs under the namespace's
 * cnf_net_lock() but where said (a union made aside of a replace's
 * contents, a mend taking an old union's prefixes out: filters nothing
 * else uses); a filter's own lock is taken around each use of it, two at
 * once only to copy a filter into a union or to add to a set and its
 * union (the union's nested inside).
 *
 * A union is made when a second set of its kind gets prefixes, kept up to
 * date entry by entry while sets are added to and deleted from, mended
 * when a set of the kind is flushed, destroyed or replaced (struct
 * cnf_mend, below), and dropped when one set of the kind or none is left
 * with prefixes.
 */
#include "cnf.h"

#include <linux/err.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>

static u64 cnf_filter_total(struct cnf_filter *f)
{
	u64 n;

	cnf_filter_lock(f);
	n = cnf_filter_count(f, CNF_V4) + cnf_filter_count(f, CNF_V6);
	cnf_filter_unlock(f);
	return n;
}

/**
 * cnf_set_count - how many prefixes a set holds
 * @set: the set, under cnf_net_lock()
 *
 * Return: its prefixes of both families.
 */
u64 cnf_set_count(struct cnf_set *set)
{
	return cnf_filter_total(set->filter);
}

/*
 * Is @s one of the sets of @kind the plan and the kind's union are made
 * of?  A rules-only set is of none: only iptables rules read it.
 */
static bool cnf_set_planned(const struct cnf_set *s, u32 kind)
{
	return s->kind == kind && !s->rules_only;
}

/* Sets of @kind that hold prefixes, @skip left out. */
static unsigned int cnf_kind_nonempty(struct cnf_sets *ss, u32 kind,
				      const struct cnf_set *skip)
{
	unsigned int i, n = 0;

	for (i = 0; i < ss->n; i++)
		if (ss->set[i] != skip && cnf_set_planned(ss->set[i], kind) &&
		    cnf_set_count(ss->set[i]))
			n++;
	return n;
}

/* Does a set of @kind but @skip hold exactly @key? */
static bool cnf_kind_holds(struct cnf_sets *ss, u32 kind,
			   const struct cnf_set *skip, const struct cnf_key *key)
{
	unsigned int i;
	bool has = false;

	for (i = 0; i < ss->n && !has; i++) {
		struct cnf_filter *f = ss->set[i]->filter;

		if (ss->set[i] == skip || !cnf_set_planned(ss->set[i], kind))
			continue;
		cnf_filter_lock(f);
		has = cnf_filter_has(f, key);
		cnf_filter_unlock(f);
	}
	return has;
}

/*
 * What a set costs beside its tables, charged to the budget while the set
 * exists: its struct, its filter's, its per-CPU counter, and its entries
 * in the plans, two of which (the published one and the next) are there
 * at once.
 */
static u64 cnf_set_size(void)
{
	return sizeof(struct cnf_set) + cnf_filter_size() +
	       num_possible_cpus() * sizeof(struct cnf_set_matched) +
	       2 * sizeof(struct cnf_plan_set);
}

/*
 * What the sets as a whole cost beside the sets, charged from
 * cnf_sets_init() on: the struct of each kind's union, whether the kind
 * has one now or not, and the headers of two plans.
 */
static u64 cnf_sets_size(void)
{
	return CNF_SET_KINDS * cnf_filter_size() + 2 * sizeof(struct cnf_plan);
}

/**
 * cnf_set_filter_new - an empty filter within the sets' memory limit
 * @ss: the sets, under cnf_net_lock()
 *
 * For a set's contents, a union, or contents built aside to replace a
 * set's; cnf_filter_destroy() frees it.
 *
 * Return: the filter; ERR_PTR(-ENOSPC) past the memory limit, -ENOMEM.
 */
struct cnf_filter *cnf_set_filter_new(struct cnf_sets *ss)
{
	struct cnf_filter *f;

	f = cnf_filter_create_in(ss->initial_capacity, &ss->budget);
	if (!f)
		return ERR_PTR(-ENOMEM);
	if (cnf_budget_used(&ss->budget) > ss->budget.limit) {
		cnf_filter_destroy(f);
		return ERR_PTR(-ENOSPC);
	}
	return f;
}

/* A union holds each prefix once, whichever sets of its kind hold it. */
static int cnf_union_add(struct cnf_filter *u, const struct cnf_key *key)
{
	return cnf_filter_has(u, key) ? 0 : cnf_filter_add(u, key);
}

static int cnf_copy_one(void *ctx, const struct cnf_key *key)
{
	return cnf_union_add(ctx, key);
}

/* One change of a filter, under its lock. */
static int cnf_locked(struct cnf_filter *f,
		      int (*op)(struct cnf_filter *f, const struct cnf_key *key),
		      const struct cnf_key *key)
{
	int err;

	cnf_filter_lock(f);
	err = op(f, key);
	cnf_filter_unlock(f);
	return err;
}

/*
 * Does @set's kind keep its union once @set is emptied or gone: it has one,
 * and two or more other sets hold prefixes.  It is mended then.
 */
static bool cnf_union_kept(struct cnf_sets *ss, const struct cnf_set *set)
{
	return !set->rules_only && ss->union_of[set->kind] &&
	       cnf_kind_nonempty(ss, set->kind, set) >= 2;
}

/* ---- the plan ---- */

/* Room for a plan of @ss as it is, or with fewer sets. */
static struct cnf_plan *cnf_plan_alloc(struct cnf_sets *ss)
{
	struct cnf_plan *p;

	return kzalloc(struct_size(p, set, ss->n), GFP_KERNEL_ACCOUNT);
}

static void cnf_plan_fill(struct cnf_sets *ss, struct cnf_plan *p)
{
	unsigned int kind, i, n = 0;

	p->log = false;
	for (kind = 0; kind < CNF_SET_KINDS; kind++) {
		p->n[kind] = 0;
		for (i = 0; i < ss->n; i++) {
			struct cnf_set *s = ss->set[i];

			if (!cnf_set_planned(s, kind) || !cnf_set_count(s))
				continue;
			p->set[n].filter = s->filter;
			p->set[n].matched = s->matched;
			p->set[n++].set = s;
			p->n[kind]++;
			p->log |= kind == CNF_SET_BLOCK && s->log;
		}
		if (p->n[kind] > 1)
			p->lookup[kind] = ss->mending[kind] ? NULL :
					  ss->union_of[kind];
		else
			p->lookup[kind] = p->n[kind] ? p->set[n - 1].filter : NULL;
	}
}

static bool cnf_plan_same(const struct cnf_plan *a, const struct cnf_plan *b)
{
	unsigned int i, n = a->n[CNF_SET_BLOCK] + a->n[CNF_SET_ALLOW];

	if (memcmp(a->lookup, b->lookup, sizeof(a->lookup)) ||
	    memcmp(a->n, b->n, sizeof(a->n)) || a->log != b->log)
		return false;
	for (i = 0; i < n; i++)
		if (a->set[i].filter != b->set[i].filter ||
		    a->set[i].matched != b->set[i].matched)
			return false;
	return true;
}

/* Its timeouts' memory is uncharged already, or the budget goes too. */
static void cnf_set_free(struct cnf_set *set)
{
	cnf_timeouts_clear(&set->timeouts, NULL);
	cnf_filter_destroy(set->filter);
	free_percpu(set->matched);
	cnf_log_put(set->log);
	kfree(set);
}

/**
 * cnf_retire - put a filter no plan will name again with what is retired
 * @ss: the sets, under cnf_net_lock()
 * @r: what the caller frees once it let go of cnf_net_lock()
 *     (cnf_retired_free()), after the plan it is unpublished from
 * @f: a filter of @ss's budget that no set, union or mend holds any more,
 *     or NULL
 *
 * It leaves the budget now (cnf_filter_retire()), as a retired table does:
 * the call that retired it frees it before it returns.  A record holds
 * what one call retires: the set it destroys, that set's or a replaced
 * set's old filter and its kind's old union, an old union a mend ends
 * with, and the unions of kinds left with fewer than two sets with
 * prefixes, one a kind; past CNF_RETIRED_MAX (which no call reaches), the
 * filter is freed here after a grace period, under the lock.
 */
void cnf_retire(struct cnf_sets *ss, struct cnf_retired *r,
		struct cnf_filter *f)
{
	if (!f)
		return;
	cnf_filter_retire(f);
	if (!WARN_ON_ONCE(r->n == CNF_RETIRED_MAX)) {
		r->filter[r->n++] = f;
		return;
	}
	synchronize_net();
	cnf_filter_destroy(f);
}

/*
 * @set, taken out of @ss, retired with its filter: freed with @r once no
 * packet sees a plan that names it.
 */
static void cnf_retire_set(struct cnf_retired *r, struct cnf_set *set)
{
	cnf_filter_retire(set->filter);
	r->set = set;
}

/**
 * cnf_retired_free - free what changes retired, once no packet sees it
 * @r: filled under cnf_net_lock() (cnf_retire()); called without it, so
 *     that neither the grace period nor the freeing of a large filter
 *     holds up the namespace's other calls and its expiry
 *
 * Left empty, for another change.
 */
void cnf_retired_free(struct cnf_retired *r)
{
	unsigned int i;

	if (!r->n && !r->set)
		return;
	synchronize_net();
	for (i = 0; i < r->n; i++)
		cnf_filter_destroy(r->filter[i]);
	if (r->set)
		cnf_set_free(r->set);
	memset(r, 0, sizeof(*r));
}

/*
 * Publish @spare as @ss now is; a union whose kind no longer needs one is
 * retired into @r with what the caller retired, for the caller to free
 * once no packet can see it (cnf_retired_free()), after it let go of
 * cnf_net_lock().  The old plan is freed after a grace period: waiting
 * for one here would hold the lock for it.  Under cnf_net_lock().
 */
static void cnf_sets_publish(struct cnf_sets *ss, struct cnf_plan *spare,
			     struct cnf_retired *r)
{
	struct cnf_plan *old = rcu_dereference_protected(ss->plan, true);
	unsigned int kind;
	bool dropped = false;

	for (kind = 0; kind < CNF_SET_KINDS; kind++) {
		if (ss->union_of[kind] &&
		    cnf_kind_nonempty(ss, kind, NULL) < 2) {
			cnf_retire(ss, r, ss->union_of[kind]);
			ss->union_of[kind] = NULL;
			dropped = true;
		}
	}
	cnf_plan_fill(ss, spare);
	/* Whatever was retired, a plan without it must be there first. */
	if (!dropped && !r->n && !r->set && cnf_plan_same(old, spare)) {
		kfree(spare);
		return;
	}
	rcu_assign_pointer(ss->plan, spare);
	kfree_rcu(old, rcu);
}

/*
 * After every change of entries packets can see, once they see it: marks
 * the XDP kfuncs left before it no longer spare a packet the hooks' lookup
 * (xdp.h).  The sets are always a state's (cnf_state_alloc()).
 */
static void cnf_sets_changed(struct cnf_sets *ss)
{
	cnf_state_changed(container_of(ss, struct cnf_state, sets));
}

/**
 * cnf_sets_lookup - the filter packets probe for a kind
 * @ss: the sets, under cnf_net_lock()
 * @kind: enum cnf_set_kind
 *
 * Return: the kind's union, the one set's filter, or NULL.
 */
struct cnf_filter *cnf_sets_lookup(struct cnf_sets *ss, u32 kind)
{
	struct cnf_filter *f = NULL;
	unsigned int i;

	if (ss->union_of[kind])
		return ss->union_of[kind];
	for (i = 0; i < ss->n && !f; i++)
		if (cnf_set_planned(ss->set[i], kind) &&
		    cnf_set_count(ss->set[i]))
			f = ss->set[i]->filter;
	return f;
}

/* ---- mending a union ---- */

/*
 * Why a mended union is exact.  When a mend begins (cnf_mend_commit()),
 * the old union holds every prefix some set of the kind holds but those
 * the change itself brought (a replace's new contents), and the new union
 * holds those.  From then on every add to a set of the kind puts its
 * prefix in the new union too, and every delete takes its prefix out
 * unless another set holds it (cnf_change_add(), cnf_change_del()), as
 * for any union: so a prefix in the new union is one some set held when it
 * went in, and it leaves when the last set holding it lets it go; the new
 * union never holds what no set holds.  A prefix a set holds at the end
 * either was added since the mend began, and is in the new union, or was
 * held throughout by some set, and so was in the old union, whose every
 * prefix a step put in the new union if a set held it then (under
 * cnf_net_lock(), so that no change came between the test and the add).
 * A mend begun while another of the same kind runs takes the first's new
 * union as its old one, and each puts its prefixes in whatever union the
 * kind has when its step comes: the argument holds for the two, and the
 * plan has no union of the kind until both are done.
 */

/* What taking out @n4 and @n6 prefixes costs: a dump snapshot's layout. */
static u64 cnf_mend_bytes(u64 n4, u64 n6)
{
	return n4 * (sizeof(__be32) + 1) + n6 * (sizeof(struct in6_addr) + 1);
}

/* Room in @u, under its lock, for @n4 and @n6 addresses more. */
static int cnf_union_reserve(struct cnf_filter *u, u64 n4, u64 n6)
{
	return cnf_filter_reserve(u, CNF_V4, cnf_filter_count(u, CNF_V4) + n4) ?:
	       cnf_filter_reserve(u, CNF_V6, cnf_filter_count(u, CNF_V6) + n6);
}

/*
 * A kind's new union, empty, with room for @n4 and @n6 prefixes, in @ss's
 * budget: @a's, made aside, when given; none there: -EAGAIN, @a told
 * what to make (cnf_aside_make()).  Without @a, made and sized here,
 * under the lock (a replace that found a union needed that it had not
 * made aside).  One made aside for fewer prefixes than are there now
 * grows as the mend or build fills it.
 */
static struct cnf_filter *cnf_union_take(struct cnf_sets *ss,
					 struct cnf_aside *a, u64 n4, u64 n6)
{
	struct cnf_filter *u;
	int err;

	if (a && !a->u) {
		a->wanted = true;
		a->n4 = n4;
		a->n6 = n6;
		a->capacity = ss->initial_capacity;
		a->room = ss->budget.limit -
			  min(cnf_budget_used(&ss->budget), ss->budget.limit);
		return ERR_PTR(-EAGAIN);
	}
	if (a) {
		err = cnf_budget_merge(&ss->budget, &a->budget);
		if (err)
			return ERR_PTR(err);
		u = a->u;
		a->u = NULL;
		return u;
	}
	u = cnf_set_filter_new(ss);
	if (IS_ERR(u))
		return u;
	cnf_filter_lock(u);
	err = cnf_union_reserve(u, n4, n6);
	cnf_filter_unlock(u);
	if (err) {
		cnf_filter_destroy(u);
		return ERR_PTR(err);
	}
	return u;
}

/**
 * cnf_aside_make - make the union a change asked for, aside
 * @a: the caller's, after a change failed with -EAGAIN and @a->wanted;
 *     without cnf_net_lock()
 *
 * Empty, with room for the prefixes the change said, within the room the
 * namespace's budget had then; the change, tried again, takes it.
 *
 * Return: 0; -ENOSPC past that room; -ENOMEM.
 */
int cnf_aside_make(struct cnf_aside *a)
{
	int err = -ENOMEM;

	a->wanted = false;
	cnf_aside_free(a);
	cnf_budget_init(&a->budget, a->room);
	a->u = cnf_filter_create_in(a->capacity, &a->budget);
	if (a->u) {
		cnf_filter_lock(a->u);
		err = cnf_budget_used(&a->budget) > a->budget.limit ? -ENOSPC :
		      cnf_union_reserve(a->u, a->n4, a->n6);
		cnf_filter_unlock(a->u);
	}
	if (err)
		cnf_aside_free(a);
	return err;
}

/**
 * cnf_aside_free - free a union made aside that no change took
 * @a: the caller's; without cnf_net_lock()
 */
void cnf_aside_free(struct cnf_aside *a)
{
	cnf_filter_destroy(a->u);
	a->u = NULL;
}

/**
 * cnf_replace_wants_union - should a replace of a set make a union aside
 * @ss: the sets, under cnf_net_lock()
 * @set: the set
 *
 * Return: true when the set's kind has a union, which the replace mends,
 * or other sets of the kind hold prefixes, whose first union it builds
 * (cnf_set_replace()).
 */
bool cnf_replace_wants_union(struct cnf_sets *ss, struct cnf_set *set)
{
	return !set->rules_only &&
	       (ss->union_of[set->kind] ||
		cnf_kind_nonempty(ss, set->kind, set));
}

/**
 * cnf_union_peek - how many prefixes a kind's union holds
 * @ss: the sets, under cnf_net_lock()
 * @kind: enum cnf_set_kind
 * @n4: its IPv4 prefixes, 0 when the kind has no union
 * @n6: its IPv6 prefixes
 */
void cnf_union_peek(struct cnf_sets *ss, u32 kind, u64 *n4, u64 *n6)
{
	struct cnf_filter *u = ss->union_of[kind];

	*n4 = 0;
	*n6 = 0;
	if (!u)
		return;
	cnf_filter_lock(u);
	*n4 = cnf_filter_count(u, CNF_V4);
	*n6 = cnf_filter_count(u, CNF_V6);
	cnf_filter_unlock(u);
}

/**
 * cnf_union_aside - the union a replace's contents bring, made aside
 * @contents: the contents, filled, which only the caller uses
 * @aside: their budget, which only the caller uses: the union's too
 * @capacity: the namespace's initial capacity
 * @n4: IPv4 prefixes the kind's union held when the replace began
 *	(cnf_union_peek()), for which the new union makes room now
 * @n6: its IPv6 prefixes
 *
 * Without cnf_net_lock(): a copy of @contents, sized to take the old
 * union's prefixes without growing, for cnf_set_replace() to mend.
 *
 * Return: the new union; ERR_PTR(-ENOSPC) past @aside's limit, -ENOMEM.
 */
struct cnf_filter *cnf_union_aside(struct cnf_filter *contents,
				   struct cnf_budget *aside, u64 capacity,
				   u64 n4, u64 n6)
{
	struct cnf_filter *u = cnf_filter_create_in(capacity, aside);
	int err;

	if (!u)
		return ERR_PTR(-ENOMEM);
	err = cnf_budget_used(aside) > aside->limit ? -ENOSPC : 0;
	if (!err) {
		cnf_filter_lock(contents);
		cnf_filter_lock_nested(u);
		err = cnf_union_reserve(u, cnf_filter_count(contents, CNF_V4) +
					n4,
					cnf_filter_count(contents, CNF_V6) +
					n6) ?:
		      cnf_filter_walk(contents, cnf_copy_one, u);
		cnf_filter_unlock(u);
		cnf_filter_unlock(contents);
	}
	if (err) {
		cnf_filter_destroy(u);
		return ERR_PTR(err);
	}
	return u;
}

/**
 * cnf_mend_init - a mend that has not begun
 * @m: the mend
 */
void cnf_mend_init(struct cnf_mend *m)
{
	memset(m, 0, sizeof(*m));
	INIT_LIST_HEAD(&m->node);
}

/* Back to a mend not begun, but for what it retired (@retired). */
static void cnf_mend_undo(struct cnf_mend *m)
{
	struct cnf_retired r = m->retired;
	struct cnf_aside *a = m->aside;

	cnf_mend_init(m);
	m->retired = r;
	m->aside = a;
}

/**
 * cnf_mend_pending - did a change begin the mend
 * @m: the mend, after the change, with or without cnf_net_lock()
 *
 * Return: true when its owner must take, step and release it.
 */
bool cnf_mend_pending(const struct cnf_mend *m)
{
	return m->ss;
}

/*
 * Ready a mend of @kind's union, whose prefixes it will take out: the room
 * for them charged, and the new union *@u, unless given: the one made
 * aside (@m->aside, cnf_union_take()), empty, with room for them.  Nothing
 * changed on error (-EAGAIN: make one aside first); cnf_mend_cancel()
 * undoes it.
 */
static int cnf_mend_prepare(struct cnf_sets *ss, u32 kind,
			    struct cnf_filter **u, struct cnf_mend *m)
{
	int err;

	cnf_union_peek(ss, kind, &m->n4, &m->n6);
	m->bytes = cnf_mend_bytes(m->n4, m->n6);
	err = cnf_budget_charge(&ss->budget, m->bytes);
	if (err || *u)
		return err;
	*u = cnf_union_take(ss, m->aside, m->n4, m->n6);
	if (IS_ERR(*u)) {
		err = PTR_ERR(*u);
		*u = NULL;
		cnf_budget_uncharge(&ss->budget, m->bytes);
	}
	return err;
}

static void cnf_mend_cancel(struct cnf_sets *ss, struct cnf_mend *m)
{
	cnf_budget_uncharge(&ss->budget, m->bytes);
	m->bytes = 0;
}

/*
 * The new union @u takes the kind's old one's place, which the mend keeps
 * until its prefixes are out; the caller then publishes a plan without a
 * union of the kind.
 */
static void cnf_mend_commit(struct cnf_sets *ss, u32 kind,
			    struct cnf_filter *u, struct cnf_mend *m)
{
	m->ss = ss;
	m->kind = kind;
	m->old = ss->union_of[kind];
	m->walking = true;
	ss->union_of[kind] = u;
	ss->mending[kind]++;
	list_add_tail(&m->node, &ss->mends);
}

static int cnf_mend_collect(void *ctx, const struct cnf_key *key)
{
	struct cnf_mend *m = ctx;
	u64 pos;

	if (READ_ONCE(m->stop))
		return -ECANCELED;
	if (key->family == CNF_V4) {
		if (WARN_ON_ONCE(m->got4 == m->n4))
			return -EOVERFLOW;
		pos = m->got4;
		m->v4[m->got4++] = key->v4;
	} else {
		if (WARN_ON_ONCE(m->got6 == m->n6))
			return -EOVERFLOW;
		pos = m->n4 + m->got6;
		m->v6[m->got6++] = key->v6;
	}
	m->len[pos] = key->len;
	return 0;
}

/**
 * cnf_mend_take - take the old union's prefixes out
 * @m: a pending mend (cnf_mend_pending()), without cnf_net_lock()
 *
 * Waits for the packets that may still probe the old union, then walks it
 * under its own lock only: nothing else uses it any more, but
 * cnf_sets_free(), which has the walk stop.  No room for them fails the
 * mend, which then drops the new union at its end: the kind's sets are
 * probed one by one until it has a union again.
 */
void cnf_mend_take(struct cnf_mend *m)
{
	int err = -ENOMEM;

	/* A build has no old union: its sets are walked in its steps. */
	if (m->build)
		return;
	synchronize_net();
	m->v4 = kvmalloc_array(max_t(u64, m->n4, 1), sizeof(*m->v4),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	m->v6 = kvmalloc_array(max_t(u64, m->n6, 1), sizeof(*m->v6),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	m->len = kvmalloc(max_t(u64, m->n4 + m->n6, 1),
			  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (m->v4 && m->v6 && m->len) {
		cnf_filter_lock(m->old);
		err = cnf_filter_walk(m->old, cnf_mend_collect, m);
		cnf_filter_unlock(m->old);
	}
	if (err)
		m->failed = true;
	WRITE_ONCE(m->walking, false);
	/* As for cnf_net.staging: the waker sees the waiter, or it the flag. */
	smp_mb();
	wake_up_var(&m->walking);
}

static void cnf_mend_key(const struct cnf_mend *m, u64 pos,
			 struct cnf_key *key)
{
	key->len = m->len[pos];
	if (pos < m->n4) {
		key->family = CNF_V4;
		key->v4 = m->v4[pos];
	} else {
		key->family = CNF_V6;
		key->v6 = m->v6[pos - m->n4];
	}
}

/* @key into the kind's union @u if a set of the kind holds it now. */
static int cnf_mend_one(struct cnf_sets *ss, u32 kind, struct cnf_filter *u,
			const struct cnf_key *key)
{
	int err = 0;

	if (!cnf_kind_holds(ss, kind, NULL, key))
		return 0;
	cnf_filter_lock(u);
	err = cnf_union_add(u, key);
	cnf_filter_unlock(u);
	return err;
}

/*
 * The mend's last step: the old union freed (no packet has probed it
 * since cnf_mend_take()), and, when it was the kind's last mend, a plan
 * with the new union, unless the mend failed: then the union goes.
 */
static void cnf_mend_end(struct cnf_sets *ss, struct cnf_mend *m)
{
	struct cnf_plan *spare;

	list_del_init(&m->node);
	ss->mending[m->kind]--;
	cnf_budget_uncharge(&ss->budget, m->bytes);
	/* Freed by the owner without the lock: it can be large. */
	cnf_retire(ss, &m->retired, m->old);
	m->old = NULL;
	if (m->failed && ss->union_of[m->kind]) {
		cnf_retire(ss, &m->retired, ss->union_of[m->kind]);
		ss->union_of[m->kind] = NULL;
	}
	/*
	 * Without a plan, the one that keeps serving has no union of the
	 * kind: none made since the mend began has.
	 */
	spare = cnf_plan_alloc(ss);
	if (spare)
		cnf_sets_publish(ss, spare, &m->retired);
}

/* ---- building a kind's first union ---- */

/*
 * Why a union built in steps is exact: as a mended one (above), with the
 * walks of the sets' filters in place of the old union.  From the build's
 * beginning every add to a set of the kind puts its prefix in the union,
 * and every delete takes it out unless another set holds it.  A prefix a
 * walk gives is one its filter holds then, and a filter walked is a set's
 * of the kind for as long as it is there (a swap exchanges filters of two
 * sets of the kind; a replace or a destroy frees it, and its walk ends),
 * so the union never holds what no set holds.  A prefix a set holds when
 * the build ends either was added since it began, and is in the union, or
 * was held throughout by the set, whose filter was there throughout, or
 * it would not be held (a replace's new contents are in the union made
 * aside that its mend brings): the walk of that filter gave it, and it
 * stayed in the union since.  Until the build is done the kind's packets
 * probe its sets one by one (cnf_sets.mending).
 */

/* End the build's walks from @from on, each under its filter's lock. */
static void cnf_build_end_walks(struct cnf_mend *m, u32 from)
{
	struct cnf_filter *f;
	u32 i;

	for (i = from; i < m->nwalk; i++) {
		f = m->walk[i].f;
		if (!f)
			continue;
		cnf_filter_lock(f);
		cnf_walk_end(&m->walk[i]);
		cnf_filter_unlock(f);
	}
}

/* Begin a walk of @f, a filter of the build @m, for its counts too. */
static int cnf_build_walk(struct cnf_mend *m, struct cnf_filter *f,
			  u64 *n4, u64 *n6)
{
	int err;

	cnf_filter_lock(f);
	*n4 += cnf_filter_count(f, CNF_V4);
	*n6 += cnf_filter_count(f, CNF_V6);
	err = cnf_walk_begin(f, &m->walk[m->nwalk]);
	if (!err)
		m->nwalk++;
	cnf_filter_unlock(f);
	return err;
}

/*
 * Begin @m, a build of @kind's union: @given (a replace's contents' union
 * made aside), or else a new, empty one, with room for the prefixes of the
 * kind's sets that have some but @skip, and of @extra (a replace's
 * contents, about to be @skip's), and a walk of each of them.  A new one
 * is the one made aside (@m->aside, cnf_union_take()).  The union the kind
 * had, if any, is the caller's to retire.  Nothing changed on error
 * (-EAGAIN: make one aside first), @given still the caller's.
 */
static int cnf_build_begin(struct cnf_sets *ss, u32 kind,
			   const struct cnf_set *skip, struct cnf_filter *given,
			   struct cnf_filter *extra, struct cnf_mend *m)
{
	struct cnf_filter *u = given;
	u64 n4 = 0, n6 = 0;
	unsigned int i;
	int err;

	/* The walks' room, charged as a mend's prefixes are (@bytes). */
	m->bytes = (ss->n + 1) * sizeof(*m->walk);
	err = cnf_budget_charge(&ss->budget, m->bytes);
	if (err)
		return err;
	m->walk = kcalloc(ss->n + 1, sizeof(*m->walk), GFP_KERNEL_ACCOUNT);
	if (!m->walk) {
		cnf_budget_uncharge(&ss->budget, m->bytes);
		return -ENOMEM;
	}
	for (i = 0; i < ss->n && !err; i++) {
		if (ss->set[i] == skip || !cnf_set_planned(ss->set[i], kind) ||
		    !cnf_set_count(ss->set[i]))
			continue;
		err = cnf_build_walk(m, ss->set[i]->filter, &n4, &n6);
	}
	if (!err && extra)
		err = cnf_build_walk(m, extra, &n4, &n6);
	if (!err && given) {
		cnf_filter_lock(u);
		err = cnf_union_reserve(u, n4, n6);
		cnf_filter_unlock(u);
	} else if (!err) {
		u = cnf_union_take(ss, m->aside, n4, n6);
		err = PTR_ERR_OR_ZERO(u);
		if (err)
			u = NULL;
	}
	if (err) {
		cnf_build_end_walks(m, 0);
		if (u != given)
			cnf_retire(ss, &m->retired, u);
		kfree(m->walk);
		cnf_budget_uncharge(&ss->budget, m->bytes);
		cnf_mend_undo(m);
		return err;
	}
	m->ss = ss;
	m->kind = kind;
	m->build = true;
	ss->union_of[kind] = u;
	ss->mending[kind]++;
	list_add_tail(&m->node, &ss->mends);
	return 0;
}

/*
 * A build begun for a change whose adds all failed, before any plan had
 * its union: undone, as if it had never begun.
 */
static void cnf_build_cancel(struct cnf_sets *ss, struct cnf_mend *m)
{
	cnf_build_end_walks(m, 0);
	list_del_init(&m->node);
	ss->mending[m->kind]--;
	/* Sized for the other sets: freed without the lock. */
	cnf_retire(ss, &m->retired, ss->union_of[m->kind]);
	ss->union_of[m->kind] = NULL;
	kfree(m->walk);
	cnf_budget_uncharge(&ss->budget, m->bytes);
	cnf_mend_undo(m);
}

/*
 * One step of a build, under cnf_net_lock(): CNF_BUILD_STEP buckets of a
 * set's filter walked, each prefix put in the kind's union, whichever it
 * is now (a mend begun meanwhile gives it another one).  Returns true
 * when every walk is over.
 */
static bool cnf_build_step(struct cnf_mend *m)
{
	struct cnf_filter *u = m->ss->union_of[m->kind], *f;
	struct cnf_walk *w;
	bool over;

	while (m->at < m->nwalk && !m->failed) {
		w = &m->walk[m->at];
		f = w->f;
		if (!f) {
			m->at++;
			continue;
		}
		cnf_filter_lock(f);
		/*
		 * No union any more: its kind has one set left, or none.  A
		 * set changed so fast that the next step may walk a whole
		 * table fails the build: the kind's sets are probed one by
		 * one, rather than the lock held that long.
		 */
		if (u && cnf_walk_churned(w))
			m->failed = true;
		if (u && !m->failed) {
			cnf_filter_lock_nested(u);
			if (cnf_walk_step(w, CNF_BUILD_STEP, cnf_copy_one, u))
				m->failed = true;
			cnf_filter_unlock(u);
		}
		over = !u || w->done || m->failed;
		if (over) {
			cnf_walk_end(w);
			m->at++;
		}
		cnf_filter_unlock(f);
		if (!over)
			return false;
	}
	cnf_build_end_walks(m, m->at);
	return true;
}

/**
 * cnf_mend_step - put some of the old union's prefixes in the new one
 * @m: a taken mend (cnf_mend_take()), under cnf_net_lock()
 *
 * Up to CNF_MEND_STEP prefixes, each only if a set of the kind holds it
 * now; after the last, the mend ends.
 *
 * Return: true when the mend is over (or the sets are gone): the owner
 * then lets go of cnf_net_lock() and calls cnf_mend_release().
 */
bool cnf_mend_step(struct cnf_mend *m)
{
	struct cnf_sets *ss = m->ss;
	u64 n = m->n4 + m->n6;
	struct cnf_filter *u;
	struct cnf_key key;
	unsigned int i;

	if (m->dead)
		return true;
	if (m->build) {
		if (!cnf_build_step(m))
			return false;
		cnf_mend_end(ss, m);
		return true;
	}
	u = ss->union_of[m->kind];
	for (i = 0; i < CNF_MEND_STEP && !m->failed && m->pos < n;
	     i++, m->pos++) {
		cnf_mend_key(m, m->pos, &key);
		if (u && cnf_mend_one(ss, m->kind, u, &key))
			m->failed = true;
	}
	if (!m->failed && m->pos < n)
		return false;
	cnf_mend_end(ss, m);
	return true;
}

/**
 * cnf_mend_release - free what a mend took out
 * @m: a mend that is over, or never began; without cnf_net_lock()
 */
void cnf_mend_release(struct cnf_mend *m)
{
	kfree(m->walk);
	m->walk = NULL;
	kvfree(m->v4);
	kvfree(m->v6);
	kvfree(m->len);
	m->v4 = NULL;
	m->v6 = NULL;
	m->len = NULL;
}

/* ---- the registry ---- */

/**
 * cnf_set_find - a set by name
 * @ss: the sets, under cnf_net_lock()
 * @name: a valid name, or "" for the default set
 *
 * Return: the set, or NULL.
 */
struct cnf_set *cnf_set_find(struct cnf_sets *ss, const char *name)
{
	unsigned int i;

	if (!*name)
		return ss->set[0];
	for (i = 0; i < ss->n; i++)
		if (!strcmp(ss->set[i]->name, name))
			return ss->set[i];
	return NULL;
}

/**
 * cnf_set_create - a new, empty set
 * @ss: the sets, under cnf_net_lock()
 * @name: a valid, non-empty name
 * @kind: enum cnf_set_kind
 * @timeout: seconds, the default timeout of its entries; 0: none
 * @flags: %CNF_SET_F_RULES_ONLY or 0
 *
 * Return: 0; -EEXIST; -ENOSPC past %CNF_SETS_MAX or the memory limit;
 * -ENOMEM.
 */
int cnf_set_create(struct cnf_sets *ss, const char *name, u32 kind,
		   u32 timeout, u32 flags)
{
	struct cnf_set *set;
	int err = -ENOMEM;

	if (cnf_set_find(ss, name))
		return -EEXIST;
	if (ss->n == CNF_SETS_MAX)
		return -ENOSPC;
	err = cnf_budget_charge(&ss->budget, cnf_set_size());
	if (err)
		return err;
	err = -ENOMEM;
	set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	if (!set)
		goto err_uncharge;
	strscpy(set->name, name, sizeof(set->name));
	set->kind = kind;
	set->timeout = timeout;
	set->rules_only = flags & CNF_SET_F_RULES_ONLY;
	set->matched = alloc_percpu_gfp(struct cnf_set_matched,
					GFP_KERNEL_ACCOUNT);
	if (!set->matched)
		goto err_free;
	set->filter = cnf_set_filter_new(ss);
	if (IS_ERR(set->filter)) {
		err = PTR_ERR(set->filter);
		set->filter = NULL;
		goto err_free;
	}
	ss->set[ss->n++] = set;
	return 0;

err_free:
	cnf_set_free(set);
err_uncharge:
	cnf_budget_uncharge(&ss->budget, cnf_set_size());
	return err;
}

/*
 * Take @set's timeouts out into @out (empty), uncharged, for the caller to
 * free (cnf_timeouts_clear() with no budget) once it let go of
 * cnf_net_lock(): for a large set that takes long, and nobody else needs
 * them.
 */
static void cnf_timeouts_take(struct cnf_sets *ss, struct cnf_set *set,
			      struct cnf_timeouts *out)
{
	cnf_budget_uncharge(&ss->budget, cnf_timeouts_bytes(&set->timeouts));
	swap(set->timeouts, *out);
}

/**
 * cnf_set_destroy - remove a set and its prefixes
 * @ss: the sets, under cnf_net_lock()
 * @set: one of them, not the default set and held by no iptables rule
 *	(-EBUSY)
 * @old: empty; gets @set's timeouts, uncharged, for the caller to free
 *	once it let go of cnf_net_lock() (cnf_timeouts_clear(), no budget)
 * @m: a mend not begun (cnf_mend_init()): begun when the kind keeps its
 *	union, which the caller then mends without cnf_net_lock(); the set
 *	and what else the destroy unpublished are retired in
 *	&cnf_mend.retired, for the caller to free once it let go of the lock
 *	(cnf_mend_run() in dev.c)
 *
 * Its sources stop matching before it returns.
 *
 * Return: 0; -EBUSY; -ENOSPC, -ENOMEM when there is no room to mend its
 * kind's union (nothing changed).
 */
int cnf_set_destroy(struct cnf_sets *ss, struct cnf_set *set,
		    struct cnf_timeouts *old, struct cnf_mend *m)
{
	struct cnf_filter *u = NULL;
	struct cnf_plan *spare;
	unsigned int i;
	bool mend;
	int err;

	if (set == ss->set[0] || set->rules)
		return -EBUSY;
	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	mend = cnf_union_kept(ss, set);
	err = mend ? cnf_mend_prepare(ss, set->kind, &u, m) : 0;
	if (err) {
		kfree(spare);
		return err;
	}
	for (i = 0; ss->set[i] != set; i++)
		;
	memmove(&ss->set[i], &ss->set[i + 1],
		(ss->n - i - 1) * sizeof(ss->set[0]));
	ss->set[--ss->n] = NULL;
	cnf_budget_uncharge(&ss->budget, cnf_set_size());
	cnf_timeouts_take(ss, set, old);
	cnf_retire_set(&m->retired, set);
	/* A rules-only set is in no union: its kind's stays as it is. */
	if (mend) {
		cnf_mend_commit(ss, set->kind, u, m);
	} else if (!set->rules_only) {
		cnf_retire(ss, &m->retired, ss->union_of[set->kind]);
		ss->union_of[set->kind] = NULL;
	}
	cnf_sets_publish(ss, spare, &m->retired);
	cnf_sets_changed(ss);
	return 0;
}

/**
 * cnf_set_swap - exchange two sets' contents in one step
 * @ss: the sets, under cnf_net_lock()
 * @a: a set
 * @b: another set of the same kind, rules-only as @a is or is not (-EINVAL
 *     otherwise: the union of the kind holds the same prefixes after)
 * @r: empty; what the swap unpublished, for the caller to free once it let
 *     go of cnf_net_lock() (cnf_retired_free())
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int cnf_set_swap(struct cnf_sets *ss, struct cnf_set *a, struct cnf_set *b,
		 struct cnf_retired *r)
{
	struct cnf_plan *spare;
	struct cnf_filter *f;

	if (a == b || a->kind != b->kind || a->rules_only != b->rules_only)
		return -EINVAL;
	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	/* Rules read each set's filter locklessly: either is whole. */
	f = a->filter;
	WRITE_ONCE(a->filter, b->filter);
	WRITE_ONCE(b->filter, f);
	swap(a->timeouts, b->timeouts);
	cnf_sets_publish(ss, spare, r);
	cnf_sets_changed(ss);
	return 0;
}

/**
 * cnf_set_log - change how the hooks log the drops a set causes
 * @ss: the sets, under cnf_net_lock()
 * @set: one of them, not rules-only
 * @log: in: the new setting, its loggers held (cnf_log_get()); out: the
 *	old one, whose loggers the caller lets go of (cnf_log_put()) once it
 *	let go of cnf_net_lock()
 * @r: empty; what the change unpublished, for the caller to free once it
 *	let go of cnf_net_lock() (cnf_retired_free())
 *
 * Packets see the new setting once the call returns; a plan says whether
 * any set logs, so that a drop without a logging set costs no search.
 *
 * Return: 0, or -ENOMEM (nothing changed).
 */
int cnf_set_log(struct cnf_sets *ss, struct cnf_set *set, u32 *log,
		struct cnf_retired *r)
{
	struct cnf_plan *spare;
	u32 old = set->log;

	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	WRITE_ONCE(set->log, *log);
	*log = old;
	cnf_sets_publish(ss, spare, r);
	return 0;
}

/**
 * cnf_set_flush - remove every prefix of a set
 * @ss: the sets, under cnf_net_lock()
 * @set: one of them
 * @old: empty; gets @set's timeouts, uncharged, for the caller to free
 *	once it let go of cnf_net_lock() (cnf_timeouts_clear(), no budget)
 * @m: a mend not begun (cnf_mend_init()): begun when the kind keeps its
 *	union, which the caller then mends without cnf_net_lock(); what
 *	the flush unpublished is retired in &cnf_mend.retired
 *
 * Return: 0; -ENOSPC, -ENOMEM (nothing changed).
 */
int cnf_set_flush(struct cnf_sets *ss, struct cnf_set *set,
		  struct cnf_timeouts *old, struct cnf_mend *m)
{
	struct cnf_filter *u = NULL;
	struct cnf_plan *spare;
	bool mend;
	int err;

	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	mend = cnf_union_kept(ss, set);
	err = mend ? cnf_mend_prepare(ss, set->kind, &u, m) : 0;
	if (err) {
		kfree(spare);
		return err;
	}
	cnf_filter_lock(set->filter);
	err = cnf_filter_flush(set->filter);
	cnf_filter_unlock(set->filter);
	if (err) {
		if (mend) {
			cnf_filter_destroy(u);
			cnf_mend_cancel(ss, m);
		}
		kfree(spare);
		return err;
	}
	cnf_timeouts_take(ss, set, old);
	if (mend)
		cnf_mend_commit(ss, set->kind, u, m);
	cnf_sets_publish(ss, spare, &m->retired);
	cnf_sets_changed(ss);
	return 0;
}

/**
 * cnf_set_replace - give a set new contents in one step
 * @ss: the sets, under cnf_net_lock()
 * @set: one of them
 * @contents: from cnf_set_filter_new(), filled; @set's from now on
 * @timeouts: the timeouts of @contents' entries, charged to @ss; moved to
 *            @set, and in return the timeouts of its old contents,
 *            uncharged, which the caller frees (cnf_timeouts_clear() with
 *            no budget) once it let go of cnf_net_lock(): for a large set
 *            that takes long, and nobody else needs them.
 *
 * @u: NULL, or a union made aside of @contents (cnf_union_aside()), in
 *     @ss's budget: on success the set's kind mends it, if it has a union
 *     to mend, or builds it (a build, @m pending), if the other sets of
 *     the kind make it need its first, else it is retired
 * @m: a mend not begun (cnf_mend_init()), which the replace may begin; the
 *     old contents and what else the replace unpublished are retired in
 *     &cnf_mend.retired, for the caller to free once it let go of the lock
 *
 * A source that both the old and the new contents cover is matched
 * throughout; one that neither covers never is.  A kind that has a union
 * keeps it, mended (cnf_mend_pending(@m)) when @u is given.  Else, when
 * the kind needs a union (two sets of it with prefixes, counting the new
 * contents), a new one is built in steps (@m pending), from @u when given,
 * else from nothing, with @contents walked in as the other sets are, and
 * a union the kind had without @u is retired: its sets are probed one by
 * one until then.  Nothing under the lock takes time that grows with the
 * sets but a union's first tables (cnf_union_reserve()).
 *
 * Return: 0; -ENOSPC, -ENOMEM when there is no room to mend or build the
 * kind's union: nothing changed and @contents, @timeouts and @u are still
 * the caller's.
 */
int cnf_set_replace(struct cnf_sets *ss, struct cnf_set *set,
		    struct cnf_filter *contents, struct cnf_timeouts *timeouts,
		    struct cnf_filter *u, struct cnf_mend *m)
{
	struct cnf_filter *nu = NULL, *prev = ss->union_of[set->kind];
	bool mend = false, build = false;
	struct cnf_plan *spare;
	unsigned int others;
	int err = 0;

	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	others = cnf_kind_nonempty(ss, set->kind, set);
	if (!set->rules_only && others + !!cnf_filter_total(contents) >= 2) {
		mend = u && prev;
		if (mend) {
			nu = u;
			err = cnf_mend_prepare(ss, set->kind, &nu, m);
		} else {
			/* @u, or nothing and @contents walked in. */
			err = cnf_build_begin(ss, set->kind, set, u,
					      u ? NULL : contents, m);
			build = !err;
		}
	}
	if (err) {
		kfree(spare);
		return err;
	}
	cnf_retire(ss, &m->retired, set->filter);
	/* Rules read it locklessly (cnf_set_filter_rcu()): filled first. */
	smp_store_release(&set->filter, contents);
	swap(set->timeouts, *timeouts);
	cnf_budget_uncharge(&ss->budget, cnf_timeouts_bytes(timeouts));
	if (mend) {
		cnf_mend_commit(ss, set->kind, nu, m);
	} else if (build) {
		/* The build's union took its place; it may hold @set's old. */
		cnf_retire(ss, &m->retired, prev);
	} else {
		/* A rules-only set is in no union: its kind's stays. */
		if (!set->rules_only) {
			cnf_retire(ss, &m->retired, prev);
			ss->union_of[set->kind] = NULL;
		}
		/* Never seen by a packet, but large: freed without the lock. */
		cnf_retire(ss, &m->retired, u);
	}
	cnf_sets_publish(ss, spare, &m->retired);
	cnf_sets_changed(ss);
	return 0;
}

/* ---- changes of entries ---- */

/**
 * cnf_change_begin - start changing a set's entries
 * @c: the change
 * @ss: the sets, under cnf_net_lock() until cnf_change_end()
 * @set: the set
 * @adds: adds that may follow (0: deletes only)
 * @m: a mend not begun (cnf_mend_init()): a build the change begins, and
 *     what cnf_change_end() unpublishes (&cnf_mend.retired), which the
 *     caller frees once it let go of cnf_net_lock() (cnf_retired_free(),
 *     or cnf_mend_run() in dev.c)
 *
 * A set getting its first prefixes while another set of its kind has some
 * gets the kind's union: begun now, empty, as a build (@m pending), which
 * the caller then runs without cnf_net_lock() (cnf_mend_run()), to fill
 * it with the other sets' prefixes in steps.
 *
 * Return: 0; -ENOSPC, -ENOMEM (nothing changed, no cnf_change_end()).
 */
int cnf_change_begin(struct cnf_change *c, struct cnf_sets *ss,
		     struct cnf_set *set, u64 adds, struct cnf_mend *m)
{
	int err;

	c->ss = ss;
	c->set = set;
	c->locked = false;
	c->built = false;
	c->spare = NULL;
	c->mend = m;
	c->was_empty = !cnf_set_count(set);
	/* Only a set getting its first prefixes needs a new plan for sure. */
	if (adds && c->was_empty) {
		c->spare = cnf_plan_alloc(ss);
		if (!c->spare)
			return -ENOMEM;
	}
	if (c->spare && !set->rules_only && !ss->union_of[set->kind] &&
	    cnf_kind_nonempty(ss, set->kind, set)) {
		err = cnf_build_begin(ss, set->kind, set, NULL, NULL, m);
		if (err) {
			kfree(c->spare);
			return err;
		}
		c->built = true;
	}
	/* The set alone serves its kind, or none: changed as one filter. */
	if (set->rules_only || !ss->union_of[set->kind]) {
		cnf_filter_lock(set->filter);
		cnf_filter_expect(set->filter, adds);
		c->locked = true;
	}
	return 0;
}

/*
 * @key into @set's filter @f and into @u, the union of its kind, unless
 * another set has it there: both locked, the union's nested inside, as
 * for a copy.  Both adds are prepared before either is committed: what can
 * fail fails before packets see either (the union decides verdicts, the
 * set's filter counts matches).
 */
static int cnf_set_union_add(struct cnf_filter *f, struct cnf_filter *u,
			     const struct cnf_key *key)
{
	bool in_union = false;
	int err;

	cnf_filter_lock(f);
	cnf_filter_lock_nested(u);
	err = cnf_filter_add_prepare(f, key);
	if (!err && !cnf_filter_has(u, key)) {
		err = cnf_filter_add_prepare(u, key);
		if (err)
			cnf_filter_add_abort(f, key);
		in_union = !err;
	}
	if (!err) {
		err = cnf_filter_add_commit(f, key);
		if (err && in_union)
			cnf_filter_add_abort(u, key);
	}
	/* Prepared, a commit fails only at the limit with a full stash. */
	if (!err && in_union) {
		err = cnf_filter_add_commit(u, key);
		if (err)
			WARN_ON_ONCE(cnf_filter_del(f, key));
	}
	cnf_filter_unlock(u);
	cnf_filter_unlock(f);
	return err;
}

/**
 * cnf_change_add - add a prefix to the set a change is of
 * @c: the change
 * @key: the prefix
 *
 * Return: as cnf_filter_add(); on error nothing changed, and packets saw
 * nothing of it.
 */
int cnf_change_add(struct cnf_change *c, const struct cnf_key *key)
{
	if (c->locked)
		return cnf_filter_add(c->set->filter, key);
	return cnf_set_union_add(c->set->filter, c->ss->union_of[c->set->kind],
				 key);
}

/**
 * cnf_change_del - delete a prefix from the set a change is of
 * @c: the change
 * @key: the prefix
 *
 * Return: as cnf_filter_del(); on error nothing changed.
 */
int cnf_change_del(struct cnf_change *c, const struct cnf_key *key)
{
	struct cnf_filter *u = c->ss->union_of[c->set->kind];
	struct cnf_filter *f = c->set->filter;
	int err;

	if (c->locked)
		return cnf_filter_del(f, key);
	err = cnf_locked(f, cnf_filter_del, key);
	if (err || cnf_kind_holds(c->ss, c->set->kind, c->set, key))
		return err;
	err = cnf_locked(u, cnf_filter_del, key);
	/* A union being mended lacks what its mends did not put back yet. */
	WARN_ON_ONCE(err && !(err == -ENOENT && c->ss->mending[c->set->kind]));
	return 0;
}

/**
 * cnf_change_prefetch - warm up for a key a few changes ahead
 * @c: the change
 * @key: the prefix
 */
void cnf_change_prefetch(struct cnf_change *c, const struct cnf_key *key)
{
	if (c->locked)
		cnf_filter_prefetch(c->set->filter, key);
}

/**
 * cnf_change_expect_tally - size a change's tables for a batch's keys
 * @c: the change, begun for the batch's adds
 * @tally: the keys the batch brings (cnf_filter_expect_tally()), until
 *	cnf_change_end()
 *
 * Only a set that serves its kind alone is sized ahead; a set beside
 * others of its kind, and their union, grow as their adds need.
 */
void cnf_change_expect_tally(struct cnf_change *c,
			     const struct cnf_tally *tally)
{
	if (c->locked)
		cnf_filter_expect_tally(c->set->filter, tally);
}

/**
 * cnf_change_end - make a change's entries what packets see
 * @c: the change
 *
 * The plan changes only when the set got its first prefixes or lost its
 * last.  Should there be no memory for a new plan in the second case, the
 * old one stays: the emptied set in it matches nothing.  The marks made
 * before go stale, whether or not an entry changed (cnf_sets_changed()).
 */
void cnf_change_end(struct cnf_change *c)
{
	if (c->locked) {
		cnf_filter_expect(c->set->filter, 0);
		cnf_filter_unlock(c->set->filter);
	}
	if (!cnf_set_count(c->set) == c->was_empty) {
		/* A union made for adds that all failed was never seen. */
		if (c->built)
			cnf_build_cancel(c->ss, c->mend);
		kfree(c->spare);
	} else {
		if (!c->spare)
			c->spare = cnf_plan_alloc(c->ss);
		if (c->spare)
			cnf_sets_publish(c->ss, c->spare, &c->mend->retired);
	}
	cnf_sets_changed(c->ss);
}

/* ---- the whole ---- */

/**
 * cnf_sets_init - a namespace's sets: the default set, empty
 * @ss: zeroed
 * @initial_capacity: of every set's filter
 * @mem_limit: bytes all of them may use together: their tables, what
 *	every set and the unions cost beside (cnf_set_size(),
 *	cnf_sets_size()), and what the budget's users charge to it
 *
 * Return: 0; -ENOSPC when @mem_limit does not hold the default set;
 * -ENOMEM.
 */
int cnf_sets_init(struct cnf_sets *ss, u64 initial_capacity, u64 mem_limit)
{
	struct cnf_plan *p;
	int err;

	cnf_budget_init(&ss->budget, mem_limit);
	INIT_LIST_HEAD(&ss->mends);
	ss->initial_capacity = initial_capacity;
	err = cnf_budget_charge(&ss->budget, cnf_sets_size());
	if (err)
		return err;
	p = cnf_plan_alloc(ss);
	if (!p)
		return -ENOMEM;
	RCU_INIT_POINTER(ss->plan, p);
	err = cnf_set_create(ss, CNF_SET_DEFAULT, CNF_SET_BLOCK, 0, 0);
	if (err)
		cnf_sets_free(ss);
	return err;
}

/*
 * The mends of the sets being freed: the old unions they still walk are
 * wanted back at once, and there is nothing left for them to do.  Their
 * owners, which need cnf_net_lock() for anything but the walk, find them
 * dead.
 */
static void cnf_mends_stop(struct cnf_sets *ss)
{
	struct cnf_mend *m, *tmp;

	list_for_each_entry_safe(m, tmp, &ss->mends, node) {
		WRITE_ONCE(m->stop, true);
		wait_var_event(&m->walking, !READ_ONCE(m->walking));
		cnf_filter_destroy(m->old);
		m->old = NULL;
		m->dead = true;
		list_del_init(&m->node);
	}
}

/**
 * cnf_sets_free - free every set, when no packet can see them
 * @ss: the sets, under cnf_net_lock() unless no call can reach them
 *
 * Waits for a mend's walk of an old union to stop, which takes no longer
 * than one prefix does.
 */
void cnf_sets_free(struct cnf_sets *ss)
{
	unsigned int i;

	/* Sets whose cnf_sets_init() failed are zeroed already. */
	if (ss->mends.next)
		cnf_mends_stop(ss);

	for (i = 0; i < ss->n; i++)
		cnf_set_free(ss->set[i]);
	for (i = 0; i < CNF_SET_KINDS; i++)
		cnf_filter_destroy(ss->union_of[i]);
	kfree(rcu_dereference_protected(ss->plan, true));
	memset(ss, 0, sizeof(*ss));
}

/**
 * cnf_sets_pristine - are the sets as cnf_sets_init() made them
 * @ss: the sets, under cnf_net_lock()
 *
 * Return: true when the default set is the only one and holds nothing.
 */
bool cnf_sets_pristine(struct cnf_sets *ss)
{
	return ss->n == 1 && !cnf_set_count(ss->set[0]);
}

/**
 * cnf_sets_held - does an iptables rule hold one of the sets
 * @ss: the sets, under cnf_net_lock()
 *
 * Return: true while some set's &struct cnf_set.rules is not 0: the sets
 * must not be freed (a reset is refused).
 */
bool cnf_sets_held(struct cnf_sets *ss)
{
	unsigned int i;

	for (i = 0; i < ss->n; i++)
		if (ss->set[i]->rules)
			return true;
	return false;
}
