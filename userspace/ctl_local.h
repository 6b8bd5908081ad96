/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: the addresses of the namespace's own devices, so that a block
 * prefix covering one is pointed out before it is stored (ctl_local.c).
 */
#ifndef _CTL_LOCAL_H
#define _CTL_LOCAL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/cuckoo_nf.h>

struct ctl_local_addr {
	struct cnf_addr a;		/* a single address: /32 or /128 */
	char ifname[IF_NAMESIZE];
};

struct ctl_local {
	struct ctl_local_addr *v;
	size_t n;
};

/*
 * The addresses of this namespace's devices (lo's too), for warnings about
 * prefixes going into set @set (NULL: the default set) on @fd: NULL when
 * there is nothing to warn of - @quiet, a set that is not a block set, or
 * addresses that cannot be read (the entries are stored all the same).
 */
struct ctl_local *ctl_local_for(int fd, const char *set, bool quiet);
void ctl_local_free(struct ctl_local *l);
/*
 * "cuckooctl: CMD: PREFIX covers ADDR, an address of IF here" on stderr for
 * each address of @l (NULL: none) that @a covers.
 */
void ctl_local_warn(const struct ctl_local *l, const char *cmd,
		    const struct cnf_addr *a);
/*
 * ctl_local_warn() for @n prefixes @a going into @set on @fd: the
 * addresses read, and the set's kind asked, once (ctl_local_for()).
 */
void ctl_local_warn_all(const char *cmd, int fd, const char *set, bool quiet,
			const struct cnf_addr *a, size_t n);

#endif /* _CTL_LOCAL_H */
