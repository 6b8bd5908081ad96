// SPDX-License-Identifier: GPL-2.0
/*
 * Per-namespace state and the netfilter hooks that drop listed sources.
 *
 * The hooks sit at PRE_ROUTING before defragmentation and conntrack, so a
 * listed source never creates conntrack state.  Per packet: cnf_verdict()
 * (verdict.h) under the RCU read lock netfilter holds, unless the packet
 * arrived on a loopback device (cnf_hook_spares()) or the XDP kfuncs
 * passed it already (its mark, xdp.h).  In mark mode a listed source's
 * packet is marked and accepted, for the operator's rules to decide: the
 * hooks run before conntrack, so every later chain sees the mark.
 * Each configured namespace registers its own copy of the hook ops with its
 * cnf_state as ->priv: a packet finds its namespace's state without a
 * net_generic() lookup.  A namespace never configured registers none: its
 * packets cost nothing here.  Nor does one whose hooks were turned off
 * (CNF_HOOKS_OFF), which only XDP and tc programs filter: in NAPI's
 * batched receive, a namespace's PRE_ROUTING hooks cost a packet some 200
 * instructions even when they have nothing to do.
 *
 * For the same reason a namespace whose hooks have a scope (struct
 * cnf_scope) has no PRE_ROUTING hook: a netdev ingress hook on each
 * covered device judges that device's packets as PRE_ROUTING would
 * (cnf_hook_ingress()), and a packet on any other device costs the
 * kernel's test of its device's ingress hooks, nothing here.  Those hooks
 * are registered and unregistered under RTNL, by the scope's netdevice
 * notifier as the devices come, go and are renamed; whether they judge,
 * and for which state, is the scope's ->cs, set under cnf_net_lock()
 * (cnf_state_set_hooks()).  With the hooks off they stay, idle, until the
 * scope is replaced or reset: a packet on a covered device then costs
 * netfilter's call of the hook and one test.
 *
 * Order of creation (cnf_state_activate()): allocate, register the hooks,
 * publish.  Of a reset (cnf_state_reset()): unpublish, unregister the
 * hooks, wait for packets and RCU readers to be done, free.  Both run
 * under the namespace's cnf_net_lock(), so a change that waits for the lock finds either the
 * old state still whole or none, and then makes a new one whose hooks are
 * in place before its first address is.  Namespace exit: .pre_exit
 * unregisters the hooks, the core waits a grace period, .exit frees; no
 * open file can race with it, as every file holds a reference on its
 * namespace.
 */
#include "cnf.h"
#include "verdict.h"
#include "xdp.h"

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/string.h>

unsigned int cnf_net_id __read_mostly;

/*
 * Without a scope, packets that arrive on a loopback device are the host
 * talking to itself (a service to its database, a bouncer to its API):
 * the PRE_ROUTING hooks never judge them, whatever the sets hold.  A
 * blocklist as published lists bogons, 127.0.0.0/8 among them, and would
 * otherwise cut the host off from itself.  A flag of the device the stack
 * has just read: no name compared, no lookup, no counter.  With a scope,
 * its devices are judged at their ingress, loopback too when named, and
 * no other.
 */
static __always_inline bool cnf_hook_spares(const struct nf_hook_state *state)
{
	return unlikely(state->in->flags & IFF_LOOPBACK);
}

/* Mark mode: the bits of the mark under its mask, the others as they are. */
static __always_inline void cnf_hook_mark(const struct cnf_state *cs,
					  struct sk_buff *skb)
{
	u64 m = READ_ONCE(cs->mark);
	u32 mask = upper_32_bits(m);

	skb->mark = (skb->mark & ~mask) | lower_32_bits(m);
}

/*
 * The drop log of a packet dropped at ingress: with the family's logger
 * and the hook PRE_ROUTING's drops name, so that a line reads the same
 * whichever hook dropped its packet.
 */
