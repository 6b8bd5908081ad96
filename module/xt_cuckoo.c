// SPDX-License-Identifier: GPL-2.0
/*
 * The iptables match `cuckoo` (struct cnf_xt_info): does a set of the
 * rule's namespace cover the packet's source or destination address?
 * iptables-legacy reaches it through ip_tables and ip6_tables,
 * iptables-nft through nft_compat; both call the same three functions.
 *
 * A rule finds its set by name once, when it is inserted (checkentry, in
 * the rule's namespace, par->net), and holds it from then on: the set
 * counts the rules holding it (&struct cnf_set.rules, under
 * cnf_net_lock()) and is neither destroyed (-EBUSY) nor freed by a reset
 * (-EBUSY) while one does, so a packet reads the set through the rule's
 * pointer, under the RCU read lock netfilter holds, without a lookup by
 * name.  The set's filter may change under it (a replace, a swap): it is
 * read with cnf_set_filter_rcu(), and a filter a set leaves is freed only
 * after a grace period.
 *
 * A namespace's exit frees its sets whatever holds them: every table's
 * hooks are gone by then (the .pre_exit of ip_tables' and nf_tables'
 * tables), and a rule destroyed afterwards, or before, in a dying
 * namespace leaves the set's count alone.
 *
 * The module holds a reference on itself for every rule using the match
 * (xt_find_match()): it cannot be removed while one is there.
 */
#include "verdict.h"

#include <linux/err.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/netfilter/x_tables.h>

#define CNF_XT_FLAGS	(CNF_XT_F_DST | CNF_XT_F_INV | CNF_XT_F_WITH_ALLOW)

/* The set a rule holds, from cnf_xt_check(). */
static struct cnf_set *cnf_xt_set(const struct cnf_xt_info *info)
{
	return (struct cnf_set *)(unsigned long)info->priv;
}

/* The address a rule asks about, from a header its table validated. */
static const void *cnf_xt_addr(const struct sk_buff *skb, enum cnf_family fam,
			       bool dst)
{
	if (fam == CNF_V4)
		return dst ? &ip_hdr(skb)->daddr : &ip_hdr(skb)->saddr;
	return dst ? &ipv6_hdr(skb)->daddr : &ipv6_hdr(skb)->saddr;
}

/*
 * Does an allow set the hooks consult cover @addr?  Under the RCU read
 * lock; @st is the rule's namespace's.
 */
static bool cnf_xt_allowed(const struct cnf_state *st, enum cnf_family fam,
			   const void *addr)
{
	const struct cnf_filter *allow;

	allow = rcu_dereference(st->sets.plan)->lookup[CNF_SET_ALLOW];
	return allow && cnf_probe(allow, fam, addr);
}

/*
 * Count a packet the rule asked about, in the "rule" path's per-CPU
 * counters (struct cnf_stats.rule_v4...): checked, and matched when the
 * set covered its address (@hit, before the rule's '!').  Its bytes are
 * the IP datagram's, as the hooks count theirs.
 */
static void cnf_xt_count(struct cnf_state *cs, enum cnf_family fam,
			 unsigned int len, bool hit)
{
	bool bh = cnf_stats_begin();
	struct cnf_pcpu_stats *st = this_cpu_ptr(cs->stats);

	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->checked[CNF_PATH_RULE][fam]);
	u64_stats_add(&st->checked_bytes[CNF_PATH_RULE][fam], len);
	if (hit) {
		u64_stats_inc(&st->matched[CNF_PATH_RULE][fam]);
		u64_stats_add(&st->matched_bytes[CNF_PATH_RULE][fam], len);
	}
	u64_stats_update_end(&st->syncp);
	cnf_stats_end(bh);
}

/*
 * Packet path: softirq or process context, under the RCU read lock.  The
 * namespace's state is there, as the rule holds one of its sets and no
 * reset frees it meanwhile (-EBUSY); only a dying namespace's may be gone,
 * and its packets go uncounted.
 */
static bool cnf_xt_match(const struct sk_buff *skb,
			 struct xt_action_param *par)
{
	const struct cnf_xt_info *info = par->matchinfo;
	const struct cnf_set *set = cnf_xt_set(info);
	enum cnf_family fam = xt_family(par) == NFPROTO_IPV4 ? CNF_V4 : CNF_V6;
	const void *addr = cnf_xt_addr(skb, fam, info->flags & CNF_XT_F_DST);
	struct cnf_state *cs = rcu_dereference(cnf_pernet_rcu(xt_net(par))->state);
	bool hit = cnf_probe(cnf_set_filter_rcu(set), fam, addr);

