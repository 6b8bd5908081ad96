// SPDX-License-Identifier: GPL-2.0
/*
 * Another XDP program than cuckoo_nf's, for xdp.sh: cuckooctl must
 * neither replace nor detach it.  It passes everything.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int other_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