static noinline void cnf_hook_log_ingress(struct cnf_state *cs,
					  const struct sk_buff *skb,
					  const struct nf_hook_state *state,
					  enum cnf_family fam,
					  const void *saddr)
{
	struct nf_hook_state ip = *state;

	ip.pf = fam == CNF_V4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
	ip.hook = NF_INET_PRE_ROUTING;
	cnf_log_drop(cs, skb, &ip, fam, saddr);
}

/*
 * A packet the XDP kfuncs passed was judged there, and counted there.
 * @len is its IP datagram's length, which the counters count.
 */
static __always_inline unsigned int cnf_hook(struct cnf_state *cs,
					     struct sk_buff *skb,
					     const struct nf_hook_state *state,
					     enum cnf_family fam,
					     const void *saddr,
					     unsigned int len, bool ingress)
{
	if (cnf_xdp_passed(cs, skb, fam, saddr))
		return NF_ACCEPT;
	switch (cnf_verdict(cs, CNF_PATH_HOOK, fam, saddr, len)) {
	case CNF_ACT_DROP:
		/* Whether a set logs: in the plan, which is in cache. */
		if (unlikely(rcu_dereference(cs->sets.plan)->log)) {
			if (ingress)
				cnf_hook_log_ingress(cs, skb, state, fam,
						     saddr);
			else
				cnf_log_drop(cs, skb, state, fam, saddr);
		}
		return NF_DROP;
	case CNF_ACT_MARK:
		cnf_hook_mark(cs, skb);
		return NF_ACCEPT;
	default:
		return NF_ACCEPT;
	}
}

static unsigned int cnf_hook_ipv4(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	/* ip_rcv_core() has validated the header, and trimmed the packet. */
	if (cnf_hook_spares(state))
		return NF_ACCEPT;
	return cnf_hook(priv, skb, state, CNF_V4, &ip_hdr(skb)->saddr,
			skb->len, false);
}

static unsigned int cnf_hook_ipv6(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	/* ipv6_rcv() has validated the fixed header, and trimmed the packet. */
	if (cnf_hook_spares(state))
		return NF_ACCEPT;
	return cnf_hook(priv, skb, state, CNF_V6, &ipv6_hdr(skb)->saddr,
			skb->len, false);
}

/*
 * At ingress nothing has looked at the IP header yet: the parts read are
 * pulled and checked as ip_rcv_core() checks them, and a packet it would
 * drop for them is accepted unjudged, for it to drop.
 */
static unsigned int cnf_ingress_ipv4(struct cnf_state *cs, struct sk_buff *skb,
				     const struct nf_hook_state *state)
{
	const struct iphdr *iph;
	unsigned int len;

	if (!pskb_network_may_pull(skb, sizeof(*iph)))
		return NF_ACCEPT;
	iph = ip_hdr(skb);
	len = ntohs(iph->tot_len);
	if (iph->version != 4 || iph->ihl < 5 || len < iph->ihl * 4 ||
	    skb->len - skb_network_offset(skb) < len)
		return NF_ACCEPT;
	return cnf_hook(cs, skb, state, CNF_V4, &iph->saddr, len, true);
}

/*
 * As ipv6_rcv() checks the fixed header.  A payload length of 0 is a
 * jumbogram's, whose datagram is the packet as it is.
 */
static unsigned int cnf_ingress_ipv6(struct cnf_state *cs, struct sk_buff *skb,
				     const struct nf_hook_state *state)
{
	unsigned int avail = skb->len - skb_network_offset(skb);
	const struct ipv6hdr *ip6h;
	unsigned int len;

	if (!pskb_network_may_pull(skb, sizeof(*ip6h)))
		return NF_ACCEPT;
	ip6h = ipv6_hdr(skb);
	len = ntohs(ip6h->payload_len);
	len = len ? len + sizeof(*ip6h) : avail;
	if (ip6h->version != 6 || avail < len)
		return NF_ACCEPT;
	return cnf_hook(cs, skb, state, CNF_V6, &ip6h->saddr, len, true);
}

