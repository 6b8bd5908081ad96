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
#include <bpf/bpf_helpers.h>

/* cuckoo_nf.ko's kfuncs (module/xdp.c): 1 drop, 0 pass. */
extern int bpf_cnf_lookup4(struct xdp_md *ctx, __be32 saddr) __ksym;
extern int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr,
			   __u32 saddr__sz) __ksym;

#define CNF_CTX		struct xdp_md
#define CNF_LOOKUP4	bpf_cnf_lookup4
#define CNF_LOOKUP6	bpf_cnf_lookup6
#define CNF_DROP	XDP_DROP
#define CNF_PASS	XDP_PASS
#include "cuckoo_frame.h"

SEC("xdp")
int cuckoo_xdp(struct xdp_md *ctx)
{
	return cnf_frame_verdict(ctx);
}

/* The kfuncs are for GPL programs only. */
char LICENSE[] SEC("license") = "GPL";
