// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of cuckooctl's parsing: prefixes, input lines, whole inputs
 * in the blocklist formats 'load' takes, and sizes.  No device needed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "ctl_format.h"
#include "ctl_parse.h"
#include "ctl_setname.h"

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return false;
	return true;
}

/* ctl_parse_prefix() without a hint. */
static enum ctl_parse_err parse(const char *s, unsigned int flags,
				struct cnf_addr *a)
{
	return ctl_parse_prefix(s, flags, a, NULL);
}

/* The reason ctl_parse_prefix() gives for @s, as cuckooctl prints it. */
static const char *reason_of(const char *s, unsigned int flags, char *buf,
			     size_t len)
{
	struct cnf_addr a, hint;
	enum ctl_parse_err err = ctl_parse_prefix(s, flags, &a, &hint);

	return ctl_parse_reason(err, &hint, buf, len);
}

TEST(addr_ipv4)
{
	static const unsigned char want[4] = { 10, 0, 0, 5 };
	struct cnf_addr a;

	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(CTL_PARSE_OK, parse("10.0.0.5", 0, &a));
	EXPECT_EQ(AF_INET, a.family);
	EXPECT_EQ(32, a.prefixlen);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(0, memcmp(a.addr, want, 4));
	/* The kernel rejects anything in the 12 bytes an IPv4 address leaves. */
	EXPECT_TRUE(all_zero(a.addr + 4, 12));
	/* "/32" is the same single address. */
	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(CTL_PARSE_OK, parse("10.0.0.5/32", 0, &a));
	EXPECT_EQ(32, a.prefixlen);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(0, memcmp(a.addr, want, 4));
	EXPECT_TRUE(all_zero(a.addr + 4, 12));
}

TEST(addr_ipv6)
{
	struct cnf_addr a;
	unsigned char want[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	want[15] = 1;
	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(CTL_PARSE_OK, parse("2001:db8::1", 0, &a));
	EXPECT_EQ(AF_INET6, a.family);
	EXPECT_EQ(128, a.prefixlen);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(0, memcmp(a.addr, want, 16));
	ASSERT_EQ(CTL_PARSE_OK, parse("2001:db8::1/128", 0, &a));
	EXPECT_EQ(128, a.prefixlen);
	EXPECT_EQ(0, memcmp(a.addr, want, 16));

	ASSERT_EQ(CTL_PARSE_OK, parse("::", 0, &a));
	EXPECT_TRUE(all_zero(a.addr, 16));
	ASSERT_EQ(CTL_PARSE_OK, parse("FE80::ABCD", 0, &a));
	ASSERT_EQ(CTL_PARSE_OK, parse("::fffe:10.0.0.1", 0, &a));
}

/* Bytes of a well spread address, from @seed. */
static void fill_bytes(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((seed * 2654435761u + i * 40503u) >> 13);
}

/* Clear the bits of @addr past @len. */
static void mask_bits(uint8_t *addr, unsigned int len, unsigned int width)
{
	unsigned int i;

	for (i = len; i < width; i++)
		addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
}

/*
 * Every length of @family, each from several addresses: the text
 * ADDR/LEN of a network parses to exactly that network.
 */
static void check_every_length(struct __test_metadata *_metadata, int family)
{
	unsigned int width = family == AF_INET ? 32 : 128, len, seed;
	char text[80], addr_text[INET6_ADDRSTRLEN];
	struct cnf_addr a;
	uint8_t net[16];

	for (len = 0; len <= width; len++) {
		for (seed = 1; seed <= 20; seed++) {
			memset(net, 0, sizeof(net));
			fill_bytes(net, width / 8, seed * 131 + len);
			/* Not IPv4-mapped: refused for reasons of its own. */
			if (family == AF_INET6)
				net[0] = 0x20;
			mask_bits(net, len, width);
			inet_ntop(family, net, addr_text, sizeof(addr_text));
			snprintf(text, sizeof(text), "%s/%u", addr_text, len);
			memset(&a, 0xff, sizeof(a));
			ASSERT_EQ(CTL_PARSE_OK, parse(text, CTL_PARSE_F_ALL, &a))
				TH_LOG("'%s' refused", text);
			EXPECT_EQ(family, a.family);
			EXPECT_EQ(len, a.prefixlen);
			EXPECT_EQ(len ? 0 : CNF_ADDR_F_ALL, a.flags)
				TH_LOG("'%s': flags %u", text, a.flags);
			EXPECT_EQ(0, memcmp(a.addr, net, width / 8))
				TH_LOG("'%s' changed", text);
			EXPECT_TRUE(all_zero(a.addr + width / 8, 16 - width / 8));
			/* Without the flag only /0 changes. */
			EXPECT_EQ(len ? CTL_PARSE_OK : CTL_PARSE_ALL,
				  parse(text, 0, &a)) TH_LOG("'%s'", text);
		}
	}
}

TEST(prefix_every_length_ipv4)
{
	check_every_length(_metadata, AF_INET);
}

TEST(prefix_every_length_ipv6)
{
	check_every_length(_metadata, AF_INET6);
}

TEST(prefix_examples)
{
	static const unsigned char v4[4] = { 198, 51, 100, 0 };
	static const unsigned char v6[6] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0 };
	struct cnf_addr a;

	ASSERT_EQ(CTL_PARSE_OK, parse("198.51.100.0/24", 0, &a));
	EXPECT_EQ(AF_INET, a.family);
	EXPECT_EQ(24, a.prefixlen);
	EXPECT_EQ(0, memcmp(a.addr, v4, 4));
	EXPECT_TRUE(all_zero(a.addr + 4, 12));
	ASSERT_EQ(CTL_PARSE_OK, parse("2001:db8::/48", 0, &a));
	EXPECT_EQ(AF_INET6, a.family);
	EXPECT_EQ(48, a.prefixlen);
	EXPECT_EQ(0, memcmp(a.addr, v6, 6));
	EXPECT_TRUE(all_zero(a.addr + 6, 10));
	ASSERT_EQ(CTL_PARSE_OK, parse("128.0.0.0/1", 0, &a));
	EXPECT_EQ(1, a.prefixlen);
	EXPECT_EQ(0x80, a.addr[0]);
	ASSERT_EQ(CTL_PARSE_OK, parse("10.0.0.4/31", 0, &a));
	ASSERT_EQ(CTL_PARSE_OK, parse("2001:db8::/32", 0, &a));
	/* A v6 length below 96 is no IPv4 length, even past 32. */
	ASSERT_EQ(CTL_PARSE_OK, parse("2001:db8::/64", 0, &a));
	EXPECT_EQ(64, a.prefixlen);
}

/*
 * Host bits: refused at every length of both families, the suggestion the
 * network that the length gives.
 */
TEST(host_bits_every_length)
{
	char text[80], addr_text[INET6_ADDRSTRLEN];
	struct cnf_addr a, hint;
	unsigned int fam, len, width;
	uint8_t addr[16], net[16];

	for (fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;

		width = fam ? 128 : 32;
		for (len = 0; len < width; len++) {
			memset(addr, 0, sizeof(addr));
			fill_bytes(addr, width / 8, len);
			addr[0] = fam ? 0x20 : addr[0];
			/* The last bit is a host bit at every length. */
			addr[width / 8 - 1] |= 1;
			memcpy(net, addr, sizeof(net));
			mask_bits(net, len, width);
			inet_ntop(family, addr, addr_text, sizeof(addr_text));
			snprintf(text, sizeof(text), "%s/%u", addr_text, len);
			memset(&a, 0xff, sizeof(a));
			EXPECT_EQ(CTL_PARSE_HOST_BITS,
				  ctl_parse_prefix(text, CTL_PARSE_F_ALL, &a, &hint))
				TH_LOG("'%s'", text);
			EXPECT_TRUE(all_zero(&a, sizeof(a)));
			EXPECT_EQ(family, hint.family);
			EXPECT_EQ(len, hint.prefixlen);
			EXPECT_EQ(0, memcmp(hint.addr, net, 16))
				TH_LOG("'%s': wrong network", text);
		}
	}
}

TEST(host_bits_message)
{
	char buf[CTL_REASONLEN];

	EXPECT_STREQ("host bits set; did you mean 10.0.0.0/24?",
		     reason_of("10.0.0.5/24", 0, buf, sizeof(buf)));
	EXPECT_STREQ("host bits set; did you mean 192.168.0.0/16?",
		     reason_of("192.168.1.1/16", 0, buf, sizeof(buf)));
	EXPECT_STREQ("host bits set; did you mean 2001:db8::/32?",
		     reason_of("2001:db8::1/32", 0, buf, sizeof(buf)));
	EXPECT_STREQ("host bits set; did you mean 2001:db8:1:200::/55?",
		     reason_of("2001:db8:1:2ff::/55", 0, buf, sizeof(buf)));
	/* With the flag, a /0 with bits set suggests the /0. */
	EXPECT_STREQ("host bits set; did you mean 0.0.0.0/0?",
		     reason_of("10.0.0.0/0", CTL_PARSE_F_ALL, buf, sizeof(buf)));
	EXPECT_STREQ("host bits set; did you mean ::/0?",
		     reason_of("2001:db8::/0", CTL_PARSE_F_ALL, buf, sizeof(buf)));
}

