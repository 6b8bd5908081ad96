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
#include <linux/xarray.h>
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

/* IPv4 and IPv6 PRE_ROUTING, for a namespace without a scope. */
#define CNF_NHOOKS 2

struct cnf_state;

/*
 * The devices whose packets the hooks judge, when the operator named
 * them (CNF_CONFIG_IIF), and their hooks: a netfilter netdev ingress hook
 * on each covered device, so that a packet on any other device never
 * reaches this module (hooks.c says why ingress).  Made whole by
 * cnf_scope_create(), then published in cnf_state.scope; replaced, never
 * changed, by a new setting, but for @hooks and @cs.
 * @nb:     on the namespace's netdevice chain from cnf_scope_start() until
 *          cnf_scope_retire(): registers a device's hook as it is
 *          registered or renamed into the scope, unregisters it as it is
 *          unregistered (or moved out of the namespace) or renamed out.
 * @net:    the namespace, for the chain and the hooks.
 * @retired: set when the scope is put away, or under RTNL as its hooks
 *          go (cnf_scope_retire()): from then on the callback registers
 *          no hook, but still unregisters those of devices that go, so
 *          that none is left on a freed device, and the chain's replay
 *          of unregistrations as @nb leaves finds nothing to undo.
 * @put_away: retires and frees the scope (cnf_scope_put_away()), in a
 *          work: RTNL is not to be taken under cnf_net_lock().
 * @bytes:  what the scope cost when made (its struct and the hooks of the
 *          devices it covered then), charged to the state's budget.  The
 *          hooks of devices that come later are made under RTNL, where the
 *          budget (cnf_net_lock(), never taken under RTNL) cannot be: they
 *          are bounded by the devices, CNF_SCOPE_DEV_BYTES (hooks.c) a covered
 *          device, and charged to the memory cgroup.
 * @n:      patterns in @pat; immutable, as is @pat.
 * @pat:    the names or, ending in '+', prefixes of names, as given.
 * @hooks:  the covered devices' hooks (struct nf_hook_ops, ->dev the
 *          device, ->priv the scope) by interface index; under RTNL
 *          only.  A covered device is missing only when its hook could
 *          not be registered as it moved into the namespace (said in the
 *          kernel log).
 * @cs:     the state whose packets the hooks judge: set while the scope is
 *          published in a state whose hooks are on, NULL otherwise (the
 *          hooks then accept every packet, before a publication, after a
 *          replacement, with the hooks off).  Written under
 *          cnf_net_lock(), read by the hooks under RCU; a state is freed
 *          only after its scope's @cs no longer points to it and a grace
 *          period has passed, or once the hooks are unregistered.
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
	struct xarray hooks;
	struct cnf_state __rcu *cs;
};

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
 * @scope:  the devices the hooks judge packets of, and their ingress
 *          hooks; NULL for every one but loopback, judged by @ops.
 *          Published and replaced under cnf_net_lock(), with its @cs
 *          (cnf_state_set_hooks()); an old one is retired and freed in a
 *          work (cnf_scope_put_away()).
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
 * @ops:    this state's PRE_ROUTING hooks, registered while it is
 *          published, @hooks_on and without a @scope; their ->priv is this
 *          struct, so a packet finds it without net_generic() or an RCU
 *          dereference of its own.
 * @hooks_on: whether the hooks are on (enum cnf_hooks, CNF_IOC_SET_CONFIG):
 *          @ops, or @scope's; written under cnf_net_lock(), read
 *          locklessly by the XDP kfuncs (READ_ONCE), which leave no mark
 *          for hooks that are off.
 * @prerouting: whether @ops are registered; under cnf_net_lock().
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
	bool prerouting;
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
int cnf_state_set_hooks(struct net *net, struct cnf_state *st, bool on,
			struct cnf_scope *s, struct cnf_scope **old);
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
