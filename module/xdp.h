/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kfuncs XDP programs call (xdp.c).  Nothing in the module calls them:
 * the declarations are here for the compiler's and sparse's checks; BPF
 * programs get theirs from the module's BTF.
 */
#ifndef _CNF_XDP_H
#define _CNF_XDP_H

#include <linux/types.h>

struct xdp_md;

int bpf_cnf_lookup4(struct xdp_md *ctx, __be32 saddr);
int bpf_cnf_lookup6(struct xdp_md *ctx, const void *saddr, u32 saddr__sz);

#endif /* _CNF_XDP_H */