TEST(all_addresses_needs_the_flag)
{
	char buf[CTL_REASONLEN];
	struct cnf_addr a;

	EXPECT_EQ(CTL_PARSE_ALL, parse("0.0.0.0/0", 0, &a));
	EXPECT_TRUE(all_zero(&a, sizeof(a)));
	EXPECT_EQ(CTL_PARSE_ALL, parse("::/0", 0, &a));
	/* Not "host bits, did you mean 0.0.0.0/0": a /0 is never suggested. */
	EXPECT_EQ(CTL_PARSE_ALL, parse("10.0.0.5/0", 0, &a));
	EXPECT_STREQ("/0 is every IPv4 address: give --all-addresses to mean that",
		     reason_of("0.0.0.0/0", 0, buf, sizeof(buf)));
	EXPECT_STREQ("/0 is every IPv6 address: give --all-addresses to mean that",
		     reason_of("::/0", 0, buf, sizeof(buf)));

	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(CTL_PARSE_OK, parse("0.0.0.0/0", CTL_PARSE_F_ALL, &a));
	EXPECT_EQ(AF_INET, a.family);
	EXPECT_EQ(0, a.prefixlen);
	EXPECT_EQ(CNF_ADDR_F_ALL, a.flags);
	EXPECT_TRUE(all_zero(a.addr, 16));
	ASSERT_EQ(CTL_PARSE_OK, parse("::/0", CTL_PARSE_F_ALL, &a));
	EXPECT_EQ(AF_INET6, a.family);
	EXPECT_EQ(CNF_ADDR_F_ALL, a.flags);
	/* The flag marks the /0 only. */
	ASSERT_EQ(CTL_PARSE_OK, parse("10.0.0.0/8", CTL_PARSE_F_ALL, &a));
	EXPECT_EQ(0, a.flags);
	ASSERT_EQ(CTL_PARSE_OK, parse("10.0.0.1", CTL_PARSE_F_ALL, &a));
	EXPECT_EQ(0, a.flags);
}

/* Every malformed length: refused with its reason, nothing left in @a. */
TEST(bad_masks)
{
	static const struct {
		const char *s;
		enum ctl_parse_err err;
	} cases[] = {
		{ "10.0.0.0/", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/-1", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/+8", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/08", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/00", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/024", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/0032", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/24x", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/x24", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/ 24", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/24 ", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/2 4", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/0x18", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/1e1", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/24.0", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0//24", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/24/8", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/255.255.255", CTL_PARSE_BAD_LEN },
		{ "2001:db8::/", CTL_PARSE_BAD_LEN },
		{ "2001:db8::/-64", CTL_PARSE_BAD_LEN },
		{ "2001:db8::/064", CTL_PARSE_BAD_LEN },
		{ "2001:db8::/64k", CTL_PARSE_BAD_LEN },
		{ "2001:db8::/255.255.0.0", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/255.255.255.0", CTL_PARSE_NETMASK },
		{ "10.0.0.0/255.0.255.0", CTL_PARSE_NETMASK },
		{ "10.0.0.0/0.0.0.255", CTL_PARSE_NETMASK },
		{ "2001:db8::/ffff:ffff::", CTL_PARSE_NETMASK },
		{ "10.0.0.0/33", CTL_PARSE_LEN_RANGE },
		{ "10.0.0.0/64", CTL_PARSE_LEN_RANGE },
		{ "10.0.0.0/128", CTL_PARSE_LEN_RANGE },
		{ "10.0.0.0/999", CTL_PARSE_LEN_RANGE },
		/* Past any integer type: no wrap to a small length. */
		{ "10.0.0.0/4294967320", CTL_PARSE_LEN_RANGE },
		{ "10.0.0.0/18446744073709551640", CTL_PARSE_LEN_RANGE },
		{ "2001:db8::/129", CTL_PARSE_LEN_RANGE },
		{ "2001:db8::/256", CTL_PARSE_LEN_RANGE },
		{ "2001:db8::/4294967424", CTL_PARSE_LEN_RANGE },
		{ "/24", CTL_PARSE_NOT_ADDR },
		{ "/", CTL_PARSE_NOT_ADDR },
		{ "10.0.0/24", CTL_PARSE_NOT_ADDR },
		{ "10.0.0.0 /24", CTL_PARSE_NOT_ADDR },
		{ " 10.0.0.0/24", CTL_PARSE_NOT_ADDR },
		{ "10.0.0.256/24", CTL_PARSE_NOT_ADDR },
		{ "fe80::%eth0/64", CTL_PARSE_NOT_ADDR },
	};
	char buf[CTL_REASONLEN];
	struct cnf_addr a, hint;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&a, 0xff, sizeof(a));
		EXPECT_EQ(cases[i].err,
			  ctl_parse_prefix(cases[i].s, CTL_PARSE_F_ALL, &a, &hint))
			TH_LOG("'%s'", cases[i].s);
		EXPECT_TRUE(all_zero(&a, sizeof(a))) TH_LOG("'%s'", cases[i].s);
		/* Every reason is a sentence, none the fallback. */
		ctl_parse_reason(cases[i].err, &hint, buf, sizeof(buf));
		EXPECT_EQ(NULL, strstr(buf, "unknown")) TH_LOG("'%s'", cases[i].s);
	}
}

TEST(bad_mask_messages)
{
	char buf[CTL_REASONLEN];

	EXPECT_STREQ("bad prefix length: a decimal number from 0 to 32, without sign or leading zero",
		     reason_of("10.0.0.0/08", 0, buf, sizeof(buf)));
	EXPECT_STREQ("bad prefix length: a decimal number from 0 to 128, without sign or leading zero",
		     reason_of("2001:db8::/-1", 0, buf, sizeof(buf)));
	EXPECT_STREQ("a netmask, not a prefix length: write /24",
		     reason_of("10.0.0.0/255.255.255.0", 0, buf, sizeof(buf)));
	EXPECT_STREQ("a netmask, not a prefix length: write /0",
		     reason_of("10.0.0.0/0.0.0.0", 0, buf, sizeof(buf)));
	EXPECT_STREQ("a netmask, not a prefix length: write /32",
		     reason_of("10.0.0.0/255.255.255.255", 0, buf, sizeof(buf)));
	EXPECT_STREQ("a netmask, not a prefix length: write /48",
		     reason_of("2001:db8::/ffff:ffff:ffff::", 0, buf, sizeof(buf)));
	EXPECT_STREQ("a netmask, not a prefix length (0 to 32), and not even a contiguous one",
		     reason_of("10.0.0.0/0.0.0.255", 0, buf, sizeof(buf)));
	EXPECT_STREQ("prefix length past 32, the length of an IPv4 address",
		     reason_of("10.0.0.0/33", 0, buf, sizeof(buf)));
	EXPECT_STREQ("prefix length past 128, the length of an IPv6 address",
		     reason_of("2001:db8::/129", 0, buf, sizeof(buf)));
	EXPECT_STREQ("not an IPv4 or IPv6 address or prefix",
		     reason_of("example.com/24", 0, buf, sizeof(buf)));
}

TEST(v4mapped_refused)
{
	static const struct {
		const char *s, *ipv4;
	} cases[] = {
		{ "::ffff:0:0/96", "0.0.0.0/0" },
		{ "::ffff:10.0.0.0/104", "10.0.0.0/8" },
		{ "::ffff:198.51.100.0/120", "198.51.100.0/24" },
		{ "::ffff:10.0.0.1", "10.0.0.1" },
		{ "::ffff:a00:1/128", "10.0.0.1" },
		{ "::ffff:10.0.0.4/127", "10.0.0.4/31" },
	};
	char buf[CTL_REASONLEN], want[CTL_REASONLEN];
	struct cnf_addr a, hint;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(&a, 0xff, sizeof(a));
		EXPECT_EQ(CTL_PARSE_V4MAPPED,
			  ctl_parse_prefix(cases[i].s, 0, &a, &hint))
			TH_LOG("'%s'", cases[i].s);
		EXPECT_TRUE(all_zero(&a, sizeof(a)));
		EXPECT_EQ(AF_INET, hint.family);
		snprintf(want, sizeof(want),
			 "an IPv4-mapped %s, which IPv4 packets do not carry: use the IPv4 form %s",
			 strchr(cases[i].ipv4, '/') ? "prefix" : "address",
			 cases[i].ipv4);
		EXPECT_STREQ(want, ctl_parse_reason(CTL_PARSE_V4MAPPED, &hint,
						    buf, sizeof(buf)));
	}
	/* Shorter than /96, or outside ::ffff:0:0/96: an IPv6 prefix like any. */
	EXPECT_EQ(CTL_PARSE_OK, parse("::/95", 0, &a));
	EXPECT_EQ(CTL_PARSE_OK, parse("::/64", 0, &a));
	EXPECT_EQ(CTL_PARSE_OK, parse("::fffe:0:0/96", 0, &a));
	EXPECT_EQ(CTL_PARSE_OK, parse("0:0:0:0:ffff::/80", 0, &a));
	EXPECT_EQ(CTL_PARSE_OK, parse("::1:ffff:0:0/96", 0, &a));
}

TEST(addr_rejects)
{
	static const char *const bad[] = {
		"", " ", "10.0.0", "10.0.0.256", "10.0.0.1 ", " 10.0.0.1",
		"fe80::1%eth0", "2001:db8:::1", "1:2:3:4:5:6:7:8:9",
		"example.com", "0x0a000001", "10.0.0.1.", "-1", "10.0.0.1#x",
		"::g", "010.0.0.1", "1.2.3.4-1.2.3.9", "10.0.0.1,",
		"1:2:3:4:5:6:7:1.2.3.4", "1:2:3:4:5:6::1.2.3.4", "1::2:",
		"4294967297.0.0.1", "10.0.0.0001", "::1:00000",
		"2001:db8::1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17:18:19:20/64",
	};
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&a, 0xff, sizeof(a));
		EXPECT_EQ(CTL_PARSE_NOT_ADDR, parse(bad[i], CTL_PARSE_F_ALL, &a))
			TH_LOG("accepted '%s'", bad[i]);
		/* A failed parse leaves nothing a caller could send by mistake. */
		EXPECT_TRUE(all_zero(&a, sizeof(a)));
	}
}

