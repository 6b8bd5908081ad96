// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP programs pktgen_bench.sh measures beside cuckoo_nf's (loaded by
 * bpf_xdp.c): the floors, XDP_DROP and XDP_PASS for every packet, and a
 * BPF hash map of IPv4 sources with a program dropping the packets whose
 * source it holds.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* Key: the IPv4 source, big-endian.  bpf_xdp.c makes and fills the map
 * and the program uses that one (its size is the loader's).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} cnf_bench_hash SEC(".maps");

SEC("xdp")
int bench_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

SEC("xdp")
int bench_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("xdp")
int bench_hash(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	__u32 saddr;

	if ((void *)(iph + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	saddr = iph->saddr;
	return bpf_map_lookup_elem(&cnf_bench_hash, &saddr) ? XDP_DROP :
							      XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
