// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer's parsing, on the host: Go durations, the
 * configuration file, the decision stream's answers (in the shape crowdsec
 * 1.4.6's Local API writes them), and the table of what the set holds.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "crowdsec/cbn.h"
#include "ctl_format.h"

static int64_t dur(const char *s, int *rc)
{
	char err[CBN_ERRLEN];
	int64_t ns = 12345;

	*rc = cbn_duration_parse(s, &ns, err, sizeof(err));
	return ns;
}

TEST(duration_good)
{
	static const struct {
		const char *s;
		int64_t ns;
	} cases[] = {
		{ "0", 0 },
		{ "-0", 0 },
		{ "10s", 10000000000ll },
		{ "4h", 14400000000000ll },
		{ "1m30s", 90000000000ll },
		{ "3h59m58.123s", 14398123000000ll },
		{ "3h59m58.364662666s", 14398364662666ll },
		{ "-1.5s", -1500000000ll },
		{ "-11.3651ms", -11365100ll },
		{ "+2m", 120000000000ll },
		{ "300ms", 300000000ll },
		{ "1us", 1000 },
		{ "1\xc2\xb5s", 1000 },
		{ "1\xce\xbcs", 1000 },
		{ "7ns", 7 },
		{ ".5s", 500000000ll },
		{ "1.s", 1000000000ll },
		{ "1h1h", 7200000000000ll },
		{ "2562047h", 2562047ll * 3600000000000ll },
	};
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int64_t ns = dur(cases[i].s, &rc);

		EXPECT_EQ(0, rc) TH_LOG("%s", cases[i].s);
		EXPECT_EQ(cases[i].ns, ns) TH_LOG("%s", cases[i].s);
	}
}

TEST(duration_bad)
{
	static const char *const bad[] = {
		"", "-", "10", "1x", "s", "1.5", "1h-1m", "10 s", " 10s", "1e3s",
		"9999999999h", "2562048h", "99999999999999999999ns", "1m.", ".s",
		"5S", "1hh",
	};
	char err[CBN_ERRLEN];
	int64_t ns;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		EXPECT_EQ(-1, cbn_duration_parse(bad[i], &ns, err, sizeof(err)))
			TH_LOG("'%s' taken", bad[i]);
		/* The message quotes the bad value. */
		EXPECT_NE(NULL, strstr(err, bad[i])) TH_LOG("%s", err);
	}
}

TEST(duration_secs_round_up)
{
	EXPECT_EQ(14399, cbn_duration_secs(14398123000000ll));
	EXPECT_EQ(14400, cbn_duration_secs(14400000000000ll));
	EXPECT_EQ(1, cbn_duration_secs(1));
	EXPECT_EQ(1, cbn_duration_secs(1000000000ll));
	EXPECT_EQ(2, cbn_duration_secs(1000000001ll));
	EXPECT_EQ(0, cbn_duration_secs(0));
	EXPECT_EQ(0, cbn_duration_secs(-1500000000ll));
	/* What the device gets: at least 1 s, at most a __u32. */
	EXPECT_EQ(1, cbn_timeout_at(100, 100));
	EXPECT_EQ(1, cbn_timeout_at(100, 200));
	EXPECT_EQ(60, cbn_timeout_at(60000000000ll + 5, 5));
	EXPECT_EQ(61, cbn_timeout_at(60000000001ll, 0));
	EXPECT_EQ(UINT32_MAX, cbn_timeout_at(INT64_MAX, 0));
}

static int conf(const char *text, struct cbn_config *c, char *err)
{
	err[0] = '\0';
	return cbn_config_parse(text, "bouncer.yaml", c, err, CBN_ERRLEN);
}