/*
 * Packets the IP stack would not take as this device's, left to where
 * PRE_ROUTING would see them, or not at all: those for another host (a
 * device in promiscuous mode), which ip_rcv_core() and ipv6_rcv() drop
 * unjudged, and those tagged for a VLAN, which go round again as their
 * VLAN device's, judged at its ingress if the scope covers it (a tag for
 * no VLAN device makes them another host's; a priority tag, VLAN 0,
 * leaves them this device's).
 */
static __always_inline bool cnf_ingress_not_ours(const struct sk_buff *skb)
{
	return skb->pkt_type == PACKET_OTHERHOST ||
	       (skb_vlan_tag_present(skb) && skb_vlan_tag_get_id(skb));
}

/*
 * The hook of a scope's device, @priv the scope: judges what PRE_ROUTING
 * would, IPv4 and IPv6, for the state in the scope's ->cs, if any.
 */
static unsigned int cnf_hook_ingress(void *priv, struct sk_buff *skb,
				     const struct nf_hook_state *state)
{
	const struct cnf_scope *s = priv;
	struct cnf_state *cs = rcu_dereference(s->cs);

	if (unlikely(!cs) || cnf_ingress_not_ours(skb))
		return NF_ACCEPT;
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		return cnf_ingress_ipv4(cs, skb, state);
	case htons(ETH_P_IPV6):
		return cnf_ingress_ipv6(cs, skb, state);
	default:
		return NF_ACCEPT;
	}
}

/* ---- the hooks' scope ---- */

/**
 * cnf_scope_name_valid - check one device name or pattern of a scope
 * @pat: %CNF_IFNAMSIZ bytes as the caller gave them
 *
 * A name as a device could have it (dev_valid_name()), NUL-padded; one
 * ending in '+' is a prefix of names, "+" alone every name.
 *
 * Return: 0, or -EINVAL.
 */
int cnf_scope_name_valid(const char *pat)
{
	char name[CNF_IFNAMSIZ];
	size_t len = strnlen(pat, CNF_IFNAMSIZ);

	if (!len || len == CNF_IFNAMSIZ ||
	    memchr_inv(pat + len, 0, CNF_IFNAMSIZ - len))
		return -EINVAL;
	if (pat[len - 1] == '+') {
		if (len == 1)
			return 0;
		len--;
	}
	memcpy(name, pat, len);
	name[len] = '\0';
	return dev_valid_name(name) ? 0 : -EINVAL;
}

/* Whether @s's patterns cover a device named @name. */
static bool cnf_scope_matches(const struct cnf_scope *s, const char *name)
{
	u32 i;

	for (i = 0; i < s->n; i++) {
		const char *p = s->pat[i];
		size_t len = strnlen(p, CNF_IFNAMSIZ);

		if (p[len - 1] == '+' ? !strncmp(name, p, len - 1) :
					!strncmp(name, p, CNF_IFNAMSIZ))
			return true;
	}
	return false;
}

/* A covered device's hook, freed after a grace period once unregistered. */
struct cnf_scope_hook {
	struct nf_hook_ops ops;
	struct rcu_head rcu;
};

/*
 * What a covered device's hook costs: ours, and netfilter's array of the
 * device's ingress hooks, which grows by an entry, an ops pointer and the
 * head it frees itself with.
 */
#define CNF_SCOPE_DEV_BYTES						\
	(sizeof(struct cnf_scope_hook) + sizeof(struct nf_hook_entries) + \
	 sizeof(struct nf_hook_entry) + sizeof(struct nf_hook_ops *) +	\
	 sizeof(struct nf_hook_entries_rcu_head))

/*
 * Under RTNL: register @s's hook on @dev, which @s covers and has none.
 * Priority as PRE_ROUTING's: before any netdev chain of nft's default
 * priority.
 *
 * Return: 0, -ENOMEM, or netfilter's error (-E2BIG: the device has as many
 * ingress hooks as it may).
 */
