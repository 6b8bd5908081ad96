// SPDX-License-Identifier: GPL-2.0
/*
 * The filter for BPF programs: kfuncs that XDP and tc programs call with
 * a packet's source, answering from the filter of the namespace of the
 * device the packet is on (the receiving device at XDP, skb->dev at tc;
 * either follows the device when it moves), with the same sets, allow
 * sets, mode and decision as the netfilter hooks (verdict.h), counted as
 * the XDP or the tc path's.  A frame the XDP kfuncs pass carries a mark
 * to the hooks, which then let it through without a second lookup
 * (xdp.h); a packet a tc program passed is an skb already, with no room
 * for one, and the hooks, when on, look it up again.  cuckooctl's
 * programs and the XDP loader are in userspace/xdp/ and ctl_xdp.c.
 *
 * A namespace never configured has no state: the kfuncs say pass and
 * count nothing.  The state they read is freed only after an RCU grace
 * period (see &struct cnf_net); XDP programs run under the RCU read lock,
 * and the tc kfuncs take it, as tc may hold the bottom-half flavour only.
 * A loaded program holds a reference on the module through its BTF, so
 * the module cannot go while one may call in.
 */
#include "cnf.h"
#include "verdict.h"
#include "xdp.h"

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/netdevice.h>
#include <net/xdp.h>

/* Kernels before 6.8 name neither the kfunc sets nor the kfuncs. */
#ifndef BTF_KFUNCS_START
#define BTF_KFUNCS_START(name)	BTF_SET8_START(name)
#define BTF_KFUNCS_END(name)	BTF_SET8_END(name)
#endif
#ifndef __bpf_kfunc
#define __bpf_kfunc		__used
#endif

/*
 * Leave the mark of @word, the state's cnf_state.xdp_cookie as read before
 * the lookup, for @saddr in @xdp's metadata (xdp.h), when the frame has
 * metadata support and none yet, and room before its data as
 * bpf_xdp_adjust_meta() would grant it.  A program's own metadata is
 * left alone: its packet is looked up again by the hooks.
 */
static __always_inline void cnf_xdp_mark(struct xdp_buff *xdp, u64 word,
					 enum cnf_family fam,
					 const void *saddr)
{
	u8 *meta = xdp->data - cnf_xdp_mark_len(fam);

	if (xdp->data_meta != xdp->data ||
	    meta < (u8 *)xdp->data_hard_start + sizeof(struct xdp_frame))
		return;
	memcpy(meta, &word, sizeof(word));
	memcpy(meta + sizeof(u64), saddr, cnf_saddr_len(fam));
	xdp->data_meta = meta;
}

/* The state of the namespace @dev is in, NULL if never configured. */
static __always_inline struct cnf_state *
cnf_dev_state(const struct net_device *dev)
{
	return rcu_dereference(cnf_pernet_rcu(dev_net(dev))->state);
}

static __always_inline int cnf_xdp_verdict(struct xdp_md *ctx,
					   enum cnf_family fam,
					   const void *saddr)
{
	struct xdp_buff *xdp = (struct xdp_buff *)ctx;
	struct cnf_state *cs;
	enum cnf_action act;
	u64 word = 0;
	bool mark;

	cs = cnf_dev_state(xdp->rxq->dev);
	if (!cs)
		return 0;
	/* Only the hooks read the mark. */
	mark = READ_ONCE(cs->hooks_on);
	if (mark)
		/*
		 * Before the lookup, which then sees every change the word
		 * counts (pairs with cnf_state_changed(), see xdp.h).
		 */
		word = smp_load_acquire(&cs->xdp_cookie);
	act = cnf_verdict(cs, CNF_PATH_XDP, fam, saddr,
			  xdp->data_end - xdp->data);
	if (act == CNF_ACT_DROP)
		return 1;
	/* A source to mark is passed on unmarked: the hooks look it up. */
	if (mark && act == CNF_ACT_PASS)
		cnf_xdp_mark(xdp, word, fam, saddr);
	return 0;
}

/**
 * bpf_cnf_lookup4 - whether to drop an IPv4 packet, at XDP
 * @ctx:   the program's context.
 * @saddr: the packet's source address.
 *
 * Return: 1 when the source is listed (a block set covers it and no allow
 * set does) and the namespace's mode is drop; 0 otherwise, and then the
 * frame may carry the mark that spares it the hooks' lookup (xdp.h): it
 * gets XDP metadata of its own unless it had some.
 */