TEST(config_full)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, conf("# CrowdSec bouncer\n"
			  "---\n"
			  "api_url: http://127.0.0.1:8080/\n"
			  "api_key: \"0123abcd\"   # from cscli bouncers add\n"
			  "update_frequency: 1m30s\r\n"
			  "\n"
			  "   # indented comment\n"
			  "log_level: Debug\n"
			  "set: 'cs-bans'\n"
			  "device: /dev/cuckoo_nf_test\n"
			  "insecure_skip_verify: true\n"
			  "disable_ipv6: no\n", &c, err)) TH_LOG("%s", err);
	EXPECT_STREQ("http://127.0.0.1:8080", c.api_url);
	EXPECT_STREQ("0123abcd", c.api_key);
	EXPECT_EQ(90000000000ll, c.update_ns);
	EXPECT_EQ(CBN_DEBUG, c.log_level);
	EXPECT_STREQ("cs-bans", c.set);
	EXPECT_STREQ("/dev/cuckoo_nf_test", c.device);
	EXPECT_TRUE(c.insecure_skip_verify);
	EXPECT_FALSE(c.disable_ipv6);
	cbn_config_free(&c);
}

TEST(config_defaults)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, conf("api_url: https://lapi.example:8080\napi_key: k#1",
			  &c, err)) TH_LOG("%s", err);
	EXPECT_STREQ("https://lapi.example:8080", c.api_url);
	/* '#' starts a comment only after a space. */
	EXPECT_STREQ("k#1", c.api_key);
	EXPECT_EQ(10000000000ll, c.update_ns);
	EXPECT_EQ(CBN_INFO, c.log_level);
	EXPECT_STREQ("crowdsec", c.set);
	EXPECT_STREQ(CNF_DEVICE_PATH, c.device);
	EXPECT_FALSE(c.insecure_skip_verify);
	EXPECT_FALSE(c.disable_ipv6);
	cbn_config_free(&c);
}

TEST(config_errors)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "api_url: http://x\napi_key: k\nmode: nftables\n",
		  "bouncer.yaml:3: mode: unknown key" },
		{ "api_url: http://x\napi_key: k\nblacklists_ipv4: crowdsec-blacklists\n",
		  "bouncer.yaml:3: blacklists_ipv4: unknown key" },
		{ "api_url: http://x\n\napi_key: k\napi_key: j\n",
		  "bouncer.yaml:4: api_key: given twice" },
		{ "api_url: ftp://x\napi_key: k\n",
		  "bouncer.yaml:1: api_url: 'ftp://x': not an http:// or https:// URL" },
		{ "api_url: http://x\napi_key: k\nupdate_frequency: 10\n",
		  "bouncer.yaml:3: update_frequency: '10': a unit" },
		{ "api_url: http://x\napi_key: k\nupdate_frequency: 0s\n",
		  "bouncer.yaml:3: update_frequency: '0s': must be more than 0" },
		{ "api_url: http://x\napi_key: k\nupdate_frequency: -1s\n",
		  "bouncer.yaml:3: update_frequency: '-1s': must be more than 0" },
		{ "api_url: http://x\napi_key: k\nlog_level: loud\n",
		  "bouncer.yaml:3: log_level: 'loud': not a level" },
		{ "api_url: http://x\napi_key: k\nset: a b\n",
		  "bouncer.yaml:3: set: 'a b': not a set name" },
		{ "api_url: http://x\napi_key: k\nset: default\n",
		  "bouncer.yaml:3: set: 'default': the default set is cuckooctl's" },
		{ "api_url: http://x\napi_key: k\ndevice: dev/x\n",
		  "bouncer.yaml:3: device: 'dev/x': not an absolute path" },
		{ "api_url: http://x\napi_key: k\ndisable_ipv6: maybe\n",
		  "bouncer.yaml:3: disable_ipv6: 'maybe': not true or false" },
		{ "api_url: http://x\napi_key:\n",
		  "bouncer.yaml:2: api_key: no value" },
		{ "api_url: http://x\napi_key: \"k\n",
		  "bouncer.yaml:2: api_key: no closing \"" },
		{ "api_url: http://x\napi_key: \"k\" x\n",
		  "bouncer.yaml:2: api_key: text after the quoted value" },
		{ "api_url: http://x\napi_key: [a, b]\n",
		  "bouncer.yaml:2: api_key: '[a, b]': only plain or quoted values" },
		{ "api_url: http://x\napi_key: k\nnftables:\n  ipv4:\n",
		  "bouncer.yaml:3: nftables: unknown key" },
		{ "api_url: http://x\napi_key: k\n  set: x\n",
		  "bouncer.yaml:3: '  set: x': nested values and lists are not read" },
		{ "api_url: http://x\napi_key: k\n- x\n",
		  "bouncer.yaml:3: '- x': nested values and lists" },
		{ "api_url: http://x\napi_key: k\njust text\n",
		  "bouncer.yaml:3: 'just text': not 'key: value'" },
		{ "api_url: http://x\napi_key:k\n",
		  "bouncer.yaml:2: api_key: a space must follow the ':'" },
		{ "api_url: http://x\n",
		  "bouncer.yaml: api_key: missing (get one with 'cscli bouncers add" },
		{ "api_key: k\n", "bouncer.yaml: api_url: missing" },
		{ "api_url: http://x\napi_key: k\x01\n",
		  "bouncer.yaml:2: a control character" },
	};
	struct cbn_config c;
	char err[CBN_ERRLEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(-1, conf(cases[i].text, &c, err))
			TH_LOG("taken: %s", cases[i].text);
		EXPECT_EQ(0, strncmp(err, cases[i].msg, strlen(cases[i].msg)))
			TH_LOG("got '%s', want '%s...'", err, cases[i].msg);
	}
}

