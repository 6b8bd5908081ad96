/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter for BPF programs (xdp.c): the kfuncs XDP and tc programs
 * call, and the mark the XDP ones leave on a frame they passed, so that
 * the netfilter hooks do not look the same packet up again.
 *
 * The mark is the frame's XDP metadata, put there by the kfunc when the
 * namespace's hooks are on and the frame has room for it and no metadata
 * yet: the namespace state's
 * cookie, a random secret no packet and no unprivileged user can read,
 * then the source the kfunc judged.  Drivers that support metadata (veth,
 * generic XDP and most drivers with native XDP) carry it into the skb;
 * the hooks accept a packet whose metadata is exactly a mark of their
 * state for the packet's own source.  Anything else (no mark, a program's
 * own metadata, a frame whose headers moved or were rewritten since, a
 * mark of another namespace or of a state since reset) is looked up as
 * usual: a missing mark costs a lookup, never a verdict.
 */
#ifndef _CNF_XDP_H
#define _CNF_XDP_H

#include "cnf.h"

#include <linux/in6.h>
#include <linux/skbuff.h>
#include <linux/string.h>

struct xdp_md;
struct __sk_buff;

static __always_inline unsigned int cnf_saddr_len(enum cnf_family fam)
{
	return fam == CNF_V4 ? sizeof(__be32) : sizeof(struct in6_addr);
}

/* The mark's size: the cookie, then the source. */
static __always_inline unsigned int cnf_xdp_mark_len(enum cnf_family fam)
{
	return sizeof(u64) + cnf_saddr_len(fam);
}

/* Whether @skb carries @cs's mark for @saddr, its source. */
static __always_inline bool cnf_xdp_passed(const struct cnf_state *cs,
					   const struct sk_buff *skb,
					   enum cnf_family fam,
					   const void *saddr)
{
	const u8 *mark;
	u64 cookie;

	if (likely(skb_metadata_len(skb) != cnf_xdp_mark_len(fam)))
		return false;
	mark = skb_metadata_end(skb) - cnf_xdp_mark_len(fam);
	/* The mark sits where the frame put it: not aligned, copied. */
	memcpy(&cookie, mark, sizeof(cookie));
	return cookie == cs->xdp_cookie &&
	       !memcmp(mark + sizeof(u64), saddr, cnf_saddr_len(fam));
}

/*
 * Nothing in the module calls the kfuncs: the declarations are here for
 * the compiler's and sparse's checks; BPF programs get theirs from the
 * module's BTF.
 */
int bpf_cnf_lookup4(struct xdp_md *ctx, __be32 saddr);
int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr, u32 saddr__sz);
int bpf_cnf_skb_lookup4(struct __sk_buff *ctx, __be32 saddr);
int bpf_cnf_skb_lookup6(struct __sk_buff *ctx, const void *saddr,
			u32 saddr__sz);

#endif /* _CNF_XDP_H */
