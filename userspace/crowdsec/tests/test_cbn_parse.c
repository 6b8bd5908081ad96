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
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <zlib.h>

#include "kselftest_harness.h"
#include "crowdsec/cbn.h"
#include "ctl_format.h"
#include "ctl_setname.h"

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
	EXPECT_STREQ("cs-bans", c.set4);
	EXPECT_STREQ("cs-bans", c.set6);
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
	EXPECT_STREQ("crowdsec", c.set4);
	EXPECT_STREQ("crowdsec", c.set6);
	EXPECT_STREQ(CNF_DEVICE_PATH, c.device);
	EXPECT_FALSE(c.insecure_skip_verify);
	EXPECT_FALSE(c.disable_ipv6);
	EXPECT_FALSE(c.disable_ipv4);
	EXPECT_TRUE(c.ban);
	EXPECT_EQ(0, c.ipv6_prefix);
	EXPECT_EQ(NULL, c.cert_path);
	EXPECT_EQ(NULL, c.origins);
	EXPECT_EQ(NULL, c.scenarios_containing);
	EXPECT_EQ(0, c.nwarnings);
	cbn_config_free(&c);
}

TEST(config_errors)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "api_url: http://x\n\napi_key: k\napi_key: j\n",
		  "bouncer.yaml:4: api_key: given twice (first on line 3)" },
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
		{ "api_url: http://x\napi_key: k\nblacklists_ipv6: crowdsec/6\n",
		  "bouncer.yaml:3: blacklists_ipv6: 'crowdsec/6': not a set name" },
		{ "api_url: http://x\napi_key: k\ndevice: dev/x\n",
		  "bouncer.yaml:3: device: 'dev/x': not an absolute path" },
		{ "api_url: http://x\napi_key: k\ndisable_ipv6: maybe\n",
		  "bouncer.yaml:3: disable_ipv6: 'maybe': not true or false" },
		{ "api_url: http://x\napi_key: k\ndisable_ipv6: true\ndisable_ipv4: yes\n",
		  "bouncer.yaml: disable_ipv4 and disable_ipv6: both true" },
		{ "api_url: http://x\napi_key: k\nipv6_ban_prefix: 129\n",
		  "bouncer.yaml:3: ipv6_ban_prefix: '129': not a prefix length from 0 (off) to 128" },
		{ "api_url: http://x\napi_key: k\nipv6_ban_prefix: /64\n",
		  "bouncer.yaml:3: ipv6_ban_prefix: '/64': not a prefix length" },
		{ "api_url: http://x\napi_key: k\norigins: {a: b}\n",
		  "bouncer.yaml:3: origins: a mapping, where a list of names is wanted" },
		{ "api_url: http://x\napi_key: k\nscopes: [Ip, [Range]]\n",
		  "bouncer.yaml:3: scopes: a list, where one value is wanted" },
		{ "api_url: http://x\napi_key: k\nlog_mode: syslog\n",
		  "bouncer.yaml:3: log_mode: 'syslog': not a log mode (file, stdout)" },
		{ "api_url: http://x\napi_key: k\nlog_max_size: 10M\n",
		  "bouncer.yaml:3: log_max_size: '10M': not a whole number from 0 to 1048576" },
		{ "api_url: http://x\napi_key: k\nlog_max_backups: -1\n",
		  "bouncer.yaml:3: log_max_backups: '-1': not a whole number from 0 to 1000" },
		{ "api_url: http://x\napi_key: k\ncompress_logs: gz\n",
		  "bouncer.yaml:3: compress_logs: 'gz': not true or false" },
		{ "api_url: http://x\napi_key: k\nprometheus: true\n",
		  "bouncer.yaml:3: prometheus: a value, where a mapping (enabled: ...) is wanted" },
		{ "api_url: http://x\napi_key: k\nprometheus:\n  enabled: sure\n",
		  "bouncer.yaml:4: prometheus.enabled: 'sure': not true or false" },
		{ "api_url: http://x\napi_key: k\nprometheus:\n  listen_port: 65536\n",
		  "bouncer.yaml:4: prometheus.listen_port: '65536': not a whole number from 0 to 65535" },
		{ "api_url: http://x\napi_key: k\nprometheus:\n  listen_port: 0\n",
		  "bouncer.yaml:4: prometheus.listen_port: '0': not a port (1 to 65535)" },
		/* A key emptied is no key. */
		{ "api_url: http://x\napi_key:\n",
		  "bouncer.yaml: api_key: missing (get one with 'cscli bouncers add" },
		{ "api_url:\napi_key: k\n",
		  "bouncer.yaml: api_url: missing" },
		{ "api_url: ''\napi_key: k\n",
		  "bouncer.yaml:1: api_url: no value" },
		{ "api_url: http://x\napi_key: \"k\n",
		  "bouncer.yaml:2: not YAML: found unexpected end of stream while scanning a quoted scalar" },
		{ "api_url: http://x\napi_key: \"k\" x\n",
		  "bouncer.yaml:2: not YAML: did not find expected key" },
		{ "api_url: http://x\napi_key: [a, b]\n",
		  "bouncer.yaml:2: api_key: a list, where one value is wanted" },
		{ "api_url: http://x\napi_key: k\n  set: x\n",
		  "bouncer.yaml:3: not YAML: mapping values are not allowed" },
		{ "api_url: http://x\napi_key: k\n- x\n",
		  "bouncer.yaml:3: not YAML: did not find expected key" },
		{ "api_url: http://x\napi_key: k\njust text\n",
		  "bouncer.yaml:3: not YAML: could not find expected ':'" },
		{ "- api_url: http://x\n",
		  "bouncer.yaml:1: a list, where 'key: value' lines are wanted" },
		{ "api_url: http://x\n",
		  "bouncer.yaml: api_key: missing (get one with 'cscli bouncers add" },
		{ "api_key: k\n", "bouncer.yaml: api_url: missing" },
		{ "", "bouncer.yaml: api_url: missing" },
		{ "api_url: http://x\napi_key: k\x01\n",
		  "bouncer.yaml:2: not YAML: control characters are not allowed" },
		{ "api_url: http://x\napi_key: k\n[a]: b\n",
		  "bouncer.yaml:3: a key that is a list, not a name" },
		/* Aliases that would make a billion nodes of a few lines. */
		{ "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
		  "bouncer.yaml:1: nested too deep or too large (aliases?)" },
		{ "api_url: http://x\ncert_path: /etc/passwd\n",
		  "bouncer.yaml: key_path: missing (a client certificate needs both" },
		{ "api_url: http://x\napi_key: k\ncert_path: /etc/passwd\nkey_path: /etc/passwd\n",
		  "bouncer.yaml: api_key and cert_path: both given" },
		{ "api_url: http://x\ncert_path: /nonexistent/c.pem\nkey_path: /etc/passwd\n",
		  "cert_path: '/nonexistent/c.pem': No such file or directory" },
		{ "api_url: http://x\napi_key: k\nca_cert_path: /nonexistent/ca.pem\n",
		  "ca_cert_path: '/nonexistent/ca.pem': No such file or directory" },
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

