// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of cuckooctl's output: address and prefix text (must
 * round-trip through the parser and file reader that 'load' and 'restore'
 * use), human sizes, stats text and JSON (also from kernels that do not
 * report the lookup figures), and the errno texts and exit codes of the
 * CLI contract.
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

TEST(prefix_text)
{
	static const struct {
		int family;
		const char *addr;
		unsigned int len;
		const char *out;
	} cases[] = {
		{ AF_INET, "10.0.0.5", 32, "10.0.0.5" },
		{ AF_INET, "198.51.100.0", 24, "198.51.100.0/24" },
		{ AF_INET, "128.0.0.0", 1, "128.0.0.0/1" },
		{ AF_INET, "0.0.0.0", 0, "0.0.0.0/0" },
		{ AF_INET6, "2001:db8::1", 128, "2001:db8::1" },
		{ AF_INET6, "2001:0db8:0000::", 48, "2001:db8::/48" },
		{ AF_INET6, "::", 0, "::/0" },
		{ AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", 127,
		  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127" },
	};
	char buf[CTL_PREFIXSTRLEN];
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		a = addr_of(cases[i].family, cases[i].addr);
		a.prefixlen = cases[i].len;
		EXPECT_STREQ(cases[i].out, ctl_format_prefix(&a, buf, sizeof(buf)));
	}
	/* The longest text fits CTL_PREFIXSTRLEN exactly, with its NUL. */
	EXPECT_EQ(CTL_PREFIXSTRLEN - 1,
		  strlen("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/127"));
	/* A buffer too short is cut, never overrun. */
	a = addr_of(AF_INET, "10.0.0.0");
	a.prefixlen = 8;
	EXPECT_STREQ("10.0.0.0/", ctl_format_prefix(&a, buf, 10));
}

/* What 'list' prints, 'load' reads back to the same struct. */
TEST(addr_round_trip)
{
	char buf[CTL_PREFIXSTRLEN];
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
		ASSERT_EQ(CTL_PARSE_OK,
			  ctl_parse_prefix(ctl_format_prefix(&a, buf, sizeof(buf)),
					   0, &b, NULL))
			TH_LOG("'%s' does not parse", buf);
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG("'%s' changed", buf);
	}
}

/* Keep the first @len bits of @a's address, as the kernel stores it. */
static void to_network(struct cnf_addr *a, unsigned int len)
{
	unsigned int i, width = a->family == AF_INET ? 32 : 128;

	for (i = len; i < width; i++)
		a->addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	a->prefixlen = len;
	a->flags = len ? 0 : CNF_ADDR_F_ALL;
}

/* A prefix of every length of both families, from @seed. */
static struct cnf_addr sample_prefix(unsigned int seed, unsigned int len,
				     int family)
{
	struct cnf_addr a;
	unsigned int j, n = family == AF_INET ? 4 : 16;

	memset(&a, 0, sizeof(a));
	a.family = family;
	for (j = 0; j < n; j++)
		/* Zero runs in varying places exercise '::'. */
		a.addr[j] = (seed * 7919 + j * 104729) % 3 ?
			    (uint8_t)((seed + j) * 97) : 0;
	/* Not IPv4-mapped, which the parser refuses. */
	if (family == AF_INET6 && !a.addr[0])
		a.addr[0] = 0x20;
	to_network(&a, len);
	return a;
}

/* Every length, both families: formatted, parsed back, the same struct. */
TEST(prefix_round_trip_every_length)
{
	char buf[CTL_PREFIXSTRLEN];
	unsigned int len, seed, fam;
	struct cnf_addr a, b;

	for (fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;
		unsigned int width = fam ? 128 : 32;

		for (len = 0; len <= width; len++) {
			for (seed = 0; seed < 40; seed++) {
				a = sample_prefix(seed * 1000 + len, len, family);
				ctl_format_prefix(&a, buf, sizeof(buf));
				memset(&b, 0xff, sizeof(b));
				ASSERT_EQ(CTL_PARSE_OK,
					  ctl_parse_prefix(buf, CTL_PARSE_F_ALL, &b, NULL))
					TH_LOG("'%s' does not parse", buf);
				EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)))
					TH_LOG("'%s' changed", buf);
				/* Single addresses print bare. */
				EXPECT_EQ(len == width, !strchr(buf, '/'))
					TH_LOG("'%s'", buf);
			}
		}
	}
}