__bpf_kfunc int bpf_cnf_lookup4(struct xdp_md *ctx, __be32 saddr)
{
	return cnf_xdp_verdict(ctx, CNF_V4, &saddr);
}

/**
 * bpf_cnf_lookup6 - whether to drop an IPv6 packet, at XDP
 * @ctx:       the program's context.
 * @saddr:     the packet's source address (in the packet or on the
 *             program's stack).
 * @saddr__sz: its size, 16.
 *
 * Return: as bpf_cnf_lookup4(); -EINVAL when @saddr__sz is not 16.
 */
__bpf_kfunc int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr,
				u32 saddr__sz)
{
	if (saddr__sz != sizeof(struct in6_addr))
		return -EINVAL;
	return cnf_xdp_verdict(ctx, CNF_V6, saddr);
}

/* As cnf_xdp_verdict(), for the skb a tc program runs on. */
static __always_inline int cnf_skb_verdict(struct __sk_buff *ctx,
					   enum cnf_family fam,
					   const void *saddr)
{
	struct sk_buff *skb = (struct sk_buff *)ctx;
	struct cnf_state *cs;
	int drop = 0;

	/* No device, no namespace to answer from: pass. */
	if (unlikely(!skb->dev))
		return 0;
	rcu_read_lock();
	cs = cnf_dev_state(skb->dev);
	if (cs)
		drop = cnf_verdict(cs, CNF_PATH_TC, fam, saddr, skb->len) ==
		       CNF_ACT_DROP;
	rcu_read_unlock();
	return drop;
}

/**
 * bpf_cnf_skb_lookup4 - whether to drop an IPv4 packet, at tc
 * @ctx:   the program's context.
 * @saddr: the packet's source address.
 *
 * Return: as bpf_cnf_lookup4(), for the filter of the namespace of the
 * device the packet is on; counted as the tc path's.  No mark: the
 * netfilter hooks, when on, look a packet it passed up again.
 */
__bpf_kfunc int bpf_cnf_skb_lookup4(struct __sk_buff *ctx, __be32 saddr)
{
	return cnf_skb_verdict(ctx, CNF_V4, &saddr);
}

/**
 * bpf_cnf_skb_lookup6 - whether to drop an IPv6 packet, at tc
 * @ctx:       the program's context.
 * @saddr:     the packet's source address (in the packet or on the
 *             program's stack).
 * @saddr__sz: its size, 16.
 *
 * Return: as bpf_cnf_skb_lookup4(); -EINVAL when @saddr__sz is not 16.
 */
__bpf_kfunc int bpf_cnf_skb_lookup6(struct __sk_buff *ctx, const void *saddr,
				    u32 saddr__sz)
{
	if (saddr__sz != sizeof(struct in6_addr))
		return -EINVAL;
	return cnf_skb_verdict(ctx, CNF_V6, saddr);
}

/* Each hook its own set: a kfunc takes the context of its program type. */
BTF_KFUNCS_START(cnf_xdp_kfunc_ids)
BTF_ID_FLAGS(func, bpf_cnf_lookup4)
BTF_ID_FLAGS(func, bpf_cnf_lookup6)
BTF_KFUNCS_END(cnf_xdp_kfunc_ids)

static const struct btf_kfunc_id_set cnf_xdp_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &cnf_xdp_kfunc_ids,
};

BTF_KFUNCS_START(cnf_tc_kfunc_ids)
BTF_ID_FLAGS(func, bpf_cnf_skb_lookup4)
BTF_ID_FLAGS(func, bpf_cnf_skb_lookup6)
BTF_KFUNCS_END(cnf_tc_kfunc_ids)

static const struct btf_kfunc_id_set cnf_tc_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &cnf_tc_kfunc_ids,
};

/*
 * A module built without BTF registers nothing (the kernel logs "missing
 * module BTF") and still filters at netfilter; only an error is fatal.
 * The kfuncs go with the module's BTF: there is no unregister.
 */
int cnf_xdp_init(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP,
					 &cnf_xdp_kfunc_set) ?:
	       register_btf_kfunc_id_set(BPF_PROG_TYPE_SCHED_CLS,
					 &cnf_tc_kfunc_set);
}
