/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict on a frame, shared by cuckoo_nf's XDP and tc programs: past
 * the Ethernet header and up to two VLAN tags (802.1ad outside, 802.1Q
 * inside), the source of an IPv4 or IPv6 header, asked of the module's
 * kfuncs.  At tc the receiving device has taken the outer tag out of the
 * frame already: what is left parses the same way.  Every header is
 * checked against the frame's end before it is read.
 *
 * The including program defines, before it includes this file:
 *   CNF_CTX      its context type (both have data and data_end);
 *   CNF_LOOKUP4  its IPv4 kfunc, CNF_LOOKUP6 its IPv6 kfunc (1: drop);
 *   CNF_DROP     its drop verdict, CNF_PASS its pass verdict.
 */
#ifndef _CUCKOO_FRAME_H
#define _CUCKOO_FRAME_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* An 802.1Q or 802.1ad tag, after the MAC addresses. */
struct cnf_vlan_hdr {
	__be16 tci;
	__be16 proto;	/* what follows the tag */
};

#define CNF_VLAN_MAX	2

static __always_inline int cnf_frame_verdict(CNF_CTX *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *l3;
	__be16 proto;
	int i;

	if ((void *)(eth + 1) > end)
		return CNF_PASS;
	proto = eth->h_proto;
	l3 = eth + 1;

	/* Skip up to two VLAN tags (QinQ: 802.1ad outside, 802.1Q inside). */
#pragma clang loop unroll(full)
	for (i = 0; i < CNF_VLAN_MAX; i++) {
		struct cnf_vlan_hdr *vh = l3;

		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > end)
			return CNF_PASS;
		proto = vh->proto;
		l3 = vh + 1;
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > end)
			return CNF_PASS;
		return CNF_LOOKUP4(ctx, iph->saddr) == 1 ? CNF_DROP : CNF_PASS;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > end)
			return CNF_PASS;
		/* The source is read in place: the kfunc takes a packet pointer. */
		return CNF_LOOKUP6(ctx, &ip6h->saddr, sizeof(ip6h->saddr)) == 1 ?
		       CNF_DROP : CNF_PASS;
	}
	return CNF_PASS;	/* not IP, or a third tag */
}

#endif /* _CUCKOO_FRAME_H */