static uint64_t rng_state = 0x6164647273ULL;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* An address of @family, in one of the ways it can be written, into @s. */
static void random_addr_text(int family, char *s, size_t len)
{
	uint8_t a[16];
	unsigned int i, from, to;
	char *p = s;

	for (i = 0; i < 16; i++)
		/* Zero bytes often: runs of zero groups to compress. */
		a[i] = rng() % 3 ? 0 : (uint8_t)rng();
	if (family == AF_INET || rng() % 4 == 0) {
		inet_ntop(family, a, s, len);
		return;
	}
	/* Groups as they come, some with leading zeros, some upper case. */
	from = rng() % 9;
	to = from + rng() % (9 - from);
	for (i = 0; i < 8; i++) {
		if (i >= from && i < to) {
			if (i == from)
				p += sprintf(p, "%s", i ? ":" : "::");
			continue;
		}
		if (i == 6 && rng() % 4 == 0) {
			p += sprintf(p, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
			break;
		}
		p += sprintf(p, rng() % 2 ? "%x" : rng() % 2 ? "%04X" : "%02x",
			     a[2 * i] << 8 | a[2 * i + 1]);
		if (i < 7 && !(i + 1 == from && from < to))
			*p++ = ':';
	}
	*p = '\0';
}

/* A change to @s: a character in, out or replaced, or the text cut. */
static void mutate(char *s, size_t room)
{
	static const char alphabet[] = "0123456789abcdefABCDEFx:.:.%/ g";
	size_t n = strlen(s), at = n ? rng() % (n + 1) : 0;
	char c = alphabet[rng() % (sizeof(alphabet) - 1)];

	switch (rng() % 4) {
	case 0:
		if (n + 1 < room) {
			memmove(s + at + 1, s + at, n - at + 1);
			s[at] = c;
		}
		break;
	case 1:
		if (at < n)
			memmove(s + at, s + at + 1, n - at);
		break;
	case 2:
		if (at < n)
			s[at] = c;
		break;
	default:
		s[at] = '\0';
	}
}

/*
 * ctl_parse_addr() takes exactly what inet_pton() takes, with the same
 * bytes: addresses written every way, changed a character at a time, and
 * short strings of their characters.
 */
TEST(addr_parse_as_inet_pton)
{
	static const char chars[] = "0123456789abcdefF:.";
	unsigned int round, i, n, took = 0, same = 0, gaps = 0, quads = 0;
	uint8_t want[16], got[16];
	char text[64];
	int fam, family;

	for (round = 0; round < 600000; round++) {
		family = rng() % 2 ? AF_INET6 : AF_INET;
		if (round % 3 == 2) {
			n = rng() % 24;
			for (i = 0; i < n; i++)
				text[i] = chars[rng() % (sizeof(chars) - 1)];
			text[n] = '\0';
		} else {
			random_addr_text(family, text, sizeof(text));
			for (n = rng() % 3; round % 3 == 1 && n; n--)
				mutate(text, sizeof(text));
		}
		for (fam = 0; fam < 2; fam++) {
			family = fam ? AF_INET6 : AF_INET;
			memset(want, 0, sizeof(want));
			memset(got, 0, sizeof(got));
			i = inet_pton(family, text, want) == 1;
			ASSERT_EQ(i, ctl_parse_addr(family, text, strlen(text), got))
				TH_LOG("'%s' as %s", text, fam ? "IPv6" : "IPv4");
			/* A refused text leaves @got as it was. */
			if (!i)
				memset(want, 0, sizeof(want));
			ASSERT_EQ(0, memcmp(want, got, sizeof(want)))
				TH_LOG("'%s': other bytes", text);
			took += i;
			same++;
			gaps += i && fam && strstr(text, "::");
			quads += i && fam && strchr(text, '.');
		}
	}
	/* Both answers, many times, and IPv6's every form among them. */
	EXPECT_GT(took, same / 10);
	EXPECT_GT(gaps, same / 100);
	EXPECT_GT(quads, same / 1000);
	TH_LOG("%u texts, %u addresses (IPv6: %u with \"::\", %u with a dotted quad)",
	       same, took, gaps, quads);
}

/* ctl_parse_line() of @text, with its timeout in @e. */
static enum ctl_line_kind parse_line_entry(const char *text, unsigned int flags,
					   struct ctl_entry *e,
					   enum ctl_parse_err *err, char *value)
{
	struct cnf_addr hint;
	const char *v = NULL;
	enum ctl_line_kind k;
	size_t vlen = 0;
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", text);
	*err = CTL_PARSE_OK;
	k = ctl_parse_line(buf, strlen(buf), flags, e, err, &hint, &v, &vlen);
	value[0] = '\0';
	if (k == CTL_LINE_BAD)
		snprintf(value, 256, "%.*s", (int)vlen, v);
	return k;
}

/* The same for the prefix alone: a line with a timeout is bad here. */
static enum ctl_line_kind parse_line(const char *text, unsigned int flags,
				     struct cnf_addr *a,
				     enum ctl_parse_err *err, char *value)
{
	struct ctl_entry e;
	enum ctl_line_kind k = parse_line_entry(text, flags, &e, err, value);

	*a = e.a;
	return k == CTL_LINE_ADDR && e.timed ? CTL_LINE_BAD : k;
}

/*
 * The outcome of a prefix, by the rules as the header states them, the
 * address read by inet_pton(): the model ctl_parse_prefix() must match.
 */
static enum ctl_parse_err model_prefix(const char *text, struct cnf_addr *a)
{
	const char *slash = strchr(text, '/'), *l;
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	unsigned int width, len = 0, i;
	char part[64];
	uint8_t mask[16];

	memset(a, 0, sizeof(*a));
	if (alen >= sizeof(part))
		return CTL_PARSE_NOT_ADDR;
	memcpy(part, text, alen);
	part[alen] = '\0';
	a->family = strchr(part, ':') ? AF_INET6 : AF_INET;
	width = a->family == AF_INET ? 32 : 128;
	if (inet_pton(a->family, part, a->addr) != 1)
		return CTL_PARSE_NOT_ADDR;
	len = width;
	if (slash) {
		l = slash + 1;
		if (!*l || strspn(l, "0123456789") != strlen(l))
			return inet_pton(a->family, l, mask) == 1 ?
			       CTL_PARSE_NETMASK : CTL_PARSE_BAD_LEN;
		if (strlen(l) > 1 && l[0] == '0')
			return CTL_PARSE_BAD_LEN;
		if (strlen(l) > 3 || (len = atoi(l)) > width)
			return CTL_PARSE_LEN_RANGE;
	}
	a->prefixlen = len;
	if (!len)
		return CTL_PARSE_ALL;
	if (a->family == AF_INET6 && len >= 96 &&
	    !memcmp(a->addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		return CTL_PARSE_V4MAPPED;
	for (i = len; i < width; i++)
		if (a->addr[i / 8] & (0x80 >> (i % 8)))
			return CTL_PARSE_HOST_BITS;
	return CTL_PARSE_OK;
}

/* Random and mutated prefixes: the outcome the model says, every time. */
TEST(prefix_parse_as_model)
{
	unsigned int round, n, ok = 0, kinds = 0, i;
	enum ctl_parse_err got, want;
	struct cnf_addr a, m, hint;
	char text[64];

	for (round = 0; round < 300000; round++) {
		random_addr_text(rng() % 2 ? AF_INET6 : AF_INET, text,
				 sizeof(text) - 8);
		n = strlen(text);
		if (rng() % 4)
			snprintf(text + n, sizeof(text) - n, "/%u",
				 rng() % 140);
		for (i = rng() % 3; round % 2 && i; i--)
			mutate(text, sizeof(text));
		got = ctl_parse_prefix(text, 0, &a, &hint);
		want = model_prefix(text, &m);
		ASSERT_EQ(want, got)
			TH_LOG("'%s'", text);
		if (!got)
			ASSERT_EQ(0, memcmp(&m, &a, sizeof(a)))
				TH_LOG("'%s': other bytes", text);
		ok += !got;
		kinds |= 1U << got;
	}
	/* Good prefixes, and the errors of the address and the length. */
	EXPECT_GT(ok, round / 10);
	EXPECT_EQ(0, ~kinds & (1U << CTL_PARSE_NOT_ADDR |
			       1U << CTL_PARSE_BAD_LEN |
			       1U << CTL_PARSE_LEN_RANGE |
			       1U << CTL_PARSE_HOST_BITS));
}

TEST(line_kinds)
{
	static const char *const empty[] = {
		"", "\n", "   \n", "\t\r\n", "# comment\n", "   # indented\n",
		"#10.0.0.1\n", "\r\n", "; Spamhaus DROP List\r\n", ";\n",
		"  ;; 10.0.0.0/8\n", "#\n",
	};
	static const struct {
		const char *line;
		int family;
		unsigned int len;
	} good[] = {
		{ "10.0.0.1", AF_INET, 32 },
		{ "10.0.0.1\n", AF_INET, 32 },
		{ "  10.0.0.1  \n", AF_INET, 32 },
		{ "\t10.0.0.1\r\n", AF_INET, 32 },
		{ "10.0.0.1 # trailing comment\n", AF_INET, 32 },
		{ "10.0.0.1#tight\n", AF_INET, 32 },
		{ "2001:db8::1\n", AF_INET6, 128 },
		{ "  ::1\t# loopback\r\n", AF_INET6, 128 },
		{ "1.10.16.0/20 ; SBL256894\r\n", AF_INET, 20 },
		{ "1.10.16.0/20;SBL256894\n", AF_INET, 20 },
		{ "1.2.3.0/24 # x\n", AF_INET, 24 },
		{ "0.0.0.0/8\n", AF_INET, 8 },
		{ "2001:db8::/32 ; SBL123\r\n", AF_INET6, 32 },
		{ "  2a00:1450::/29  \n", AF_INET6, 29 },
		{ "198.51.100.7/32\n", AF_INET, 32 },
	};
	static const struct {
		const char *line, *value;
		enum ctl_parse_err err;
	} bad[] = {
		{ "10.0.0.1 10.0.0.2\n", "10.0.0.1 10.0.0.2", CTL_PARSE_EXTRA },
		{ "1.2.3.4\tfoo\r\n", "1.2.3.4\tfoo", CTL_PARSE_EXTRA },
		{ " 1.2.3.0/24 x ; y\n", "1.2.3.0/24 x", CTL_PARSE_EXTRA },
		{ "10.0.0.300\n", "10.0.0.300", CTL_PARSE_NOT_ADDR },
		{ "hello\n", "hello", CTL_PARSE_NOT_ADDR },
		{ "10.0.0.1, # list\n", "10.0.0.1,", CTL_PARSE_NOT_ADDR },
		{ "1.2.3.4-1.2.3.9\n", "1.2.3.4-1.2.3.9", CTL_PARSE_NOT_ADDR },
		{ "10.0.0.5/24 ; SBL1\r\n", "10.0.0.5/24", CTL_PARSE_HOST_BITS },
		{ "0.0.0.0/0\n", "0.0.0.0/0", CTL_PARSE_ALL },
		{ "10.0.0.0/33 # x\n", "10.0.0.0/33", CTL_PARSE_LEN_RANGE },
		{ "10.0.0.0/08\n", "10.0.0.0/08", CTL_PARSE_BAD_LEN },
		{ "10.0.0.0/255.0.0.0\n", "10.0.0.0/255.0.0.0", CTL_PARSE_NETMASK },
		{ "::ffff:10.0.0.1\n", "::ffff:10.0.0.1", CTL_PARSE_V4MAPPED },
	};
	enum ctl_parse_err err;
	char value[256];
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(empty); i++)
		EXPECT_EQ(CTL_LINE_EMPTY, parse_line(empty[i], 0, &a, &err, value))
			TH_LOG("line '%s'", empty[i]);
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		memset(&a, 0, sizeof(a));
		EXPECT_EQ(CTL_LINE_ADDR, parse_line(good[i].line, 0, &a, &err, value))
			TH_LOG("line '%s'", good[i].line);
		EXPECT_EQ(good[i].family, a.family) TH_LOG("line '%s'", good[i].line);
		EXPECT_EQ(good[i].len, a.prefixlen) TH_LOG("line '%s'", good[i].line);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(CTL_LINE_BAD, parse_line(bad[i].line, 0, &a, &err, value))
			TH_LOG("line '%s'", bad[i].line);
		EXPECT_EQ(bad[i].err, err) TH_LOG("line '%s'", bad[i].line);
		EXPECT_STREQ(bad[i].value, value);
	}
	/* A /0 line with the flag. */
	EXPECT_EQ(CTL_LINE_ADDR, parse_line("0.0.0.0/0 ; all\n", CTL_PARSE_F_ALL,
					    &a, &err, value));
	EXPECT_EQ(CNF_ADDR_F_ALL, a.flags);
}

TEST(line_with_nul_is_bad)
{
	char line[] = "10.0.0.1\0junk\n";
	enum ctl_parse_err err;
	struct cnf_addr hint;
	struct ctl_entry a;
	const char *v;
	size_t vlen;

	EXPECT_EQ(CTL_LINE_BAD, ctl_parse_line(line, sizeof(line) - 1, 0, &a,
					       &err, &hint, &v, &vlen));
	EXPECT_EQ(CTL_PARSE_NUL, err);
	EXPECT_EQ(sizeof(line) - 1, vlen);
}

static int read_text(struct ctl_input *in, const char *text, size_t len)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int err;

	if (!f)
		return -errno;
	err = ctl_input_read(in, f);
	fclose(f);
	return err;
}