/*
 * 'save' output read back by the file reader 'restore' and 'load' use:
 * the same prefixes in the same order, the header a comment.
 */
TEST(save_restore_round_trip)
{
	const unsigned int n = 4000;
	struct cnf_addr *set = calloc(n, sizeof(*set));
	char buf[CTL_PREFIXSTRLEN];
	struct ctl_input in;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	ASSERT_NE(NULL, set);
	for (i = 0; i < n; i++) {
		int family = i % 3 ? AF_INET : AF_INET6;

		set[i] = sample_prefix(i, i % (family == AF_INET ? 33 : 129),
				       family);
	}
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	fputs("# cuckoo_nf save\n", f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", ctl_format_prefix(&set[i], buf, sizeof(buf)));
	fclose(f);

	f = fmemopen(text, len, "r");
	ASSERT_NE(NULL, f);
	ctl_input_init(&in, CTL_PARSE_F_ALL);
	ASSERT_EQ(0, ctl_input_read(&in, f));
	fclose(f);
	EXPECT_EQ(0, in.nbad);
	ASSERT_EQ(n, in.n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, memcmp(&set[i], &in.addrs[i], sizeof(set[i])))
			TH_LOG("line %zu: '%s' changed", i + 2,
			       ctl_format_prefix(&set[i], buf, sizeof(buf)));
		EXPECT_EQ(i + 2, in.lineno[i]);
	}
	ctl_input_free(&in);

	/* Without --all-addresses only the /0 lines are refused. */
	f = fmemopen(text, len, "r");
	ASSERT_NE(NULL, f);
	ctl_input_init(&in, 0);
	ASSERT_EQ(0, ctl_input_read(&in, f));
	fclose(f);
	for (i = 0; i < in.nbad; i++)
		EXPECT_EQ(CTL_PARSE_ALL, in.bad[i].err);
	EXPECT_NE(0, in.nbad);
	EXPECT_EQ(n, in.n + in.nbad);
	ctl_input_free(&in);
	free(text);
	free(set);
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
	st.v4.capacity = 512;
	st.v4.bytes = 1536;
	st.v4.grows = 2;
	st.v4.stashed = 1;
	st.v4.checked = 1000;
	st.v4.matched = 10;
	st.v4.dropped = 0;
	st.v4_lookup.prefixes = 3;
	st.v4_lookup.keys = 258;
	st.v4_lookup.lengths = 2;
	st.v4_lookup.tables = 2;
	st.xdp_v4.checked = 500;
	st.xdp_v4.matched = 40;
	st.xdp_v4.dropped = 39;
	st.xdp_v6.checked = 7;
	st.tc_v4.checked = 300;
	st.tc_v4.matched = 20;
	st.tc_v4.dropped = 19;
	st.tc_v6.checked = 5;
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

/* A module without sets: no "sets" key. */
static void stats_json(FILE *f, const struct cnf_stats *st)
{
	ctl_print_stats_json(f, st, NULL, NULL, 0);
}

static const struct cnf_set_info sample_sets[] = {
	{ "default", CNF_SET_BLOCK, 0, 3, 1, 8192, 42, 1, CNF_SET_F_LOG, 0, 0, 0 },
	{ "office.v2-a_b", CNF_SET_ALLOW, 4294967295u, 0, 2, 512, 7, 2, 0, 0, 0,
	  0 },
	{ "odd", 9, 600, 0, 0, 0, 0, 0, CNF_SET_F_NFLOG, 0, 65535, 0 },
};

static void sets_json(FILE *f, const struct cnf_stats *st)
{
	ctl_print_stats_json(f, st, NULL, sample_sets, 3);
}

/* A module with timeouts: its expiry figures before the sets. */
static void expiry_json(FILE *f, const struct cnf_stats *st)
{
	ctl_print_stats_json(f, st, &st->expiry, sample_sets, 1);
}

static void expiry_text(FILE *f, const struct cnf_stats *st)
{
	ctl_print_expiry_text(f, &st->expiry);
}

static void no_expiry_text(FILE *f, const struct cnf_stats *st)
{
	ctl_print_expiry_text(f, NULL);
}

static void sets_text(FILE *f, const struct cnf_stats *st)
{
	ctl_print_sets_text(f, sample_sets, 3);
}

TEST(sets_json_and_text)
{
	struct cnf_stats st = sample_stats();
	char *text = capture(sets_json, &st);

	ASSERT_NE(NULL, text);
	/* The sets close the object, after the families. */
	EXPECT_NE(NULL, strstr(text, "\"tc_dropped\":0,\"rule_checked\":0,\"rule_matched\":0,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":0,\"rule_matched_bytes\":0,\"marked_bytes\":0},\"sets\":["
		  "{\"name\":\"default\",\"kind\":\"block\",\"entries\":4,"
		  "\"v4_entries\":3,\"v6_entries\":1,\"bytes\":8192,\"matched\":42,"
		  "\"timeout\":0,\"timed\":1,\"rules_only\":false,\"rules\":0,"
		  "\"log\":\"on\",\"log_group\":0,\"matched_bytes\":0},"
		  "{\"name\":\"office.v2-a_b\",\"kind\":\"allow\",\"entries\":2,"
		  "\"v4_entries\":0,\"v6_entries\":2,\"bytes\":512,\"matched\":7,"
		  "\"timeout\":4294967295,\"timed\":2,\"rules_only\":false,\"rules\":0,"
		  "\"log\":\"off\",\"log_group\":0,\"matched_bytes\":0},"
		  "{\"name\":\"odd\",\"kind\":\"unknown\",\"entries\":0,"
		  "\"v4_entries\":0,\"v6_entries\":0,\"bytes\":0,\"matched\":0,"
		  "\"timeout\":600,\"timed\":0,\"rules_only\":false,\"rules\":0,"
		  "\"log\":\"nflog\",\"log_group\":65535,\"matched_bytes\":0}]}\n"))
		TH_LOG("%s", text);
	/* No expiry figures from a module without timeouts. */
	EXPECT_EQ(NULL, strstr(text, "expiry"));
	free(text);
	text = capture(sets_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("name           kind         entries        bytes      matched    timeout        timed  rules log         flags\n"
		     "default        block              4         8192           42          -            1      0 on          -\n"
		     "office.v2-a_b  allow              2          512            7 4294967295            2      0 off         -\n"
		     "odd            unknown            0            0            0        600            0      0 nflog 65535 -\n", text);
	free(text);
}

TEST(expiry_json_and_text)
{
	struct cnf_stats st = sample_stats();
	char *text;

	st.expiry.entries = 3;
	st.expiry.bytes = 200;
	st.expiry.expired = 1000;
	st.expiry.late = 4;
	st.expiry.max_late_ms = 1500;
	text = capture(expiry_json, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "\"tc_dropped\":0,\"rule_checked\":0,\"rule_matched\":0,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":0,\"rule_matched_bytes\":0,\"marked_bytes\":0},\"expiry\":{\"entries\":3,"
		  "\"bytes\":200,\"bytes_per_entry\":66.67,\"expired\":1000,"
		  "\"late\":4,\"max_late_ms\":1500},\"sets\":[{\"name\":\"default\""))
		TH_LOG("%s", text);
	free(text);
	text = capture(expiry_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("expiry:\n"
		     "  timed:        3 entries\n"
		     "  memory:       200 bytes (200 B)\n"
		     "  bytes/entry:  66.67\n"
		     "  expired:      1000\n"
		     "  late:         4 (removed over a second late), at most 1500 ms\n",
		     text);
	free(text);
	/* None timed: no division by zero. */
	memset(&st.expiry, 0, sizeof(st.expiry));
	text = capture(expiry_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "  timed:        0 entries\n"
				      "  memory:       0 bytes (0 B)\n"
				      "  bytes/entry:  -\n"));
	free(text);
	text = capture(expiry_json, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "\"bytes_per_entry\":0.00,"));
	free(text);
	text = capture(no_expiry_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("expiry:       timeouts not supported by the loaded module\n",
		     text);
	free(text);
}

TEST(stats_text)
{
	struct cnf_stats st = sample_stats();
	char *text = capture(ctl_print_stats_text, &st);

	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "state:        active\n"));
	EXPECT_NE(NULL, strstr(text, "mode:         monitor\n"));
	EXPECT_NE(NULL, strstr(text, "mode:         monitor\nhooks:        on\n"));
	EXPECT_NE(NULL, strstr(text, "memory limit: 67108864 bytes (64.0 MiB)\n"));
	EXPECT_NE(NULL, strstr(text, "memory used:  2048 bytes (2.0 KiB)\n"));
	/* The load factor counts keys, not prefixes: 258 / 512. */
	EXPECT_NE(NULL, strstr(text, "ipv4:\n  prefixes:     3\n"
				      "  lengths:      2 distinct\n"
				      "  keys:         258 in the lookup tables\n"
				      "  tables:       2 per packet at most\n"
				      "  capacity:     512\n"
				      "  load factor:  50.39%\n"
				      "  memory:       1536 bytes (1.5 KiB)\n"
				      "  bytes/prefix: 512.00\n"
				      "  grows:        2\n  stashed:      1\n"
				      "  packets:      checked 1000 matched 10 dropped 0\n"
				      "  xdp packets:  checked 500 matched 40 dropped 39\n"
				      "  tc packets:   checked 300 matched 20 dropped 19\n"));
	/* No entry: no division by zero, a dash. */
	EXPECT_NE(NULL, strstr(text, "ipv6:\n  prefixes:     0\n"
				      "  lengths:      0 distinct\n"
				      "  keys:         0 in the lookup tables\n"
				      "  tables:       0 per packet at most\n"
				      "  capacity:     16\n"
				      "  load factor:  0.00%\n"
				      "  memory:       512 bytes (512 B)\n"
				      "  bytes/prefix: -\n"));
	EXPECT_NE(NULL, strstr(text, "  packets:      checked 0 matched 0 dropped 0\n"
				      "  xdp packets:  checked 7 matched 0 dropped 0\n"
				      "  tc packets:   checked 5 matched 0 dropped 0\n"));
	free(text);
}

