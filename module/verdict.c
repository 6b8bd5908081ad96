// SPDX-License-Identifier: GPL-2.0
/*
 * The out-of-line half of the packet path's decision (verdict.h): a
 * source the block sets cover.
 */
#include "verdict.h"

#define CREATE_TRACE_POINTS
#include "cnf_trace.h"

/*
 * Count a packet in the @n sets of @p from @first that cover its source:
 * a kind with one set has it covered, since the kind's lookup did.
 */
static void cnf_count_set(struct cnf_set_matched __percpu *m,
			  unsigned int len)
{
	struct cnf_set_matched *c = this_cpu_ptr(m);

	u64_stats_inc(&c->packets);
	u64_stats_add(&c->bytes, len);
}

static void cnf_count_sets(const struct cnf_plan *p, unsigned int first,
			   unsigned int n, enum cnf_family fam,
			   const void *addr, unsigned int len)
{
	unsigned int i;

	if (n == 1) {
		cnf_count_set(p->set[first].matched, len);
		return;
	}
	for (i = first; i < first + n; i++)
		if (cnf_probe(p->set[i].filter, fam, addr))
			cnf_count_set(p->set[i].matched, len);
}

/*
 * The first of @p's sets of @kind that covers @addr, set by set, or NULL:
 * for the packets while the kind has no lookup filter, and for the names
 * the tracepoints give.
 */
static const struct cnf_set *cnf_plan_first(const struct cnf_plan *p,
					    unsigned int kind,
					    enum cnf_family fam,
					    const void *addr)
{
	unsigned int first = kind == CNF_SET_BLOCK ? 0 : p->n[CNF_SET_BLOCK];
	unsigned int i;

	for (i = first; i < first + p->n[kind]; i++)
		if (cnf_probe(p->set[i].filter, fam, addr))
			return p->set[i].set;
	return NULL;
}

/**
 * cnf_plan_covers_sets - does a set of a kind cover an address, set by set
 * @p: the plan, under the RCU read lock
 * @kind: enum cnf_set_kind, of which @p has no lookup filter
 * @fam: @addr's family
 * @addr: the address
 *
 * Return: true when one of the kind's non-empty sets covers @addr.
 */
bool cnf_plan_covers_sets(const struct cnf_plan *p, unsigned int kind,
			  enum cnf_family fam, const void *addr)
{
	return cnf_plan_first(p, kind, fam, addr);
}

/* The mode's answer for a listed source. */
static enum cnf_action cnf_mode_action(const struct cnf_state *cs)
{
	switch (READ_ONCE(cs->mode)) {
	case CNF_MODE_DROP:
		return CNF_ACT_DROP;
	case CNF_MODE_MARK:
		return CNF_ACT_MARK;
	default:
		return CNF_ACT_PASS;
	}
}

/* The name of @set for a tracepoint: "" for none (a change since the lookup). */
static const char *cnf_trace_name(const struct cnf_set *set)
{
	return set ? set->name : "";
}

/* The tracepoints of a decision, when on (cnf_trace.h). */
static void cnf_trace(const struct cnf_state *cs, const struct cnf_plan *p,
		      enum cnf_path path, enum cnf_family fam,
		      const void *addr, bool listed, enum cnf_action act)
{
	if (trace_drop_enabled() && act == CNF_ACT_DROP)
		trace_drop(cs->expiry.net->net_cookie, path, fam, addr,
			   cnf_trace_name(cnf_plan_first(p, CNF_SET_BLOCK, fam,
							 addr)));
	if (trace_pass_allowed_enabled() && !listed)
		trace_pass_allowed(cs->expiry.net->net_cookie, path, fam, addr,
				   cnf_trace_name(cnf_plan_first(p, CNF_SET_ALLOW,
								 fam, addr)));
}

/*
 * A source the block sets of @p cover: listed unless an allow set covers
 * it too.  Only the hooks count the packets they mark: a kfunc passes a
 * packet it would mark on to them.
 *
 * Return: what to do with the packet.
 */
enum cnf_action cnf_verdict_hit(struct cnf_state *cs,
				const struct cnf_plan *p, enum cnf_path path,
				enum cnf_family fam, const void *addr,
				unsigned int len)
{
	bool listed = !cnf_plan_covers(p, CNF_SET_ALLOW, fam, addr);
	enum cnf_action act = listed ? cnf_mode_action(cs) : CNF_ACT_PASS;
	bool bh = cnf_stats_begin();
	struct cnf_pcpu_stats *st = this_cpu_ptr(cs->stats);

	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->checked[path][fam]);
	u64_stats_add(&st->checked_bytes[path][fam], len);
	cnf_count_sets(p, 0, p->n[CNF_SET_BLOCK], fam, addr, len);
	if (listed) {
		u64_stats_inc(&st->matched[path][fam]);
		u64_stats_add(&st->matched_bytes[path][fam], len);
	} else {
		cnf_count_sets(p, p->n[CNF_SET_BLOCK], p->n[CNF_SET_ALLOW],
			       fam, addr, len);
	}
	if (act == CNF_ACT_DROP) {
		u64_stats_inc(&st->dropped[path][fam]);
		u64_stats_add(&st->dropped_bytes[path][fam], len);
	} else if (act == CNF_ACT_MARK && path == CNF_PATH_HOOK) {
		u64_stats_inc(&st->marked[fam]);
		u64_stats_add(&st->marked_bytes[fam], len);
	}
	u64_stats_update_end(&st->syncp);
	cnf_stats_end(bh);
	cnf_trace(cs, p, path, fam, addr, listed, act);
	return act;
}
