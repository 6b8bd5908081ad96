/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckoo_nf internals shared by the module's files.
 */
#ifndef _CNF_H
#define _CNF_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netfilter.h>
#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <linux/cuckoo_nf.h>

#include "filter.h"

/* Packet counters of one CPU, written only by that CPU's hook. */
struct cnf_pcpu_stats {
	struct u64_stats_sync syncp;
	u64_stats_t checked[CNF_NFAMILIES];
	u64_stats_t matched[CNF_NFAMILIES];
	u64_stats_t dropped[CNF_NFAMILIES];
};

/* IPv4 and IPv6 PRE_ROUTING. */
#define CNF_NHOOKS 2

/*
 * Per network namespace state, created with the namespace.
 * @filter: lookups under RCU (the hooks), changes under cnf_filter_lock().
 * @stats:  per-CPU, summed by readers with u64_stats retries.
 * @mode:   enum cnf_mode; written under cnf_filter_lock(), read locklessly
 *          by the hooks (READ_ONCE).
 * @ops:    this namespace's hooks, registered while it lives; their ->priv
 *          is this struct, so a packet finds it without net_generic().
 */
struct cnf_net {
	struct cnf_filter *filter;
	struct cnf_pcpu_stats __percpu *stats;
	u32 mode;
	struct nf_hook_ops ops[CNF_NHOOKS];
};

extern unsigned int cnf_net_id;
extern unsigned long cnf_initial_capacity;
extern unsigned long cnf_mem_limit;

static inline struct cnf_net *cnf_pernet(const struct net *net)
{
	return net_generic(net, cnf_net_id);
}

int cnf_hooks_init(void);
void cnf_hooks_exit(void);
int cnf_dev_init(void);
void cnf_dev_exit(void);

#endif /* _CNF_H */