/*
 * A kernel from before prefixes fills the struct's first part only: the
 * lookup figures are zero though entries are not.
 */
TEST(stats_text_older_kernel)
{
	struct cnf_stats st = sample_stats();
	char *text;

	memset(&st.v4_lookup, 0, sizeof(st.v4_lookup));
	st.v4.capacity = 4;
	text = capture(ctl_print_stats_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "ipv4:\n  prefixes:     3\n"
				      "  lookup:       not reported by the loaded module\n"
				      "  capacity:     4\n"
				      "  load factor:  75.00%\n"));
	EXPECT_EQ(NULL, strstr(text, "ipv4:\n  prefixes:     3\n  lengths:"));
	free(text);
}

TEST(stats_json_exact)
{
	struct cnf_stats st = sample_stats();
	char *text = capture(stats_json, &st);

	ASSERT_NE(NULL, text);
	EXPECT_STREQ("{\"mode\":\"monitor\",\"hooks\":\"on\",\"mem_limit\":67108864,"
		     "\"active\":true,\"mark\":0,\"mark_mask\":0,\"iif\":[],"
		     "\"ipv4\":{\"entries\":3,\"capacity\":512,\"load_factor\":0.503906,"
		     "\"bytes\":1536,\"grows\":2,\"stashed\":1,\"checked\":1000,"
		     "\"matched\":10,\"dropped\":0,\"prefixes\":3,\"lengths\":2,"
		     "\"keys\":258,\"tables\":2,\"xdp_checked\":500,"
		     "\"xdp_matched\":40,\"xdp_dropped\":39,\"tc_checked\":300,"
		     "\"tc_matched\":20,\"tc_dropped\":19,\"rule_checked\":0,\"rule_matched\":0,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":0,\"rule_matched_bytes\":0,\"marked_bytes\":0},"
		     "\"ipv6\":{\"entries\":0,\"capacity\":16,\"load_factor\":0.000000,"
		     "\"bytes\":512,\"grows\":0,\"stashed\":0,\"checked\":0,"
		     "\"matched\":0,\"dropped\":0,\"prefixes\":0,\"lengths\":0,"
		     "\"keys\":0,\"tables\":0,\"xdp_checked\":7,\"xdp_matched\":0,"
		     "\"xdp_dropped\":0,\"tc_checked\":5,\"tc_matched\":0,"
		     "\"tc_dropped\":0,\"rule_checked\":0,\"rule_matched\":0,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":0,\"rule_matched_bytes\":0,\"marked_bytes\":0}}\n", text);
	free(text);
}

