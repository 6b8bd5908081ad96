/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter for BPF programs (xdp.c): the kfuncs XDP and tc programs
 * call, and the mark the XDP ones leave on a frame they passed, so that
 * the netfilter hooks do not look the same packet up again.
 *
 * The mark is the frame's XDP metadata, put there by the kfunc when the
 * namespace's hooks are on and the frame has room for it and no metadata
 * yet: a word, the namespace state's cnf_state.xdp_cookie as the kfunc
 * read it before its lookup, then the source the kfunc judged.  Drivers
 * that support metadata (veth, generic XDP and most drivers with native
 * XDP) carry it into the skb; the hooks accept a packet whose metadata is
 * exactly a mark of their state's current word for the packet's own
 * source.  Anything else (no mark, a program's own metadata, a frame whose
 * headers moved or were rewritten since, a mark of another namespace, of
 * a state since reset, or of a filter or mode since changed) is looked up
 * as usual: a missing mark costs a lookup, never a verdict.
 *
 * The word is random at the state's creation, which keeps the marks of
 * one state apart from another's (another namespace's, one since reset)
 * and from a program's own metadata.  It is no secret: whatever sees the
 * frame after the kfunc can read it, the XDP program itself, a tc program
 * of the namespace, the owner of an AF_XDP socket the frame is redirected
 * to (its umem holds the metadata).  Only a BPF program that writes
 * metadata (at XDP, or at tc where XDP left some), which may as well pass
 * the packet itself, could forge a mark with it; a packet cannot.
 *
 * A packet may wait between XDP and the hooks (a cpumap, an RPS backlog, a
 * qdisc, an nfqueue before the hooks) while the filter changes: its mark
 * must not pass on a verdict of before.  Every change a verdict depends on
 * (an entry added or deleted, expiry's deletes, a set's contents flushed,
 * replaced or swapped, a set destroyed, the mode set) ends, under
 * cnf_net_lock(), with cnf_state_changed(): the word becomes one more,
 * with a release, once packets see the change.  The kfunc reads the word
 * with an acquire before its lookup.  A kfunc that read the word of the
 * k-th change therefore looked up with that change and every one before
 * it; a hook that reads the same word (READ_ONCE(); one step a change, the
 * word would come round only after 2^64 of them, so an equal word is of
 * the same count) has not seen the (k+1)-th complete, and trusting the
 * mark is as right as its own lookup, concurrent with that change, would
 * be.  A packet that reaches the hooks after a change returned reads a
 * later word and is looked up.  The hooks' cost is what it was: one load
 * of the word they compared anyway.  The kfunc reads the word before every
 * lookup while the hooks are on, not only for the packets it passes (an
 * acquire is a plain load on x86).  A change whose entries all failed
 * still advances the word: it costs the marked packets in flight a lookup,
 * never a verdict.
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

/* The mark's size: the word, then the source. */
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
	return cookie == READ_ONCE(cs->xdp_cookie) &&
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
