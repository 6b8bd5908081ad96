/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet path's decision, shared by the netfilter hooks (hooks.c) and
 * the kfuncs of XDP and tc programs (xdp.c): one lookup of the block sets,
 * and of the allow sets when those matched (lockless, under the RCU read
 * lock the caller holds; see sets.h), and the per-CPU counters of the
 * caller's path.
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
 * The per-CPU counters are written with bottom halves off, as
 * nft_counter's are: then nothing else on the CPU writes them.  Packets
 * are looked up in softirq context mostly, where they already are off;
 * nf_reinject() (an nfqueue verdict) runs the remaining hooks from
 * process context with them on, and BPF_PROG_TEST_RUN runs XDP and tc
 * programs there too: only those pay for turning them off.  Returns whether
 * cnf_stats_end() must turn them on again.
 */
static __always_inline bool cnf_stats_begin(void)
{
	bool bh_was_on = !in_softirq();

	if (bh_was_on)
		local_bh_disable();
	return bh_was_on;
}

static __always_inline void cnf_stats_end(bool bh_was_on)
{
	if (bh_was_on)
		local_bh_enable();
}

static __always_inline void cnf_count_checked(struct cnf_state *cs,
					      enum cnf_path path,
					      enum cnf_family fam,
					      unsigned int len)
{
	bool bh = cnf_stats_begin();
	struct cnf_pcpu_stats *st = this_cpu_ptr(cs->stats);

	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->checked[path][fam]);
	u64_stats_add(&st->checked_bytes[path][fam], len);
	u64_stats_update_end(&st->syncp);
	cnf_stats_end(bh);
}

bool cnf_plan_covers_sets(const struct cnf_plan *p, unsigned int kind,
			  enum cnf_family fam, const void *addr);

/*
 * Does a set of @kind cover @addr: one probe of the kind's lookup filter,
 * or, while the kind has none but several sets hold prefixes (its union
 * is being mended, sets.h), a probe of each of them, out of line.
 */
static __always_inline bool cnf_plan_covers(const struct cnf_plan *p,
					    unsigned int kind,
					    enum cnf_family fam,
					    const void *addr)
{
	const struct cnf_filter *f = p->lookup[kind];

	if (f)
		return cnf_probe(f, fam, addr);
	return p->n[kind] && cnf_plan_covers_sets(p, kind, fam, addr);
}

/* What becomes of a packet: the mode's answer for a listed source. */
enum cnf_action {
	CNF_ACT_PASS,	/* not listed, or listed in monitor mode */
	CNF_ACT_DROP,	/* listed, in drop mode */
	CNF_ACT_MARK,	/* listed, in mark mode: the hooks mark and accept it */
};

enum cnf_action cnf_verdict_hit(struct cnf_state *cs,
				const struct cnf_plan *p, enum cnf_path path,
				enum cnf_family fam, const void *addr,
				unsigned int len);

/*
 * What to do with a packet from @addr, of @len bytes as its path counts
 * them (struct cnf_byte_stats): a source is listed when the block
 * sets cover it and no allow set does, and dropped when listed in drop
 * mode, marked in mark mode.  The allow sets are probed only for a source
 * the block sets cover; that case is out of line, so that the pass path
 * stays one lookup.
 */
static __always_inline enum cnf_action cnf_verdict(struct cnf_state *cs,
						   enum cnf_path path,
						   enum cnf_family fam,
						   const void *addr,
						   unsigned int len)
{
	const struct cnf_plan *p = rcu_dereference(cs->sets.plan);

	if (cnf_plan_covers(p, CNF_SET_BLOCK, fam, addr))
		return cnf_verdict_hit(cs, p, path, fam, addr, len);
	cnf_count_checked(cs, path, fam, len);
	return CNF_ACT_PASS;
}

#endif /* _CNF_VERDICT_H */