static void log_text(FILE *f, const struct cnf_stats *st)
{
	ctl_print_log_text(f, st);
}

TEST(stats_log_json_and_text)
{
	struct cnf_stats st = sample_stats();
	char *text = capture(log_text, &st);

	/* A module without logging reports no rate: neither says a thing. */
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("", text);
	free(text);
	text = capture(stats_json, &st);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(NULL, strstr(text, "\"log\""));
	free(text);
	st.logged = 1;
	st.log_suppressed = 18446744073709551615ull;
	st.log_rate = 10;
	st.log_burst = 1000000;
	text = capture(log_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_STREQ("log:          1 line, 18446744073709551615 suppressed (limit 10/s, burst 1000000)\n",
		     text);
	free(text);
	text = capture(stats_json, &st);
	ASSERT_NE(NULL, text);
	/* After the families, before the expiry and the sets. */
	EXPECT_NE(NULL, strstr(text, "\"tc_dropped\":0,\"rule_checked\":0,\"rule_matched\":0,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":0,\"rule_matched_bytes\":0,\"marked_bytes\":0},"
				      "\"log\":{\"lines\":1,"
				      "\"suppressed\":18446744073709551615,"
				      "\"rate\":10,\"burst\":1000000}}\n"));
	free(text);
	st.logged = 2;
	text = capture(log_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "log:          2 lines, "));
	free(text);
}