static int cnf_scope_hook_dev(struct cnf_scope *s, struct net_device *dev)
{
	struct cnf_scope_hook *h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	int err;

	if (!h)
		return -ENOMEM;
	h->ops.hook = cnf_hook_ingress;
	h->ops.pf = NFPROTO_NETDEV;
	h->ops.hooknum = NF_NETDEV_INGRESS;
	h->ops.priority = NF_IP_PRI_RAW_BEFORE_DEFRAG;
	h->ops.dev = dev;
	h->ops.priv = s;
	err = xa_insert(&s->hooks, dev->ifindex, h, GFP_KERNEL_ACCOUNT);
	if (err) {
		kfree(h);
		return err;
	}
	err = nf_register_net_hook(s->net, &h->ops);
	if (err) {
		xa_erase(&s->hooks, dev->ifindex);
		kfree(h);
	}
	return err;
}

/*
 * Under RTNL: unregister @s's hook on the device of index @idx, if it has
 * one; the device is still registered in @s's namespace.  A packet still
 * in the hook finds the scope, freed after a grace period too.
 */
static void cnf_scope_unhook_dev(struct cnf_scope *s, unsigned long idx)
{
	struct cnf_scope_hook *h = xa_erase(&s->hooks, idx);

	if (!h)
		return;
	nf_unregister_net_hook(s->net, &h->ops);
	kfree_rcu(h, rcu);
}

/*
 * Under RTNL: keep @s's hooks to a device's name.  Idempotent, as a
 * rename rolled back calls it again with the old name.  A device whose
 * hook cannot be registered (no memory, or netfilter's limit of hooks on
 * it) is refused: its registration or rename fails with the error.  A
 * move into the namespace cannot fail: that device stays unhooked, its
 * packets unjudged, and the kernel log says so.  A retired scope
 * registers no hook, but still unregisters those of devices that go.
 */
static int cnf_scope_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	struct cnf_scope *s = container_of(nb, struct cnf_scope, nb);
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	int err;

	switch (event) {
	case NETDEV_REGISTER:
	case NETDEV_CHANGENAME:
		if (!cnf_scope_matches(s, dev->name))
			break;
		if (READ_ONCE(s->retired) || xa_load(&s->hooks, dev->ifindex))
			return NOTIFY_DONE;
		err = cnf_scope_hook_dev(s, dev);
		if (err) {
			pr_warn_ratelimited("device %s (index %d) in the hooks' scope has no hook (error %d): refused, or if moved in from another namespace, its packets are not judged\n",
					    dev->name, dev->ifindex, err);
			return notifier_from_errno(err);
		}
		return NOTIFY_DONE;
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	cnf_scope_unhook_dev(s, dev->ifindex);
	return NOTIFY_DONE;
}

/* The devices of @net that @s's patterns cover now. */
static u32 cnf_scope_count(struct net *net, const struct cnf_scope *s)
{
	struct net_device *dev;
	u32 count = 0;

	rcu_read_lock();
	for_each_netdev_rcu(net, dev)
		count += cnf_scope_matches(s, dev->name);
	rcu_read_unlock();
	return count;
}

/**
 * cnf_scope_create - a scope of @n patterns, charged for @net's devices
 * @net: the namespace
 * @n:   patterns in @pat, 1 to %CNF_IIF_MAX, each cnf_scope_name_valid()
 * @pat: the patterns, %CNF_IFNAMSIZ bytes each
 *
 * Its ->bytes count the hooks of the devices it covers now, for the
 * caller to charge before it publishes the scope.
 *
 * Return: the scope, or NULL without memory.
 */
struct cnf_scope *cnf_scope_create(struct net *net, u32 n, const void *pat)
{
	struct cnf_scope *s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);

	if (!s)
		return NULL;
	s->n = n;
	memcpy(s->pat, pat, n * CNF_IFNAMSIZ);
	xa_init(&s->hooks);
	s->nb.notifier_call = cnf_scope_event;
	s->net = net;
	s->bytes = sizeof(*s) + cnf_scope_count(net, s) * CNF_SCOPE_DEV_BYTES;
	return s;
}