TEST(config_file)
{
	char path[] = "/tmp/test_cbn_config.XXXXXX", err[CBN_ERRLEN];
	static const char text[] = "api_url: http://127.0.0.1:8080\napi_key: abc\n";
	struct cbn_config c;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(text) - 1, write(fd, text, sizeof(text) - 1));
	close(fd);
	ASSERT_EQ(0, cbn_config_load(path, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("abc", c.api_key);
	cbn_config_free(&c);
	unlink(path);
	EXPECT_EQ(-1, cbn_config_load(path, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "No such file")) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(err, path, strlen(path))) TH_LOG("%s", err);
}

static const char *pfx(const struct cbn_decision *d, char *buf)
{
	return ctl_format_prefix(&d->addr, buf, CTL_PREFIXSTRLEN);
}

static int stream(const char *json, bool no_ipv6, struct cbn_stream *s,
		  char *err)
{
	err[0] = '\0';
	return cbn_stream_parse(json, strlen(json), no_ipv6, s, err, CBN_ERRLEN);
}

/* An answer as crowdsec 1.4.6 writes it. */
static const char lapi_answer[] =
	"{\"deleted\":[{\"duration\":\"-11.3651ms\",\"id\":1,\"origin\":\"cscli\","
	"\"scenario\":\"manual 'ban' from 'm'\",\"scope\":\"Ip\",\"type\":\"ban\","
	"\"value\":\"192.0.2.5\"}],"
	"\"new\":[{\"duration\":\"1m59.364662666s\",\"id\":3,\"origin\":\"cscli\","
	"\"scenario\":\"manual 'ban' from 'm'\",\"scope\":\"Range\",\"type\":\"ban\","
	"\"value\":\"198.51.100.0/24\"},"
	"{\"duration\":\"2m59.36s\",\"id\":4,\"origin\":\"cscli\",\"scenario\":\"x\","
	"\"scope\":\"Ip\",\"type\":\"captcha\",\"value\":\"2001:db8::1\"},"
	"{\"duration\":\"4m59.3s\",\"id\":2,\"origin\":\"crowdsec\",\"scenario\":\"x\","
	"\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"2001:db8::7\"},"
	"{\"duration\":\"-1.5s\",\"id\":5,\"origin\":\"crowdsec\",\"scenario\":\"x\","
	"\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.9\"},"
	"{\"duration\":\"4h\",\"id\":6,\"origin\":\"CAPI\",\"scenario\":\"x\","
	"\"scope\":\"Country\",\"type\":\"ban\",\"value\":\"FR\"},"
	"{\"duration\":\"4h\",\"id\":7,\"origin\":\"lists\",\"scenario\":\"x\","
	"\"scope\":\"ip\",\"type\":\"BAN\",\"value\":\"203.0.113.7\"}]}\n";

