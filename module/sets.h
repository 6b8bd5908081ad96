/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A namespace's named sets, and the one filter per kind its packets probe.
 *
 * Every set has a filter of its own, which the control device changes and
 * reads.  Packets do not probe the sets one by one: per kind (block,
 * allow) they probe the kind's lookup filter, which is
 *  - none while no set of the kind holds a prefix;
 *  - the set's own filter while exactly one set of the kind does;
 *  - else the kind's union: one more filter, holding once every prefix
 *    some set of the kind holds.
 * A packet costs one probe of the block lookup filter, and one of the
 * allow lookup filter when the first matched and allow sets hold
 * prefixes, however many sets there are.  Counting matches per set costs
 * more only for matched packets of a kind with several non-empty sets: a
 * probe of each of them.
 *
 * The hooks read a plan: the lookup filters and the non-empty sets, made
 * anew and published whole (RCU) whenever one of them changes, so that a
 * packet sees the sets of one moment.  A change that swaps lookup filters
 * (a union made or dropped, a set's contents replaced) publishes the new
 * plan in one step and retires what only the old one used (struct
 * cnf_retired), which the call frees once it let go of cnf_net_lock() and
 * waited for the old plan's readers.
 *
 * A set of a kind with a union flushed, destroyed or replaced leaves the
 * union holding prefixes no set may hold any more.  Making a union anew
 * of the other sets would take time that grows with them, under
 * cnf_net_lock(), which expiry and every call of the namespace need.  So
 * the kind's union is mended instead (struct cnf_mend): the change
 * publishes a plan in which the kind has no lookup filter, and packets
 * probe its non-empty sets one by one, each exact; the old union's
 * prefixes are taken out aside, without cnf_net_lock(), and put in a new
 * union in steps of CNF_MEND_STEP under it, each only if a set of the kind
 * holds it then, while changes of the sets go to the new union as they
 * come; once the last mend of the kind is done, a plan with the new union
 * is published.  The new union never holds a prefix no set holds, and
 * once mended it holds every prefix a set does (sets.c argues why).
 */
#ifndef _CNF_SETS_H
#define _CNF_SETS_H

#include <linux/u64_stats_sync.h>
#include <linux/cuckoo_nf.h>

#include "budget.h"
#include "filter.h"
#include "walk.h"
#include "expiry.h"

#define CNF_SET_KINDS	2

/* A set's per-CPU count of the packets it covered, and their bytes. */
struct cnf_set_matched {
	u64_stats_t packets;
	u64_stats_t bytes;
};

/*
 * A set.  Its fields are read and changed under cnf_net_lock(), @filter's
 * contents also under its own cnf_filter_lock(); the hooks reach @filter
 * and @matched only through a plan.
 * @matched: per CPU, packets the set covered and their bytes; written by
 *           the hooks inside their CPU's cnf_pcpu_stats syncp section.
 * @timeout: seconds, the default of entries added without one; 0: none.
 * @timeouts: the timeouts of @filter's entries that have one: they go
 *           with the contents (a swap exchanges them too).
 * @rules_only: %CNF_SET_F_RULES_ONLY: never in a plan nor in a union, so
 *           the hooks and the kfuncs never see it; fixed at creation.
 * @log:     how the hooks log the drops the set causes (log.h): 0 for
 *           not at all; written with WRITE_ONCE() under cnf_net_lock() by
 *           cnf_set_log() only, read by the hooks through a plan
 *           (READ_ONCE()).  While not 0, the set holds the logger's
 *           modules (cnf_log_get()), let go of when it changes or the set
 *           is freed.
 * @rules:   the iptables rules that hold the set (xt_cuckoo.c), which
 *           read @filter under RCU with cnf_set_filter_rcu(): while there
 *           is one, the set is neither destroyed nor freed by a reset.
 *
 * @filter is read by those rules without cnf_net_lock(): it is replaced
 * with a release (cnf_set_replace()) or exchanged with another set's
 * (cnf_set_swap(), both whole), and a filter it leaves is freed only after
 * a grace period.
 */
struct cnf_set {
	char name[CNF_SET_NAME_LEN];
	u32 kind;		/* enum cnf_set_kind */
	u32 timeout;
	struct cnf_filter *filter;
	struct cnf_set_matched __percpu *matched;
	struct cnf_timeouts timeouts;
	bool rules_only;
	u32 log;
	u32 rules;
};

/**
 * cnf_set_filter_rcu - a set's filter, for a reader without cnf_net_lock()
 * @set: a set the caller holds (&struct cnf_set.rules), under RCU
 *
 * Return: the filter, whole, usable until the RCU read section ends.
 */
static inline const struct cnf_filter *
cnf_set_filter_rcu(const struct cnf_set *set)
{
	/* Pairs with the release in cnf_set_replace(), as rcu_dereference(). */
	return READ_ONCE(set->filter);
}

/*
 * @set: for its name and @log, which packets read; a set a plan names is
 * freed only once no packet sees that plan (cnf_sets_publish()).
 */
struct cnf_plan_set {
	const struct cnf_filter *filter;
	struct cnf_set_matched __percpu *matched;
	const struct cnf_set *set;
};

/*
 * What the hooks probe; never changed once published.
 * @lookup: per kind, the lookup filter, NULL while the kind holds nothing,
 *          or while its union is mended: then each of its @n sets is
 *          probed (cnf_plan_covers()).
 * @n:      per kind, its non-empty sets: @set holds the block ones, then
 *          the allow ones.
 * @log:    whether a block set of @set logs: the hooks look for it only
 *          then (cnf_log_drop()).
 */
struct cnf_plan {
	const struct cnf_filter *lookup[CNF_SET_KINDS];
	u16 n[CNF_SET_KINDS];
	bool log;
	struct rcu_head rcu;
	struct cnf_plan_set set[];
};

/*
 * A namespace's sets.  @plan: published with rcu_assign_pointer() under
 * cnf_net_lock(), read by the hooks under RCU; never NULL.  Everything
 * else under cnf_net_lock(), which also serialises the writers of every
 * filter in @budget (the sets', the unions', the old unions mends take
 * their prefixes from; contents built aside join it once built,
 * cnf_budget_merge()).
 * @union_of: per kind, the union while two or more sets of the kind hold
 *            prefixes, else NULL; while @mending it may lack prefixes the
 *            sets hold, and no plan has it.
 * @mending:  per kind, the mends of its union not done yet.
 * @mends:    those mends (struct cnf_mend.node).
 * @set:      @n sets in creation order; @set[0] is the default set.
 */
struct cnf_sets {
	struct cnf_plan __rcu *plan;
	struct cnf_budget budget;
	u64 initial_capacity;
	struct cnf_filter *union_of[CNF_SET_KINDS];
	u32 mending[CNF_SET_KINDS];
	struct list_head mends;
	u32 n;
	struct cnf_set *set[CNF_SETS_MAX];
};

/* Filters one call retires at most (cnf_retire()). */
#define CNF_RETIRED_MAX	4

/*
 * What a call unpublished under cnf_net_lock(), to free once no packet
 * sees it: waiting for that (a grace period) and freeing a large filter
 * are done after the call let go of the lock (cnf_retired_free()), so
 * that neither holds it.  Filled with cnf_retire() under the lock; its
 * filters are out of the sets' budget from then on (cnf_filter_retire()),
 * like a retired table, and freed before the call returns.
 * @filter: @n filters no set, union, mend or walk holds any more.
 * @set:    a destroyed set, its filter retired with it.
 */
struct cnf_retired {
	struct cnf_filter *filter[CNF_RETIRED_MAX];
	unsigned int n;
	struct cnf_set *set;
};

/*
 * A union made aside, without cnf_net_lock(), for a mend or build to
 * begin with, so that its first tables, sized for the prefixes it is to
 * get, are not allocated under the lock.  A change that finds it needs
 * one and has none fails with -EAGAIN, @wanted said and sized; its caller
 * makes one (cnf_aside_make()), and tries again.  Owned by the caller.
 * @u:       the union, in @budget, or NULL.
 * @budget:  its own, with the room the namespace's had (@room): it joins
 *           the namespace's when taken (cnf_budget_merge()).
 * @wanted:  a change asked for one of @n4 and @n6 prefixes.
 */
struct cnf_aside {
	struct cnf_filter *u;
	struct cnf_budget budget;
	u64 n4, n6;
	u64 room, capacity;
	bool wanted;
};

/* Prefixes a mend puts in the union per hold of cnf_net_lock(). */
#define CNF_MEND_STEP	64
/* Buckets of a set's tables a build walks per hold of cnf_net_lock(). */
#define CNF_BUILD_STEP	1024

/*
 * A mend of a kind's union, owned by the call whose change began it (a
 * flush, destroy or replace, or an add that began a build, below), which
 * then takes the old union's prefixes out without any lock but its
 * filter's (cnf_mend_take()), mends step by step under cnf_net_lock()
 * (cnf_mend_step()) and frees what is left (cnf_mend_release()).  Fields
 * under cnf_net_lock() but where said.
 * @node:    in cnf_sets.mends until done.
 * @ss:      the sets; not to be used once @dead.
 * @old:     the union the mend replaced, which nothing but the mend uses
 *           any more; in the sets' budget, freed by the mend's last step,
 *           or by cnf_sets_free().
 * @n4, @n6: its prefixes of each family; @v4, @v6 and @len hold them
 *           once taken out (positions as a dump's: IPv4 first), charged
 *           to the budget as @bytes.
 * @got4, @got6: prefixes of each family taken out so far.
 * @pos:     prefixes put back so far.
 * @walking: @old is being walked without cnf_net_lock(): written by the
 *           mend's owner, waited for by cnf_sets_free(), locklessly.
 * @stop:    cnf_sets_free() wants @old: the walk stops at the next prefix.
 * @failed:  a prefix could not be put back, or there was no room to take
 *           them out: the new union is dropped at the end.
 * @dead:    the sets were freed (a reset): nothing is left to do.
 *
 * A build is a mend with no old union: the kind's first union, made when
 * a second set of the kind gets prefixes (cnf_change_begin()), empty, and
 * filled with the prefixes of the sets of the kind that had some then,
 * walked in steps (struct cnf_walk) of CNF_BUILD_STEP buckets, the union
 * taking changes of the sets meanwhile as a mended one does.
 * @build:   it is one.
 * @walk:    @nwalk walks, one per set that had prefixes, by their filters
 *           (and one of a replace's new contents): a filter that goes (its
 *           set destroyed or replaced) ends its walk; @at is the one under
 *           way.
 *
 * @retired: what the change that began the mend, or its steps, retired:
 *           the owner frees it once it let go of cnf_net_lock(), whether
 *           a mend began or not.
 * @aside:   the owner's union made aside, for the mend or build to begin
 *           with (struct cnf_aside); NULL: made under the lock.
 */
struct cnf_mend {
	struct list_head node;
	struct cnf_sets *ss;
	u32 kind;
	struct cnf_filter *old;
	u64 n4, n6;
	__be32 *v4;
	struct in6_addr *v6;
	u8 *len;
	u64 bytes;
	u64 got4, got6;
	u64 pos;
	bool walking;
	bool stop;
	bool failed;
	bool dead;
	bool build;
	struct cnf_walk *walk;
	u32 nwalk, at;
	struct cnf_retired retired;
	struct cnf_aside *aside;
};

/*
 * A change of one set's entries: cnf_change_begin(), adds and deletes,
 * cnf_change_end(), all under cnf_net_lock().
 */
struct cnf_change {
	struct cnf_sets *ss;
	struct cnf_set *set;
	struct cnf_plan *spare;		/* the plan cnf_change_end() may need */
	struct cnf_mend *mend;		/* its build, and what it retires */
	bool was_empty;			/* the set, when the change began */
	bool built;			/* the kind's union made for it */
	bool locked;			/* set->filter locked throughout */
};

int cnf_sets_init(struct cnf_sets *ss, u64 initial_capacity, u64 mem_limit);
void cnf_sets_free(struct cnf_sets *ss);
bool cnf_sets_pristine(struct cnf_sets *ss);
struct cnf_filter *cnf_sets_lookup(struct cnf_sets *ss, u32 kind);

struct cnf_set *cnf_set_find(struct cnf_sets *ss, const char *name);
int cnf_set_create(struct cnf_sets *ss, const char *name, u32 kind,
		   u32 timeout, u32 flags);
bool cnf_sets_held(struct cnf_sets *ss);
int cnf_set_destroy(struct cnf_sets *ss, struct cnf_set *set,
		    struct cnf_timeouts *old, struct cnf_mend *m);
int cnf_set_swap(struct cnf_sets *ss, struct cnf_set *a, struct cnf_set *b,
		 struct cnf_retired *r);
int cnf_set_log(struct cnf_sets *ss, struct cnf_set *set, u32 *log,
		struct cnf_retired *r);
int cnf_set_flush(struct cnf_sets *ss, struct cnf_set *set,
		  struct cnf_timeouts *old, struct cnf_mend *m);
struct cnf_filter *cnf_set_filter_new(struct cnf_sets *ss);
int cnf_set_replace(struct cnf_sets *ss, struct cnf_set *set,
		    struct cnf_filter *contents, struct cnf_timeouts *timeouts,
		    struct cnf_filter *u, struct cnf_mend *m);
u64 cnf_set_count(struct cnf_set *set);
bool cnf_replace_wants_union(struct cnf_sets *ss, struct cnf_set *set);
void cnf_union_peek(struct cnf_sets *ss, u32 kind, u64 *n4, u64 *n6);
struct cnf_filter *cnf_union_aside(struct cnf_filter *contents,
				   struct cnf_budget *aside, u64 capacity,
				   u64 n4, u64 n6);

void cnf_retire(struct cnf_sets *ss, struct cnf_retired *r,
		struct cnf_filter *f);
void cnf_retired_free(struct cnf_retired *r);
int cnf_aside_make(struct cnf_aside *a);
void cnf_aside_free(struct cnf_aside *a);

void cnf_mend_init(struct cnf_mend *m);
bool cnf_mend_pending(const struct cnf_mend *m);
void cnf_mend_take(struct cnf_mend *m);
bool cnf_mend_step(struct cnf_mend *m);
void cnf_mend_release(struct cnf_mend *m);

int cnf_change_begin(struct cnf_change *c, struct cnf_sets *ss,
		     struct cnf_set *set, u64 adds, struct cnf_mend *m);
int cnf_change_add(struct cnf_change *c, const struct cnf_key *key);
int cnf_change_del(struct cnf_change *c, const struct cnf_key *key);
void cnf_change_prefetch(struct cnf_change *c, const struct cnf_key *key);
void cnf_change_expect_tally(struct cnf_change *c,
			     const struct cnf_tally *tally);
void cnf_change_end(struct cnf_change *c);

#endif /* _CNF_SETS_H */