/* Does a warning of @c start with @start and hold @part (or NULL)? */
static bool warned(const struct cbn_config *c, const char *start,
		   const char *part)
{
	size_t i;

	for (i = 0; i < c->nwarnings; i++)
		if (!strncmp(c->warnings[i], start, strlen(start)) &&
		    (!part || strstr(c->warnings[i], part)))
			return true;
	return false;
}

static void dump_warnings(struct __test_metadata *_metadata,
			  const struct cbn_config *c)
{
	size_t i;

	for (i = 0; i < c->nwarnings; i++)
		TH_LOG("warning: %s", c->warnings[i]);
}

/* A key nobody knows: a warning naming its line and the nearest key. */
TEST(config_unknown_keys)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\n"
			  "updte_frequency: 5s\n"
			  "disable-ipv6: true\n"
			  "scenario_containing: [ssh]\n"
			  "zzz: 1\n", &c, err)) TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	EXPECT_EQ(4, c.nwarnings);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:3: updte_frequency: unknown key, ignored",
			   "(the nearest known key is update_frequency)"));
	EXPECT_TRUE(warned(&c, "bouncer.yaml:4: disable-ipv6: unknown key",
			   "nearest known key is disable_ipv6"));
	EXPECT_TRUE(warned(&c, "bouncer.yaml:5: scenario_containing: unknown key",
			   "nearest known key is scenarios_containing"));
	EXPECT_TRUE(warned(&c, "bouncer.yaml:6: zzz: unknown key", NULL));
	/* Ignored: the defaults stand. */
	EXPECT_EQ(10000000000ll, c.update_ns);
	EXPECT_FALSE(c.disable_ipv6);
	cbn_config_free(&c);
}

/* log_mode and the log file's keys: upstream's names and Debian's. */
TEST(config_log_file)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\n", &c, err))
		TH_LOG("%s", err);
	EXPECT_FALSE(c.log_to_file);
	EXPECT_EQ(NULL, c.log_file.dir);
	EXPECT_EQ(100ull << 20, c.log_file.max_size);
	EXPECT_EQ(3, c.log_file.max_files);
	EXPECT_EQ(30, c.log_file.max_age);
	EXPECT_TRUE(c.log_file.compress);
	cbn_config_free(&c);

	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\nlog_mode: file\n"
			  "log_dir: /srv/log\nlog_max_size: 5\nlog_max_files: 0\n"
			  "log_max_age: 7\ncompress_logs: false\n", &c, err))
		TH_LOG("%s", err);
	EXPECT_EQ(0, c.nwarnings);
	EXPECT_TRUE(c.log_to_file);
	EXPECT_STREQ("/srv/log", c.log_file.dir);
	EXPECT_EQ(5ull << 20, c.log_file.max_size);
	EXPECT_EQ(0, c.log_file.max_files);
	EXPECT_EQ(7, c.log_file.max_age);
	EXPECT_FALSE(c.log_file.compress);
	cbn_config_free(&c);

	/* 0 MB is upstream's default size; stdout leaves the file unused. */
	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\nlog_mode: stdout\n"
			  "log_max_size: 0\nlog_max_backups: 9\n"
			  "log_compression: false\n", &c, err))
		TH_LOG("%s", err);
	EXPECT_EQ(0, c.nwarnings);
	EXPECT_FALSE(c.log_to_file);
	EXPECT_EQ(100ull << 20, c.log_file.max_size);
	EXPECT_EQ(9, c.log_file.max_files);
	EXPECT_FALSE(c.log_file.compress);
	cbn_config_free(&c);
}

