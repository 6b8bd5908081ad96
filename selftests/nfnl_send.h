/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One nfnetlink request with one attribute, for the small listeners of
 * the selftests (nfq_verdict.c, nflog_listen.c) that talk to the kernel
 * without libnetfilter_queue or libnetfilter_log.
 */
#ifndef _CNF_SELFTEST_NFNL_SEND_H
#define _CNF_SELFTEST_NFNL_SEND_H

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>

/*
 * Send on @fd a request of @type (subsystem << 8 | message) for @res_id
 * (a queue or log group) with attribute @attr, @len bytes at @data (at
 * most 64).  Return: send()'s.
 */
static inline ssize_t nfnl_send_one(int fd, unsigned short type,
				    unsigned short res_id, unsigned short attr,
				    const void *data, unsigned short len)
{
	char buf[NLMSG_SPACE(sizeof(struct nfgenmsg) + NLA_HDRLEN + 64)];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct nfgenmsg *g = NLMSG_DATA(nh);
	struct nlattr *a = (struct nlattr *)(g + 1);

	if (len > 64)
		return -1;
	memset(buf, 0, sizeof(buf));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*g) + NLA_HDRLEN + NLA_ALIGN(len));
	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST;
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(res_id);
	a->nla_type = attr;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	return send(fd, buf, nh->nlmsg_len, 0);
}

#endif /* _CNF_SELFTEST_NFNL_SEND_H */
