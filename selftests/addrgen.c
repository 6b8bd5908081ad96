// SPDX-License-Identifier: GPL-2.0
/*
 * Address lists for the selftests' bulk loads.
 *
 *   addrgen FIRST COUNT    prints COUNT consecutive addresses from FIRST
 *                          (IPv4 or IPv6), one per line, as inet_ntop
 *                          writes them (the text cuckooctl list prints)
 *
 * Under TCG, bash or busybox awk need tens of seconds for a million lines;
 * this takes a fraction of one.  inet_ntop() (a sprintf underneath) was
 * still most of that: lines are written by hand, IPv4 whole, IPv6 as the
 * text inet_ntop() gave for the run's first address with only the last
 * group changed, and inet_ntop() again wherever that could differ.
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

static char out[1 << 16];
static size_t outlen;

static void emit(const char *p, size_t n)
{
	if (outlen + n > sizeof(out)) {
		fwrite(out, 1, outlen, stdout);
		outlen = 0;
	}
	memcpy(out + outlen, p, n);
	outlen += n;
}

/* The decimal digits of 0..255, without leading zeros. */
static char *put_u8(char *p, unsigned int v)
{
	if (v >= 100)
		*p++ = '0' + v / 100;
	if (v >= 10)
		*p++ = '0' + v / 10 % 10;
	*p++ = '0' + v % 10;
	return p;
}

static void put_ipv4(const unsigned char *a)
{
	char line[16], *p = line;
	int i;

	for (i = 0; i < 4; i++) {
		p = put_u8(p, a[i]);
		*p++ = i < 3 ? '.' : '\n';
	}
	emit(line, p - line);
}

/*
 * IPv6: while only the last 16-bit group changes and stays non-zero, the
 * runs of zero groups inet_ntop() compresses stay the same, and so does
 * its text up to the last ':'.  That prefix is taken from inet_ntop() at
 * the start of each such run, and used only when inet_ntop()'s text is
 * indeed that prefix and the group in lowercase hex (not, for example, a
 * dotted quad at the end of ::ffff:a.b.c.d).
 */
static unsigned char base[14];
static char prefix[INET6_ADDRSTRLEN];
static size_t prefix_len;
static int have_prefix;

static char *put_hex16(char *p, unsigned int v)
{
	static const char hex[] = "0123456789abcdef";
	int shift, started = 0;

	for (shift = 12; shift >= 0; shift -= 4) {
		unsigned int d = (v >> shift) & 15;

		if (d || started || !shift) {
			*p++ = hex[d];
			started = 1;
		}
	}
	return p;
}

static void put_ipv6(const unsigned char *a)
{
	char text[INET6_ADDRSTRLEN + 8], *p;
	unsigned int low = a[14] << 8 | a[15];
	size_t n;

	if (low && have_prefix && !memcmp(a, base, sizeof(base))) {
		memcpy(text, prefix, prefix_len);
		p = put_hex16(text + prefix_len, low);
		*p++ = '\n';
		emit(text, p - text);
		return;
	}
	inet_ntop(AF_INET6, a, text, INET6_ADDRSTRLEN);
	n = strlen(text);
	have_prefix = 0;
	if (low) {
		char tail[8];
		size_t tlen = put_hex16(tail, low) - tail;

		if (n > tlen && text[n - tlen - 1] == ':' &&
		    !memcmp(text + n - tlen, tail, tlen)) {
			memcpy(base, a, sizeof(base));
			prefix_len = n - tlen;
			memcpy(prefix, text, prefix_len);
			have_prefix = 1;
		}
	}
	text[n] = '\n';
	emit(text, n + 1);
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
			fwrite(out, 1, outlen, stdout);
			fflush(stdout);
			fprintf(stderr, "addrgen: %llu addresses from %s run past the last address\n",
				count, argv[1]);
			return 1;
		}
		if (family == AF_INET)
			put_ipv4(addr);
		else
			put_ipv6(addr);
	}
	fwrite(out, 1, outlen, stdout);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