/* @dir/cuckoo-crowdsec-bouncer.log@ext: its size, -1 when missing. */
static long log_size(const char *dir, const char *ext)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" CBN_LOG_FILE "%s", dir, ext);
	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* What the gzipped backup @ext of @dir holds, into @buf. */
static int log_gunzip(const char *dir, const char *ext, char *buf, int len)
{
	char path[512];
	gzFile f;
	int n;

	snprintf(path, sizeof(path), "%s/" CBN_LOG_FILE "%s", dir, ext);
	f = gzopen(path, "rb");
	if (!f)
		return -1;
	n = gzread(f, buf, len - 1);
	gzclose(f);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/*
 * log_mode: file: lines of 51 bytes into files of 210 at most: 4 a
 * file, then a rotation.  Backups shift up, the oldest past max_files go,
 * compressed or not; with max_files 0 all stay, but those past max_age.
 */
TEST(log_file_rotation)
{
	struct cbn_log_file f = { .max_size = 210, .max_files = 2,
				  .compress = true };
	char dir[] = "/tmp/test_cbn_log.XXXXXX", err[CBN_ERRLEN], buf[1024];
	char path[512], cmd[600];
	struct stat st;
	struct timeval old[2] = { { time(NULL) - 40 * 86400, 0 },
				  { time(NULL) - 40 * 86400, 0 } };
	int i;

	ASSERT_NE(NULL, mkdtemp(dir));
	f.dir = dir;
	ASSERT_EQ(0, cbn_log_to_file(&f, err, sizeof(err))) TH_LOG("%s", err);
	cbn_log_level = CBN_INFO;
	for (i = 0; i < 16; i++)
		cbn_log(CBN_INFO, "line %02d of the log file", i);
	/* 16 lines: 4 files, the 1st gone, the 2nd and 3rd backups. */
	EXPECT_LT(0, log_size(dir, ""));
	EXPECT_GE(210, log_size(dir, ""));
	EXPECT_EQ(-1, log_size(dir, ".1"));
	EXPECT_LT(0, log_size(dir, ".1.gz"));
	EXPECT_LT(0, log_size(dir, ".2.gz"));
	EXPECT_EQ(-1, log_size(dir, ".3.gz"));
	/* Each as private as the log. */
	snprintf(path, sizeof(path), "%s/" CBN_LOG_FILE ".1.gz", dir);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	ASSERT_LT(0, log_gunzip(dir, ".1.gz", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "info: line 08 of the log file\n"));
	EXPECT_NE(NULL, strstr(buf, "info: line 11 of the log file\n"));
	ASSERT_LT(0, log_gunzip(dir, ".2.gz", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "info: line 04 of the log file\n"));
	EXPECT_EQ(NULL, strstr(buf, "line 03"));

	/* Keep all, plain: 4 backups after 20 lines; the oldest made old. */
	f.max_files = 0;
	f.compress = false;
	f.max_age = 30;
	snprintf(cmd, sizeof(cmd), "rm -f %s/*", dir);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, cbn_log_to_file(&f, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < 20; i++)
		cbn_log(CBN_INFO, "line %02d of the log file", i);
	EXPECT_LT(0, log_size(dir, ".4"));
	EXPECT_EQ(-1, log_size(dir, ".1.gz"));
	snprintf(path, sizeof(path), "%s/" CBN_LOG_FILE ".4", dir);
	ASSERT_EQ(0, utimes(path, old));
	for (i = 0; i < 4; i++)
		cbn_log(CBN_INFO, "line %02d of the log file", 20 + i);
	/* Moved to .5 by the rotation, then removed for its age. */
	EXPECT_LT(0, log_size(dir, ".4"));
	EXPECT_EQ(-1, log_size(dir, ".5"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
}

/* Firewall keys: accepted, one warning each; DROP and false say nothing. */
TEST(config_firewall_keys)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\n"
			  "mode: iptables\n"
			  "deny_action: REJECT\n"
			  "deny_log: true\n"
			  "iptables_chains:\n  - INPUT\n  - FORWARD\n"
			  "nftables:\n  ipv4:\n    enabled: true\n"
			  "prometheus:\n  enabled: true\n  listen_port: 60601\n"
			  "retry_initial_connect: true\n", &c, err))
		TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	EXPECT_EQ(4, c.nwarnings);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:3: mode: a firewall's setting: not used",
			   "cuckoo_nf drops banned sources in its own netfilter hook"));
	EXPECT_TRUE(warned(&c, "bouncer.yaml:4: deny_action: 'REJECT': cuckoo_nf drops",
			   NULL));
	/* deny_log is the sets' drop log: no warning. */
	EXPECT_FALSE(warned(&c, "", ": deny_log: "));
	EXPECT_TRUE(c.deny_log);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:6: iptables_chains: a firewall's", NULL));
	EXPECT_TRUE(warned(&c, "bouncer.yaml:9: nftables: a firewall's", NULL));
	/* prometheus is served: no warning, upstream's address by default. */
	EXPECT_FALSE(warned(&c, "", ": prometheus"));
	EXPECT_TRUE(c.metrics);
	EXPECT_STREQ("127.0.0.1", c.metrics_addr);
	EXPECT_EQ(60601, c.metrics_port);
	cbn_config_free(&c);

	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\n"
			  "deny_action: drop\ndeny_log: false\nlog_mode: stdout\n"
			  "prometheus:\n  enabled: false\ndaemonize: false\n"
			  "supported_decisions_types:\n  - ban\n", &c, err))
		TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	EXPECT_EQ(0, c.nwarnings);
	EXPECT_FALSE(c.deny_log);
	cbn_config_free(&c);

	/* The lines' prefix is the module's: said. */
	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\n"
			  "deny_log: yes\ndeny_log_prefix: 'crowdsec: '\n", &c, err))
		TH_LOG("%s", err);
	EXPECT_TRUE(c.deny_log);
	EXPECT_EQ(1, c.nwarnings);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:4: deny_log_prefix: not used",
			   "'cuckoo_nf SET: '"));
	cbn_config_free(&c);
}