/**
 * cnf_scope_start - register @s's hooks and keep them to the devices
 * @s: a scope from cnf_scope_create(), not yet published
 *
 * Takes RTNL, so never under cnf_net_lock() (see cnf_scope_put_away());
 * the callback takes neither.  The registration's replay hooks the
 * devices there now, those that come later are hooked as they come.  The
 * hooks accept every packet until the scope is published with its state
 * (cnf_state_set_hooks()).  When one cannot be registered, the replay is
 * undone: no hook is left.
 *
 * Return: 0, -ENOMEM, or netfilter's error (cnf_scope_hook_dev()).
 */
int cnf_scope_start(struct cnf_scope *s)
{
	return register_netdevice_notifier_net(s->net, &s->nb);
}

/**
 * cnf_scope_retire - unregister @s's hooks and its notifier, for good
 * @s: a started scope whose ->cs no longer points to a state that
 *     could be freed before a grace period (unpublished, the hooks off,
 *     or the namespace in its .pre_exit)
 *
 * Takes RTNL: never under cnf_net_lock() (see cnf_scope_put_away()).
 * RTNL is held for one unregistration per covered device.
 */
void cnf_scope_retire(struct cnf_scope *s)
{
	struct cnf_scope_hook *h;
	unsigned long idx;

	rtnl_lock();
	WRITE_ONCE(s->retired, true);
	xa_for_each(&s->hooks, idx, h)
		cnf_scope_unhook_dev(s, idx);
	rtnl_unlock();
	unregister_netdevice_notifier_net(s->net, &s->nb);
}

/* Scopes put away: drained before the module goes. */
static struct workqueue_struct *cnf_scope_wq;

static void cnf_scope_put_away_work(struct work_struct *work)
{
	struct cnf_scope *s = container_of(work, struct cnf_scope, put_away);
	struct net *net = s->net;

	cnf_scope_retire(s);
	cnf_scope_free(s);
	put_net(net);
}

/**
 * cnf_scope_put_away - retire and free a started scope, RTNL not taken
 * @s: as for cnf_scope_retire(), its namespace alive
 *
 * Under cnf_net_lock(), which must not be held for RTNL: an iptables-nft
 * rule's check takes it under nf_tables' commit mutex, which nf_tables
 * takes under RTNL (lockdep saw the circle).  @s hooks no device from now
 * on, and unregisters its hooks, leaves the notifier chain and frees its
 * memory in a work, which holds the namespace until then.
 */
void cnf_scope_put_away(struct cnf_scope *s)
{
	WRITE_ONCE(s->retired, true);
	get_net(s->net);
	INIT_WORK(&s->put_away, cnf_scope_put_away_work);
	queue_work(cnf_scope_wq, &s->put_away);
}

/**
 * cnf_scope_free - free a retired scope after a grace period
 * @s: the scope, retired or never started: it has no hook
 */
void cnf_scope_free(struct cnf_scope *s)
{
	xa_destroy(&s->hooks);
	kfree_rcu(s, rcu);
}

/* The template of every state's ops. */
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

static atomic64_t cnf_state_gens = ATOMIC64_INIT(0);

/* Caller guarantees that no hook and no RCU reader can still see @st. */
static void cnf_state_free(struct cnf_state *st)
{
	struct cnf_scope *s = rcu_dereference_protected(st->scope, true);

	if (s) {
		/* Retired in .pre_exit, or put away from a reset. */
		if (s->retired)
			cnf_scope_free(s);
		else
			cnf_scope_put_away(s);
	}
	cnf_expiry_stop(&st->expiry);
	free_percpu(st->stats);
	cnf_sets_free(&st->sets);
	kfree(st);
}

