// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of cuckooctl's output: address text (must round-trip through
 * the parser that 'load' uses), human sizes, stats text and JSON, and the
 * errno texts and exit codes of the CLI contract.
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

static struct cnf_addr addr_of(int family, const char *text)
{
	struct cnf_addr a;

	memset(&a, 0, sizeof(a));
	a.family = family;
	a.prefixlen = family == AF_INET ? 32 : 128;
	inet_pton(family, text, a.addr);
	return a;
}

TEST(addr_canonical_text)
{
	static const struct { int family; const char *in, *out; } cases[] = {
		{ AF_INET, "10.0.0.5", "10.0.0.5" },
		{ AF_INET, "0.0.0.0", "0.0.0.0" },
		{ AF_INET, "255.255.255.255", "255.255.255.255" },
		{ AF_INET6, "2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1" },
		{ AF_INET6, "::", "::" },
		{ AF_INET6, "::1", "::1" },
		{ AF_INET6, "::ffff:10.0.0.1", "::ffff:10.0.0.1" },
		{ AF_INET6, "fe80:0:0:1:0:0:0:1", "fe80:0:0:1::1" },
	};
	char buf[CTL_ADDRSTRLEN];
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		a = addr_of(cases[i].family, cases[i].in);
		EXPECT_STREQ(cases[i].out, ctl_format_addr(&a, buf, sizeof(buf)));
	}
}

TEST(addr_longest_fits)
{
	char buf[CTL_ADDRSTRLEN];
	struct cnf_addr a = addr_of(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");

	EXPECT_STREQ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		     ctl_format_addr(&a, buf, sizeof(buf)));
}

TEST(addr_unknown_family_is_visible)
{
	char buf[CTL_ADDRSTRLEN];
	struct cnf_addr a;

	memset(&a, 0, sizeof(a));
	a.family = 99;
	EXPECT_STREQ("?family99", ctl_format_addr(&a, buf, sizeof(buf)));
}

/* What 'list' prints, 'load' reads back to the same struct. */
TEST(addr_round_trip)
{
	char buf[CTL_ADDRSTRLEN];
	struct cnf_addr a, b;
	unsigned int i, j;

	for (i = 0; i < 2000; i++) {
		memset(&a, 0, sizeof(a));
		if (i & 1) {
			a.family = AF_INET6;
			a.prefixlen = 128;
			/* Runs of zeros in varying places exercise '::'. */
			for (j = 0; j < 16; j++)
				a.addr[j] = (i * 7919 + j * 104729) % 3 ? 0 : (i + j) & 0xff;
		} else {
			a.family = AF_INET;
			a.prefixlen = 32;
			for (j = 0; j < 4; j++)
				a.addr[j] = (i * 2654435761u) >> (8 * j);
		}
		ASSERT_EQ(0, ctl_parse_addr(ctl_format_addr(&a, buf, sizeof(buf)), &b))
			TH_LOG("'%s' does not parse", buf);
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG("'%s' changed", buf);
	}
}

TEST(bytes_human)
{
	static const struct { uint64_t v; const char *text; } cases[] = {
		{ 0, "0 B" }, { 1023, "1023 B" }, { 1024, "1.0 KiB" },
		{ 1536, "1.5 KiB" }, { 64ULL << 20, "64.0 MiB" },
		{ 3ULL << 30, "3.0 GiB" }, { 1ULL << 40, "1.0 TiB" },
		{ UINT64_MAX, "16.0 EiB" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		EXPECT_STREQ(cases[i].text,
			     ctl_format_bytes(cases[i].v, buf, sizeof(buf)));
}

TEST(modes)
{
	EXPECT_STREQ("drop", ctl_mode_name(CNF_MODE_DROP));
	EXPECT_STREQ("monitor", ctl_mode_name(CNF_MODE_MONITOR));
	EXPECT_EQ(NULL, ctl_mode_name(7));
	EXPECT_EQ(CNF_MODE_DROP, ctl_mode_parse("drop"));
	EXPECT_EQ(CNF_MODE_MONITOR, ctl_mode_parse("monitor"));
	EXPECT_EQ(-EINVAL, ctl_mode_parse("Drop"));
	EXPECT_EQ(-EINVAL, ctl_mode_parse(""));
}

static struct cnf_stats sample_stats(void)
{
	struct cnf_stats st;

	memset(&st, 0, sizeof(st));
	st.mode = CNF_MODE_MONITOR;
	st.mem_limit = 64ULL << 20;
	st.v4.entries = 3;
	st.v4.capacity = 4;
	st.v4.bytes = 1536;
	st.v4.grows = 2;
	st.v4.stashed = 1;
	st.v4.checked = 1000;
	st.v4.matched = 10;
	st.v4.dropped = 0;
	st.v6.capacity = 16;
	st.v6.bytes = 512;
	return st;
}

/* Run @print on @st and return what it wrote (caller frees). */
static char *capture(void (*print)(FILE *, const struct cnf_stats *),
		     const struct cnf_stats *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	print(f, st);
	fclose(f);
	return text;
}

TEST(stats_text)
{
	struct cnf_stats st = sample_stats();
	char *text = capture(ctl_print_stats_text, &st);

	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "state:        active\n"));
	EXPECT_NE(NULL, strstr(text, "mode:         monitor\n"));
	EXPECT_NE(NULL, strstr(text, "memory limit: 67108864 bytes (64.0 MiB)\n"));
	EXPECT_NE(NULL, strstr(text, "memory used:  2048 bytes (2.0 KiB)\n"));
	EXPECT_NE(NULL, strstr(text, "ipv4:\n  entries:      3\n  capacity:     4\n"
				      "  load factor:  75.00%\n"
				      "  memory:       1536 bytes (1.5 KiB)\n"
				      "  bytes/entry:  512.00\n"
				      "  grows:        2\n  stashed:      1\n"
				      "  packets:      checked 1000 matched 10 dropped 0\n"));
	/* No entry: no division by zero, a dash. */
	EXPECT_NE(NULL, strstr(text, "ipv6:\n  entries:      0\n  capacity:     16\n"
				      "  load factor:  0.00%\n"
				      "  memory:       512 bytes (512 B)\n"
				      "  bytes/entry:  -\n"));
	free(text);
}