/* The keys that mean the same here as in crowdsec-firewall-bouncer. */
TEST(config_bouncer_keys)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, conf("api_url: https://lapi:8080/\n"
			  "cert_path: /etc/passwd\nkey_path: /etc/passwd\n"
			  "ca_cert_path: /etc/passwd\n"
			  "origins:\n  - crowdsec\n  - cscli\n"
			  "scopes: [Ip, Range]\n"
			  "scenarios_containing: ssh\n"
			  "scenarios_not_containing:\n  - crowdsecurity/http-probing\n  - 'x&y'\n"
			  "supported_decisions_types: [ban, captcha, throttle]\n"
			  "ipv6_ban_prefix: 64\n"
			  "disable_ipv4: on\n"
			  "blacklists_ipv4: crowdsec-blacklists\n"
			  "blacklists_ipv6: crowdsec6-blacklists\n", &c, err))
		TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	EXPECT_EQ(NULL, c.api_key);
	EXPECT_STREQ("/etc/passwd", c.cert_path);
	EXPECT_STREQ("/etc/passwd", c.key_path);
	EXPECT_STREQ("/etc/passwd", c.ca_cert_path);
	EXPECT_STREQ("crowdsec,cscli", c.origins);
	EXPECT_STREQ("Ip,Range", c.scopes);
	EXPECT_STREQ("ssh", c.scenarios_containing);
	EXPECT_STREQ("crowdsecurity/http-probing,x&y", c.scenarios_not_containing);
	EXPECT_TRUE(c.ban);
	EXPECT_EQ(64, c.ipv6_prefix);
	EXPECT_TRUE(c.disable_ipv4);
	EXPECT_STREQ("crowdsec-blacklists", c.set4);
	EXPECT_STREQ("crowdsec6-blacklists", c.set6);
	EXPECT_EQ(2, c.nwarnings);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:13: supported_decisions_types: 'captcha': cuckoo_nf only drops (ban)",
			   NULL));
	EXPECT_TRUE(warned(&c, "bouncer.yaml:13: supported_decisions_types: 'throttle'",
			   NULL));
	cbn_config_free(&c);

	/* Without ban, nothing is applied: said. */
	ASSERT_EQ(0, conf("api_url: http://x\napi_key: k\n"
			  "supported_decisions_types: [captcha]\n", &c, err));
	EXPECT_FALSE(c.ban);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:3: supported_decisions_types: no 'ban' in the list",
			   NULL));
	cbn_config_free(&c);
}

/* ${VAR} and $VAR from the environment; one not set is kept and said. */
TEST(config_environment)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	setenv("CBN_TEST_KEY", "s3cr3t", 1);
	setenv("CBN_TEST_PORT", "8081", 1);
	unsetenv("CBN_TEST_UNSET");
	ASSERT_EQ(0, conf("api_url: http://127.0.0.1:${CBN_TEST_PORT}/\n"
			  "api_key: ${CBN_TEST_KEY}\n"
			  "set: a$CBN_TEST_PORT\n"
			  "device: /dev/${CBN_TEST_UNSET}x\n"
			  "mode: ${CBN_TEST_UNSET}\n", &c, err)) TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	EXPECT_STREQ("http://127.0.0.1:8081", c.api_url);
	EXPECT_STREQ("s3cr3t", c.api_key);
	EXPECT_STREQ("a8081", c.set4);
	EXPECT_STREQ("/dev/${CBN_TEST_UNSET}x", c.device);
	EXPECT_TRUE(warned(&c, "bouncer.yaml:4: device: $CBN_TEST_UNSET is not set in the environment",
			   "'${CBN_TEST_UNSET}' is kept as written"));
	cbn_config_free(&c);
	unsetenv("CBN_TEST_KEY");
	unsetenv("CBN_TEST_PORT");
}

static int layers(const char *base, const char *local, struct cbn_config *c,
		  char *err)
{
	const char *texts[] = { base, local };
	const char *names[] = { "b.yaml", "b.yaml.local" };

	err[0] = '\0';
	return cbn_config_parse_texts(texts, names, 2, c, err, CBN_ERRLEN);
}

