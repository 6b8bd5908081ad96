// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo_xdp: cuckoo_nf's filter at XDP.  For each IPv4 or IPv6 frame,
 * with up to two VLAN tags (802.1Q, 802.1ad), ask cuckoo_nf.ko's kfuncs
 * about the source: they answer from the filter of the namespace the
 * receiving device is in (its sets, allow sets and mode) and count the
 * packet as the XDP path's.  Dropped here, a packet never reaches
 * netfilter; anything else (other protocols, truncated headers, an
 * unlisted source, monitor mode) passes on to the stack.
 *
 * Built with clang -target bpf; cuckooctl embeds the object (cuckooctl
 * xdp attach), and `make install` installs it for ip-link(8).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* cuckoo_nf.ko's kfuncs (module/xdp.c): 1 drop, 0 pass. */
extern int bpf_cnf_lookup4(struct xdp_md *ctx, __be32 saddr) __ksym;
extern int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr,
			   __u32 saddr__sz) __ksym;

/* An 802.1Q or 802.1ad tag, after the MAC addresses. */
struct cnf_vlan_hdr {
	__be16 tci;
	__be16 proto;	/* what follows the tag */
};

#define CNF_VLAN_MAX	2

SEC("xdp")
int cuckoo_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *l3;
	__be16 proto;
	int i;

	/* Every header is checked against the frame's end before it is read. */
	if ((void *)(eth + 1) > end)
		return XDP_PASS;
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
			return XDP_PASS;
		proto = vh->proto;
		l3 = vh + 1;
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > end)
			return XDP_PASS;
		return bpf_cnf_lookup4(ctx, iph->saddr) == 1 ? XDP_DROP :
							       XDP_PASS;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > end)
			return XDP_PASS;
		/* The source is read in place: the kfunc takes a packet pointer. */
		return bpf_cnf_lookup6(ctx, &ip6h->saddr,
				       sizeof(ip6h->saddr)) == 1 ? XDP_DROP :
								   XDP_PASS;
	}
	return XDP_PASS;	/* not IP, or a third tag */
}

/* The kfuncs are for GPL programs only. */
char LICENSE[] SEC("license") = "GPL";