TEST(stats_bytes_text)
{
	struct cnf_stats st = sample_stats();
	char *text;

	st.bytes_v4 = (struct cnf_byte_stats){ 84000, 840, 84, 0 };
	st.xdp_bytes_v6 = (struct cnf_byte_stats){ 1, 2, 3, 0 };
	st.tc_bytes_v4.dropped = 18446744073709551615ull;
	st.rule_v4 = (struct cnf_path_stats){ 7, 3, 0 };
	st.rule_bytes_v4 = (struct cnf_byte_stats){ 588, 252, 0, 0 };
	text = capture(ctl_print_stats_text, &st);
	ASSERT_NE(NULL, text);
	/* After each family's packets, path by path; the rules drop none. */
	EXPECT_NE(NULL, strstr(text, "  tc packets:   checked 300 matched 20 dropped 19\n"
				      "  rule packets: checked 7 matched 3\n"
				      "  bytes:        checked 84000 matched 840 dropped 84\n"
				      "  xdp bytes:    checked 0 matched 0 dropped 0\n"
				      "  tc bytes:     checked 0 matched 0 dropped 18446744073709551615\n"
				      "  rule bytes:   checked 588 matched 252\n"
				      "ipv6:\n")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "  xdp bytes:    checked 1 matched 2 dropped 3\n"));
	free(text);
	/* In mark mode, the marked bytes too. */
	st.mode = CNF_MODE_MARK;
	st.bytes_v4.marked = 42;
	text = capture(ctl_print_stats_text, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "  bytes:        checked 84000 matched 840 dropped 84 marked 42\n"
				      "  xdp bytes:    checked 0 matched 0 dropped 0\n"));
	free(text);
	text = capture(stats_json, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "\"marked\":0,\"checked_bytes\":84000,"
				      "\"matched_bytes\":840,\"dropped_bytes\":84,"
				      "\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,"
				      "\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,"
				      "\"tc_matched_bytes\":0,"
				      "\"tc_dropped_bytes\":18446744073709551615,"
				      "\"rule_checked_bytes\":588,\"rule_matched_bytes\":252,\"marked_bytes\":42}")) TH_LOG("%s", text);
	free(text);
}

TEST(log_errno_text)
{
	EXPECT_NE(NULL, strstr(ctl_strerror(CTL_ENOLOG), "does not log drops"));
	EXPECT_NE(NULL, strstr(ctl_strerror(CTL_ENOLOGGER), "nfnetlink_log"));
}