/* FILE.local over FILE: mappings merged, the rest replaced, null clears. */
TEST(config_local_overlay)
{
	struct cbn_config c;
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, layers("api_url: http://x\napi_key: ${CBN_NOPE}\n"
			    "origins: [a, b]\nlog_level: debug\n"
			    "prometheus:\n  enabled: false\n  listen_port: 1\n"
			    "disable_ipv6: true\n",
			    "# the override\napi_key: k2\norigins: [c]\n"
			    "prometheus:\n  enabled: true\n"
			    "disable_ipv6:\nupdate_frequency: 3s\n", &c, err))
		TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	/* Replaced before the expansion: no warning about $CBN_NOPE. */
	EXPECT_STREQ("k2", c.api_key);
	EXPECT_STREQ("c", c.origins);
	EXPECT_EQ(CBN_DEBUG, c.log_level);
	EXPECT_FALSE(c.disable_ipv6);
	EXPECT_EQ(3000000000ll, c.update_ns);
	/* prometheus merged: enabled from .local, the port from the file. */
	EXPECT_EQ(0, c.nwarnings);
	EXPECT_TRUE(c.metrics);
	EXPECT_EQ(1, c.metrics_port);
	cbn_config_free(&c);

	/* An empty .local changes nothing. */
	ASSERT_EQ(0, layers("api_url: http://x\napi_key: k\n", "# nothing\n",
			    &c, err)) TH_LOG("%s", err);
	EXPECT_STREQ("k", c.api_key);
	cbn_config_free(&c);

	/* A mapping against a value: an error naming both places. */
	EXPECT_EQ(-1, layers("api_url: http://x\napi_key: k\nprometheus:\n  enabled: true\n",
			     "prometheus: off\n", &c, err));
	EXPECT_STREQ("b.yaml.local:1: prometheus: a value cannot replace a mapping (b.yaml:4)",
		     err);
	/* A key misspelt in .local is named with its file. */
	ASSERT_EQ(0, layers("api_url: http://x\napi_key: k\n", "\napi_kye: j\n",
			    &c, err)) TH_LOG("%s", err);
	EXPECT_TRUE(warned(&c, "b.yaml.local:2: api_kye: unknown key", "api_key"));
	EXPECT_STREQ("k", c.api_key);
	cbn_config_free(&c);
}

/* Debian 12's crowdsec-firewall-bouncer.yaml and upstream's: warnings only. */
TEST(config_debian_and_upstream_files)
{
	static const char *const debian_warned[] = {
		"mode", "pid_dir", "daemonize", "ipset_type", "iptables_chains",
		"nftables", "pf",
	};
	struct cbn_config c;
	char err[CBN_ERRLEN], want[64];
	size_t i;

	/* As Debian's package installs it, with the .local its postinst writes. */
	ASSERT_EQ(0, cbn_config_load(CBN_FIXTURES "/debian-0.0.25.yaml", &c, err,
				     sizeof(err))) TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	EXPECT_STREQ("http://127.0.0.1:8080", c.api_url);
	EXPECT_STREQ("0123456789abcdef0123456789abcdef", c.api_key);
	EXPECT_EQ(10000000000ll, c.update_ns);
	EXPECT_STREQ("crowdsec-blacklists", c.set4);
	EXPECT_STREQ("crowdsec6-blacklists", c.set6);
	EXPECT_TRUE(c.ban);
	EXPECT_FALSE(c.disable_ipv6);
	/* Its log file: /var/log/, 100 MB, 3 backups, 30 days, gzipped. */
	EXPECT_TRUE(c.log_to_file);
	EXPECT_STREQ("/var/log/", c.log_file.dir);
	EXPECT_EQ(100ull << 20, c.log_file.max_size);
	EXPECT_EQ(3, c.log_file.max_files);
	EXPECT_EQ(30, c.log_file.max_age);
	EXPECT_TRUE(c.log_file.compress);
	EXPECT_TRUE(c.metrics);
	EXPECT_STREQ("127.0.0.1", c.metrics_addr);
	EXPECT_EQ(60601, c.metrics_port);
	EXPECT_EQ(ARRAY_SIZE(debian_warned), c.nwarnings);
	for (i = 0; i < ARRAY_SIZE(debian_warned); i++) {
		snprintf(want, sizeof(want), ": %s: ", debian_warned[i]);
		EXPECT_TRUE(warned(&c, CBN_FIXTURES "/debian-0.0.25.yaml", want))
			TH_LOG("no warning for %s", debian_warned[i]);
	}
	/* mode comes from .local, line 1. */
	EXPECT_TRUE(warned(&c, CBN_FIXTURES "/debian-0.0.25.yaml.local:1: mode: ",
			   NULL));
	EXPECT_FALSE(warned(&c, "", "unknown key"));
	cbn_config_free(&c);

	/* Upstream's, its key from the environment as its docs say. */
	setenv("API_KEY", "from-the-environment", 1);
	unsetenv("BACKEND");
	ASSERT_EQ(0, cbn_config_load(CBN_FIXTURES "/upstream.yaml", &c, err,
				     sizeof(err))) TH_LOG("%s", err);
	dump_warnings(_metadata, &c);
	unsetenv("API_KEY");
	EXPECT_STREQ("from-the-environment", c.api_key);
	EXPECT_STREQ("crowdsec-blacklists", c.set4);
	EXPECT_FALSE(warned(&c, "", "unknown key"));
	EXPECT_TRUE(warned(&c, CBN_FIXTURES "/upstream.yaml:1: mode: a firewall's",
			   NULL));
	EXPECT_TRUE(warned(&c, CBN_FIXTURES "/upstream.yaml:", ": nftables_hooks: "));
	EXPECT_TRUE(warned(&c, CBN_FIXTURES "/upstream.yaml:", ": iptables_add_rule_comments: "));
	/* Its prometheus is off. */
	EXPECT_FALSE(c.metrics);
	cbn_config_free(&c);
}

