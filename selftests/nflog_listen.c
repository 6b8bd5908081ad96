// SPDX-License-Identifier: GPL-2.0
/*
 * nflog_listen GROUP COUNT SECONDS: bind NFLOG group GROUP in this
 * namespace, as ulogd2 or tcpdump -i nflog:GROUP would, and print a line
 * per packet logged to it, "PREFIX|SOURCE" (the logger's prefix as given,
 * the packet's source address), until COUNT came or SECONDS passed.
 * Prints "nflog_listen: bound" on stderr once the caller may send.  Raw
 * nfnetlink, no library: log.sh reads what cuckoo_nf's logging sets
 * give nfnetlink_log.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nfnl_send.h"

#define BUF	65536

static int nl_fd;
static unsigned short group;

static void die(const char *what)
{
	fprintf(stderr, "nflog_listen: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A configuration request with one attribute @attr of @len bytes. */
static void send_config(unsigned short attr, const void *data,
			unsigned short len)
{
	if (nfnl_send_one(nl_fd, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG,
			  group, attr, data, len) < 0)
		die("send");
}

/* Bind the group; the packet from its network header, whole. */
static void bind_group(void)
{
	struct nfulnl_msg_config_cmd cmd = { .command = NFULNL_CFG_CMD_BIND };
	struct nfulnl_msg_config_mode mode = {
		.copy_range = htonl(0xffff), .copy_mode = NFULNL_COPY_PACKET,
	};

	send_config(NFULA_CFG_CMD, &cmd, sizeof(cmd));
	send_config(NFULA_CFG_MODE, &mode, sizeof(mode));
}

/* Print "PREFIX|SOURCE" for a packet message. */
static void print_packet(struct nlmsghdr *nh)
{
	struct nfgenmsg *g = NLMSG_DATA(nh);
	struct nlattr *a = (struct nlattr *)(g + 1);
	int left = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*g));
	char src[INET6_ADDRSTRLEN] = "?";
	const char *prefix = "";

	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= left) {
		const unsigned char *d = (unsigned char *)a + NLA_HDRLEN;
		int len = a->nla_len - NLA_HDRLEN;

		if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PREFIX)
			prefix = (const char *)d;
		if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD) {
			if (g->nfgen_family == AF_INET &&
			    len >= (int)sizeof(struct ip))
				inet_ntop(AF_INET,
					  &((const struct ip *)d)->ip_src,
					  src, sizeof(src));
			else if (g->nfgen_family == AF_INET6 &&
				 len >= (int)sizeof(struct ip6_hdr))
				inet_ntop(AF_INET6,
					  &((const struct ip6_hdr *)d)->ip6_src,
					  src, sizeof(src));
		}
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	printf("%s|%s\n", prefix, src);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	long count, got = 0;
	time_t end;
	char *buf;

	if (argc != 4) {
		fprintf(stderr, "usage: nflog_listen GROUP COUNT SECONDS\n");
		return 2;
	}
	group = atoi(argv[1]);
	count = atol(argv[2]);
	end = time(NULL) + atol(argv[3]);
	buf = malloc(BUF);
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
	if (!buf || nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("netlink socket");
	bind_group();
	fprintf(stderr, "nflog_listen: bound\n");
	while (got < count && time(NULL) < end) {
		struct pollfd p = { .fd = nl_fd, .events = POLLIN };
		struct nlmsghdr *nh;
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(nl_fd, buf, BUF, 0);
		if (n < 0) {
			if (errno == ENOBUFS)
				continue;
			die("recv");
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) |
					       NFULNL_MSG_PACKET))
				continue;
			print_packet(nh);
			got++;
		}
	}
	return 0;
}
