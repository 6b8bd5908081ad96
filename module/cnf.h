/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckoo_nf internals shared by the module's files.
 */
#ifndef _CNF_H
#define _CNF_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/netfilter.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/u64_stats_sync.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <linux/cuckoo_nf.h>

#include "filter.h"
#include "log.h"
#include "sets.h"

/*
 * Where a packet is looked up: the netfilter hooks, an XDP or a tc
 * program, an iptables rule's match (xt_cuckoo.c, which only counts
 * checked and matched).
 */
enum cnf_path {
	CNF_PATH_HOOK,
	CNF_PATH_XDP,
	CNF_PATH_TC,
	CNF_PATH_RULE,
	CNF_NPATHS,
};

/*
 * Packet counters of one CPU, written only on that CPU, with bottom halves
 * off (cnf_verdict()); each has its bytes beside it (struct
 * cnf_byte_stats says which bytes a path counts).
 */
struct cnf_pcpu_stats {
	struct u64_stats_sync syncp;
	u64_stats_t checked[CNF_NPATHS][CNF_NFAMILIES];
	u64_stats_t matched[CNF_NPATHS][CNF_NFAMILIES];
	u64_stats_t dropped[CNF_NPATHS][CNF_NFAMILIES];
	u64_stats_t marked[CNF_NFAMILIES];	/* by the hooks */
	u64_stats_t checked_bytes[CNF_NPATHS][CNF_NFAMILIES];
	u64_stats_t matched_bytes[CNF_NPATHS][CNF_NFAMILIES];
	u64_stats_t dropped_bytes[CNF_NPATHS][CNF_NFAMILIES];
	u64_stats_t marked_bytes[CNF_NFAMILIES];
	u64_stats_t logged;			/* by the hooks, log.c */
	u64_stats_t log_suppressed;
};

/* IPv4 and IPv6 PRE_ROUTING. */
#define CNF_NHOOKS 2

/* The fewest slots of a scope's table of interface indexes. */
#define CNF_SCOPE_MIN_SLOTS 64
/* A slot whose device left the scope: searches go on past it. */
#define CNF_SCOPE_GONE U32_MAX

/*
 * The interface indexes of the devices a scope covers, in an open
 * addressing table probed linearly from hash_32() of the index.
 * Interface indexes only grow while a namespace lives (a host that
 * starts containers for years reaches the millions), so the table is
 * keyed by the devices there are, not by their indexes.  Written only
 * under RTNL by the scope's notifier: a device that comes takes an empty
 * or gone slot of its probe sequence, one that goes leaves
 * %CNF_SCOPE_GONE, both single stores a packet sees whole or not at all;
 * a table that would be over three quarters used is replaced by one made
 * for the devices there are (at most half full), published with
 * rcu_assign_pointer() and the old one freed after a grace period.
 * Always at least one slot empty, where every search ends.
 * @rcu:   frees it.
 * @log:   log2 of the slots, at least ilog2(%CNF_SCOPE_MIN_SLOTS).
 * @used:  slots not empty (devices and gone ones); RTNL.
 * @live:  devices in it; RTNL.
 * @slot:  an interface index, 0 (empty) or %CNF_SCOPE_GONE.
 */
struct cnf_ifset {
	struct rcu_head rcu;
	u32 log;
	u32 used;
	u32 live;
	u32 slot[];
};

/*
 * The devices whose packets the hooks judge, when the operator named
 * them (CNF_CONFIG_IIF).  Made whole by cnf_scope_create(), then
 * published in cnf_state.scope; replaced, never changed, by a new
 * setting, but for @devs.
 * @nb:     on the namespace's netdevice chain from creation until
 *          cnf_scope_retire(): keeps @devs to the devices' names as they
 *          are registered, renamed and unregistered.
 * @net:    the namespace, for the chain.
 * @retired: set before @nb leaves the chain, whose replay of
 *          unregistrations must not take devices out of a table packets
 *          still read.
 * @put_away: takes @nb off the chain and frees the scope
 *          (cnf_scope_put_away()), in a work: RTNL is not to be taken
 *          under cnf_net_lock().
 * @bytes:  what the scope cost when made (its first table), charged to
 *          the state's budget.  A table made larger as devices come is
 *          made under RTNL, where the budget (cnf_net_lock(), taken
 *          before RTNL) cannot be: it is bounded by the devices, 16 bytes
 *          a covered device at most, and charged to the memory cgroup.
 * @n:      patterns in @pat; immutable, as is @pat.
 * @pat:    the names or, ending in '+', prefixes of names, as given.
 * @devs:   the covered devices' indexes (struct cnf_ifset), read by the
 *          hooks under RCU.
 */
struct cnf_scope {
	struct notifier_block nb;
	struct net *net;
	struct rcu_head rcu;
	struct work_struct put_away;
	bool retired;
	u64 bytes;
	u32 n;
	char pat[CNF_IIF_MAX][CNF_IFNAMSIZ];
	struct cnf_ifset __rcu *devs;
};

