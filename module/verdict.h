/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet path's decision, shared by the netfilter hooks (hooks.c) and
 * the XDP kfuncs (xdp.c): one lookup of the block sets, and of the allow
 * sets when those matched (lockless, under the RCU read lock the caller
 * holds; see sets.h), and the per-CPU counters of the caller's path.
 */
#ifndef _CNF_VERDICT_H
#define _CNF_VERDICT_H

#include "cnf.h"

static __always_inline bool cnf_probe(const struct cnf_filter *f,
				      enum cnf_family fam, const void *addr)
{
	if (fam == CNF_V4)
		return cnf_filter_lookup4(f, *(const __be32 *)addr);
	return cnf_filter_lookup6(f, addr);
}

/*
 * Packets are looked up in softirq context mostly, but nf_reinject() (an
 * nfqueue verdict) runs the remaining hooks from process context with
 * bottom halves on, and BPF_PROG_TEST_RUN runs XDP programs there too:
 * the per-CPU counters are updated with bottom halves off, as
 * nft_counter's are.
 */
static __always_inline void cnf_count_checked(struct cnf_state *cs,
					      enum cnf_path path,
					      enum cnf_family fam)
{
	struct cnf_pcpu_stats *st;

	local_bh_disable();
	st = this_cpu_ptr(cs->stats);
	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->checked[path][fam]);
	u64_stats_update_end(&st->syncp);
	local_bh_enable();
}

bool cnf_verdict_hit(struct cnf_state *cs, const struct cnf_plan *p,
		     enum cnf_path path, enum cnf_family fam, const void *addr);

/*
 * Whether to drop a packet from @addr: a source is listed when the block
 * sets cover it and no allow set does, and dropped when listed in drop
 * mode.  The allow sets are probed only for a source the block sets cover;
 * that case is out of line, so that the pass path stays one lookup.
 */
static __always_inline bool cnf_verdict(struct cnf_state *cs,
					enum cnf_path path,
					enum cnf_family fam, const void *addr)
{
	const struct cnf_plan *p = rcu_dereference(cs->sets.plan);
	const struct cnf_filter *block = p->lookup[CNF_SET_BLOCK];

	if (block && cnf_probe(block, fam, addr))
		return cnf_verdict_hit(cs, p, path, fam, addr);
	cnf_count_checked(cs, path, fam);
	return false;
}

#endif /* _CNF_VERDICT_H */
