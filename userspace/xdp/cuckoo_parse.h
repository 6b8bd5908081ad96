/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame parsing cuckoo_nf's XDP and tc programs share: an Ethernet
 * header, up to two VLAN tags (802.1ad outside, 802.1Q inside), then an
 * IPv4 or IPv6 header.  At tc, the receiving device has taken the outer
 * tag out of the frame already (skb->vlan_tci): what is left parses the
 * same way.  Every header is checked against the frame's end before it is
 * read, as the verifier wants.
 */
#ifndef _CUCKOO_PARSE_H
#define _CUCKOO_PARSE_H

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

/*
 * The IP header of the frame from @data to @end: *@l3, with the return
 * value ETH_P_IP or ETH_P_IPV6 (host order) when the whole fixed header is
 * in the frame; 0 for anything else (other protocols, a third tag,
 * truncated headers).
 */
static __always_inline int cnf_parse_ip(void *data, void *end, void **l3)
{
	struct ethhdr *eth = data;
	__be16 proto;
	void *p;
	int i;

	if ((void *)(eth + 1) > end)
		return 0;
	proto = eth->h_proto;
	p = eth + 1;
#pragma clang loop unroll(full)
	for (i = 0; i < CNF_VLAN_MAX; i++) {
		struct cnf_vlan_hdr *vh = p;

		if (proto != bpf_htons(ETH_P_8021Q) &&
		    proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > end)
			return 0;
		proto = vh->proto;
		p = vh + 1;
	}
	*l3 = p;
	if (proto == bpf_htons(ETH_P_IP) &&
	    p + sizeof(struct iphdr) <= end)
		return ETH_P_IP;
	if (proto == bpf_htons(ETH_P_IPV6) &&
	    p + sizeof(struct ipv6hdr) <= end)
		return ETH_P_IPV6;
	return 0;
}

#endif /* _CUCKOO_PARSE_H */
