/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet path's tracepoints, cuckoo_nf:drop and cuckoo_nf:pass_allowed,
 * made in verdict.c (CREATE_TRACE_POINTS).  Every path's decision
 * (hooks, XDP, tc) comes through cnf_verdict_hit() for a source a block
 * set covers, so one site there sees each drop and each packet an allow
 * set let through.  Off, each costs a static branch, and nothing is
 * looked for; on, the set is found by a probe of each set of its kind.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cuckoo_nf

#if !defined(_CNF_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CNF_TRACE_H

#include <linux/socket.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "cnf.h"

TRACE_DEFINE_ENUM(CNF_PATH_HOOK);
TRACE_DEFINE_ENUM(CNF_PATH_XDP);
TRACE_DEFINE_ENUM(CNF_PATH_TC);

/*
 * @netns:  the namespace's cookie, as SO_NETNS_COOKIE and bpftool show it.
 * @path:   enum cnf_path: hook, xdp or tc.
 * @family: AF_INET or AF_INET6.
 * @saddr:  the source; an IPv4 one mapped into IPv6 (::ffff:a.b.c.d), as
 *          the tcp tracepoints store theirs.
 * @set:    the first set, in creation order, of the kind that decided:
 *          the block set that covers the source for a drop, the allow set
 *          for a pass; empty if a change took it away meanwhile.
 */
/* Once, though the header is read again for each stage of the events. */
#ifndef _CNF_TRACE_ASSIGN
#define _CNF_TRACE_ASSIGN
/* The source as the events keep it, an IPv4 one mapped; and the set. */
static inline void cnf_trace_assign(u8 *to, char *name, enum cnf_family fam,
				    const void *saddr, const char *set)
{
	if (fam == CNF_V4) {
		memset(to, 0, 10);
		memset(to + 10, 0xff, 2);
		memcpy(to + 12, saddr, 4);
	} else {
		memcpy(to, saddr, 16);
	}
	strscpy_pad(name, set, CNF_SET_NAME_LEN);
}
#endif

DECLARE_EVENT_CLASS(cnf_verdict_class,
		    TP_PROTO(u64 netns, enum cnf_path path,
			     enum cnf_family fam, const void *saddr,
			     const char *set),
		    TP_ARGS(netns, path, fam, saddr, set),
		    TP_STRUCT__entry(__field(u64, netns)
				     __field(u8, path)
				     __field(u8, family)
				     __array(u8, saddr, 16)
				     __array(char, set, CNF_SET_NAME_LEN)),
		    TP_fast_assign(__entry->netns = netns;
				   __entry->path = path;
				   __entry->family = fam == CNF_V4 ? AF_INET :
								     AF_INET6;
				   cnf_trace_assign(__entry->saddr, __entry->set,
						    fam, saddr, set);),
		    TP_printk("netns=%llu path=%s family=%s saddr=%pI6c set=%s",
			      __entry->netns,
			      __print_symbolic(__entry->path,
					       { CNF_PATH_HOOK, "hook" },
					       { CNF_PATH_XDP, "xdp" },
					       { CNF_PATH_TC, "tc" }),
			      __entry->family == AF_INET ? "ipv4" : "ipv6",
			      __entry->saddr, __entry->set));

/* A packet dropped, or that the kfunc told its program to drop. */
DEFINE_EVENT(cnf_verdict_class, drop,
	     TP_PROTO(u64 netns, enum cnf_path path, enum cnf_family fam,
		      const void *saddr, const char *set),
	     TP_ARGS(netns, path, fam, saddr, set));

/* A packet a block set covered and an allow set let through. */
DEFINE_EVENT(cnf_verdict_class, pass_allowed,
	     TP_PROTO(u64 netns, enum cnf_path path, enum cnf_family fam,
		      const void *saddr, const char *set),
	     TP_ARGS(netns, path, fam, saddr, set));

#endif /* _CNF_TRACE_H */

/* An out-of-tree module's header: found through ccflags' -I$(src)/module. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cnf_trace
#include <trace/define_trace.h>
