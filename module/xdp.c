// SPDX-License-Identifier: GPL-2.0
/*
 * The filter at XDP: kfuncs an XDP program calls with a packet's source,
 * answering from the filter of the namespace the receiving device is in
 * (which follows the device when it moves), with the same sets, allow
 * sets, mode and decision as the netfilter hooks (verdict.h), counted as
 * the XDP path's.  A packet they pass carries a mark to the hooks, which
 * then let it through without a second lookup (xdp.h).  The program and
 * its loader are cuckooctl's (userspace/xdp/).
 *
 * A namespace never configured has no state: the kfuncs say pass and
 * count nothing.  The state they read is freed only after an RCU grace
 * period (see &struct cnf_net), and every XDP program runs under the RCU
 * read lock.  A loaded program holds a reference on the module through
 * its BTF, so the module cannot go while one may call in.
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
 * Leave @cs's mark for @saddr in @xdp's metadata (xdp.h), when the frame
 * has metadata support and none yet, and room before its data as
 * bpf_xdp_adjust_meta() would grant it.  A program's own metadata is
 * left alone: its packet is looked up again by the hooks.
 */
static __always_inline void cnf_xdp_mark(struct xdp_buff *xdp,
					 const struct cnf_state *cs,
					 enum cnf_family fam,
					 const void *saddr)
{
	u8 *meta = xdp->data - cnf_xdp_mark_len(fam);

	if (xdp->data_meta != xdp->data ||
	    meta < (u8 *)xdp->data_hard_start + sizeof(struct xdp_frame))
		return;
	memcpy(meta, &cs->xdp_cookie, sizeof(cs->xdp_cookie));
	memcpy(meta + sizeof(u64), saddr, cnf_saddr_len(fam));
	xdp->data_meta = meta;
}

static __always_inline int cnf_xdp_verdict(struct xdp_md *ctx,
					   enum cnf_family fam,
					   const void *saddr)
{
	struct xdp_buff *xdp = (struct xdp_buff *)ctx;
	struct cnf_state *cs;

	cs = rcu_dereference(cnf_pernet_rcu(dev_net(xdp->rxq->dev))->state);
	if (!cs)
		return 0;
	if (cnf_verdict(cs, CNF_PATH_XDP, fam, saddr))
		return 1;
	/* Only the hooks read the mark. */
	if (READ_ONCE(cs->hooks_on))
		cnf_xdp_mark(xdp, cs, fam, saddr);
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

BTF_KFUNCS_START(cnf_xdp_kfunc_ids)
BTF_ID_FLAGS(func, bpf_cnf_lookup4)
BTF_ID_FLAGS(func, bpf_cnf_lookup6)
BTF_KFUNCS_END(cnf_xdp_kfunc_ids)

static const struct btf_kfunc_id_set cnf_xdp_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &cnf_xdp_kfunc_ids,
};

/*
 * A module built without BTF registers nothing (the kernel logs "missing
 * module BTF") and still filters at netfilter; only an error is fatal.
 * The kfuncs go with the module's BTF: there is no unregister.
 */
int cnf_xdp_init(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP,
					 &cnf_xdp_kfunc_set);
}
