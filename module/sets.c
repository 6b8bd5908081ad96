// SPDX-License-Identifier: GPL-2.0
/*
 * Named sets: the registry, the kinds' unions and the plan the hooks read
 * (see sets.h).  Everything here runs under the namespace's
 * cnf_net_lock(); a filter's own lock is taken around each use of it, two
 * at once only to copy a filter into a union or to add to a set and its
 * union (the union's nested inside).
 *
 * A union is made when a second set of its kind gets prefixes, kept up to
 * date entry by entry while sets are added to and deleted from, made anew
 * beside the old one when a set of the kind is flushed, destroyed or
 * replaced (the new plan then takes the old union's place in one step),
 * and dropped when one set of the kind or none is left with prefixes.
 */
#include "cnf.h"

#include <linux/err.h>
#include <linux/slab.h>
#include <linux/string.h>

/* What a change leaves to free once no packet can see it any more. */
struct cnf_retired {
	struct cnf_filter *filter[CNF_SET_KINDS + 1];
	unsigned int n;
	struct cnf_set *set;
};

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
	       num_possible_cpus() * sizeof(u64_stats_t) +
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

static int cnf_copy_into(struct cnf_filter *to, struct cnf_filter *from)
{
	int err;

	cnf_filter_lock(from);
	cnf_filter_lock_nested(to);
	cnf_filter_expect(to, cnf_filter_count(from, CNF_V4) +
			  cnf_filter_count(from, CNF_V6));
	err = cnf_filter_walk(from, cnf_copy_one, to);
	cnf_filter_expect(to, 0);
	cnf_filter_unlock(to);
	cnf_filter_unlock(from);
	return err;
}

/* A union of the sets of @kind but @skip, and of @extra if given. */
static struct cnf_filter *cnf_union_build(struct cnf_sets *ss, u32 kind,
					  const struct cnf_set *skip,
					  struct cnf_filter *extra)
{
	struct cnf_filter *u = cnf_set_filter_new(ss);
	unsigned int i;
	int err = 0;

	if (IS_ERR(u))
		return u;
	for (i = 0; i < ss->n && !err; i++)
		if (ss->set[i] != skip && cnf_set_planned(ss->set[i], kind))
			err = cnf_copy_into(u, ss->set[i]->filter);
	if (!err && extra)
		err = cnf_copy_into(u, extra);
	if (err) {
		cnf_filter_destroy(u);
		return ERR_PTR(err);
	}
	return u;
}

/*
 * The union @set's kind needs once @set is emptied or gone: made anew of
 * the others while two or more of them hold prefixes and the kind keeps
 * one, else NULL.  An ERR_PTR() when it cannot be made.
 */
static struct cnf_filter *cnf_union_without(struct cnf_sets *ss,
					    const struct cnf_set *set)
{
	if (set->rules_only || !ss->union_of[set->kind] ||
	    cnf_kind_nonempty(ss, set->kind, set) < 2)
		return NULL;
	return cnf_union_build(ss, set->kind, set, NULL);
}

/*
 * @u becomes the union of @set's kind, the old one retired into @r; a
 * rules-only set's changes leave its kind's union alone.
 */
static void cnf_union_renew(struct cnf_sets *ss, const struct cnf_set *set,
			    struct cnf_filter *u, struct cnf_retired *r)
{
	if (set->rules_only)
		return;
	if (ss->union_of[set->kind])
		r->filter[r->n++] = ss->union_of[set->kind];
	ss->union_of[set->kind] = u;
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

	for (kind = 0; kind < CNF_SET_KINDS; kind++) {
		p->n[kind] = 0;
		for (i = 0; i < ss->n; i++) {
			struct cnf_set *s = ss->set[i];

			if (!cnf_set_planned(s, kind) || !cnf_set_count(s))
				continue;
			p->set[n].filter = s->filter;
			p->set[n++].matched = s->matched;
			p->n[kind]++;
		}
		if (p->n[kind] > 1)
			p->lookup[kind] = ss->union_of[kind];
		else
			p->lookup[kind] = p->n[kind] ? p->set[n - 1].filter : NULL;
	}
}

