// SPDX-License-Identifier: GPL-2.0
/*
 * btf.sh's XDP program: it calls both kfuncs of cuckoo_nf, so libbpf
 * finds them only in the module's BTF and the verifier accepts the calls
 * only when the module registered them, with the BTF IDs resolve_btfids
 * wrote into its kfunc set.  It passes every packet.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

extern int bpf_cnf_lookup4(struct xdp_md *ctx, __be32 saddr) __ksym;
extern int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr,
			   __u32 saddr__sz) __ksym;

SEC("xdp")
int cnf_kfunc_call(struct xdp_md *ctx)
{
	__u8 saddr6[16] = {};

	if (bpf_cnf_lookup4(ctx, 0) < 0 ||
	    bpf_cnf_lookup6(ctx, saddr6, sizeof(saddr6)) < 0)
		return XDP_ABORTED;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