/* in->addrs[i] as text, for comparisons. */
static const char *entry(const struct ctl_input *in, size_t i, char *buf)
{
	return ctl_format_prefix(&in->addrs[i], buf, CTL_PREFIXSTRLEN);
}

TEST(input_counts_and_line_numbers)
{
	static const char text[] =
		"# blocklist\n"
		"10.0.0.1\n"
		"\n"
		"bogus line\n"
		"  2001:db8::1   # v6\n"
		"10.0.0.256\n"
		"10.0.0.1\n"
		"10.0.0.5/24 ; host bits\n"
		"10.0.0.0/24\n"
		"10.0.0.9";		/* no final newline */
	char buf[CTL_PREFIXSTRLEN], reason[CTL_REASONLEN];
	struct ctl_input in;

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	ASSERT_EQ(5, in.n);
	EXPECT_EQ(2, in.lineno[0]);
	EXPECT_EQ(5, in.lineno[1]);
	EXPECT_EQ(AF_INET6, in.addrs[1].family);
	/* A repeated address is the kernel's to count as already present. */
	EXPECT_EQ(7, in.lineno[2]);
	EXPECT_EQ(9, in.lineno[3]);
	EXPECT_STREQ("10.0.0.0/24", entry(&in, 3, buf));
	EXPECT_EQ(10, in.lineno[4]);
	ASSERT_EQ(3, in.nbad);
	EXPECT_EQ(4, in.bad[0].lineno);
	EXPECT_STREQ("bogus line", in.bad[0].text);
	EXPECT_EQ(CTL_PARSE_EXTRA, in.bad[0].err);
	EXPECT_EQ(6, in.bad[1].lineno);
	EXPECT_STREQ("10.0.0.256", in.bad[1].text);
	EXPECT_EQ(CTL_PARSE_NOT_ADDR, in.bad[1].err);
	EXPECT_EQ(8, in.bad[2].lineno);
	EXPECT_STREQ("10.0.0.5/24", in.bad[2].text);
	EXPECT_STREQ("host bits set; did you mean 10.0.0.0/24?",
		     ctl_parse_reason(in.bad[2].err, &in.bad[2].hint, reason,
				      sizeof(reason)));
	ctl_input_free(&in);
}

/* A FireHOL netset as published: comment header, bare entries. */
TEST(input_firehol_netset)
{
	static const char text[] =
		"#\n"
		"# firehol_level1\n"
		"#\n"
		"# ipv4 hash:net ipset\n"
		"#\n"
		"# Maintainer      : FireHOL\n"
		"# Maintainer URL  : http://iplists.firehol.org/\n"
		"#\n"
		"# This list has: 3 subnets, 1 unique IP\n"
		"#\n"
		"0.0.0.0/8\n"
		"1.10.16.0/20\n"
		"1.19.0.0/16\n"
		"2.56.192.17\n";
	char buf[CTL_PREFIXSTRLEN];
	struct ctl_input in;

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	EXPECT_EQ(0, in.nbad);
	ASSERT_EQ(4, in.n);
	EXPECT_STREQ("0.0.0.0/8", entry(&in, 0, buf));
	EXPECT_EQ(11, in.lineno[0]);
	EXPECT_STREQ("1.10.16.0/20", entry(&in, 1, buf));
	EXPECT_STREQ("1.19.0.0/16", entry(&in, 2, buf));
	EXPECT_STREQ("2.56.192.17", entry(&in, 3, buf));
	EXPECT_EQ(32, in.addrs[3].prefixlen);
	ctl_input_free(&in);
}

/* Spamhaus DROP: ';' comments, trailing SBL references, CRLF endings. */
TEST(input_spamhaus_drop_crlf)
{
	static const char text[] =
		"; Spamhaus DROP List 2026/11/23 - (c) 2026 The Spamhaus Project SLU\r\n"
		"; https://www.spamhaus.org/drop/drop.txt\r\n"
		"; Last-Modified: Mon, 23 Nov 2026 10:00:00 GMT\r\n"
		"; Expires: Mon, 23 Nov 2026 11:00:00 GMT\r\n"
		"1.10.16.0/20 ; SBL256894\r\n"
		"1.19.0.0/16 ; SBL434604\r\n"
		"\r\n"
		"2001:db8:1000::/36 ; SBL999999\r\n";
	char buf[CTL_PREFIXSTRLEN];
	struct ctl_input in;

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	EXPECT_EQ(0, in.nbad);
	ASSERT_EQ(3, in.n);
	EXPECT_STREQ("1.10.16.0/20", entry(&in, 0, buf));
	EXPECT_EQ(5, in.lineno[0]);
	EXPECT_STREQ("1.19.0.0/16", entry(&in, 1, buf));
	EXPECT_STREQ("2001:db8:1000::/36", entry(&in, 2, buf));
	EXPECT_EQ(8, in.lineno[2]);
	ctl_input_free(&in);
}

TEST(input_bom_and_whitespace)
{
	static const char text[] =
		"\xef\xbb\xbf# saved on Windows\r\n"
		"   \t 10.0.0.0/8 \t \r\n"
		"\xef\xbb\xbf" "10.0.0.1\n";	/* only the first line's BOM */
	struct ctl_input in;

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	ASSERT_EQ(1, in.n);
	EXPECT_EQ(2, in.lineno[0]);
	ASSERT_EQ(1, in.nbad);
	EXPECT_EQ(3, in.bad[0].lineno);
	ctl_input_free(&in);

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, "\xef\xbb\xbf" "10.0.0.1\n", 12));
	EXPECT_EQ(1, in.n);
	EXPECT_EQ(0, in.nbad);
	ctl_input_free(&in);
}

TEST(input_all_addresses_flag)
{
	static const char text[] = "0.0.0.0/0\n::/0 # all v6\n10.0.0.0/8\n";
	struct ctl_input in;

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	EXPECT_EQ(1, in.n);
	ASSERT_EQ(2, in.nbad);
	EXPECT_EQ(CTL_PARSE_ALL, in.bad[0].err);
	EXPECT_EQ(1, in.bad[0].lineno);
	EXPECT_STREQ("::/0", in.bad[1].text);
	ctl_input_free(&in);

	ctl_input_init(&in, CTL_PARSE_F_ALL);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	EXPECT_EQ(0, in.nbad);
	ASSERT_EQ(3, in.n);
	EXPECT_EQ(CNF_ADDR_F_ALL, in.addrs[0].flags);
	EXPECT_EQ(CNF_ADDR_F_ALL, in.addrs[1].flags);
	EXPECT_EQ(0, in.addrs[2].flags);
	/* ctl_input_free() keeps the flags for the next read. */
	ctl_input_free(&in);
	EXPECT_EQ(CTL_PARSE_F_ALL, in.flags);
}