TEST(stream_lapi_answer)
{
	struct cbn_stream s = { 0 };
	char err[CBN_ERRLEN], t[CTL_PREFIXSTRLEN];

	ASSERT_EQ(0, stream(lapi_answer, false, &s, err)) TH_LOG("%s", err);
	ASSERT_EQ(4, s.n);
	EXPECT_TRUE(s.d[0].deleted);
	EXPECT_EQ(1, s.d[0].id);
	EXPECT_STREQ("192.0.2.5", pfx(&s.d[0], t));
	EXPECT_FALSE(s.d[1].deleted);
	EXPECT_EQ(3, s.d[1].id);
	EXPECT_STREQ("198.51.100.0/24", pfx(&s.d[1], t));
	EXPECT_EQ(119364662666ll, s.d[1].ns);
	EXPECT_EQ(120, cbn_duration_secs(s.d[1].ns));
	EXPECT_STREQ("2001:db8::7", pfx(&s.d[2], t));
	EXPECT_EQ(AF_INET6, s.d[2].addr.family);
	EXPECT_EQ(128, s.d[2].addr.prefixlen);
	EXPECT_EQ(300, cbn_duration_secs(s.d[2].ns));
	/* Scopes and types without regard to case. */
	EXPECT_STREQ("203.0.113.7", pfx(&s.d[3], t));
	EXPECT_EQ(14400, cbn_duration_secs(s.d[3].ns));
	EXPECT_EQ(1, s.skips.type);
	EXPECT_EQ(1, s.skips.scope);
	EXPECT_EQ(1, s.skips.expired);
	EXPECT_EQ(0, s.skips.value + s.skips.malformed + s.skips.ipv6);

	/* disable_ipv6: the IPv6 ban is skipped. */
	ASSERT_EQ(0, stream(lapi_answer, true, &s, err)) TH_LOG("%s", err);
	EXPECT_EQ(3, s.n);
	EXPECT_EQ(1, s.skips.ipv6);
	cbn_stream_free(&s);
}

TEST(stream_empty)
{
	static const char *const empty[] = {
		"{\"deleted\":null,\"new\":null}", "{}", "{\"new\":[]}",
		" {\"deleted\":[],\"new\":[]} \r\n",
	};
	struct cbn_stream s = { 0 };
	char err[CBN_ERRLEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(empty); i++) {
		EXPECT_EQ(0, stream(empty[i], false, &s, err)) TH_LOG("%s: %s", empty[i], err);
		EXPECT_EQ(0, s.n);
	}
	cbn_stream_free(&s);
}

TEST(stream_values)
{
	static const struct {
		const char *scope, *value, *want;	/* NULL: skipped */
	} cases[] = {
		{ "Ip", "192.0.2.1", "192.0.2.1" },
		{ "Ip", "2001:db8::1", "2001:db8::1" },
		{ "Ip", "::ffff:192.0.2.1", "192.0.2.1" },
		{ "Ip", "192.0.2.0/24", NULL },
		{ "Ip", "192.0.2.1/32", "192.0.2.1" },
		{ "Ip", "not-an-ip", NULL },
		{ "Ip", "192.0.2.256", NULL },
		{ "Range", "192.0.2.0/24", "192.0.2.0/24" },
		{ "Range", "192.0.2.77/24", "192.0.2.0/24" },
		{ "Range", "2001:db8::/32", "2001:db8::/32" },
		{ "Range", "2001:db8::1/48", "2001:db8::/48" },
		{ "Range", "0.0.0.0/0", NULL },
		{ "Range", "192.0.2.0/33", NULL },
		{ "Range", "192.0.2.1", "192.0.2.1" },
	};
	struct cbn_stream s = { 0 };
	char json[512], err[CBN_ERRLEN], t[CTL_PREFIXSTRLEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(json, sizeof(json),
			 "{\"new\":[{\"duration\":\"1m\",\"id\":1,\"scope\":\"%s\",\"type\":\"ban\",\"value\":\"%s\"}]}",
			 cases[i].scope, cases[i].value);
		ASSERT_EQ(0, stream(json, false, &s, err)) TH_LOG("%s", err);
		if (!cases[i].want) {
			EXPECT_EQ(0, s.n) TH_LOG("%s %s taken", cases[i].scope,
						 cases[i].value);
			EXPECT_EQ(1, s.skips.value);
			continue;
		}
		ASSERT_EQ(1, s.n) TH_LOG("%s %s", cases[i].scope, cases[i].value);
		EXPECT_STREQ(cases[i].want, pfx(&s.d[0], t));
	}
	cbn_stream_free(&s);
}

