// SPDX-License-Identifier: GPL-2.0
/*
 * nfq_verdict QUEUE COUNT SECONDS [HOLD]: bind nfqueue QUEUE (IPv4 and
 * IPv6) and accept every packet queued to it, until COUNT verdicts were
 * given or SECONDS passed; print the number given.  An accepted packet goes
 * on through the remaining netfilter hooks from this process's context
 * (nf_reinject(), bottom halves enabled), which is what nfqueue.sh checks
 * cuckoo_nf's hook against.  With HOLD, a path, the packets wait in the
 * queue until HOLD exists, then are accepted in the order they came:
 * xdp.sh holds packets an XDP program passed while it changes the filter.
 * Raw nfnetlink, no library.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
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
static unsigned short queue;
/* The ids of packets held (HOLD), in the order they came. */
#define HELD_MAX	4096
static unsigned int held[HELD_MAX];
static long nheld;

static void die(const char *what)
{
	fprintf(stderr, "nfq_verdict: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A request of @type with one attribute @attr of @len bytes at @data. */
static void send_one(unsigned short type, unsigned short attr,
		     const void *data, unsigned short len)
{
	if (nfnl_send_one(nl_fd, (NFNL_SUBSYS_QUEUE << 8) | type, queue, attr,
			  data, len) < 0)
		die("send");
}

static void bind_queue(void)
{
	struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND };
	struct nfqnl_msg_config_params params = {
		.copy_range = htonl(0), .copy_mode = NFQNL_COPY_META,
	};

	send_one(NFQNL_MSG_CONFIG, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	send_one(NFQNL_MSG_CONFIG, NFQA_CFG_PARAMS, &params, sizeof(params));
}

/* The packet id of a queued packet message, or 0 when it has none. */
static unsigned int packet_id(struct nlmsghdr *nh)
{
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nh) +
					     sizeof(struct nfgenmsg));
	int left = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));

	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= left) {
		if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR) {
			struct nfqnl_msg_packet_hdr *ph =
				(void *)((char *)a + NLA_HDRLEN);

			return ntohl(ph->packet_id);
		}
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return 0;
}

static void accept_packet(unsigned int id)
{
	struct nfqnl_msg_verdict_hdr v = {
		.verdict = htonl(NF_ACCEPT),
		.id = htonl(id),
	};

	send_one(NFQNL_MSG_VERDICT, NFQA_VERDICT_HDR, &v, sizeof(v));
}

/* Whether packets are still held: HOLD given and not there yet. */
static int holding(const char *hold)
{
	return hold && access(hold, F_OK);
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	long count, given = 0, i;
	const char *hold = NULL;
	time_t end;
	char *buf;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: nfq_verdict QUEUE COUNT SECONDS [HOLD]\n");
		return 2;
	}
	if (argc == 5)
		hold = argv[4];
	queue = atoi(argv[1]);
	count = atol(argv[2]);
	end = time(NULL) + atol(argv[3]);
	buf = malloc(BUF);
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
	if (!buf || nl_fd < 0 || bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("netlink socket");
	bind_queue();
	/* Ready: the caller may start sending. */
	fprintf(stderr, "nfq_verdict: queue %u bound\n", queue);
	while (given < count && time(NULL) < end) {
		struct pollfd p = { .fd = nl_fd, .events = POLLIN };
		struct nlmsghdr *nh;
		ssize_t n;

		if (nheld && !holding(hold)) {
			for (i = 0; i < nheld; i++)
				accept_packet(held[i]);
			given += nheld;
			nheld = 0;
			continue;
		}
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
			if (nh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) |
					       NFQNL_MSG_PACKET))
				continue;
			if (holding(hold)) {
				if (nheld == HELD_MAX) {
					fprintf(stderr, "nfq_verdict: more than %d held\n",
						HELD_MAX);
					return 1;
				}
				held[nheld++] = packet_id(nh);
				continue;
			}
			accept_packet(packet_id(nh));
			given++;
		}
	}
	printf("%ld\n", given);
	return 0;
}