	if (hit && cs && (info->flags & CNF_XT_F_WITH_ALLOW))
		hit = !cnf_xt_allowed(cs, fam, addr);
	if (cs)
		cnf_xt_count(cs, fam, skb->len, hit);
	return hit ^ !!(info->flags & CNF_XT_F_INV);
}

/*
 * Find the rule's set and hold it.  Process context (a table's
 * replacement, an nf_tables transaction): may sleep.
 */
static int cnf_xt_check(const struct xt_mtchk_param *par)
{
	struct cnf_xt_info *info = par->matchinfo;
	size_t len = strnlen(info->set, CNF_SET_NAME_LEN);
	struct cnf_state *st;
	struct cnf_set *set;
	bool created;
	int err;

	if ((info->flags & ~CNF_XT_FLAGS) || info->reserved) {
		pr_info_ratelimited("-m %s: flags %#x, reserved %#x: unknown bits\n",
				    CNF_XT_NAME, info->flags, info->reserved);
		return -EINVAL;
	}
	if (!len || len == CNF_SET_NAME_LEN) {
		pr_info_ratelimited("-m %s: a set name of 1 to %d bytes is needed\n",
				    CNF_XT_NAME, CNF_SET_NAME_LEN - 1);
		return -EINVAL;
	}
	err = mutex_lock_killable(cnf_net_lock(par->net));
	if (err)
		return err;
	st = cnf_state_locked(par->net);
	/* The default set always exists: naming it configures, as an add. */
	if (!st && !strcmp(info->set, CNF_SET_DEFAULT))
		st = cnf_state_activate(par->net, &created);
	if (IS_ERR(st)) {
		mutex_unlock(cnf_net_lock(par->net));
		return PTR_ERR(st);
	}
	set = st ? cnf_set_find(&st->sets, info->set) : NULL;
	if (!set) {
		pr_info_ratelimited("-m %s: set \"%s\" does not exist in the rule's namespace\n",
				    CNF_XT_NAME, info->set);
		err = -ENOENT;
	} else if ((info->flags & CNF_XT_F_WITH_ALLOW) &&
		   set->kind == CNF_SET_ALLOW) {
		pr_info_ratelimited("-m %s: set \"%s\" is an allow set: --with-allow is for block sets\n",
				    CNF_XT_NAME, info->set);
		err = -EINVAL;
	} else if (set->rules == U32_MAX) {
		err = -ENOSPC;
	} else {
		set->rules++;
		info->priv = (unsigned long)set;
	}
	mutex_unlock(cnf_net_lock(par->net));
	return err;
}

/*
 * Let go of the rule's set.  Process context.  In a dying namespace the
 * set goes with it, maybe gone already (cnf_net_exit()): nothing to do.
 */
static void cnf_xt_destroy(const struct xt_mtdtor_param *par)
{
	struct cnf_set *set = cnf_xt_set(par->matchinfo);

	if (!check_net(par->net))
		return;
	mutex_lock(cnf_net_lock(par->net));
	set->rules--;
	mutex_unlock(cnf_net_lock(par->net));
}

static struct xt_match cnf_xt_matches[] __read_mostly = {
	{
		.name		= CNF_XT_NAME,
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.match		= cnf_xt_match,
		.checkentry	= cnf_xt_check,
		.destroy	= cnf_xt_destroy,
		.matchsize	= sizeof(struct cnf_xt_info),
		.usersize	= offsetof(struct cnf_xt_info, priv),
		.me		= THIS_MODULE,
	},
	{
		.name		= CNF_XT_NAME,
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.match		= cnf_xt_match,
		.checkentry	= cnf_xt_check,
		.destroy	= cnf_xt_destroy,
		.matchsize	= sizeof(struct cnf_xt_info),
		.usersize	= offsetof(struct cnf_xt_info, priv),
		.me		= THIS_MODULE,
	},
};

/**
 * cnf_xt_init - register the match
 *
 * After the namespaces' state (cnf_hooks_init()): a rule looks its set
 * up there.
 *
 * Return: 0, or xt_register_matches()' error.
 */
int cnf_xt_init(void)
{
	return xt_register_matches(cnf_xt_matches, ARRAY_SIZE(cnf_xt_matches));
}

/**
 * cnf_xt_exit - unregister the match; no rule uses it (the module's
 * reference count says so)
 */
void cnf_xt_exit(void)
{
	xt_unregister_matches(cnf_xt_matches, ARRAY_SIZE(cnf_xt_matches));
}

/* iptables and nft_compat ask for "ipt_cuckoo" or "ip6t_cuckoo". */
MODULE_ALIAS("ipt_" CNF_XT_NAME);
MODULE_ALIAS("ip6t_" CNF_XT_NAME);
MODULE_ALIAS("xt_" CNF_XT_NAME);