TEST(input_bad_text_is_printable_and_short)
{
	char text[400];
	struct ctl_input in;

	memset(text, 'x', sizeof(text));
	text[3] = '\033';
	text[sizeof(text) - 2] = '\r';
	text[sizeof(text) - 1] = '\n';
	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text)));
	ASSERT_EQ(1, in.nbad);
	EXPECT_EQ(CTL_BADLINE_TEXT + 3, strlen(in.bad[0].text));
	EXPECT_EQ('?', in.bad[0].text[3]);
	EXPECT_STREQ("...", in.bad[0].text + CTL_BADLINE_TEXT);
	ctl_input_free(&in);
}

TEST(input_nul_line_reported)
{
	static const char text[] = "10.0.0.1\n10.0.0.2\0junk\r\n10.0.0.3\n";
	struct ctl_input in;

	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	EXPECT_EQ(2, in.n);
	ASSERT_EQ(1, in.nbad);
	EXPECT_EQ(2, in.bad[0].lineno);
	EXPECT_EQ(CTL_PARSE_NUL, in.bad[0].err);
	EXPECT_STREQ("10.0.0.2?junk", in.bad[0].text);
	ctl_input_free(&in);
}

TEST(input_many_lines)
{
	const size_t n = 100000;
	char *text, *p;
	struct ctl_input in;
	size_t i;

	text = malloc(n * 24);
	ASSERT_NE(NULL, text);
	p = text;
	/* Every other line a /24 network. */
	for (i = 0; i < n; i++)
		p += sprintf(p, i & 1 ? "10.%zu.%zu.0/24\n" : "10.%zu.%zu.%zu\n",
			     i >> 16, (i >> 8) & 255, i & 255);
	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, p - text));
	EXPECT_EQ(n, in.n);
	EXPECT_EQ(0, in.nbad);
	EXPECT_EQ(n, in.lineno[n - 1]);
	/* Line 100000 is 10.1.134.0/24. */
	EXPECT_EQ(10, in.addrs[n - 1].addr[0]);
	EXPECT_EQ(1, in.addrs[n - 1].addr[1]);
	EXPECT_EQ(134, in.addrs[n - 1].addr[2]);
	EXPECT_EQ(0, in.addrs[n - 1].addr[3]);
	EXPECT_EQ(24, in.addrs[n - 1].prefixlen);
	EXPECT_EQ(32, in.addrs[n - 2].prefixlen);
	ctl_input_free(&in);
	free(text);
}

/* Lines longer than a read block, and an empty input. */
TEST(input_long_lines)
{
	const size_t pad = 200000;
	char buf[CTL_PREFIXSTRLEN], *text;
	struct ctl_input in;
	size_t len;

	text = malloc(pad + 70100);
	ASSERT_NE(NULL, text);
	len = sprintf(text, "10.1.2.0/24");
	memset(text + len, ' ', pad);
	len += pad;
	len += sprintf(text + len, "# padded\n%*s\n192.0.2.7", 70000, "#");
	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, len));
	ASSERT_EQ(2, in.n);
	EXPECT_EQ(0, in.nbad);
	EXPECT_STREQ("10.1.2.0/24", entry(&in, 0, buf));
	EXPECT_EQ(1, in.lineno[0]);
	EXPECT_STREQ("192.0.2.7", entry(&in, 1, buf));
	EXPECT_EQ(3, in.lineno[1]);
	ctl_input_free(&in);
	ctl_input_init(&in, 0);
	ASSERT_EQ(0, read_text(&in, text, 0));
	EXPECT_EQ(0, in.n);
	EXPECT_EQ(0, in.nbad);
	ctl_input_free(&in);
	free(text);
}

TEST(size_plain_and_suffixes)
{
	uint64_t v;

	ASSERT_EQ(0, ctl_parse_size("0", &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, ctl_parse_size("4096", &v));
	EXPECT_EQ(4096, v);
	ASSERT_EQ(0, ctl_parse_size("64K", &v));
	EXPECT_EQ(65536, v);
	ASSERT_EQ(0, ctl_parse_size("64k", &v));
	EXPECT_EQ(65536, v);
	ASSERT_EQ(0, ctl_parse_size("16M", &v));
	EXPECT_EQ(16ULL << 20, v);
	ASSERT_EQ(0, ctl_parse_size("2G", &v));
	EXPECT_EQ(2ULL << 30, v);
	ASSERT_EQ(0, ctl_parse_size("18446744073709551615", &v));
	EXPECT_EQ(UINT64_MAX, v);
}

TEST(size_rejects)
{
	static const char *const bad[] = {
		"", "K", "-1", "+1", " 1", "1 ", "1KB", "1T", "1.5M", "0x10",
		"12abc", "1KK", "ten",
	};
	uint64_t v = 42;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(-EINVAL, ctl_parse_size(bad[i], &v))
			TH_LOG("accepted '%s'", bad[i]);
	EXPECT_EQ(42, v);
	EXPECT_EQ(-ERANGE, ctl_parse_size("18446744073709551616", &v));
	EXPECT_EQ(-ERANGE, ctl_parse_size("17179869184G", &v));
	ASSERT_EQ(0, ctl_parse_size("17179869183G", &v));
}

TEST(set_names)
{
	EXPECT_TRUE(ctl_set_name_ok("default"));
	EXPECT_TRUE(ctl_set_name_ok("a"));
	EXPECT_TRUE(ctl_set_name_ok("Az09_.-"));
	EXPECT_TRUE(ctl_set_name_ok("0123456789012345678901234567890"));
	EXPECT_FALSE(ctl_set_name_ok("01234567890123456789012345678901"));
	EXPECT_FALSE(ctl_set_name_ok(""));
	EXPECT_FALSE(ctl_set_name_ok("a b"));
	EXPECT_FALSE(ctl_set_name_ok("a/b"));
	EXPECT_FALSE(ctl_set_name_ok("a\n"));
	EXPECT_FALSE(ctl_set_name_ok("\xc3\xa9"));
	EXPECT_TRUE(ctl_set_is_default(NULL));
	EXPECT_TRUE(ctl_set_is_default("default"));
	EXPECT_FALSE(ctl_set_is_default("Default"));
}

TEST(set_field_default_is_all_zero)
{
	char f[CNF_SET_NAME_LEN];

	memset(f, 0x55, sizeof(f));
	ctl_set_field(f, "default");
	EXPECT_TRUE(all_zero(f, sizeof(f)));
	memset(f, 0x55, sizeof(f));
	ctl_set_field(f, NULL);
	EXPECT_TRUE(all_zero(f, sizeof(f)));
	ctl_set_field(f, "web");
	EXPECT_STREQ("web", f);
	EXPECT_TRUE(all_zero(f + 3, sizeof(f) - 3));
}

TEST(set_kinds)
{
	EXPECT_EQ(CNF_SET_BLOCK, ctl_set_kind_parse("block"));
	EXPECT_EQ(CNF_SET_ALLOW, ctl_set_kind_parse("allow"));
	EXPECT_EQ(-EINVAL, ctl_set_kind_parse("Allow"));
	EXPECT_EQ(-EINVAL, ctl_set_kind_parse(""));
	EXPECT_STREQ("block", ctl_set_kind_name(CNF_SET_BLOCK));
	EXPECT_STREQ("allow", ctl_set_kind_name(CNF_SET_ALLOW));
	EXPECT_EQ(NULL, ctl_set_kind_name(2));
}

/* ctl_parse_set_line() of @s: its result, the name and kind in @name/@kind. */
static int set_line(const char *s, char *name, uint32_t *kind)
{
	uint32_t timeout = 7;
	struct ctl_log log;
	int rc = ctl_parse_set_line(s, strlen(s), name, kind, &timeout, &log);

	/* A line without a logging says none. */
	if (rc == 1 && log.flags)
		return 3;

	/* A line without a timeout says none. */
	if (rc == 1 && timeout)
		return 2;
	return rc;
}

TEST(set_lines)
{
	char name[CNF_SET_NAME_LEN];
	uint32_t kind = 9;

	EXPECT_EQ(1, set_line("# cuckoo_nf set web allow\n", name, &kind));
	EXPECT_STREQ("web", name);
	EXPECT_EQ(CNF_SET_ALLOW, kind);
	EXPECT_EQ(1, set_line("# cuckoo_nf set default block\r\n", name, &kind));
	EXPECT_STREQ("default", name);
	EXPECT_EQ(CNF_SET_BLOCK, kind);
	EXPECT_EQ(0, set_line("# cuckoo_nf save\n", name, &kind));
	EXPECT_EQ(0, set_line("10.0.0.1\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set web\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set web deny\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set a/b block\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set web block extra\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set  block\n", name, &kind));
}

/* @text read as a save, sets and all. */
static int read_save(struct ctl_input *in, const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	if (!f)
		return -errno;
	ctl_input_init(in, CTL_PARSE_F_SETS);
	err = ctl_input_read(in, f);
	fclose(f);
	return err;
}

TEST(save_sections)
{
	struct ctl_input in;

	ASSERT_EQ(0, read_save(&in, "# cuckoo_nf save\n10.0.0.1\n"
				    "# cuckoo_nf set web block\n10.0.0.2\n10.0.0.3\n"
				    "# cuckoo_nf set none allow\n"
				    "# cuckoo_nf set ok allow\n2001:db8::1\n"));
	EXPECT_EQ(0, in.nbad);
	EXPECT_EQ(4, in.n);
	ASSERT_EQ(3, in.nsect);
	EXPECT_STREQ("web", in.sect[0].name);
	EXPECT_EQ(1, in.sect[0].first);
	EXPECT_EQ(3, in.sect[0].lineno);
	EXPECT_STREQ("none", in.sect[1].name);
	EXPECT_EQ(CNF_SET_ALLOW, in.sect[1].kind);
	EXPECT_EQ(3, in.sect[1].first);
	EXPECT_EQ(3, in.sect[2].first);
	EXPECT_EQ(8, in.lineno[3]);
	ctl_input_free(&in);

	/* The default set both before any set line and by name: twice. */
	ASSERT_EQ(0, read_save(&in, "10.0.0.1\n# cuckoo_nf set default block\n"
				    "# cuckoo_nf set web allow\n# cuckoo_nf set web allow\n"));
	EXPECT_EQ(2, in.nbad);
	EXPECT_EQ(CTL_PARSE_SET_TWICE, in.bad[0].err);
	EXPECT_EQ(2, in.bad[0].lineno);
	EXPECT_EQ(CTL_PARSE_SET_TWICE, in.bad[1].err);
	EXPECT_EQ(4, in.bad[1].lineno);
	ctl_input_free(&in);

	/* Without CTL_PARSE_F_SETS a set line is a comment. */
	{
		static const char text[] = "# cuckoo_nf set a/b block\n10.0.0.1\n";
		FILE *f = fmemopen((void *)text, strlen(text), "r");

		ASSERT_NE(NULL, f);
		ctl_input_init(&in, 0);
		ASSERT_EQ(0, ctl_input_read(&in, f));
		fclose(f);
		EXPECT_EQ(0, in.nbad);
		EXPECT_EQ(0, in.nsect);
		EXPECT_EQ(1, in.n);
		ctl_input_free(&in);
	}
}

TEST(timeout_values)
{
	static const struct {
		const char *s;
		uint32_t sec;
	} good[] = {
		{ "0", 0 }, { "1", 1 }, { "600", 600 }, { "007", 7 },
		{ "4294967295", 4294967295u },
		/* Durations, as fail2ban's bantime and systemd write them. */
		{ "90s", 90 }, { "15m", 900 }, { "1h30m", 5400 },
		{ "7d", 604800 }, { "2w", 1209600 }, { "0s", 0 },
		{ "1w2d3h4m5s", 788645 }, { "1h05s", 3605 },
		{ "4294967295s", 4294967295u },
		{ "49710d6h28m15s", 4294967295u },
	};
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "abc", "1.5", "0x10", "1e3",
		/* A unit each number, largest first, none twice. */
		"s", "1h30", "30m1h", "1h1h", "1H", "1ms", "1y", "1 h",
		"1h 30m", "h1", "1hm",
	};
	static const char *const range[] = {
		"4294967296", "10000000000", "99999999999999999999999999",
		"4294967296s", "49710d6h28m16s", "7102w", "99999999999999999999d",
	};
	char reason[CTL_REASONLEN];
	struct cnf_addr no_hint;
	uint32_t sec;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		sec = 12345;
		EXPECT_EQ(CTL_PARSE_OK, ctl_parse_timeout(good[i].s, &sec))
			TH_LOG("'%s'", good[i].s);
		EXPECT_EQ(good[i].sec, sec) TH_LOG("'%s'", good[i].s);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		sec = 12345;
		EXPECT_EQ(CTL_PARSE_TIMEOUT, ctl_parse_timeout(bad[i], &sec))
			TH_LOG("'%s'", bad[i]);
		EXPECT_EQ(12345, sec);
	}
	for (i = 0; i < ARRAY_SIZE(range); i++)
		EXPECT_EQ(CTL_PARSE_TIMEOUT_RANGE, ctl_parse_timeout(range[i], &sec))
			TH_LOG("'%s'", range[i]);
	memset(&no_hint, 0, sizeof(no_hint));
	EXPECT_STREQ("not a timeout: seconds from 0 (none) to 4294967295, or a duration such as 90s, 15m, 1h30m, 7d",
		     ctl_parse_reason(CTL_PARSE_TIMEOUT, &no_hint, reason,
				      sizeof(reason)));
	EXPECT_STREQ("timeout past 4294967295 seconds, the longest there is",
		     ctl_parse_reason(CTL_PARSE_TIMEOUT_RANGE, &no_hint, reason,
				      sizeof(reason)));
}