/*
 * What the state itself costs, charged to its budget for its lifetime:
 * its struct and its per-CPU counters.
 */
static u64 cnf_state_size(void)
{
	return sizeof(struct cnf_state) +
	       num_possible_cpus() * sizeof(struct cnf_pcpu_stats);
}

/* The module's parameters are read here, when the state is made. */
static struct cnf_state *cnf_state_alloc(struct net *net)
{
	struct cnf_state *st;
	int cpu, i;

	st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);
	if (!st)
		return NULL;
	cnf_expiry_init(&st->expiry, net);
	st->mode = CNF_MODE_DROP;
	st->gen = atomic64_inc_return(&cnf_state_gens);
	st->xdp_cookie = get_random_u64();
	cnf_log_limit_init(&st->log);
	st->stats = alloc_percpu_gfp(struct cnf_pcpu_stats, GFP_KERNEL_ACCOUNT);
	if (!st->stats ||
	    cnf_sets_init(&st->sets, cnf_initial_capacity, cnf_mem_limit) ||
	    cnf_budget_charge(&st->sets.budget, cnf_state_size())) {
		cnf_state_free(st);
		return NULL;
	}
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(st->stats, cpu)->syncp);
	memcpy(st->ops, cnf_nf_ops, sizeof(st->ops));
	for (i = 0; i < CNF_NHOOKS; i++)
		st->ops[i].priv = st;
	return st;
}

/*
 * Under cnf_net_lock(@net): the namespace's state, made now if it has none
 * (*@created then true).  The hooks are registered before the state is
 * published, so the first address added is looked up by the next packet.
 */
struct cnf_state *cnf_state_activate(struct net *net, bool *created)
{
	struct cnf_state *st = cnf_state_locked(net);
	struct cnf_scope *old;
	int err;

	*created = false;
	if (st)
		return st;
	st = cnf_state_alloc(net);
	if (!st)
		return ERR_PTR(-ENOMEM);
	err = cnf_state_set_hooks(net, st, true, NULL, &old);
	if (err) {
		cnf_state_free(st);
		return ERR_PTR(err);
	}
	rcu_assign_pointer(cnf_pernet(net)->state, st);
	*created = true;
	return st;
}

/*
 * Under cnf_net_lock(@net): give the hooks and the memory back.  The state
 * leaves cnf_net.state first, so the control device sees an empty namespace from
 * then on, while the hooks, until unregistered or idle, go on dropping
 * what the filter still lists: no listed source passes before the reset
 * is seen.  nf_unregister_net_hooks() frees the hook entries after a
 * grace period but does not wait for it; synchronize_net() does, so no
 * packet and no CNF_IOC_TEST still looks at the state when it is freed.
 * A scope's hooks, idle from then on, go in a work.
 */
void cnf_state_reset(struct net *net)
{
	struct cnf_state *st = cnf_state_locked(net);
	struct cnf_scope *old;

	if (!st)
		return;
	RCU_INIT_POINTER(cnf_pernet(net)->state, NULL);
	cnf_state_set_hooks(net, st, false,
			    rcu_dereference_protected(st->scope,
						      lockdep_is_held(cnf_net_lock(net))),
			    &old);
	synchronize_net();
	cnf_state_free(st);
}

/* Under cnf_net_lock(@net), or in .pre_exit: @st's PRE_ROUTING hooks. */
static int cnf_state_prerouting(struct net *net, struct cnf_state *st,
				bool on)
{
	int err = 0;

	if (on == st->prerouting)
		return 0;
	if (on)
		err = nf_register_net_hooks(net, st->ops, CNF_NHOOKS);
	else
		nf_unregister_net_hooks(net, st->ops, CNF_NHOOKS);
	if (!err)
		st->prerouting = on;
	return err;
}

