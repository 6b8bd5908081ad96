// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo_tc: cuckoo_nf's filter at tc, for a clsact qdisc's ingress (or
 * egress) in direct-action mode, where XDP is not wanted or not possible.
 * As cuckoo_xdp, through the tc kfuncs: they answer from the filter of the
 * namespace of the device the packet is on and count it as the tc path's.
 * A packet shot here never reaches netfilter.
 *
 * Built with clang -target bpf; `make install` installs it for tc(8):
 *   tc qdisc add dev DEV clsact
 *   tc filter add dev DEV ingress bpf direct-action obj cuckoo_tc.o sec tc
 */
#include <linux/pkt_cls.h>

#include "cuckoo_parse.h"

/* cuckoo_nf.ko's kfuncs (module/xdp.c): 1 drop, 0 pass. */
extern int bpf_cnf_skb_lookup4(struct __sk_buff *ctx, __be32 saddr) __ksym;
extern int bpf_cnf_skb_lookup6(struct __sk_buff *ctx, const void *saddr,
			       __u32 saddr__sz) __ksym;

SEC("tc")
int cuckoo_tc(struct __sk_buff *ctx)
{
	void *l3;

	switch (cnf_parse_ip((void *)(long)ctx->data,
			     (void *)(long)ctx->data_end, &l3)) {
	case ETH_P_IP:
		return bpf_cnf_skb_lookup4(ctx, ((struct iphdr *)l3)->saddr) == 1 ?
		       TC_ACT_SHOT : TC_ACT_OK;
	case ETH_P_IPV6:
		return bpf_cnf_skb_lookup6(ctx, &((struct ipv6hdr *)l3)->saddr,
					   sizeof(struct in6_addr)) == 1 ?
		       TC_ACT_SHOT : TC_ACT_OK;
	}
	return TC_ACT_OK;	/* not IP, truncated, or a third tag */
}

/* The kfuncs are for GPL programs only. */
char LICENSE[] SEC("license") = "GPL";
