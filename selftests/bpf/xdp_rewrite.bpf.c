// SPDX-License-Identifier: GPL-2.0
/*
 * For xdp.sh: ask bpf_cnf_lookup6() about an IPv6 packet's source, which
 * passes and leaves the mark that spares the packet the netfilter hook's
 * lookup (module/xdp.h), then put another source in its place (the last
 * byte of ::11 made ::1).  The hook must see that the mark is not for this
 * source: it looks the packet up.  Untagged IPv6 only; anything else
 * passes untouched.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

extern int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr,
			   __u32 saddr__sz) __ksym;

SEC("xdp")
int xdp_rewrite(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6h;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return XDP_PASS;
	ip6h = (void *)(eth + 1);
	if ((void *)(ip6h + 1) > end)
		return XDP_PASS;
	if (bpf_cnf_lookup6(ctx, &ip6h->saddr, sizeof(ip6h->saddr)) != 0)
		return XDP_DROP;
	/* The kfunc moved no packet data: ip6h is still the header. */
	if (ip6h->saddr.s6_addr[15] == 0x11)
		ip6h->saddr.s6_addr[15] = 0x01;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