/**
 * cnf_state_set_hooks - make @st's hooks @on, and @s its scope
 * @net: @st's namespace
 * @st:  the state, under cnf_net_lock(@net)
 * @on:  whether the hooks judge packets (%CNF_HOOKS_ON)
 * @s:   the scope @st is to have, charged and started (its hooks on its
 *       devices, idle), or its current one, or NULL for none
 * @old: set to the scope @s replaces, if another, idle now, for the
 *       caller to uncharge and put away; else NULL
 *
 * Unscoped hooks are PRE_ROUTING's, scoped ones @s's ingress hooks, made
 * to judge for @st by @s->cs.  The new hooks judge before the old ones
 * stop, so no packet of a device that both cover goes unjudged between
 * (one may be judged twice, to the same verdict); the hooks of a
 * namespace whose hooks are off are unregistered, but for a scope's,
 * which stay idle until the scope is replaced: their changes need RTNL,
 * which is not taken under cnf_net_lock() (cnf_scope_put_away()).
 *
 * Return: 0, or -ENOMEM registering PRE_ROUTING's hooks, and then nothing
 * changed.
 */
int cnf_state_set_hooks(struct net *net, struct cnf_state *st, bool on,
			struct cnf_scope *s, struct cnf_scope **old)
{
	struct cnf_scope *was;
	int err;

	if (on && !s) {
		err = cnf_state_prerouting(net, st, true);
		if (err)
			return err;
	}
	/* Nothing fails from here: packets see the change. */
	if (s)
		rcu_assign_pointer(s->cs, on ? st : NULL);
	was = rcu_replace_pointer(st->scope, s,
				  lockdep_is_held(cnf_net_lock(net)));
	if (was && was != s)
		RCU_INIT_POINTER(was->cs, NULL);
	if (!on || s)
		cnf_state_prerouting(net, st, false);
	WRITE_ONCE(st->hooks_on, on);
	*old = was != s ? was : NULL;
	return 0;
}

/* The one mutex_init() site of the namespaces' locks: one lockdep class. */
static int __net_init cnf_net_init(struct net *net)
{
	struct cnf_net *cn = cnf_pernet(net);

	RCU_INIT_POINTER(cn->state, NULL);
	mutex_init(&cn->lock);
	return 0;
}

/*
 * No file holds the namespace any more, so nothing else uses its state.
 * Hooks go first; the core then waits for an RCU grace period before
 * .exit, so no packet is still looking at what .exit frees.
 */
static void __net_exit cnf_net_pre_exit(struct net *net)
{
	struct cnf_state *st = rcu_dereference_protected(cnf_pernet(net)->state,
							 true);
	struct cnf_scope *s;

	if (!st)
		return;
	cnf_state_prerouting(net, st, false);
	/* Hooks and notifier gone before the namespace's devices leave it. */
	s = rcu_dereference_protected(st->scope, true);
	if (s)
		cnf_scope_retire(s);
}

static void __net_exit cnf_net_exit(struct net *net)
{
	struct cnf_state *st = rcu_dereference_protected(cnf_pernet(net)->state,
							 true);

	if (st)
		cnf_state_free(st);
	mutex_destroy(cnf_net_lock(net));
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
	int err;

	/*
	 * Unbound: a put-away has no CPU it should stay near.  Recent kernels
	 * (7.2 here) warn at a workqueue that says neither WQ_UNBOUND
	 * nor WQ_PERCPU, and a warning stops a panic_on_warn host.
	 */
	cnf_scope_wq = alloc_workqueue("cnf_scope", WQ_UNBOUND, 0);
	if (!cnf_scope_wq)
		return -ENOMEM;
	err = register_pernet_subsys(&cnf_net_ops);
	if (err)
		destroy_workqueue(cnf_scope_wq);
	return err;
}

void cnf_hooks_exit(void)
{
	unregister_pernet_subsys(&cnf_net_ops);
	/* The scopes put away, off their chains and freed. */
	destroy_workqueue(cnf_scope_wq);
	/* Tables retired by growth or flush are freed by our RCU callbacks. */
	rcu_barrier();
}