static bool cnf_plan_same(const struct cnf_plan *a, const struct cnf_plan *b)
{
	unsigned int i, n = a->n[CNF_SET_BLOCK] + a->n[CNF_SET_ALLOW];

	if (memcmp(a->lookup, b->lookup, sizeof(a->lookup)) ||
	    memcmp(a->n, b->n, sizeof(a->n)))
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
	kfree(set);
}

/*
 * Publish @spare as @ss now is; a union whose kind no longer needs one is
 * retired with what the caller retired, and all of it is freed once no
 * packet can see it.  Under cnf_net_lock().
 */
static void cnf_sets_publish(struct cnf_sets *ss, struct cnf_plan *spare,
			     struct cnf_retired *r)
{
	struct cnf_plan *old = rcu_dereference_protected(ss->plan, true);
	unsigned int kind, i;

	for (kind = 0; kind < CNF_SET_KINDS; kind++) {
		if (ss->union_of[kind] &&
		    cnf_kind_nonempty(ss, kind, NULL) < 2) {
			r->filter[r->n++] = ss->union_of[kind];
			ss->union_of[kind] = NULL;
		}
	}
	cnf_plan_fill(ss, spare);
	if (!r->n && !r->set && cnf_plan_same(old, spare)) {
		kfree(spare);
		return;
	}
	rcu_assign_pointer(ss->plan, spare);
	if (!r->n && !r->set) {
		kfree_rcu(old, rcu);
		return;
	}
	synchronize_net();
	kfree(old);
	for (i = 0; i < r->n; i++)
		cnf_filter_destroy(r->filter[i]);
	if (r->set)
		cnf_set_free(r->set);
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
	set->matched = alloc_percpu_gfp(u64_stats_t, GFP_KERNEL_ACCOUNT);
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
 *
 * Its sources stop matching before it returns.
 *
 * Return: 0; -EBUSY; -ENOSPC, -ENOMEM when its kind's union cannot be
 * made anew (nothing changed).
 */
int cnf_set_destroy(struct cnf_sets *ss, struct cnf_set *set,
		    struct cnf_timeouts *old)
{
	struct cnf_retired r = { .set = set };
	struct cnf_filter *u;
	struct cnf_plan *spare;
	unsigned int i;

	if (set == ss->set[0] || set->rules)
		return -EBUSY;
	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	u = cnf_union_without(ss, set);
	if (IS_ERR(u)) {
		kfree(spare);
		return PTR_ERR(u);
	}
	for (i = 0; ss->set[i] != set; i++)
		;
	memmove(&ss->set[i], &ss->set[i + 1],
		(ss->n - i - 1) * sizeof(ss->set[0]));
	ss->set[--ss->n] = NULL;
	cnf_budget_uncharge(&ss->budget, cnf_set_size());
	cnf_timeouts_take(ss, set, old);
	cnf_union_renew(ss, set, u, &r);
	cnf_sets_publish(ss, spare, &r);
	cnf_sets_changed(ss);
	return 0;
}

/**
 * cnf_set_swap - exchange two sets' contents in one step
 * @ss: the sets, under cnf_net_lock()
 * @a: a set
 * @b: another set of the same kind, rules-only as @a is or is not (-EINVAL
 *     otherwise: the union of the kind holds the same prefixes after)
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int cnf_set_swap(struct cnf_sets *ss, struct cnf_set *a, struct cnf_set *b)
{
	struct cnf_retired r = { };
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
	cnf_sets_publish(ss, spare, &r);
	cnf_sets_changed(ss);
	return 0;
}

/**
 * cnf_set_flush - remove every prefix of a set
 * @ss: the sets, under cnf_net_lock()
 * @set: one of them
 * @old: empty; gets @set's timeouts, uncharged, for the caller to free
 *	once it let go of cnf_net_lock() (cnf_timeouts_clear(), no budget)
 *
 * Return: 0; -ENOSPC, -ENOMEM (nothing changed).
 */
int cnf_set_flush(struct cnf_sets *ss, struct cnf_set *set,
		  struct cnf_timeouts *old)
{
	struct cnf_retired r = { };
	struct cnf_filter *u;
	struct cnf_plan *spare;
	int err;

	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	u = cnf_union_without(ss, set);
	if (IS_ERR(u)) {
		kfree(spare);
		return PTR_ERR(u);
	}
	cnf_filter_lock(set->filter);
	err = cnf_filter_flush(set->filter);
	cnf_filter_unlock(set->filter);
	if (err) {
		cnf_filter_destroy(u);
		kfree(spare);
		return err;
	}
	cnf_timeouts_take(ss, set, old);
	if (ss->union_of[set->kind])
		cnf_union_renew(ss, set, u, &r);
	cnf_sets_publish(ss, spare, &r);
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
 * A source that both the old and the new contents cover is matched
 * throughout; one that neither covers never is.
 *
 * Return: 0; -ENOSPC, -ENOMEM when the kind's union cannot be made anew:
 * nothing changed and @contents and @timeouts are still the caller's.
 */
int cnf_set_replace(struct cnf_sets *ss, struct cnf_set *set,
		    struct cnf_filter *contents, struct cnf_timeouts *timeouts)
{
	struct cnf_filter *u = NULL;
	struct cnf_retired r = { };
	struct cnf_plan *spare;
	unsigned int others;