/* What ctl_parse_entry_args() reports, "VALUE: reason" a line. */
struct bad_args {
	char text[1024];
	size_t n;
};

static void collect_bad(void *ctx, const char *value, enum ctl_parse_err err,
			const struct cnf_addr *hint)
{
	struct bad_args *b = ctx;
	char reason[CTL_REASONLEN];
	size_t len = strlen(b->text);

	snprintf(b->text + len, sizeof(b->text) - len, "%s: %s\n", value,
		 ctl_parse_reason(err, hint, reason, sizeof(reason)));
	b->n++;
}

/* ctl_parse_entry_args() of the words of @line into @e. */
static size_t entry_args_flags(const char *line, unsigned int flags,
			       bool timeouts, struct ctl_entry *e, size_t *n,
			       struct bad_args *bad)
{
	static char buf[256];
	char *argv[32], *p;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok(buf, " "); p && argc < 32; p = strtok(NULL, " "))
		argv[argc++] = p;
	memset(bad, 0, sizeof(*bad));
	return ctl_parse_entry_args(argc, argv, flags, timeouts, e, n,
				    collect_bad, bad);
}

static size_t entry_args(const char *line, bool timeouts, struct ctl_entry *e,
			 size_t *n, struct bad_args *bad)
{
	return entry_args_flags(line, 0, timeouts, e, n, bad);
}

/* The prefixes of range @text, as cuckooctl prints them, space-separated. */
static const char *split_text(const char *text, unsigned int flags)
{
	static char out[CTL_RANGE_MAX * CTL_PREFIXSTRLEN];
	struct cnf_addr split[CTL_RANGE_MAX];
	char one[CTL_PREFIXSTRLEN];
	static struct bad_args bad;
	struct ctl_entry e[2];
	size_t i, n, len = 0;

	if (entry_args_flags(text, flags | CTL_PARSE_F_RANGE, false, e, &n,
			     &bad) || n != 1)
		return bad.text;
	n = ctl_range_split(&e[0], split);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(out + len, sizeof(out) - len, "%s%s",
				i ? " " : "",
				ctl_format_prefix(&split[i], one, sizeof(one)));
	return out;
}

static size_t split_count(const char *text)
{
	struct cnf_addr split[CTL_RANGE_MAX];
	struct ctl_entry e[2];
	struct bad_args bad;
	size_t n;

	if (entry_args_flags(text, CTL_PARSE_F_RANGE, false, e, &n, &bad) ||
	    n != 1)
		return 0;
	return ctl_range_split(&e[0], split);
}