TEST(stats_json_exact)
{
	struct cnf_stats st = sample_stats();
	char *text = capture(ctl_print_stats_json, &st);

	ASSERT_NE(NULL, text);
	EXPECT_STREQ("{\"mode\":\"monitor\",\"mem_limit\":67108864,\"active\":true,"
		     "\"ipv4\":{\"entries\":3,\"capacity\":4,\"load_factor\":0.750000,"
		     "\"bytes\":1536,\"grows\":2,\"stashed\":1,\"checked\":1000,"
		     "\"matched\":10,\"dropped\":0},"
		     "\"ipv6\":{\"entries\":0,\"capacity\":16,\"load_factor\":0.000000,"
		     "\"bytes\":512,\"grows\":0,\"stashed\":0,\"checked\":0,"
		     "\"matched\":0,\"dropped\":0}}\n", text);
	free(text);
}

TEST(stats_json_extremes)
{
	struct cnf_stats st;
	char *text;

	/* All ones: full 64-bit numbers, an unknown mode, no capacity. */
	memset(&st, 0xff, sizeof(st));
	st.v6.capacity = 0;
	text = capture(ctl_print_stats_json, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "{\"mode\":\"unknown\",\"mem_limit\":18446744073709551615,"
				      "\"active\":false,"));
	EXPECT_NE(NULL, strstr(text, "\"load_factor\":1.000000"));
	EXPECT_NE(NULL, strstr(text, "\"capacity\":0,\"load_factor\":0.000000"));
	EXPECT_EQ(NULL, strstr(text, "nan"));
	EXPECT_EQ(NULL, strstr(text, "inf"));
	free(text);
}

TEST(load_factor)
{
	struct cnf_family_stats fs;

	memset(&fs, 0, sizeof(fs));
	EXPECT_EQ(0, ctl_load_factor(&fs) != 0);
	fs.entries = 1;
	fs.capacity = 4;
	EXPECT_EQ(1, ctl_load_factor(&fs) == 0.25);
}

TEST(errno_text)
{
	EXPECT_STREQ("already present", ctl_strerror(EEXIST));
	EXPECT_STREQ("not present", ctl_strerror(ENOENT));
	EXPECT_STREQ("memory limit reached", ctl_strerror(ENOSPC));
	EXPECT_STREQ("permission denied (need CAP_NET_ADMIN)", ctl_strerror(EPERM));
	EXPECT_STREQ("permission denied (need CAP_NET_ADMIN)", ctl_strerror(EACCES));
	EXPECT_STREQ(strerror(EINVAL), ctl_strerror(EINVAL));
}

TEST(exit_codes)
{
	EXPECT_EQ(CTL_EXIT_PERM, ctl_exit_code(EPERM));
	EXPECT_EQ(CTL_EXIT_PERM, ctl_exit_code(EACCES));
	EXPECT_EQ(CTL_EXIT_FAIL, ctl_exit_code(EEXIST));
	EXPECT_EQ(CTL_EXIT_FAIL, ctl_exit_code(ENOSPC));
	EXPECT_EQ(CTL_EXIT_FAIL, ctl_exit_code(EINVAL));
	/* The numbers other engineers' tests rely on. */
	EXPECT_EQ(2, CTL_EXIT_USAGE);
	EXPECT_EQ(3, CTL_EXIT_BADINPUT);
	EXPECT_EQ(5, CTL_EXIT_PERM);
	EXPECT_EQ(6, CTL_EXIT_NODEV);
}

TEST_HARNESS_MAIN
