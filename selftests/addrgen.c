// SPDX-License-Identifier: GPL-2.0
/*
 * Address lists for the selftests' bulk loads.
 *
 *   addrgen FIRST COUNT    prints COUNT consecutive addresses from FIRST
 *                          (IPv4 or IPv6), one per line, as inet_ntop
 *                          writes them (the text cuckooctl list prints)
 *
 * Under TCG, bash or busybox awk need tens of seconds for a million lines;
 * this takes a fraction of one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
	fprintf(stderr, "usage: addrgen FIRST COUNT\n");
	exit(2);
}

/* Big-endian increment; wrapping past the last address is refused. */
static int increment(unsigned char *a, int len)
{
	while (len--) {
		if (++a[len])
			return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	unsigned char addr[16];
	char text[INET6_ADDRSTRLEN];
	unsigned long long count, i;
	int family, len;
	char *end;

	if (argc != 3)
		usage();
	if (inet_pton(AF_INET, argv[1], addr) == 1) {
		family = AF_INET;
		len = 4;
	} else if (inet_pton(AF_INET6, argv[1], addr) == 1) {
		family = AF_INET6;
		len = 16;
	} else {
		fprintf(stderr, "addrgen: '%s' is not an IPv4 or IPv6 address\n", argv[1]);
		return 2;
	}
	errno = 0;
	count = strtoull(argv[2], &end, 10);
	if (errno || *end || end == argv[2] || argv[2][0] == '-') {
		fprintf(stderr, "addrgen: '%s' is not a count\n", argv[2]);
		return 2;
	}
	for (i = 0; i < count; i++) {
		if (i && increment(addr, len)) {
			fprintf(stderr, "addrgen: %llu addresses from %s run past the last address\n",
				count, argv[1]);
			return 1;
		}
		inet_ntop(family, addr, text, sizeof(text));
		puts(text);
	}
	return fflush(stdout) ? 1 : 0;
}