/* A value that is no decision's prefix is skipped with a reason naming it. */
TEST(decision_value_reasons)
{
	static const struct {
		const char *value, *why;
		bool range;
	} cases[] = {
		{ "192.0.2.0/33", "prefix length past 32, the length of an IPv4 address", true },
		{ "2001:db8::/129", "prefix length past 128, the length of an IPv6 address", true },
		{ "0.0.0.0/0", "/0 would block every IPv4 address", true },
		{ "::/0", "/0 would block every IPv6 address", true },
		{ "192.0.2.0/24", "a prefix, where an Ip decision names one address", false },
		{ "192.0.2.256", "not an IPv4 or IPv6 address or prefix", false },
		{ "192.0.2.1/24", "host bits set; did you mean 192.0.2.0/24?", false },
	};
	char why[CBN_ERRLEN];
	struct cnf_addr a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		why[0] = 0;
		EXPECT_EQ(-1, cbn_decision_value(cases[i].value, cases[i].range,
						 &a, why, sizeof(why)));
		EXPECT_STREQ(cases[i].why, why) TH_LOG("%s", cases[i].value);
	}
	EXPECT_EQ(0, cbn_decision_value("192.0.2.1/24", true, &a, why,
					sizeof(why)));
	EXPECT_EQ(24, a.prefixlen);
}

TEST(stream_malformed_decisions)
{
	static const char *const bad[] = {
		"{\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}",
		"{\"duration\":\"1m\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}",
		"{\"duration\":\"1m\",\"id\":\"1\",\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}",
		"{\"duration\":\"1m\",\"id\":1,\"type\":\"ban\",\"value\":\"192.0.2.1\"}",
		"{\"duration\":\"1m\",\"id\":1,\"scope\":\"Ip\",\"value\":\"192.0.2.1\"}",
		"{\"duration\":\"1m\",\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":7}",
		"{\"duration\":\"soon\",\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}",
		"[1]",
		"\"x\"",
	};
	struct cbn_stream s = { 0 };
	char json[512], err[CBN_ERRLEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* A bad decision is skipped; the good one beside it stays. */
		snprintf(json, sizeof(json),
			 "{\"new\":[%s,{\"duration\":\"1m\",\"id\":2,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.2\"}]}",
			 bad[i]);
		ASSERT_EQ(0, stream(json, false, &s, err)) TH_LOG("%s", err);
		EXPECT_EQ(1, s.n) TH_LOG("%s", bad[i]);
		EXPECT_EQ(1, s.skips.malformed) TH_LOG("%s", bad[i]);
	}
	/* A deleted decision needs no duration. */
	ASSERT_EQ(0, stream("{\"deleted\":[{\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"}]}",
			    false, &s, err));
	EXPECT_EQ(1, s.n);
	EXPECT_TRUE(s.d[0].deleted);
	cbn_stream_free(&s);
}