TEST(ranges_split_into_fewest_prefixes)
{
	EXPECT_STREQ("10.0.0.5", split_text("10.0.0.5-10.0.0.5", 0));
	EXPECT_STREQ("10.0.0.0/24", split_text("10.0.0.0-10.0.0.255", 0));
	EXPECT_STREQ("10.0.0.1 10.0.0.2/31 10.0.0.4/30 10.0.0.8/29 10.0.0.16/28 10.0.0.32/27 10.0.0.64/26 10.0.0.128/26 10.0.0.192/27 10.0.0.224/28 10.0.0.240/29 10.0.0.248/30 10.0.0.252/31 10.0.0.254",
		     split_text("10.0.0.1-10.0.0.254", 0));
	EXPECT_STREQ("192.168.1.0/24 192.168.2.0/23",
		     split_text("192.168.1.0-192.168.3.255", 0));
	EXPECT_STREQ("255.255.255.254/31",
		     split_text("255.255.255.254-255.255.255.255", 0));
	EXPECT_STREQ("0.0.0.0/1", split_text("0.0.0.0-127.255.255.255", 0));
	EXPECT_STREQ("2001:db8::/127 2001:db8::2",
		     split_text("2001:db8::-2001:db8::2", 0));
	EXPECT_STREQ("2001:db8::/32",
		     split_text("2001:db8::-2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 0));
	/* The most a family needs: two of each length but /0. */
	EXPECT_EQ(62, split_count("0.0.0.1-255.255.255.254"));
	EXPECT_EQ(CTL_RANGE_MAX - 2,
		  split_count("::1-ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"));
	/* The whole family is /0, which only --all-addresses means. */
	EXPECT_STREQ("0.0.0.0-255.255.255.255: /0 is every IPv4 address: give --all-addresses to mean that\n",
		     split_text("0.0.0.0-255.255.255.255", 0));
	EXPECT_STREQ("0.0.0.0/0",
		     split_text("0.0.0.0-255.255.255.255", CTL_PARSE_F_ALL));
	EXPECT_STREQ("::/0", split_text("::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
					CTL_PARSE_F_ALL));
}

/* Every range of a small space, checked against a brute-force cover. */
TEST(ranges_cover_exactly)
{
	struct cnf_addr split[CTL_RANGE_MAX];
	unsigned int from, to, x, hits;
	struct ctl_entry e;
	size_t i, n;

	memset(&e, 0, sizeof(e));
	e.range = true;
	e.a.family = e.last.family = AF_INET;
	e.a.addr[0] = e.last.addr[0] = 198;
	e.a.addr[1] = e.last.addr[1] = 51;
	/* 198.51.0.0 to 198.51.3.255: 1,024 addresses, every pair of ends. */
	for (from = 0; from < 1024; from += 7) {
		for (to = from; to < 1024; to += 5) {
			e.a.addr[2] = from >> 8;
			e.a.addr[3] = from & 0xff;
			e.last.addr[2] = to >> 8;
			e.last.addr[3] = to & 0xff;
			n = ctl_range_split(&e, split);
			for (x = 0; x < 1024; x++) {
				uint32_t addr = 198u << 24 | 51u << 16 | x;

				hits = 0;
				for (i = 0; i < n; i++) {
					uint32_t net = ntohl(*(uint32_t *)split[i].addr);
					uint32_t mask = split[i].prefixlen ?
						~0u << (32 - split[i].prefixlen) : 0;

					/* Host bits clear, as the kernel wants. */
					ASSERT_EQ(net, net & mask);
					hits += (addr & mask) == net;
				}
				ASSERT_EQ(x >= from && x <= to, hits)
					TH_LOG("%u-%u: %u covered %u times",
					       from, to, x, hits);
			}
			/* The fewest: no two neighbours merge into one. */
			for (i = 0; i + 1 < n; i++)
				ASSERT_FALSE(split[i].prefixlen ==
					     split[i + 1].prefixlen &&
					     !(ntohl(*(uint32_t *)split[i].addr) &
					       (1u << (32 - split[i].prefixlen))));
		}
	}
}

TEST(ranges_refused_with_reasons)
{
	struct ctl_entry e[8];
	struct bad_args bad;
	size_t n;

	EXPECT_EQ(5, entry_args_flags("10.0.0.9-10.0.0.1 10.0.0.0/24-10.0.1.255 10.0.0.1-2001:db8::1 10.0.0.1-x 10.0.0.1-",
				      CTL_PARSE_F_RANGE, false, e, &n, &bad));
	EXPECT_STREQ("10.0.0.9-10.0.0.1: a range whose first address comes after its last\n"
		     "10.0.0.0/24-10.0.1.255: a range goes from one address to another, without '/' lengths\n"
		     "10.0.0.1-2001:db8::1: a range from an IPv4 to an IPv6 address or back\n"
		     "10.0.0.1-x: not an IPv4 or IPv6 address or prefix\n"
		     "10.0.0.1-: not an IPv4 or IPv6 address or prefix\n",
		     bad.text);
	EXPECT_EQ(0, n);
	/* Without the flag (test), a range is no address. */
	EXPECT_EQ(1, entry_args_flags("10.0.0.1-10.0.0.2", 0, false, e, &n, &bad));
	EXPECT_STREQ("10.0.0.1-10.0.0.2: not an IPv4 or IPv6 address or prefix\n",
		     bad.text);
	/* With a timeout, for the whole range. */
	EXPECT_EQ(0, entry_args_flags("10.0.0.0-10.0.0.4 timeout 1h 10.0.0.7",
				      CTL_PARSE_F_RANGE, true, e, &n, &bad));
	ASSERT_EQ(2, n);
	EXPECT_TRUE(e[0].range);
	EXPECT_EQ(3600, e[0].timeout);
	EXPECT_FALSE(e[1].range);
}

TEST(range_lines_in_a_file)
{
	static const char text[] =
		"10.1.0.0-10.1.0.2 timeout 60  # three addresses\n"
		"2001:db8::-2001:db8::1\n"
		"10.2.0.0-10.1.0.0\n";
	char buf[sizeof(text)], one[CTL_PREFIXSTRLEN];
	struct ctl_input in;
	FILE *f;

	memcpy(buf, text, sizeof(text));
	f = fmemopen(buf, sizeof(text) - 1, "r");
	ASSERT_NE(NULL, f);
	ctl_input_init(&in, CTL_PARSE_F_RANGE);
	ASSERT_EQ(0, ctl_input_read(&in, f));
	fclose(f);
	ASSERT_EQ(3, in.n);
	EXPECT_STREQ("10.1.0.0/31", ctl_format_prefix(&in.addrs[0], one, sizeof(one)));
	EXPECT_STREQ("10.1.0.2", ctl_format_prefix(&in.addrs[1], one, sizeof(one)));
	EXPECT_EQ(60, in.timeout[1]);
	EXPECT_EQ(1, in.lineno[1]);
	EXPECT_STREQ("2001:db8::/127", ctl_format_prefix(&in.addrs[2], one, sizeof(one)));
	EXPECT_EQ(2, in.lineno[2]);
	ASSERT_EQ(1, in.nbad);
	EXPECT_EQ(3, in.bad[0].lineno);
	EXPECT_EQ(CTL_PARSE_RANGE_ORDER, in.bad[0].err);
	EXPECT_STREQ("10.2.0.0-10.1.0.0", in.bad[0].text);
	ctl_input_free(&in);
}

TEST(entry_args_with_timeouts)
{
	char text[CTL_PREFIXSTRLEN];
	struct ctl_entry e[32];
	struct bad_args bad;
	size_t n;

	EXPECT_EQ(0, entry_args("10.0.0.1 timeout 60 10.0.0.0/24 2001:db8::1 timeout 0 192.0.2.1 timeout 4294967295",
				true, e, &n, &bad));
	ASSERT_EQ(4, n);
	EXPECT_STREQ("10.0.0.1", ctl_format_prefix(&e[0].a, text, sizeof(text)));
	EXPECT_TRUE(e[0].timed);
	EXPECT_EQ(60, e[0].timeout);
	EXPECT_EQ(0, e[0].arg);
	EXPECT_STREQ("10.0.0.0/24", ctl_format_prefix(&e[1].a, text, sizeof(text)));
	EXPECT_FALSE(e[1].timed);
	EXPECT_EQ(0, e[1].timeout);
	EXPECT_EQ(3, e[1].arg);
	/* timeout 0: a permanent entry, said so (not the set's default). */
	EXPECT_TRUE(e[2].timed);
	EXPECT_EQ(0, e[2].timeout);
	EXPECT_EQ(4, e[2].arg);
	EXPECT_TRUE(e[3].timed);
	EXPECT_EQ(4294967295u, e[3].timeout);
	EXPECT_EQ(7, e[3].arg);
	EXPECT_STREQ("", bad.text);

	/* Every bad operand reported, each once, the good ones kept. */
	EXPECT_EQ(6, entry_args("timeout 5 10.0.0.1 timeout abc 10.0.0.2 timeout 4294967296 10.0.0.3 timeout 1 timeout 2 10.0.0.9/24 timeout 5 10.0.0.4 timeout",
				true, e, &n, &bad));
	EXPECT_STREQ("timeout: 'timeout SECONDS' goes after the address it is for\n"
		     "abc: not a timeout: seconds from 0 (none) to 4294967295, or a duration such as 90s, 15m, 1h30m, 7d\n"
		     "4294967296: timeout past 4294967295 seconds, the longest there is\n"
		     "timeout: a second timeout for the same address\n"
		     "10.0.0.9/24: host bits set; did you mean 10.0.0.0/24?\n"
		     "timeout: 'timeout' without its number of seconds\n",
		     bad.text);
	EXPECT_EQ(4, n);
	EXPECT_EQ(1, e[2].timeout);
	EXPECT_TRUE(e[2].timed);
	EXPECT_FALSE(e[3].timed);

	/* del and test take no timeout: the word is no address. */
	EXPECT_EQ(2, entry_args("10.0.0.1 timeout 5", false, e, &n, &bad));
	EXPECT_STREQ("timeout: not an IPv4 or IPv6 address or prefix\n"
		     "5: not an IPv4 or IPv6 address or prefix\n", bad.text);
	EXPECT_EQ(1, n);
}

TEST(line_timeouts)
{
	static const struct {
		const char *line;
		bool timed;
		uint32_t timeout;
	} good[] = {
		{ "10.0.0.1 timeout 60\n", true, 60 },
		{ "  10.0.0.0/8\ttimeout   0  # permanent\r\n", true, 0 },
		{ "2001:db8::/32 timeout 4294967295;x\n", true, 4294967295u },
		{ "10.0.0.1\n", false, 0 },
	};
	static const struct {
		const char *line, *value;
		enum ctl_parse_err err;
	} bad[] = {
		{ "10.0.0.1 timeout\n", "10.0.0.1 timeout", CTL_PARSE_TIMEOUT_MISSING },
		{ "10.0.0.1 timeout  # c\n", "10.0.0.1 timeout", CTL_PARSE_TIMEOUT_MISSING },
		{ "10.0.0.1 timeout x\n", "10.0.0.1 timeout x", CTL_PARSE_TIMEOUT },
		{ "10.0.0.1 timeout -5\n", "10.0.0.1 timeout -5", CTL_PARSE_TIMEOUT },
		{ "10.0.0.1 timeout 4294967296\n", "10.0.0.1 timeout 4294967296",
		  CTL_PARSE_TIMEOUT_RANGE },
		{ "10.0.0.1 timeout 5 6\n", "10.0.0.1 timeout 5 6", CTL_PARSE_EXTRA },
		{ "10.0.0.1 ttl 5\n", "10.0.0.1 ttl 5", CTL_PARSE_EXTRA },
		{ "10.0.0.5/24 timeout 5\n", "10.0.0.5/24 timeout 5", CTL_PARSE_HOST_BITS },
		{ "timeout 5\n", "timeout 5", CTL_PARSE_EXTRA },
	};
	enum ctl_parse_err err;
	struct ctl_entry e;
	char value[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		ASSERT_EQ(CTL_LINE_ADDR, parse_line_entry(good[i].line, 0, &e,
							  &err, value))
			TH_LOG("line '%s'", good[i].line);
		EXPECT_EQ(good[i].timed, e.timed) TH_LOG("line '%s'", good[i].line);
		EXPECT_EQ(good[i].timeout, e.timeout);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(CTL_LINE_BAD, parse_line_entry(bad[i].line, 0, &e,
							 &err, value))
			TH_LOG("line '%s'", bad[i].line);
		EXPECT_EQ(bad[i].err, err) TH_LOG("line '%s'", bad[i].line);
		EXPECT_STREQ(bad[i].value, value);
	}
}

TEST(set_lines_with_timeout)
{
	char name[CNF_SET_NAME_LEN];
	uint32_t kind = 9, timeout = 9;
	struct ctl_log log;

	EXPECT_EQ(1, ctl_parse_set_line("# cuckoo_nf set f2b block timeout 600\n",
					38, name, &kind, &timeout, &log));
	EXPECT_STREQ("f2b", name);
	EXPECT_EQ(CNF_SET_BLOCK, kind);
	EXPECT_EQ(600, timeout);
	EXPECT_EQ(2, set_line("# cuckoo_nf set ok allow timeout 4294967295\r\n",
			      name, &kind));
	EXPECT_EQ(CNF_SET_ALLOW, kind);
	EXPECT_EQ(1, set_line("# cuckoo_nf set ok allow timeout 0\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block timeout\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block timeout x\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block timeout 4294967296\n",
			       name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block  timeout 5\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block ttl 5\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b timeout 5\n", name, &kind));
}

TEST(set_lines_with_log)
{
	char name[CNF_SET_NAME_LEN];
	uint32_t kind = 9, timeout = 9;
	struct ctl_log log = { 7, 7 };
	const char *l = "# cuckoo_nf set feed block timeout 600 log nflog 65535\n";

	EXPECT_EQ(1, ctl_parse_set_line(l, strlen(l), name, &kind, &timeout,
					&log));
	EXPECT_STREQ("feed", name);
	EXPECT_EQ(CNF_SET_BLOCK, kind);
	EXPECT_EQ(600, timeout);
	EXPECT_EQ(CNF_SET_F_NFLOG, log.flags);
	EXPECT_EQ(65535, log.group);
	l = "# cuckoo_nf set feed block log on\r\n";
	EXPECT_EQ(1, ctl_parse_set_line(l, strlen(l), name, &kind, &timeout,
					&log));
	EXPECT_STREQ("feed", name);
	EXPECT_EQ(0, timeout);
	EXPECT_EQ(CNF_SET_F_LOG, log.flags);
	EXPECT_EQ(0, log.group);
	EXPECT_EQ(3, set_line("# cuckoo_nf set a allow rules-only log on\n", name,
			      &kind));
	EXPECT_EQ(CNF_SET_ALLOW | CTL_KIND_RULES_ONLY, kind);
	/* "off" is never written; a group needs nflog, and fits 16 bits. */
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log off\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log nflog\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log nflog 65536\n", name,
			       &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log nflog -1\n", name,
			       &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log on 5\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log nflog 5 6\n", name,
			       &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log  on\n", name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f block log syslog\n", name,
			       &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f log on\n", name, &kind));
}

TEST(log_words)
{
	char *on[] = { "on" }, *off[] = { "off", "x" }, *nf[] = { "nflog", "0" };
	char *bad[] = { "nflog", "1x" }, *big[] = { "nflog", "65536" };
	char *other[] = { "syslog" }, *alone[] = { "nflog" };
	struct ctl_log log = { 9, 9 };
	char buf[CTL_LOGSTRLEN];

	EXPECT_EQ(1, ctl_log_parse(1, on, &log));
	EXPECT_EQ(CNF_SET_F_LOG, log.flags);
	EXPECT_STREQ("on", ctl_format_log(&log, buf, sizeof(buf)));
	EXPECT_EQ(1, ctl_log_parse(2, off, &log));
	EXPECT_EQ(0, log.flags);
	EXPECT_STREQ("off", ctl_format_log(&log, buf, sizeof(buf)));
	EXPECT_EQ(2, ctl_log_parse(2, nf, &log));
	EXPECT_EQ(CNF_SET_F_NFLOG, log.flags);
	EXPECT_EQ(0, log.group);
	EXPECT_STREQ("nflog 0", ctl_format_log(&log, buf, sizeof(buf)));
	log.group = 65535;
	EXPECT_STREQ("nflog 65535", ctl_format_log(&log, buf, sizeof(buf)));
	EXPECT_EQ(-ERANGE, ctl_log_parse(2, bad, &log));
	EXPECT_EQ(-ERANGE, ctl_log_parse(2, big, &log));
	EXPECT_EQ(-ERANGE, ctl_log_parse(1, alone, &log));
	EXPECT_EQ(-EINVAL, ctl_log_parse(1, other, &log));
	EXPECT_EQ(-EINVAL, ctl_log_parse(0, on, &log));
}

TEST(set_lines_rules_only)
{
	char name[CNF_SET_NAME_LEN];
	uint32_t kind = 9, timeout = 9;
	const char *l = "# cuckoo_nf set f2b block rules-only timeout 600\n";
	struct ctl_log log;

	EXPECT_EQ(1, ctl_parse_set_line(l, strlen(l), name, &kind, &timeout,
					&log));
	EXPECT_STREQ("f2b", name);
	EXPECT_EQ(CNF_SET_BLOCK | CTL_KIND_RULES_ONLY, kind);
	EXPECT_EQ(600, timeout);
	EXPECT_STREQ("block", ctl_set_kind_name(kind));
	EXPECT_EQ(1, set_line("# cuckoo_nf set ok allow rules-only\r\n", name,
			      &kind));
	EXPECT_EQ(CNF_SET_ALLOW | CTL_KIND_RULES_ONLY, kind);
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block rules-onlyx\n", name,
			       &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block rules-only \n", name,
			       &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b block timeout 5 rules-only\n",
			       name, &kind));
	EXPECT_EQ(-1, set_line("# cuckoo_nf set f2b rules-only\n", name, &kind));
}

TEST(input_with_timeouts)
{
	struct ctl_input in;

	ASSERT_EQ(0, read_save(&in, "# cuckoo_nf save\n10.0.0.1\n"
				    "# cuckoo_nf set f2b block timeout 600\n"
				    "10.0.0.2 timeout 30\n10.0.0.3 timeout 0\n"
				    "10.0.0.4\n10.0.0.5 timeout\n"));
	EXPECT_EQ(1, in.nbad);
	EXPECT_EQ(CTL_PARSE_TIMEOUT_MISSING, in.bad[0].err);
	EXPECT_EQ(7, in.bad[0].lineno);
	EXPECT_STREQ("10.0.0.5 timeout", in.bad[0].text);
	ASSERT_EQ(4, in.n);
	EXPECT_EQ(2, in.ntimed);
	EXPECT_FALSE(in.timed[0]);
	EXPECT_TRUE(in.timed[1]);
	EXPECT_EQ(30, in.timeout[1]);
	EXPECT_TRUE(in.timed[2]);
	EXPECT_EQ(0, in.timeout[2]);
	EXPECT_FALSE(in.timed[3]);
	ASSERT_EQ(1, in.nsect);
	EXPECT_EQ(600, in.sect[0].timeout);
	EXPECT_EQ(1, in.sect[0].first);
	ctl_input_free(&in);
}

TEST(iif_patterns)
{
	EXPECT_EQ(NULL, ctl_iif_pattern_error("eth0"));
	EXPECT_EQ(NULL, ctl_iif_pattern_error("veth+"));
	EXPECT_EQ(NULL, ctl_iif_pattern_error("+"));
	EXPECT_EQ(NULL, ctl_iif_pattern_error("lo"));
	EXPECT_EQ(NULL, ctl_iif_pattern_error("0123456789abcde"));
	EXPECT_STREQ("an empty name", ctl_iif_pattern_error(""));
	EXPECT_STREQ("longer than a device name (15 bytes)",
		     ctl_iif_pattern_error("0123456789abcdef"));
	EXPECT_STREQ("not a device name", ctl_iif_pattern_error(".."));
	EXPECT_STREQ("not a device name", ctl_iif_pattern_error(".+"));
	EXPECT_NE(NULL, ctl_iif_pattern_error("a:b"));
	EXPECT_NE(NULL, ctl_iif_pattern_error("a b+"));
	EXPECT_TRUE(ctl_iif_matches("veth+", "veth0"));
	EXPECT_TRUE(ctl_iif_matches("veth+", "veth"));
	EXPECT_FALSE(ctl_iif_matches("veth+", "vet"));
	EXPECT_TRUE(ctl_iif_matches("+", "lo"));
	EXPECT_TRUE(ctl_iif_matches("eth0", "eth0"));
	EXPECT_FALSE(ctl_iif_matches("eth0", "eth01"));
	EXPECT_FALSE(ctl_iif_matches("eth0", "eth"));
}

TEST(marks)
{
	uint32_t mark = 1, mask = 1;

	EXPECT_EQ(NULL, ctl_parse_mark("0x10", &mark, &mask));
	EXPECT_EQ(0x10u, mark);
	EXPECT_EQ(0xffffffffu, mask);
	EXPECT_EQ(NULL, ctl_parse_mark("16/0xf0", &mark, &mask));
	EXPECT_EQ(16u, mark);
	EXPECT_EQ(0xf0u, mask);
	EXPECT_EQ(NULL, ctl_parse_mark("0/1", &mark, &mask));
	EXPECT_EQ(0u, mark);
	EXPECT_EQ(NULL, ctl_parse_mark("0xffffffff", &mark, &mask));
	EXPECT_STREQ("not a number up to 0xffffffff",
		     ctl_parse_mark("0x100000000", &mark, &mask));
	EXPECT_STREQ("not a number up to 0xffffffff",
		     ctl_parse_mark("-1", &mark, &mask));
	EXPECT_STREQ("not a number up to 0xffffffff",
		     ctl_parse_mark("", &mark, &mask));
	EXPECT_STREQ("the mask is not a number up to 0xffffffff",
		     ctl_parse_mark("1/", &mark, &mask));
	EXPECT_STREQ("the mask is 0: no bit to set",
		     ctl_parse_mark("0/0", &mark, &mask));
	EXPECT_STREQ("the mark has bits outside the mask",
		     ctl_parse_mark("0x11/0x10", &mark, &mask));
}

TEST_HARNESS_MAIN
