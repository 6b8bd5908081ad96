// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of cuckooctl's parsing: addresses, input lines, whole inputs
 * and sizes.  No device needed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "ctl_format.h"
#include "ctl_parse.h"

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return false;
	return true;
}

TEST(addr_ipv4)
{
	static const unsigned char want[4] = { 10, 0, 0, 5 };
	struct cnf_addr a;

	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(0, ctl_parse_addr("10.0.0.5", &a));
	EXPECT_EQ(AF_INET, a.family);
	EXPECT_EQ(32, a.prefixlen);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(0, memcmp(a.addr, want, 4));
	/* The kernel rejects anything in the 12 bytes an IPv4 address leaves. */
	EXPECT_TRUE(all_zero(a.addr + 4, 12));
}

TEST(addr_ipv6)
{
	struct cnf_addr a;
	unsigned char want[16] = { 0x20, 0x01, 0x0d, 0xb8 };

	want[15] = 1;
	memset(&a, 0xff, sizeof(a));
	ASSERT_EQ(0, ctl_parse_addr("2001:db8::1", &a));
	EXPECT_EQ(AF_INET6, a.family);
	EXPECT_EQ(128, a.prefixlen);
	EXPECT_EQ(0, a.flags);
	EXPECT_EQ(0, memcmp(a.addr, want, 16));

	ASSERT_EQ(0, ctl_parse_addr("::", &a));
	EXPECT_TRUE(all_zero(a.addr, 16));
	ASSERT_EQ(0, ctl_parse_addr("FE80::ABCD", &a));
	/* IPv4-mapped: refused, the IPv4 address left for the message. */
	ASSERT_EQ(-EAFNOSUPPORT, ctl_parse_addr("::ffff:10.0.0.1", &a));
	EXPECT_EQ(0, memcmp(a.addr + 12, "\x0a\x00\x00\x01", 4));
	ASSERT_EQ(-EAFNOSUPPORT, ctl_parse_addr("::ffff:a00:1", &a));
	ASSERT_EQ(0, ctl_parse_addr("::fffe:10.0.0.1", &a));
}

TEST(addr_rejects)
{
	static const char *const bad[] = {
		"", " ", "10.0.0", "10.0.0.256", "10.0.0.1 ", " 10.0.0.1",
		"10.0.0.1/32", "10.0.0.0/24", "2001:db8::1/128", "fe80::1%eth0",
		"2001:db8:::1", "1:2:3:4:5:6:7:8:9", "example.com", "0x0a000001",
		"10.0.0.1.", "-1", "10.0.0.1#x", "::g",
	};
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&a, 0xff, sizeof(a));
		EXPECT_EQ(-EINVAL, ctl_parse_addr(bad[i], &a))
			TH_LOG("accepted '%s'", bad[i]);
		/* A failed parse leaves nothing a caller could send by mistake. */
		EXPECT_TRUE(all_zero(&a, sizeof(a)));
	}
}

static enum ctl_line_kind parse_line(const char *text, struct cnf_addr *a)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", text);
	return ctl_parse_line(buf, strlen(buf), a);
}

TEST(line_kinds)
{
	static const char *const empty[] = {
		"", "\n", "   \n", "\t\r\n", "# comment\n", "   # indented\n",
		"#10.0.0.1\n", "\r\n",
	};
	static const char *const good[] = {
		"10.0.0.1", "10.0.0.1\n", "  10.0.0.1  \n", "\t10.0.0.1\r\n",
		"10.0.0.1 # trailing comment\n", "10.0.0.1#tight\n",
		"2001:db8::1\n", "  ::1\t# loopback\r\n",
	};
	static const char *const bad[] = {
		"10.0.0.1 10.0.0.2\n", "10.0.0.300\n", "hello\n",
		"10.0.0.0/24\n", "10.0.0.1, # list\n", "; 10.0.0.1\n",
	};
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(empty); i++)
		EXPECT_EQ(CTL_LINE_EMPTY, parse_line(empty[i], &a))
			TH_LOG("line '%s'", empty[i]);
	for (i = 0; i < ARRAY_SIZE(good); i++)
		EXPECT_EQ(CTL_LINE_ADDR, parse_line(good[i], &a))
			TH_LOG("line '%s'", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(CTL_LINE_BAD, parse_line(bad[i], &a))
			TH_LOG("line '%s'", bad[i]);
}

TEST(line_with_nul_is_bad)
{
	char line[] = "10.0.0.1\0junk\n";
	struct cnf_addr a;

	EXPECT_EQ(CTL_LINE_BAD, ctl_parse_line(line, sizeof(line) - 1, &a));
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
		"10.0.0.9";		/* no final newline */
	struct ctl_input in;

	ctl_input_init(&in);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text) - 1));
	ASSERT_EQ(4, in.n);
	EXPECT_EQ(2, in.lineno[0]);
	EXPECT_EQ(5, in.lineno[1]);
	EXPECT_EQ(AF_INET6, in.addrs[1].family);
	/* A repeated address is the kernel's to count as already present. */
	EXPECT_EQ(7, in.lineno[2]);
	EXPECT_EQ(8, in.lineno[3]);
	ASSERT_EQ(2, in.nbad);
	EXPECT_EQ(4, in.bad[0].lineno);
	EXPECT_STREQ("bogus line", in.bad[0].text);
	EXPECT_EQ(6, in.bad[1].lineno);
	EXPECT_STREQ("10.0.0.256", in.bad[1].text);
	ctl_input_free(&in);
}

TEST(input_bad_text_is_printable_and_short)
{
	char text[400];
	struct ctl_input in;

	memset(text, 'x', sizeof(text));
	text[3] = '\033';
	text[sizeof(text) - 2] = '\r';
	text[sizeof(text) - 1] = '\n';
	ctl_input_init(&in);
	ASSERT_EQ(0, read_text(&in, text, sizeof(text)));
	ASSERT_EQ(1, in.nbad);
	EXPECT_EQ(CTL_BADLINE_TEXT + 3, strlen(in.bad[0].text));
	EXPECT_EQ('?', in.bad[0].text[3]);
	EXPECT_STREQ("...", in.bad[0].text + CTL_BADLINE_TEXT);
	ctl_input_free(&in);
}

TEST(input_many_lines)
{
	const size_t n = 100000;
	char *text, *p;
	struct ctl_input in;
	size_t i;

	text = malloc(n * 20);
	ASSERT_NE(NULL, text);
	p = text;
	for (i = 0; i < n; i++)
		p += sprintf(p, "10.%zu.%zu.%zu\n", i >> 16, (i >> 8) & 255,
			     i & 255);
	ctl_input_init(&in);
	ASSERT_EQ(0, read_text(&in, text, p - text));
	EXPECT_EQ(n, in.n);
	EXPECT_EQ(0, in.nbad);
	EXPECT_EQ(n, in.lineno[n - 1]);
	/* Line 100000 is 10.1.134.159. */
	EXPECT_EQ(10, in.addrs[n - 1].addr[0]);
	EXPECT_EQ(1, in.addrs[n - 1].addr[1]);
	EXPECT_EQ(134, in.addrs[n - 1].addr[2]);
	EXPECT_EQ(159, in.addrs[n - 1].addr[3]);
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

TEST_HARNESS_MAIN