/*
 * The slot of @t that holds @idx, or -1: the probe from hash_32(@idx) to
 * the first empty slot.  Lockless under RCU (the hooks), or under RTNL.
 */
static __always_inline int cnf_ifset_slot(const struct cnf_ifset *t, u32 idx)
{
	u32 mask = (1U << t->log) - 1;
	u32 i = hash_32(idx, t->log);
	u32 v;

	while ((v = READ_ONCE(t->slot[i]))) {
		if (v == idx)
			return i;
		i = (i + 1) & mask;
	}
	return -1;
}

/* Whether the hooks judge packets that arrive on the device of @ifindex. */
static __always_inline bool cnf_scope_covers(const struct cnf_scope *s,
					     int ifindex)
{
	return cnf_ifset_slot(rcu_dereference(s->devs), ifindex) >= 0;
}

/*
 * What a namespace has once cuckoo_nf is configured there: created by the
 * first change (cnf_state_activate()), freed by a reset (cnf_state_reset())
 * or with the namespace.  A namespace never configured has none of it and
 * no hooks: its packets do not reach this module at all.
 * @sets:   the named sets and their plan (sets.h, @sets.plan first): the
 *          hooks read the plan under RCU; everything else is under
 *          cnf_net_lock(), each filter's changes also under its
 *          cnf_filter_lock().
 * @stats:  per-CPU, written by the hooks and the XDP kfuncs, summed by readers under
 *          cnf_net_lock() with u64_stats retries.
 * @mode:   enum cnf_mode; written under cnf_net_lock(), read locklessly by
 *          the packet path (READ_ONCE).
 * @mark:   what %CNF_MODE_MARK sets: the value in the low 32 bits, the
 *          mask in the high ones, one word so that the hooks read a
 *          value and mask set together (READ_ONCE); written under
 *          cnf_net_lock().  0 until set.
 * @scope:  the devices the hooks judge packets of; NULL for every one but
 *          loopback.  Published and replaced under cnf_net_lock() (and
 *          RTNL, see struct cnf_scope), read by the hooks under RCU; an
 *          old one is retired and freed after a grace period.
 * @gen:    tells this state from an earlier one of the same namespace (a
 *          dump snapshot charged to a state that a reset freed has nothing
 *          left to uncharge).  Never 0; fixed at creation.
 * @xdp_cookie: the word the marks the XDP kfuncs leave on frames they
 *          passed begin with (xdp.h): random at creation, then one more
 *          after every change a verdict depends on (cnf_state_changed()),
 *          so that a mark says what its packet was judged against.
 *          Written under cnf_net_lock() with a release, read by the
 *          kfuncs with an acquire before their lookup and by the hooks
 *          with READ_ONCE().
 * @ops:    this state's hooks, registered while it is published and
 *          @hooks_on; their ->priv is this struct, so a packet finds it
 *          without net_generic() or an RCU dereference of its own.
 * @hooks_on: whether @ops are registered (enum cnf_hooks, CNF_IOC_SET_CONFIG);
 *          written under cnf_net_lock(), read locklessly by the XDP kfuncs
 *          (READ_ONCE), which leave no mark for hooks that are off.
 * @expiry: the work that removes entries whose timeout ran out, and its
 *          figures (expiry.h); under cnf_net_lock().
 * @log:    the rate limit on the lines the hooks log for the logging sets
 *          (log.h): shared by the CPUs without a lock, set under
 *          cnf_net_lock().
 */
struct cnf_state {
	/* What a packet reads first, in one cache line: */
	struct cnf_pcpu_stats __percpu *stats;
	u32 mode;
	u64 mark;
	struct cnf_scope __rcu *scope;
	struct cnf_sets sets;
	u64 gen;
	u64 xdp_cookie;
	struct nf_hook_ops ops[CNF_NHOOKS];
	bool hooks_on;
	struct cnf_expiry expiry;
	struct cnf_log_limit log;
};