static const char *pfx(const struct cbn_decision *d, char *buf)
{
	return ctl_format_prefix(&d->addr, buf, CTL_PREFIXSTRLEN);
}

static int stream_f(const char *json, const struct cbn_filter *f,
		    struct cbn_stream *s, char *err)
{
	err[0] = '\0';
	return cbn_stream_parse(json, strlen(json), f, s, err, CBN_ERRLEN);
}

static int stream(const char *json, bool no_ipv6, struct cbn_stream *s,
		  char *err)
{
	struct cbn_filter f = { .no_ipv6 = no_ipv6, .ban = true };

	return stream_f(json, &f, s, err);
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

/* disable_ipv4, supported_decisions_types without ban, ipv6_ban_prefix. */
TEST(stream_filter)
{
	struct cbn_filter f = { .no_ipv4 = true, .ban = true };
	struct cbn_stream s = { 0 };
	char err[CBN_ERRLEN], t[CTL_PREFIXSTRLEN];

	ASSERT_EQ(0, stream_f(lapi_answer, &f, &s, err)) TH_LOG("%s", err);
	/* The IPv6 ban only: the four IPv4 ones (one deleted) left out. */
	ASSERT_EQ(1, s.n);
	EXPECT_STREQ("2001:db8::7", pfx(&s.d[0], t));
	EXPECT_EQ(4, s.skips.ipv4);

	f.no_ipv4 = false;
	f.ban = false;
	ASSERT_EQ(0, stream_f(lapi_answer, &f, &s, err)) TH_LOG("%s", err);
	EXPECT_EQ(0, s.n);
	/* A captcha, and the five bans of scope Ip or Range. */
	EXPECT_EQ(6, s.skips.type);

	f.ban = true;
	f.ipv6_prefix = 64;
	ASSERT_EQ(0, stream_f("{\"new\":["
			      "{\"duration\":\"1m\",\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"2001:db8:1:2:3:4:5:6\"},"
			      "{\"duration\":\"1m\",\"id\":2,\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"2001:db8:9::/96\"},"
			      "{\"duration\":\"1m\",\"id\":3,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"192.0.2.1\"},"
			      "{\"duration\":\"1m\",\"id\":4,\"scope\":\"Range\",\"type\":\"ban\",\"value\":\"2001:db8:8::/48\"}]}",
			      &f, &s, err)) TH_LOG("%s", err);
	ASSERT_EQ(4, s.n);
	/* An Ip decision widened; its own address kept beside. */
	EXPECT_STREQ("2001:db8:1:2::/64", pfx(&s.d[0], t));
	EXPECT_STREQ("2001:db8:1:2:3:4:5:6", ctl_format_prefix(&s.d[0].src, t, sizeof(t)));
	/* Ranges and IPv4 as they are. */
	EXPECT_STREQ("2001:db8:9::/96", pfx(&s.d[1], t));
	EXPECT_STREQ("192.0.2.1", pfx(&s.d[2], t));
	EXPECT_STREQ("2001:db8:8::/48", pfx(&s.d[3], t));

	/* /48, and a length that is not a multiple of 8. */
	f.ipv6_prefix = 48;
	ASSERT_EQ(0, stream_f("{\"new\":[{\"duration\":\"1m\",\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"2001:db8:1:2::1\"}]}",
			      &f, &s, err));
	EXPECT_STREQ("2001:db8:1::/48", pfx(&s.d[0], t));
	f.ipv6_prefix = 61;
	ASSERT_EQ(0, stream_f("{\"new\":[{\"duration\":\"1m\",\"id\":1,\"scope\":\"Ip\",\"type\":\"ban\",\"value\":\"2001:db8:1:ffff::1\"}]}",
			      &f, &s, err));
	EXPECT_STREQ("2001:db8:1:fff8::/61", pfx(&s.d[0], t));
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
	EXPECT_EQ(-1, cbn_stream_parse(NULL, 0, &(struct cbn_filter){ .ban = true },
				       &s, err, sizeof(err)));
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

/* ipv6_ban_prefix: a /64 stands until the last address in it ends. */
TEST(entry_sources)
{
	struct cbn_table t = { 0 };
	struct cnf_addr net = { .family = AF_INET6, .prefixlen = 64 };
	struct cnf_addr a = { .family = AF_INET6, .prefixlen = 128 }, b2;
	struct cbn_entry *e;

	net.addr[0] = 0x20;
	a.addr[0] = 0x20;
	a.addr[15] = 1;
	b2 = a;
	b2.addr[15] = 2;
	e = cbn_table_get(&t, &net, true);
	ASSERT_NE(NULL, e);
	ASSERT_EQ(0, cbn_entry_src_add(e, &a, 500));
	ASSERT_EQ(0, cbn_entry_src_add(e, &b2, 300));
	/* One address twice: the longer kept, still two sources. */
	ASSERT_EQ(0, cbn_entry_src_add(e, &a, 400));
	EXPECT_EQ(2, e->nsrc);
	EXPECT_EQ(500, e->until);
	/* The longer one's decisions end: the entry lasts as the other. */
	cbn_entry_src_del(e, &a, 100);
	EXPECT_EQ(1, e->nsrc);
	EXPECT_EQ(300, e->until);
	/* Deleting an address not in it changes nothing. */
	cbn_entry_src_del(e, &net, 100);
	EXPECT_EQ(1, e->nsrc);
	/* Past its end, the last one goes too. */
	cbn_entry_src_del(e, NULL, 300);
	EXPECT_EQ(0, e->nsrc);
	EXPECT_EQ(0, e->until);
	cbn_table_clear(&t);
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

/* A set per origin: its names, as cbn.h says. */
TEST(origins_sets)
{
	static struct cbn_origins o;
	char err[CBN_ERRLEN], name[32];
	int i, a, b;

	ASSERT_EQ(0, cbn_origins_init(&o, "crowdsec", "crowdsec", err,
				      sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, cbn_origin_id(&o, "crowdsec", "crowdsecurity/ssh-bf"));
	EXPECT_EQ(1, cbn_origin_id(&o, "cscli", NULL));
	EXPECT_EQ(0, cbn_origin_id(&o, "crowdsec", NULL));
	EXPECT_STREQ("crowdsec-crowdsec", o.v[0].set[0]);
	EXPECT_STREQ("crowdsec6-crowdsec", o.v[0].set[1]);
	EXPECT_STREQ("crowdsec-cscli", o.v[1].set[0]);
	/* A list is an origin of its own, cut to fit and told by its hash. */
	a = cbn_origin_id(&o, "lists", "firehol_greensnow");
	b = cbn_origin_id(&o, "lists", "firehol_greenland");
	ASSERT_EQ(2, a);
	ASSERT_EQ(3, b);
	EXPECT_STREQ("lists:firehol_greensnow", o.v[a].name);
	EXPECT_EQ(0, strncmp(o.v[a].set[0], "crowdsec-lists_firehol.", 23))
		TH_LOG("%s", o.v[a].set[0]);
	EXPECT_EQ(31, strlen(o.v[a].set[0]));
	EXPECT_EQ(31, strlen(o.v[a].set[1]));
	EXPECT_STRNE(o.v[a].set[0], o.v[b].set[0]);
	EXPECT_TRUE(ctl_set_name_ok(o.v[a].set[0]));
	EXPECT_TRUE(ctl_set_name_ok(o.v[a].set[1]));
	EXPECT_TRUE(cbn_origins_own(&o, "crowdsec-anything"));
	EXPECT_TRUE(cbn_origins_own(&o, "crowdsec6-cscli"));
	EXPECT_FALSE(cbn_origins_own(&o, "crowdsec"));
	EXPECT_FALSE(cbn_origins_own(&o, "crowdsec-"));
	EXPECT_FALSE(cbn_origins_own(&o, "crowdsecx-cscli"));
	for (i = o.n; i < CBN_ORIGINS_MAX; i++) {
		snprintf(name, sizeof(name), "o%d", i);
		EXPECT_EQ(i, cbn_origin_id(&o, name, NULL));
	}
	EXPECT_EQ(-1, cbn_origin_id(&o, "one-too-many", NULL));
	EXPECT_EQ(1, cbn_origin_id(&o, "cscli", NULL));

	/* Two names, none doubled; a base with no room for an origin. */
	ASSERT_EQ(0, cbn_origins_init(&o, "cs4", "cs6", err, sizeof(err)));
	EXPECT_EQ(0, cbn_origin_id(&o, "CAPI", NULL));
	EXPECT_STREQ("cs4-CAPI", o.v[0].set[0]);
	EXPECT_STREQ("cs6-CAPI", o.v[0].set[1]);
	EXPECT_EQ(-1, cbn_origins_init(&o, "a-set-of-twenty-chars", "x", err,
				       sizeof(err)));
	EXPECT_STREQ("set 'a-set-of-twenty-chars': too long a name for a set per origin (prometheus): at most 20 characters",
		     err);
}

/* With a set per origin, each decision's origin is noted. */
TEST(stream_origins)
{
	static struct cbn_origins o;
	struct cbn_filter f = { .ban = true, .origins = &o };
	struct cbn_stream s = { 0 };
	char err[CBN_ERRLEN];

	ASSERT_EQ(0, cbn_origins_init(&o, "crowdsec", "crowdsec", err,
				      sizeof(err)));
	ASSERT_EQ(0, stream_f(lapi_answer, &f, &s, err)) TH_LOG("%s", err);
	ASSERT_EQ(4, s.n);
	ASSERT_EQ(3, o.n);
	EXPECT_STREQ("cscli", o.v[s.d[0].origin].name);
	EXPECT_STREQ("cscli", o.v[s.d[1].origin].name);
	EXPECT_STREQ("crowdsec", o.v[s.d[2].origin].name);
	EXPECT_STREQ("lists:x", o.v[s.d[3].origin].name);
	EXPECT_EQ(0, s.skips.origins);
	/* Without, every decision is of the one set. */
	ASSERT_EQ(0, stream(lapi_answer, false, &s, err));
	EXPECT_EQ(0, s.d[0].origin + s.d[1].origin + s.d[2].origin +
		  s.d[3].origin);
	cbn_stream_free(&s);
}

/* One prefix in two origins' sets: two entries. */
TEST(table_origins)
{
	struct cbn_table t = { 0 };
	struct cbn_entry *a, *b;
	struct cnf_addr x = { .family = AF_INET, .prefixlen = 32,
			      .addr = { 192, 0, 2, 1 } };

	a = cbn_table_get_origin(&t, &x, 0, true);
	b = cbn_table_get_origin(&t, &x, 1, true);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_NE(a, b);
	EXPECT_EQ(1, b->origin);
	EXPECT_EQ(a, cbn_table_get(&t, &x, false));
	EXPECT_EQ(b, cbn_table_get_origin(&t, &x, 1, false));
	EXPECT_EQ(NULL, cbn_table_get_origin(&t, &x, 2, false));
	EXPECT_EQ(2, t.n);
	cbn_table_remove(&t, a);
	EXPECT_EQ(b, cbn_table_get_origin(&t, &x, 1, false));
	cbn_table_clear(&t);
}

/* The exposition text of /metrics, to the byte. */
TEST(metrics_text)
{
	struct cbn_metrics_origin o[2] = {
		{ .name = "cscli", .banned = { 2, 1 }, .packets = { 7, 0 },
		  .bytes = { 588, 0 } },
		{ .name = "lists:a\"b\\c", .banned = { 0, 3 },
		  .packets = { 0, 5 }, .bytes = { 0, 520 } },
	};
	struct cbn_metrics m = { .o = o, .n = 2, .packets = { 100, 20 },
				 .bytes = { 8400, 2080 } };
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&text, &len);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, cbn_metrics_text(&m, out));
	fclose(out);
	EXPECT_STREQ(
		"# HELP fw_bouncer_banned_ips Prefixes banned now, per origin of their decisions\n"
		"# TYPE fw_bouncer_banned_ips gauge\n"
		"fw_bouncer_banned_ips{origin=\"cscli\",ip_type=\"ipv4\"} 2\n"
		"fw_bouncer_banned_ips{origin=\"cscli\",ip_type=\"ipv6\"} 1\n"
		"fw_bouncer_banned_ips{origin=\"lists:a\\\"b\\\\c\",ip_type=\"ipv4\"} 0\n"
		"fw_bouncer_banned_ips{origin=\"lists:a\\\"b\\\\c\",ip_type=\"ipv6\"} 3\n"
		"# HELP fw_bouncer_dropped_packets Packets whose source the sets of the origin's bans covered (dropped in drop mode but for those an allow set covers)\n"
		"# TYPE fw_bouncer_dropped_packets gauge\n"
		"fw_bouncer_dropped_packets{origin=\"cscli\",ip_type=\"ipv4\"} 7\n"
		"fw_bouncer_dropped_packets{origin=\"cscli\",ip_type=\"ipv6\"} 0\n"
		"fw_bouncer_dropped_packets{origin=\"lists:a\\\"b\\\\c\",ip_type=\"ipv4\"} 0\n"
		"fw_bouncer_dropped_packets{origin=\"lists:a\\\"b\\\\c\",ip_type=\"ipv6\"} 5\n"
		"# HELP fw_bouncer_dropped_bytes Bytes of those packets\n"
		"# TYPE fw_bouncer_dropped_bytes gauge\n"
		"fw_bouncer_dropped_bytes{origin=\"cscli\",ip_type=\"ipv4\"} 588\n"
		"fw_bouncer_dropped_bytes{origin=\"cscli\",ip_type=\"ipv6\"} 0\n"
		"fw_bouncer_dropped_bytes{origin=\"lists:a\\\"b\\\\c\",ip_type=\"ipv4\"} 0\n"
		"fw_bouncer_dropped_bytes{origin=\"lists:a\\\"b\\\\c\",ip_type=\"ipv6\"} 520\n"
		"# HELP fw_bouncer_processed_packets Packets cuckoo_nf looked up (netfilter hooks, XDP and tc programs)\n"
		"# TYPE fw_bouncer_processed_packets gauge\n"
		"fw_bouncer_processed_packets{ip_type=\"ipv4\"} 100\n"
		"fw_bouncer_processed_packets{ip_type=\"ipv6\"} 20\n"
		"# HELP fw_bouncer_processed_bytes Bytes of those packets\n"
		"# TYPE fw_bouncer_processed_bytes gauge\n"
		"fw_bouncer_processed_bytes{ip_type=\"ipv4\"} 8400\n"
		"fw_bouncer_processed_bytes{ip_type=\"ipv6\"} 2080\n", text);
#ifdef CBN_PROMTOOL
	{
		/* Prometheus' own checker takes it without a word. */
		char cmd[512], line[256];
		FILE *p;
		int said = 0;

		snprintf(cmd, sizeof(cmd), "%s check metrics 2>&1 >/dev/null",
			 CBN_PROMTOOL);
		p = popen(cmd, "w");
		ASSERT_NE(NULL, p);
		fputs(text, p);
		EXPECT_EQ(0, pclose(p));
		snprintf(cmd, sizeof(cmd), "echo 'x 1' | %s check metrics 2>&1",
			 CBN_PROMTOOL);
		p = popen(cmd, "r");
		ASSERT_NE(NULL, p);
		while (fgets(line, sizeof(line), p))
			said++;
		/* It does speak up: a metric without HELP is told. */
		EXPECT_NE(0, pclose(p) + said);
	}
#endif
	free(text);
}

TEST_HARNESS_MAIN
