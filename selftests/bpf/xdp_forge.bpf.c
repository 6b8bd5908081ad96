// SPDX-License-Identifier: GPL-2.0
/*
 * For xdp.sh: metadata shaped like the mark cuckoo_nf's XDP kfuncs leave
 * on a frame they passed (module/xdp.h), a zero cookie and the packet's
 * own IPv4 source, made without asking the kfuncs.  The netfilter hook
 * must not trust it: it looks the packet up.  Untagged IPv4 only;
 * anything else passes untouched.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* 12 bytes, as the kfuncs' IPv4 mark. */
struct forged_mark {
	__u64 cookie;
	__be32 saddr;
} __attribute__((packed));

SEC("xdp")
int xdp_forge(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct forged_mark *m;
	struct iphdr *iph;
	__be32 saddr;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > end)
		return XDP_PASS;
	saddr = iph->saddr;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return XDP_PASS;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return XDP_PASS;
	m->cookie = 0;
	m->saddr = saddr;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