/*
 * The per namespace part every namespace pays for while the module is
 * loaded (net_generic()): a pointer, a mutex and a flag, 48 bytes without
 * lock debugging, a 64-byte slab object.
 * @lock:  the namespace's own: it serialises creation, reset and every use
 *         of @state by the control device and the expiry work.  Taken
 *         killably wherever the caller can give up, before
 *         cnf_filter_lock(), never held over user memory, never taken by
 *         the packet path; no call holds two namespaces' locks (they are
 *         one lockdep class, initialised at one site, cnf_net_init(), so
 *         lockdep would report a nesting).  Being per namespace, no other
 *         namespace's calls or expiry ever wait for it.  Never held over a
 *         grace period: what a change unpublishes (an old plan, contents,
 *         union or set) is retired under it and freed after one by the
 *         call once it let go (struct cnf_retired, sets.h).  Not every
 *         hold is short: a replace builds its contents and their timeouts
 *         aside and frees the old ones' timeouts after, so that under the
 *         lock it only charges its staging and publishes; a batch holds it
 *         for a chunk of entries, the expiry work for a batch of them, a
 *         union's mend or build (sets.h) for CNF_MEND_STEP prefixes or
 *         CNF_BUILD_STEP buckets at a time, a dump's snapshot (dev.c) for
 *         CNF_DUMP_STEP buckets.  What still takes time that grows with a
 *         set's size: a table's growth within a batch's chunk, and the
 *         first tables of a union a replace finds its kind in need of
 *         without having made it aside (other sets got prefixes while it
 *         built); those delay the namespace's own calls and expiry only.
 *         A kind's new union otherwise is made and sized aside, before
 *         the lock is taken (struct cnf_aside, sets.h).  A walk that churn would drive to walk a
 *         whole table in one step is ended instead (cnf_walk_churned()).
 * @state: NULL until the namespace is configured.  Published with
 *         rcu_assign_pointer() under @lock once its hooks are
 *         registered; cleared under @lock before they are
 *         unregistered; freed after synchronize_net() (reset) or the grace
 *         period between .pre_exit and .exit (namespace exit).  Lockless
 *         readers (CNF_IOC_TEST, the XDP kfuncs, which run under the RCU
 *         read lock every XDP program has) use rcu_dereference();
 *         everything else holds @lock.
 * @staging: a replace of the namespace holds its staging (dev.c); under
 *         @lock, waited for locklessly (wait_var_event_killable()).  One
 *         at a time: the staging of a replace of %CNF_BATCH_MAX entries is
 *         hundreds of MB, and a namespace's calls, however many, make the
 *         kernel hold one.  Kept across resets, as the replace is.
 */
struct cnf_net {
	struct cnf_state __rcu *state;	/* see above */
	struct mutex lock;		/* see above */
	bool staging;			/* see above */
};

extern unsigned int cnf_net_id;
extern unsigned long cnf_initial_capacity;
extern unsigned long cnf_mem_limit;

static inline struct cnf_net *cnf_pernet(const struct net *net)
{
	return net_generic(net, cnf_net_id);
}

/* The lock of @net's cuckoo_nf state: see struct cnf_net. */
static inline struct mutex *cnf_net_lock(const struct net *net)
{
	return &cnf_pernet(net)->lock;
}

/*
 * cnf_pernet() for a caller inside an RCU read-side section already (the
 * kfuncs: every XDP program runs in one, the tc kfuncs enter one).
 * net_generic() enters its own, which under PREEMPT_RCU is two calls per
 * packet.
 */
static __always_inline struct cnf_net *cnf_pernet_rcu(const struct net *net)
{
	return rcu_dereference(net->gen)->ptr[cnf_net_id];
}

/* Under cnf_net_lock(@net). */
static inline struct cnf_state *cnf_state_locked(const struct net *net)
{
	return rcu_dereference_protected(cnf_pernet(net)->state,
					 lockdep_is_held(cnf_net_lock(net)));
}

/**
 * cnf_state_changed - let no mark made before now spare a packet a lookup
 * @st: the state, under cnf_net_lock(), once a change of its sets' entries
 *      or of its mode is what packets see
 *
 * The release orders the change before the new word: a kfunc that reads
 * the new word looks up with the change (xdp.h).
 */
static inline void cnf_state_changed(struct cnf_state *st)
{
	/* Pairs with the kfuncs' acquire (cnf_xdp_verdict()). */
	smp_store_release(&st->xdp_cookie, st->xdp_cookie + 1);
}

struct cnf_state *cnf_state_activate(struct net *net, bool *created);
void cnf_state_reset(struct net *net);
int cnf_state_set_hooks(struct net *net, struct cnf_state *st, bool on);
struct cnf_scope *cnf_scope_create(struct net *net, u32 n, const void *pat);
int cnf_scope_start(struct cnf_scope *s);
void cnf_scope_retire(struct cnf_scope *s);
void cnf_scope_put_away(struct cnf_scope *s);
void cnf_scope_free(struct cnf_scope *s);
int cnf_scope_name_valid(const char *pat);

int cnf_hooks_init(void);
void cnf_hooks_exit(void);
int cnf_xdp_init(void);
int cnf_dev_init(void);
void cnf_dev_exit(void);

/* The iptables match (xt_cuckoo.c), in kernels with x_tables. */
#if IS_ENABLED(CONFIG_NETFILTER_XTABLES)
int cnf_xt_init(void);
void cnf_xt_exit(void);
#else
static inline int cnf_xt_init(void)
{
	return 0;
}

static inline void cnf_xt_exit(void)
{
}
#endif

#endif /* _CNF_H */
