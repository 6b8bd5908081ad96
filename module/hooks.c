// SPDX-License-Identifier: GPL-2.0
/*
 * Per-namespace state and the netfilter hooks that drop listed sources.
 *
 * The hooks sit at PRE_ROUTING before defragmentation and conntrack, so a
 * listed source never creates conntrack state.  Per packet: one lookup
 * (lockless, under the RCU read lock netfilter holds) and per-CPU counters.
 * Each namespace registers its own copy of the hook ops with its cnf_net as
 * ->priv: a packet finds its namespace's state without a net_generic()
 * lookup.
 */
#include "cnf.h"

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>

unsigned int cnf_net_id __read_mostly;

/*
 * Hooks mostly run in softirq context, but nf_reinject() (an nfqueue
 * verdict) runs the remaining ones from process context with bottom halves
 * on: the per-CPU counters are updated with them off, as nft_counter's are.
 */
static unsigned int cnf_verdict(struct cnf_net *cn, enum cnf_family fam,
				bool listed)
{
	bool drop = listed && READ_ONCE(cn->mode) == CNF_MODE_DROP;
	struct cnf_pcpu_stats *st;

	local_bh_disable();
	st = this_cpu_ptr(cn->stats);
	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->checked[fam]);
	if (listed)
		u64_stats_inc(&st->matched[fam]);
	if (drop)
		u64_stats_inc(&st->dropped[fam]);
	u64_stats_update_end(&st->syncp);
	local_bh_enable();
	return drop ? NF_DROP : NF_ACCEPT;
}

static unsigned int cnf_hook_ipv4(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct cnf_net *cn = priv;

	/* ip_rcv_core() has validated the header. */
	return cnf_verdict(cn, CNF_V4,
			   cnf_filter_lookup4(cn->filter, ip_hdr(skb)->saddr));
}

static unsigned int cnf_hook_ipv6(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct cnf_net *cn = priv;

	/* ipv6_rcv() has validated the fixed header. */
	return cnf_verdict(cn, CNF_V6,
			   cnf_filter_lookup6(cn->filter,
					      &ipv6_hdr(skb)->saddr));
}

/* The template of every namespace's cn->ops. */
static const struct nf_hook_ops cnf_nf_ops[CNF_NHOOKS] = {
	{
		.hook		= cnf_hook_ipv4,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_PRE_ROUTING,
		.priority	= NF_IP_PRI_RAW_BEFORE_DEFRAG,
	},
	{
		.hook		= cnf_hook_ipv6,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_PRE_ROUTING,
		.priority	= NF_IP6_PRI_RAW_BEFORE_DEFRAG,
	},
};

static int __net_init cnf_net_init(struct net *net)
{
	struct cnf_net *cn = cnf_pernet(net);
	int cpu, err, i;

	cn->mode = CNF_MODE_DROP;
	cn->filter = cnf_filter_create(cnf_initial_capacity, cnf_mem_limit);
	if (!cn->filter)
		return -ENOMEM;
	cn->stats = alloc_percpu_gfp(struct cnf_pcpu_stats, GFP_KERNEL_ACCOUNT);
	if (!cn->stats) {
		err = -ENOMEM;
		goto err_filter;
	}
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(cn->stats, cpu)->syncp);
	memcpy(cn->ops, cnf_nf_ops, sizeof(cn->ops));
	for (i = 0; i < CNF_NHOOKS; i++)
		cn->ops[i].priv = cn;
	err = nf_register_net_hooks(net, cn->ops, CNF_NHOOKS);
	if (err)
		goto err_stats;
	return 0;

err_stats:
	free_percpu(cn->stats);
err_filter:
	cnf_filter_destroy(cn->filter);
	return err;
}

/* Hooks go first; the core then waits for an RCU grace period before
 * .exit, so no packet is still looking at what .exit frees.
 */
static void __net_exit cnf_net_pre_exit(struct net *net)
{
	struct cnf_net *cn = cnf_pernet(net);

	nf_unregister_net_hooks(net, cn->ops, CNF_NHOOKS);
}

static void __net_exit cnf_net_exit(struct net *net)
{
	struct cnf_net *cn = cnf_pernet(net);

	free_percpu(cn->stats);
	cnf_filter_destroy(cn->filter);
}

static struct pernet_operations cnf_net_ops = {
	.init		= cnf_net_init,
	.pre_exit	= cnf_net_pre_exit,
	.exit		= cnf_net_exit,
	.id		= &cnf_net_id,
	.size		= sizeof(struct cnf_net),
};

int cnf_hooks_init(void)
{
	return register_pernet_subsys(&cnf_net_ops);
}

void cnf_hooks_exit(void)
{
	unregister_pernet_subsys(&cnf_net_ops);
	/* Tables retired by growth or flush are freed by our RCU callbacks. */
	rcu_barrier();
}