TEST(stats_json_older_kernel)
{
	struct cnf_stats st = sample_stats();
	char *text;

	memset(&st.v4_lookup, 0, sizeof(st.v4_lookup));
	st.v4.capacity = 4;
	text = capture(stats_json, &st);
	ASSERT_NE(NULL, text);
	/* Unknown figures are left out, not given as 0; load factor as before. */
	EXPECT_NE(NULL, strstr(text, "\"ipv4\":{\"entries\":3,\"capacity\":4,"
				      "\"load_factor\":0.750000,"));
	EXPECT_NE(NULL, strstr(text, "\"dropped\":0,\"prefixes\":3,\"xdp_checked\":500,"));
	free(text);
}

TEST(stats_json_extremes)
{
	struct cnf_stats st;
	char *text;

	/* All ones: full 64-bit numbers, an unknown mode, no capacity. */
	memset(&st, 0xff, sizeof(st));
	st.v6.capacity = 0;
	text = capture(stats_json, &st);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, "{\"mode\":\"unknown\",\"hooks\":\"off\","
				      "\"mem_limit\":18446744073709551615,"
				      "\"active\":false,"));
	EXPECT_NE(NULL, strstr(text, "\"load_factor\":1.000000"));
	EXPECT_NE(NULL, strstr(text, "\"capacity\":0,\"load_factor\":0.000000"));
	EXPECT_NE(NULL, strstr(text, "\"lengths\":4294967295,\"keys\":18446744073709551615,"
				      "\"tables\":4294967295,\"xdp_checked\":18446744073709551615,"));
	EXPECT_NE(NULL, strstr(text, "\"tc_dropped\":18446744073709551615,"
				      "\"rule_checked\":18446744073709551615,\"rule_matched\":18446744073709551615,\"marked\":18446744073709551615,"
				      "\"checked_bytes\":18446744073709551615,"));
	EXPECT_NE(NULL, strstr(text, "\"tc_dropped_bytes\":18446744073709551615,"
				      "\"rule_checked_bytes\":18446744073709551615,\"rule_matched_bytes\":18446744073709551615,\"marked_bytes\":18446744073709551615}"));
	/* A count past the most: the most, each name cut at its room. */
	EXPECT_NE(NULL, strstr(text, "\"active\":false,\"mark\":4294967295,"
				      "\"mark_mask\":4294967295,\"iif\":[\"\\u00ff\\u00ff"));
	EXPECT_EQ(NULL, strstr(text, "nan"));
	EXPECT_EQ(NULL, strstr(text, "inf"));
	free(text);
}

TEST(load_factor)
{
	struct cnf_family_stats fs;
	struct cnf_lookup_stats ls;

	memset(&fs, 0, sizeof(fs));
	memset(&ls, 0, sizeof(ls));
	EXPECT_EQ(0, ctl_load_factor(&fs, &ls) != 0);
	/* Keys reported: keys / capacity. */
	fs.entries = 1;
	fs.capacity = 4;
	ls.prefixes = 1;
	ls.keys = 2;
	ls.lengths = 1;
	ls.tables = 1;
	EXPECT_TRUE(ctl_lookup_reported(&fs, &ls));
	EXPECT_EQ(1, ctl_load_factor(&fs, &ls) == 0.5);
	/* Not reported: entries / capacity. */
	memset(&ls, 0, sizeof(ls));
	EXPECT_FALSE(ctl_lookup_reported(&fs, &ls));
	EXPECT_EQ(1, ctl_load_factor(&fs, &ls) == 0.25);
	/* An empty family reads the same from any kernel. */
	fs.entries = 0;
	EXPECT_TRUE(ctl_lookup_reported(&fs, &ls));
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

TEST(errno_text_for_a_prefix)
{
	struct cnf_addr a = addr_of(AF_INET, "10.0.0.0");

	/* A single address: the plain text. */
	EXPECT_STREQ(strerror(EINVAL), ctl_strerror_addr(EINVAL, &a));
	a.prefixlen = 8;
	EXPECT_STREQ("prefix refused by the loaded module (a version without prefixes?)",
		     ctl_strerror_addr(EINVAL, &a));
	EXPECT_STREQ("already present", ctl_strerror_addr(EEXIST, &a));
	a = addr_of(AF_INET6, "2001:db8::");
	EXPECT_STREQ(strerror(EINVAL), ctl_strerror_addr(EINVAL, &a));
	a.prefixlen = 32;
	EXPECT_STREQ("prefix refused by the loaded module (a version without prefixes?)",
		     ctl_strerror_addr(EINVAL, &a));
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
