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
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <linux/pkt_cls.h>

/* cuckoo_nf.ko's kfuncs (module/xdp.c): 1 drop, 0 pass. */
extern int bpf_cnf_skb_lookup4(struct __sk_buff *ctx, __be32 saddr) __ksym;
extern int bpf_cnf_skb_lookup6(struct __sk_buff *ctx, const void *saddr,
			       __u32 saddr__sz) __ksym;

#define CNF_CTX		struct __sk_buff
#define CNF_LOOKUP4	bpf_cnf_skb_lookup4
#define CNF_LOOKUP6	bpf_cnf_skb_lookup6
#define CNF_DROP	TC_ACT_SHOT
#define CNF_PASS	TC_ACT_OK
#include "cuckoo_frame.h"

SEC("tc")
int cuckoo_tc(struct __sk_buff *ctx)
{
	return cnf_frame_verdict(ctx);
}

/* The kfuncs are for GPL programs only. */
char LICENSE[] SEC("license") = "GPL";
