// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: a block prefix that covers an address of the host's own.
 *
 * A blocklist as published lists the bogons (10.0.0.0/8, 127.0.0.0/8,
 * 192.168.0.0/16...), and FireHOL says to use such a list only on
 * internet-facing interfaces.  Loaded as it is on a host whose LAN is
 * 10.x, it drops the LAN.  The module never judges what arrives on a
 * loopback device, so 127.0.0.1 keeps working; for every other address
 * the operator is told, as fail2ban's ignoreself protects its own host,
 * and the entry is stored all the same: the list is the operator's.  An
 * allow set (or a narrower list) is the answer the manual gives.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_local.h"

static void local_from_sockaddr(struct ctl_local_addr *l,
				const struct sockaddr *sa, const char *ifname)
{
	memset(l, 0, sizeof(*l));
	l->a.family = sa->sa_family;
	if (sa->sa_family == AF_INET) {
		l->a.prefixlen = 32;
		memcpy(l->a.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		l->a.prefixlen = 128;
		memcpy(l->a.addr, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
	}
	snprintf(l->ifname, sizeof(l->ifname), "%s", ifname);
}

/* The addresses of every device of the namespace into @l: 0 or errno. */
static int local_read(struct ctl_local *l)
{
	struct ifaddrs *ifa, *i;
	size_t room = 0;

	if (getifaddrs(&ifa))
		return errno;
	for (i = ifa; i; i = i->ifa_next)
		room += i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
					i->ifa_addr->sa_family == AF_INET6);
	l->v = calloc(room ? room : 1, sizeof(*l->v));
	if (!l->v) {
		freeifaddrs(ifa);
		return ENOMEM;
	}
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
				    i->ifa_addr->sa_family == AF_INET6))
			local_from_sockaddr(&l->v[l->n++], i->ifa_addr,
					    i->ifa_name);
	freeifaddrs(ifa);
	return 0;
}

/*
 * Whether @set (NULL: default) is a block set; a module without sets has
 * the default one, a block set.
 */
static bool is_block_set(int fd, const char *set)
{
	struct cnf_set_info *sets = NULL;
	size_t n = 0;
	long i;
	bool block;

	if (ctl_set_is_default(set))
		return true;
	if (ctl_set_list(fd, &sets, &n))
		return false;
	i = ctl_find_set(sets, n, set);
	block = i >= 0 && sets[i].kind == CNF_SET_BLOCK;
	free(sets);
	return block;
}

struct ctl_local *ctl_local_for(int fd, const char *set, bool quiet)
{
	struct ctl_local *l;

	if (quiet)
		return NULL;
	l = calloc(1, sizeof(*l));
	/* No address, nothing to ask the module. */
	if (l && (local_read(l) || !l->n || !is_block_set(fd, set))) {
		ctl_local_free(l);
		l = NULL;
	}
	return l;
}

void ctl_local_free(struct ctl_local *l)
{
	if (l)
		free(l->v);
	free(l);
}

/* Whether prefix @p covers address @a (same family). */
static bool prefix_covers(const struct cnf_addr *p, const struct cnf_addr *a)
{
	unsigned int bytes = p->prefixlen / 8, bits = p->prefixlen % 8;

	if (p->family != a->family)
		return false;
	if (memcmp(p->addr, a->addr, bytes))
		return false;
	return !bits || !((p->addr[bytes] ^ a->addr[bytes]) &
			  (0xff << (8 - bits)));
}

void ctl_local_warn(const struct ctl_local *l, const char *cmd,
		    const struct cnf_addr *a)
{
	char prefix[CTL_PREFIXSTRLEN], addr[CTL_PREFIXSTRLEN];
	size_t i;

	for (i = 0; l && i < l->n; i++) {
		if (!prefix_covers(a, &l->v[i].a))
			continue;
		ctl_err("%s: %s covers %s, an address of %s here", cmd,
			ctl_format_prefix(a, prefix, sizeof(prefix)),
			ctl_format_addr(&l->v[i].a, addr, sizeof(addr)),
			l->v[i].ifname);
	}
}

void ctl_local_warn_all(const char *cmd, int fd, const char *set, bool quiet,
			const struct cnf_addr *a, size_t n)
{
	struct ctl_local *local = ctl_local_for(fd, set, quiet);
	size_t i;

	for (i = 0; local && i < n; i++)
		ctl_local_warn(local, cmd, &a[i]);
	ctl_local_free(local);
}
