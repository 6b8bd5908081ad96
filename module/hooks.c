// SPDX-License-Identifier: GPL-2.0
/*
 * Per-namespace state and the netfilter hooks that drop listed sources.
 *
 * The hooks sit at PRE_ROUTING before defragmentation and conntrack, so a
 * listed source never creates conntrack state.  Per packet: cnf_verdict()
 * (verdict.h) under the RCU read lock netfilter holds, unless the packet
 * arrived on a device outside the hooks' scope (by default every loopback
 * device; see cnf_hook_spares()) or the XDP kfuncs passed it already (its
 * mark, xdp.h).  In mark mode a listed source's packet is marked and
 * accepted, for the operator's rules to decide: the hooks run before
 * conntrack, so every later chain sees the mark.
 * Each configured namespace registers its own copy of the hook ops with its
 * cnf_state as ->priv: a packet finds its namespace's state without a
 * net_generic() lookup.  A namespace never configured registers none: its
 * packets cost nothing here.  Nor does one whose hooks were turned off
 * (CNF_HOOKS_OFF), which only XDP and tc programs filter: in NAPI's
 * batched receive, a namespace's PRE_ROUTING hooks cost a packet some 200
 * instructions even when they have nothing to do.
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
 * Whether the hooks leave a packet unjudged, by the device it arrived on.
 * Without a scope, packets that arrive on a loopback device are the host
 * talking to itself (a service to its database, a bouncer to its API):
 * they are never judged, whatever the sets hold.  A blocklist as published
 * lists bogons, 127.0.0.0/8 among them, and would otherwise cut the host
 * off from itself.  With one, the devices it names are judged, loopback
 * too when named, and no other.  Either way a flag of the device the
 * stack has just read, or a bit of the scope's map: no name compared, no
 * lookup, no counter.
 */
static __always_inline bool cnf_hook_spares(const struct cnf_state *cs,
					    const struct nf_hook_state *state)
{
	const struct cnf_scope *s = rcu_dereference(cs->scope);

	if (likely(!s))
		return unlikely(state->in->flags & IFF_LOOPBACK);
	return !cnf_scope_covers(s, state->in->ifindex);
}

/* Mark mode: the bits of the mark under its mask, the others as they are. */
static __always_inline void cnf_hook_mark(const struct cnf_state *cs,
					  struct sk_buff *skb)
{
	u64 m = READ_ONCE(cs->mark);
	u32 mask = upper_32_bits(m);

	skb->mark = (skb->mark & ~mask) | lower_32_bits(m);
}