TEST(stream_bad_answers)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ "", "not JSON" },
		{ "<html>502 Bad Gateway</html>", "not JSON" },
		{ "{\"new\":[", "not JSON: it ends early" },
		{ "{\"new\":[]} x", "text after the JSON value" },
		{ "[]", "not the decision stream's" },
		{ "{\"new\":{}}", "\"new\": not a list of decisions but object" },
		{ "{\"deleted\":\"x\"}", "\"deleted\": not a list of decisions but string" },
	};
	struct cbn_stream s = { 0 };
	char err[CBN_ERRLEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(-1, stream(cases[i].json, false, &s, err))
			TH_LOG("taken: %s", cases[i].json);
		EXPECT_EQ(0, s.n);
		EXPECT_EQ(0, strncmp(err, cases[i].msg, strlen(cases[i].msg)))
			TH_LOG("got '%s', want '%s...'", err, cases[i].msg);
	}
	/* An empty body, as libcurl leaves it: no buffer at all. */
	EXPECT_EQ(-1, cbn_stream_parse(NULL, 0, false, &s, err, sizeof(err)));
	EXPECT_EQ(0, strncmp(err, "not JSON", 8)) TH_LOG("%s", err);
	cbn_stream_free(&s);
}

TEST(table)
{
	struct cbn_table t = { 0 };
	struct cbn_entry *e;
	struct cnf_addr a;
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	a.prefixlen = 32;
	EXPECT_EQ(NULL, cbn_table_get(&t, &a, false));
	/* Past the first growth, every entry found again. */
	for (i = 0; i < 5000; i++) {
		a.addr[2] = i >> 8;
		a.addr[3] = i;
		e = cbn_table_get(&t, &a, true);
		ASSERT_NE(NULL, e);
		e->until = i + 1;
	}
	EXPECT_EQ(5000, t.n);
	for (i = 0; i < 5000; i++) {
		a.addr[2] = i >> 8;
		a.addr[3] = i;
		e = cbn_table_get(&t, &a, false);
		ASSERT_NE(NULL, e);
		EXPECT_EQ(i + 1, e->until);
		EXPECT_EQ(e, cbn_table_get(&t, &a, true));
	}
	/* Entries that ended go; an until of 0 is not in the set. */
	cbn_table_prune(&t, 2500);
	EXPECT_EQ(2500, t.n);
	a.addr[2] = 2499 >> 8;
	a.addr[3] = 2499 & 0xff;
	EXPECT_EQ(NULL, cbn_table_get(&t, &a, false));
	a.addr[2] = 2500 >> 8;
	a.addr[3] = 2500 & 0xff;
	e = cbn_table_get(&t, &a, false);
	ASSERT_NE(NULL, e);
	cbn_table_remove(&t, e);
	EXPECT_EQ(NULL, cbn_table_get(&t, &a, false));
	EXPECT_EQ(2499, t.n);
	cbn_table_clear(&t);
	EXPECT_EQ(0, t.n);
	EXPECT_EQ(NULL, cbn_table_get(&t, &a, false));
}

TEST(deleted_ids)
{
	struct cbn_decision d[3] = {
		{ .id = 9, .deleted = true },
		{ .id = 4, .deleted = false },
		{ .id = 2, .deleted = true },
	};
	struct cbn_stream st = { .d = d, .n = 3 };
	struct cbn_ids ids = { 0 };

	EXPECT_FALSE(cbn_ids_seen(&ids, 9));
	ASSERT_EQ(0, cbn_ids_note(&ids, &st, 100, 50));
	EXPECT_TRUE(cbn_ids_seen(&ids, 9));
	EXPECT_TRUE(cbn_ids_seen(&ids, 2));
	/* Only deleted decisions are noted. */
	EXPECT_FALSE(cbn_ids_seen(&ids, 4));
	EXPECT_EQ(2, ids.n);
	/* 9 again at 140: kept past 150, when 2 is forgotten. */
	st.n = 1;
	ASSERT_EQ(0, cbn_ids_note(&ids, &st, 140, 50));
	EXPECT_EQ(2, ids.n);
	st.n = 0;
	ASSERT_EQ(0, cbn_ids_note(&ids, &st, 160, 50));
	EXPECT_TRUE(cbn_ids_seen(&ids, 9));
	EXPECT_FALSE(cbn_ids_seen(&ids, 2));
	ASSERT_EQ(0, cbn_ids_note(&ids, &st, 191, 50));
	EXPECT_FALSE(cbn_ids_seen(&ids, 9));
	EXPECT_EQ(0, ids.n);
	cbn_ids_free(&ids);
}

TEST_HARNESS_MAIN