	spare = cnf_plan_alloc(ss);
	if (!spare)
		return -ENOMEM;
	others = cnf_kind_nonempty(ss, set->kind, set);
	if (!set->rules_only && others + !!cnf_filter_total(contents) >= 2) {
		u = cnf_union_build(ss, set->kind, set, contents);
		if (IS_ERR(u)) {
			kfree(spare);
			return PTR_ERR(u);
		}
	}
	r.filter[r.n++] = set->filter;
	/* Rules read it locklessly (cnf_set_filter_rcu()): filled first. */
	smp_store_release(&set->filter, contents);
	swap(set->timeouts, *timeouts);
	cnf_budget_uncharge(&ss->budget, cnf_timeouts_bytes(timeouts));
	cnf_union_renew(ss, set, u, &r);
	cnf_sets_publish(ss, spare, &r);
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
 *
 * A set getting its first prefixes while another set of its kind has some
 * gets the kind's union made now.
 *
 * Return: 0; -ENOSPC, -ENOMEM (nothing changed, no cnf_change_end()).
 */
int cnf_change_begin(struct cnf_change *c, struct cnf_sets *ss,
		     struct cnf_set *set, u64 adds)
{
	struct cnf_filter *u;

	c->ss = ss;
	c->set = set;
	c->locked = false;
	c->built = false;
	c->spare = NULL;
	c->was_empty = !cnf_set_count(set);
	/* Only a set getting its first prefixes needs a new plan for sure. */
	if (adds && c->was_empty) {
		c->spare = cnf_plan_alloc(ss);
		if (!c->spare)
			return -ENOMEM;
	}
	if (c->spare && !set->rules_only && !ss->union_of[set->kind] &&
	    cnf_kind_nonempty(ss, set->kind, set)) {
		u = cnf_union_build(ss, set->kind, NULL, NULL);
		if (IS_ERR(u)) {
			kfree(c->spare);
			return PTR_ERR(u);
		}
		ss->union_of[set->kind] = u;
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
	WARN_ON_ONCE(cnf_locked(u, cnf_filter_del, key));
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
	struct cnf_retired r = { };
	u32 kind = c->set->kind;

	if (c->locked) {
		cnf_filter_expect(c->set->filter, 0);
		cnf_filter_unlock(c->set->filter);
	}
	if (!cnf_set_count(c->set) == c->was_empty) {
		/* A union made for adds that all failed was never seen. */
		if (c->built) {
			cnf_filter_destroy(c->ss->union_of[kind]);
			c->ss->union_of[kind] = NULL;
		}
		kfree(c->spare);
	} else {
		if (!c->spare)
			c->spare = cnf_plan_alloc(c->ss);
		if (c->spare)
			cnf_sets_publish(c->ss, c->spare, &r);
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

/**
 * cnf_sets_free - free every set, when no packet can see them
 * @ss: the sets
 */
void cnf_sets_free(struct cnf_sets *ss)
{
	unsigned int i;

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