/* A packet the XDP kfuncs passed was judged there, and counted there. */
static __always_inline unsigned int cnf_hook(struct cnf_state *cs,
					     struct sk_buff *skb,
					     const struct nf_hook_state *state,
					     enum cnf_family fam,
					     const void *saddr)
{
	if (cnf_hook_spares(cs, state) ||
	    cnf_xdp_passed(cs, skb, fam, saddr))
		return NF_ACCEPT;
	switch (cnf_verdict(cs, CNF_PATH_HOOK, fam, saddr, skb->len)) {
	case CNF_ACT_DROP:
		/* Whether a set logs: in the plan, which is in cache. */
		if (unlikely(rcu_dereference(cs->sets.plan)->log))
			cnf_log_drop(cs, skb, state, fam, saddr);
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
	/* ip_rcv_core() has validated the header. */
	return cnf_hook(priv, skb, state, CNF_V4, &ip_hdr(skb)->saddr);
}

static unsigned int cnf_hook_ipv6(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	/* ipv6_rcv() has validated the fixed header. */
	return cnf_hook(priv, skb, state, CNF_V6, &ipv6_hdr(skb)->saddr);
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

/* A table of 2^@log slots for the indexes of a scope's devices. */
static struct cnf_ifset *cnf_ifset_alloc(u32 log, gfp_t gfp)
{
	struct cnf_ifset *t = kvzalloc(struct_size(t, slot, 1U << log), gfp);

	if (t)
		t->log = log;
	return t;
}

/* The slot of @t where @idx is, or NULL; under RTNL. */
static u32 *cnf_ifset_find(struct cnf_ifset *t, u32 idx)
{
	int i = cnf_ifset_slot(t, idx);

	return i < 0 ? NULL : &t->slot[i];
}

/*
 * Put @idx, not in @t, in the first empty or gone slot of its sequence:
 * one store, which a packet searching for it sees or not, and which ends
 * no other index's search (the slot held nothing they could be after).
 */
static void cnf_ifset_put(struct cnf_ifset *t, u32 idx)
{
	u32 mask = (1U << t->log) - 1;
	u32 i = hash_32(idx, t->log);

	while (t->slot[i] && t->slot[i] != CNF_SCOPE_GONE)
		i = (i + 1) & mask;
	t->used += !t->slot[i];
	t->live++;
	WRITE_ONCE(t->slot[i], idx);
}

/* The fewest slots, a power of two, that hold @n devices at most half full. */
static u32 cnf_ifset_log_for(u32 n)
{
	return max_t(u32, ilog2(CNF_SCOPE_MIN_SLOTS),
		     order_base_2(2 * (u64)n + 2));
}

/*
 * Under RTNL: @s's table with room for one more device, a new one (the
 * devices there are, without the gone slots) published in its place when
 * it would be over three quarters used.
 *
 * Return: the table to put the device in, or NULL without memory.
 */
static struct cnf_ifset *cnf_scope_room(struct cnf_scope *s)
{
	struct cnf_ifset *t = rtnl_dereference(s->devs), *n;
	u32 i;

	if (4 * ((u64)t->used + 1) <= 3ULL << t->log)
		return t;
	n = cnf_ifset_alloc(cnf_ifset_log_for(t->live + 1), GFP_KERNEL_ACCOUNT);
	if (!n)
		return NULL;
	for (i = 0; i < 1U << t->log; i++)
		if (t->slot[i] && t->slot[i] != CNF_SCOPE_GONE)
			cnf_ifset_put(n, t->slot[i]);
	rcu_assign_pointer(s->devs, n);
	kvfree_rcu(t, rcu);
	return n;
}

/*
 * Under RTNL: keep @s's table to a device's name.  Idempotent, as a
 * rename rolled back calls it again with the old name.  A device that
 * @s covers is refused (its registration or rename fails) only when
 * there is no memory for a larger table.
 */
static int cnf_scope_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	struct cnf_scope *s = container_of(nb, struct cnf_scope, nb);
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct cnf_ifset *t;
	u32 *slot;

	if (READ_ONCE(s->retired))
		return NOTIFY_DONE;
	t = rtnl_dereference(s->devs);
	slot = cnf_ifset_find(t, dev->ifindex);
	switch (event) {
	case NETDEV_REGISTER:
	case NETDEV_CHANGENAME:
		if (!cnf_scope_matches(s, dev->name))
			break;
		if (slot)
			return NOTIFY_DONE;
		t = cnf_scope_room(s);
		if (!t) {
			/* A move into the namespace cannot fail: say so. */
			pr_warn_ratelimited("device %s (index %d) left out of the hooks' scope: no memory\n",
					    dev->name, dev->ifindex);
			return notifier_from_errno(-ENOMEM);
		}
		cnf_ifset_put(t, dev->ifindex);
		return NOTIFY_DONE;
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	if (slot) {
		WRITE_ONCE(*slot, CNF_SCOPE_GONE);
		t->live--;
	}
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
 * cnf_scope_create - a scope of @n patterns, its table made for @net's devices
 * @net: the namespace
 * @n:   patterns in @pat, 1 to %CNF_IIF_MAX, each cnf_scope_name_valid()
 * @pat: the patterns, %CNF_IFNAMSIZ bytes each
 *
 * Its table has room for the devices it covers now, at most half full:
 * more are made room for as they come.  The caller charges ->bytes before
 * cnf_scope_start() puts the scope to work.
 *
 * Return: the scope, or NULL without memory.
 */
struct cnf_scope *cnf_scope_create(struct net *net, u32 n, const void *pat)
{
	struct cnf_scope *s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	struct cnf_ifset *t;

	if (!s)
		return NULL;
	s->n = n;
	memcpy(s->pat, pat, n * CNF_IFNAMSIZ);
	t = cnf_ifset_alloc(cnf_ifset_log_for(cnf_scope_count(net, s)),
			    GFP_KERNEL_ACCOUNT);
	if (!t) {
		kfree(s);
		return NULL;
	}
	RCU_INIT_POINTER(s->devs, t);
	s->nb.notifier_call = cnf_scope_event;
	s->net = net;
	s->bytes = sizeof(*s) + struct_size(t, slot, 1U << t->log);
	return s;
}

/**
 * cnf_scope_start - fill @s's table and keep it to the devices
 * @s: a scope from cnf_scope_create(), not yet published
 *
 * Takes RTNL, so never under cnf_net_lock() (see cnf_scope_put_away());
 * the callback takes neither.  The registration's replay puts in the devices there
 * now; those that come later are put in as they come.
 *
 * Return: 0, or -ENOMEM.
 */
int cnf_scope_start(struct cnf_scope *s)
{
	return register_netdevice_notifier_net(s->net, &s->nb);
}

/**
 * cnf_scope_retire - stop keeping @s's table, for good
 * @s: a started scope, published no more or never (its namespace's hooks
 *     unregistered, or another scope in its place), or one whose packets
 *     are all done
 *
 * The table stays as it is for the packets still reading it.  Takes
 * RTNL: never under cnf_net_lock() (see cnf_scope_put_away()).
 */
void cnf_scope_retire(struct cnf_scope *s)
{
	WRITE_ONCE(s->retired, true);
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
 * takes under RTNL (lockdep saw the circle).  @s stops changing its table
 * now, and leaves the notifier chain and memory in a work, which holds
 * the namespace until then.
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
 * @s: the scope, retired or never started
 */
void cnf_scope_free(struct cnf_scope *s)
{
	/* Nothing changes it any more: retired, or never on the chain. */
	kvfree_rcu(rcu_dereference_protected(s->devs, true), rcu);
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
	int err;

	*created = false;
	if (st)
		return st;
	st = cnf_state_alloc(net);
	if (!st)
		return ERR_PTR(-ENOMEM);
	err = cnf_state_set_hooks(net, st, true);
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
 * then on, while the hooks, until unregistered, go on dropping what the
 * filter still lists: no listed source passes before the reset is seen.
 * nf_unregister_net_hooks() frees the hook entries after a grace period
 * but does not wait for it; synchronize_net() does, so no packet and no
 * CNF_IOC_TEST still looks at the state when it is freed.
 */
void cnf_state_reset(struct net *net)
{
	struct cnf_state *st = cnf_state_locked(net);

	if (!st)
		return;
	RCU_INIT_POINTER(cnf_pernet(net)->state, NULL);
	cnf_state_set_hooks(net, st, false);
	synchronize_net();
	cnf_state_free(st);
}

/*
 * Under cnf_net_lock(@net), or in .pre_exit: register or unregister @st's
 * netfilter hooks.  A packet already in one when they go finishes with
 * the state it found, which stays until a reset or the namespace's exit
 * frees it after a grace period.  Fails only to register (-ENOMEM).
 */
int cnf_state_set_hooks(struct net *net, struct cnf_state *st, bool on)
{
	int err = 0;

	if (on == st->hooks_on)
		return 0;
	if (on)
		err = nf_register_net_hooks(net, st->ops, CNF_NHOOKS);
	else
		nf_unregister_net_hooks(net, st->ops, CNF_NHOOKS);
	if (!err)
		WRITE_ONCE(st->hooks_on, on);
	return err;
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
	cnf_state_set_hooks(net, st, false);
	/* Off the chain before the namespace's devices leave it. */
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
