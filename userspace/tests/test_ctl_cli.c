// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl itself, run on the host against modules emulated by the
 * ctl_fake_dev.so shim (LD_PRELOAD): one with prefixes, CNF_IOC_MATCH and
 * sets, one from before them.  Checks what the device cannot show in the
 * VM once the module has sets: the fallbacks to the first version's calls
 * and to CNF_IOC_TEST, stats of a module that does not report the lookup
 * figures, and the messages and exit codes around the device calls.
 * Tests of sets keep the fake module's sets in a file across runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifndef CTL_BIN
#error "CTL_BIN: the cuckooctl to run"
#endif
#ifndef FAKE_SO
#error "FAKE_SO: the ioctl shim"
#endif

struct run {
	int status;		/* exit code, or -1 */
	char out[4096], err[4096], log[1024];
};

/* The fake module's state file for the runs of a test, or NULL. */
static const char *fake_state;

static void read_all(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/*
 * cuckooctl -d /dev/null ARGS... under module @kernel ("new", "old"), with
 * @input on stdin.  Returns 0 when it ran.
 */
static int run_ctl(struct run *r, const char *kernel, const char *input,
		   const char *const *args)
{
	char dir[] = "/tmp/test_ctl_cli.XXXXXX";
	char in[64], out[64], err[64], log[64];
	const char *argv[32] = { CTL_BIN, "-d", "/dev/null" };
	size_t n = 3;
	pid_t pid;
	int st, fd;

	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (!mkdtemp(dir))
		return -1;
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, input, strlen(input)) != (ssize_t)strlen(input))
		return -1;
	close(fd);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (!freopen(in, "r", stdin) || !freopen(out, "w", stdout) ||
		    !freopen(err, "w", stderr))
			_exit(127);
		setenv("LD_PRELOAD", FAKE_SO, 1);
		setenv("CNF_FAKE_KERNEL", kernel, 1);
		setenv("CNF_FAKE_LOG", log, 1);
		if (fake_state)
			setenv("CNF_FAKE_STATE", fake_state, 1);
		execv(CTL_BIN, (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	read_all(out, r->out, sizeof(r->out));
	read_all(err, r->err, sizeof(r->err));
	read_all(log, r->log, sizeof(r->log));
	unlink(in);
	unlink(out);
	unlink(err);
	unlink(log);
	rmdir(dir);
	return 0;
}

#define RUN(r, kernel, input, ...)					\
	ASSERT_EQ(0, run_ctl(r, kernel, input,				\
			     (const char *const[]){ __VA_ARGS__, NULL }))

/* A run without input that must exit @rc saying @msg on stderr. */
#define EXPECT_RUN(r, kernel, rc, msg, ...)				\
	do {								\
		RUN(r, kernel, "", __VA_ARGS__);			\
		EXPECT_EQ(rc, (r)->status);				\
		EXPECT_STREQ(msg, (r)->err);				\
	} while (0)

TEST(test_names_the_longest_cover)
{
	struct run r;

	RUN(&r, "new", "", "test", "-s", "default", "10.1.2.3", "10.2.0.1",
	    "192.0.2.7", "2001:db8::1", "10.1.0.0/17", "198.51.100.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("10.1.2.3: present (10.1.0.0/16)\n"
		     "10.2.0.1: present (10.0.0.0/8)\n"
		     "192.0.2.7: present (192.0.2.7)\n"
		     "2001:db8::1: present (2001:db8::/32)\n"
		     "10.1.0.0/17: present (10.1.0.0/16)\n"
		     "198.51.100.1: absent\n", r.out);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("MATCH\nMATCH\nMATCH\nMATCH\nMATCH\nMATCH\n", r.log);

	RUN(&r, "new", "", "test", "-s", "default", "10.9.9.9", "192.0.2.7");
	EXPECT_EQ(0, r.status);
}

/* -ENOTTY for MATCH once, then TEST for every address: present alone. */
TEST(test_falls_back_on_an_older_module)
{
	struct run r;

	RUN(&r, "old", "", "test", "-s", "default", "10.1.2.3", "192.0.2.7",
	    "198.51.100.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("10.1.2.3: present\n192.0.2.7: present\n"
		     "198.51.100.1: absent\n", r.out);
	EXPECT_STREQ("", r.err);
	/* Each call once in the new size, then the first version's. */
	EXPECT_STREQ("MATCH\nMATCH/1\nTEST\nTEST/1\nTEST/1\nTEST/1\n", r.log);

	RUN(&r, "old", "", "test", "-s", "default", "10.0.0.1");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("10.0.0.1: present\n", r.out);
}

TEST(stats_new_and_old_module)
{
	struct run r;

	RUN(&r, "new", "", "stats");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "ipv4:\n  prefixes:     3\n"
				       "  lengths:      3 distinct\n"
				       "  keys:         256 in the lookup tables\n"
				       "  tables:       3 per packet at most\n"
				       "  capacity:     1024\n"
				       "  load factor:  25.00%\n")) TH_LOG("%s", r.out);
	RUN(&r, "old", "", "stats");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "ipv4:\n  prefixes:     3\n"
				       "  lookup:       not reported by the loaded module\n"
				       "  capacity:     1024\n")) TH_LOG("%s", r.out);
	/* A module before XDP: its struct ends early, the rest is zero. */
	EXPECT_NE(NULL, strstr(r.out, "  xdp packets:  checked 0 matched 0 dropped 0\n"
				       "  tc packets:   checked 0 matched 0 dropped 0\n"));
	RUN(&r, "old", "", "stats", "-j");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "\"dropped\":0,\"prefixes\":3,\"xdp_checked\":0,"));
	EXPECT_EQ(NULL, strstr(r.out, "\"keys\""));
	RUN(&r, "new", "", "stats", "-j");
	EXPECT_NE(NULL, strstr(r.out, "\"prefixes\":3,\"lengths\":3,\"keys\":256,"
				       "\"tables\":3,\"xdp_checked\":90,"
				       "\"xdp_matched\":5,\"xdp_dropped\":4,"
				       "\"tc_checked\":70,\"tc_matched\":3,"
				       "\"tc_dropped\":2,\"rule_checked\":50,"
				       "\"rule_matched\":11,\"marked\":0,"
		  "\"checked_bytes\":7560,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":0,\"tc_checked_bytes\":0,\"tc_matched_bytes\":252,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":4200,\"rule_matched_bytes\":924,\"marked_bytes\":0}"));
	EXPECT_NE(NULL, strstr(r.out, "\"tables\":1,\"xdp_checked\":91,"
				       "\"xdp_matched\":0,\"xdp_dropped\":0,"
				       "\"tc_checked\":71,\"tc_matched\":0,"
				       "\"tc_dropped\":0,\"rule_checked\":51,"
				       "\"rule_matched\":12,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":98,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":5304,\"rule_matched_bytes\":1248,\"marked_bytes\":0}"));
}

/* The hook's counters, the XDP path's and the tc path's, each family. */
TEST(stats_path_counters)
{
	struct run r;

	RUN(&r, "new", "", "stats");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "  packets:      checked 0 matched 0 dropped 0\n"
				       "  xdp packets:  checked 90 matched 5 dropped 4\n"
				       "  tc packets:   checked 70 matched 3 dropped 2\n"
				       "  rule packets: checked 50 matched 11\n"
				       "  bytes:        checked 7560 matched 0 dropped 0\n"
				       "  xdp bytes:    checked 0 matched 0 dropped 0\n"
				       "  tc bytes:     checked 0 matched 252 dropped 0\n"
				       "  rule bytes:   checked 4200 matched 924\n"
				       "ipv6:\n")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "  xdp packets:  checked 91 matched 0 dropped 0\n"
				       "  tc packets:   checked 71 matched 0 dropped 0\n"
				       "  rule packets: checked 51 matched 12\n"
				       "  bytes:        checked 0 matched 0 dropped 0\n")) TH_LOG("%s", r.out);
}

/*
 * Only the xdp commands open libbpf: cuckooctl starts without it and the
 * libraries it brings.  ld.so lists what it loads, and stops there.
 */
TEST(starts_without_libbpf)
{
	struct run r;

	setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
	RUN(&r, "new", "", "load");
	unsetenv("LD_TRACE_LOADED_OBJECTS");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "libc.so")) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "libbpf")) TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "libelf")) TH_LOG("%s", r.out);
}

/*
 * xdp: usage errors and devices that are not there, each named, before
 * anything is loaded; no device call to the module.
 */
TEST(xdp_refusals_name_the_value)
{
	struct run r;

	EXPECT_RUN(&r, "new", 2, "cuckooctl: xdp: attach, detach or status needed\n"
		   "Usage: cuckooctl xdp [OPTION...] attach DEV [native|generic] | detach DEV | status\n"
		   "Try 'cuckooctl help xdp' for more.\n", "xdp");
	EXPECT_RUN(&r, "new", 2, "cuckooctl: xdp frob: not a subcommand: attach, detach or status\n"
		   "Usage: cuckooctl xdp [OPTION...] attach DEV [native|generic] | detach DEV | status\n"
		   "Try 'cuckooctl help xdp' for more.\n", "xdp", "frob");
	RUN(&r, "new", "", "xdp", "attach");
	EXPECT_EQ(2, r.status);
	EXPECT_EQ(0, strncmp(r.err, "cuckooctl: xdp attach: a device needed\n", 39));
	RUN(&r, "new", "", "xdp", "attach", "lo", "turbo");
	EXPECT_EQ(2, r.status);
	EXPECT_EQ(0, strncmp(r.err, "cuckooctl: xdp attach lo turbo: not a mode: native or generic\n", 62));
	RUN(&r, "new", "", "xdp", "detach", "lo", "native");
	EXPECT_EQ(2, r.status);
	EXPECT_EQ(0, strncmp(r.err, "cuckooctl: xdp detach native: unexpected argument\n", 50));
	RUN(&r, "new", "", "-j", "xdp", "attach", "lo");
	EXPECT_EQ(2, r.status);
	EXPECT_EQ(0, strncmp(r.err, "cuckooctl: xdp attach: -j is for status only\n", 45));
	EXPECT_RUN(&r, "new", 1, "cuckooctl: xdp attach cnf-none0: no such device\n",
		   "xdp", "attach", "cnf-none0", "native");
	EXPECT_RUN(&r, "new", 1, "cuckooctl: xdp detach cnf-none0: no such device\n",
		   "xdp", "detach", "cnf-none0");
	EXPECT_RUN(&r, "new", 1, "cuckooctl: xdp attach a-name-much-too-long-for-a-device: no such device\n",
		   "xdp", "attach", "a-name-much-too-long-for-a-device");
	EXPECT_STREQ("", r.log);
}

TEST(load_with_a_bad_line_loads_the_rest_and_exits_1)
{
	static const char input[] = "# list\r\n172.16.0.0/12\r\n10.0.0.5/24 ; typo\r\n"
				    "2001:db8:1::/48 ; SBL1\r\n";
	struct run r;

	RUN(&r, "new", input, "load");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("2 added, 0 already present, 1 bad line\n", r.out);
	EXPECT_STREQ("cuckooctl: load: stdin:3: 10.0.0.5/24: host bits set; did you mean 10.0.0.0/24?\n",
		     r.err);
	EXPECT_STREQ("ADD_BATCH\n", r.log);

	/* --strict: the device is not even asked. */
	RUN(&r, "new", input, "load", "--strict", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_STREQ("cuckooctl: load: stdin:3: 10.0.0.5/24: host bits set; did you mean 10.0.0.0/24?\n"
		     "cuckooctl: load: 1 bad line, nothing changed\n", r.err);
	EXPECT_STREQ("", r.log);

	RUN(&r, "new", "10.0.0.0/8\n172.16.0.0/12\n", "load");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("1 added, 1 already present\n", r.out);
}

TEST(add_refusals_and_all_addresses)
{
	struct run r;

	EXPECT_RUN(&r, "new", 3, "cuckooctl: add 10.0.0.5/24: host bits set; did you mean 10.0.0.0/24?\n",
		   "add", "10.0.0.0/8", "10.0.0.5/24");
	EXPECT_STREQ("", r.log);
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add 0.0.0.0/0: /0 is every IPv4 address: give --all-addresses to mean that\n",
		   "add", "0.0.0.0/0");
	RUN(&r, "new", "", "add", "--all-addresses", "0.0.0.0/0", "172.16.0.0/12");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("ADD\nADD\n", r.log);
	/* An older module refuses the prefix; the message says why. */
	EXPECT_RUN(&r, "old", 1, "cuckooctl: add 10.0.0.0/8: prefix refused by the loaded module (a version without prefixes?)\n",
		   "add", "10.0.0.0/8");
}

TEST(restore_takes_a_saved_all_addresses_with_the_option)
{
	static const char saved[] = "# cuckoo_nf save\n0.0.0.0/0\n10.0.0.0/8\n";
	struct run r;

	RUN(&r, "new", saved, "restore", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("", r.log);
	EXPECT_NE(NULL, strstr(r.err, "cuckooctl: restore: stdin:2: 0.0.0.0/0: "));
	RUN(&r, "new", saved, "restore", "--all-addresses", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced the set: 2 entries (was 4)\n", r.out);
	EXPECT_STREQ("SET_LIST\nADD_BATCH replace\n", r.log);
	/* A module without sets: flushed, then loaded (single addresses). */
	RUN(&r, "old", "# cuckoo_nf save\n192.0.2.1\n", "restore", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced the set: 1 entry (was 4)\n", r.out);
	EXPECT_STREQ("SET_LIST\nSTATS\nFLUSH\nADD_BATCH\nADD_BATCH/1\n", r.log);
}

/* The runs of a test share one fake module, fresh from the start. */
static char state_path[64];

static void fresh_module(void)
{
	snprintf(state_path, sizeof(state_path), "/tmp/test_ctl_cli.state.%d",
		 (int)getpid());
	unlink(state_path);
	fake_state = state_path;
}

static void drop_module(void)
{
	char lock[sizeof(state_path) + 8];

	snprintf(lock, sizeof(lock), "%s.lock", state_path);
	unlink(lock);
	unlink(state_path);
	fake_state = NULL;
}

#define PARALLEL_RUNS	8
#define PARALLEL_ADDS	6

/*
 * Runs at the same time share the fake module as they would a real one:
 * none of their adds is lost to another run writing the state back (each
 * run's first request reads the state, and without the state's lock the
 * last run to write would erase what the others added since).
 */
TEST(runs_at_once_lose_no_change)
{
	char addr[PARALLEL_RUNS][PARALLEL_ADDS][24];
	const char *args[PARALLEL_ADDS + 2];
	pid_t pids[PARALLEL_RUNS];
	struct run r;
	int i, j, st;
	size_t lines = 0;
	const char *p;

	fresh_module();
	for (i = 0; i < PARALLEL_RUNS; i++) {
		args[0] = "add";
		for (j = 0; j < PARALLEL_ADDS; j++) {
			snprintf(addr[i][j], sizeof(addr[i][j]),
				 "198.51.100.%d", i * PARALLEL_ADDS + j + 1);
			args[j + 1] = addr[i][j];
		}
		args[PARALLEL_ADDS + 1] = NULL;
		fflush(NULL);
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(run_ctl(&r, "new", "", args) || r.status ? 1 : 0);
	}
	for (i = 0; i < PARALLEL_RUNS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	}
	RUN(&r, "new", "", "list");
	EXPECT_EQ(0, r.status);
	for (p = r.out; (p = strchr(p, '\n')); p++)
		lines++;
	/* The four prefixes the fake module starts with, and every add. */
	EXPECT_EQ(4 + PARALLEL_RUNS * PARALLEL_ADDS, lines);
	for (i = 0; i < PARALLEL_RUNS; i++)
		for (j = 0; j < PARALLEL_ADDS; j++) {
			p = strstr(r.out, addr[i][j]);
			/* 198.51.100.1 is in 198.51.100.12 too: a whole line. */
			while (p && p[strlen(addr[i][j])] != '\n')
				p = strstr(p + 1, addr[i][j]);
			EXPECT_NE(NULL, p)
				TH_LOG("%s lost", addr[i][j]);
		}
	drop_module();
}

TEST(options_anywhere_until_double_dash)
{
	struct run r;

	fresh_module();
	EXPECT_RUN(&r, "new", 1, "cuckooctl: add 10.0.0.0/8: already present\n",
		   "add", "10.0.0.0/8");
	/* After the operand, and -s after it too. */
	RUN(&r, "new", "", "add", "10.0.0.0/8", "--exist", "192.0.2.99");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("ADD exist\nADD exist\n", r.log);
	RUN(&r, "new", "", "del", "198.51.100.1", "--exist", "-q");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_STREQ("", r.err);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: del 198.51.100.1: not present\n",
		   "del", "198.51.100.1");
	/* "--" ends the options: what follows is an operand. */
	RUN(&r, "new", "", "add", "--", "--exist");
	EXPECT_EQ(3, r.status);
	EXPECT_NE(NULL, strstr(r.err, "cuckooctl: add --exist: ")) TH_LOG("%s", r.err);
	EXPECT_STREQ("", r.log);
	RUN(&r, "new", "", "add", "192.0.2.1", "--bogus");
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("cuckooctl: add --bogus: unknown option\n"
		     "Usage: cuckooctl add [OPTION...] PREFIX [timeout SECONDS]...\n"
		     "Try 'cuckooctl help add' for more.\n", r.err);
	RUN(&r, "new", "", "list", "extra");
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "cuckooctl: list extra: unexpected argument\n"));
	RUN(&r, "new", "", "frobnicate");
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "cuckooctl: frobnicate: unknown command\n"));
	/* -s where the command takes no set. */
	RUN(&r, "new", "", "-s", "web", "mode");
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "cuckooctl: mode: takes no set (-s)\n"));
	/* An option another command takes. */
	RUN(&r, "new", "", "list", "--exist");
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("", r.log);
	drop_module();
}

TEST(set_names_checked_before_any_call)
{
	static const char *const bad[] = {
		"", "a/b", "with space", "0123456789012345678901234567890a", "é",
	};
	struct run r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];

		RUN(&r, "new", "", "create", bad[i]);
		EXPECT_EQ(3, r.status);
		snprintf(want, sizeof(want),
			 "cuckooctl: create %s: not a set name (1 to 31 characters of A-Z a-z 0-9 _ . -)\n",
			 bad[i]);
		EXPECT_STREQ(want, r.err);
		EXPECT_STREQ("", r.log);
		RUN(&r, "new", "", "add", "-s", bad[i], "192.0.2.1");
		EXPECT_EQ(3, r.status);
		EXPECT_STREQ("", r.log);
	}
	RUN(&r, "new", "", "create", "0123456789012345678901234567890", "allow");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("SET_CREATE 0123456789012345678901234567890\n", r.log);
	EXPECT_RUN(&r, "new", 3, "cuckooctl: create deny: unknown kind (block or allow)\n",
		   "create", "x", "deny");
}

TEST(sets_lifecycle_and_errors)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "create", "foo");
	EXPECT_EQ(0, r.status);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: create foo: a set named foo exists already\n",
		   "create", "foo", "allow");
	RUN(&r, "new", "", "create", "office", "allow");
	EXPECT_EQ(0, r.status);
	RUN(&r, "new", "", "add", "--set", "foo", "192.0.2.1", "2001:db8::/48");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("ADD foo\nADD foo\n", r.log);
	RUN(&r, "new", "", "-s", "foo", "list");
	EXPECT_STREQ("192.0.2.1\n2001:db8::/48\n", r.out);
	RUN(&r, "new", "", "sets");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("name     kind         entries        bytes      matched    timeout        timed  rules log         flags\n"
		     "default  block              4          512            0          -            0      0 off         -\n"
		     "foo      block              2         1024           10          -            0      0 off         -\n"
		     "office   allow              0         1536           20          -            0      0 off         -\n", r.out);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: add 10.0.0.1: no set named nosuch\n",
		   "add", "-s", "nosuch", "10.0.0.1");
	EXPECT_RUN(&r, "new", 1, "cuckooctl: destroy default: the default set cannot be destroyed\n",
		   "destroy", "default");
	EXPECT_RUN(&r, "new", 1, "cuckooctl: destroy nosuch: no set named nosuch\n",
		   "destroy", "nosuch");
	EXPECT_RUN(&r, "new", 1, "cuckooctl: swap foo office: the sets are of different kinds (block, allow, rules-only)\n",
		   "swap", "foo", "office");
	RUN(&r, "new", "", "swap", "foo", "nosuch");
	EXPECT_STREQ("cuckooctl: swap foo nosuch: no set named nosuch\n", r.err);
	RUN(&r, "new", "", "swap", "default", "foo");
	EXPECT_EQ(0, r.status);
	RUN(&r, "new", "", "list");
	EXPECT_STREQ("192.0.2.1\n2001:db8::/48\n", r.out);
	RUN(&r, "new", "", "flush", "-s", "foo");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("SET_FLUSH foo\n", r.log);
	RUN(&r, "new", "", "destroy", "foo");
	EXPECT_EQ(0, r.status);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: flush foo: no set named foo\n",
		   "flush", "-s", "foo");
	drop_module();
}

TEST(sets_full)
{
	char name[16];
	struct run r;
	int i;

	fresh_module();
	/* The fake module takes 8 sets, the default one included. */
	for (i = 1; i < 8; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		RUN(&r, "new", "", "create", name);
		ASSERT_EQ(0, r.status);
	}
	EXPECT_RUN(&r, "new", 1, "cuckooctl: create s8: no room for another set (at most 256 a namespace, within its memory limit)\n",
		   "create", "s8");
	drop_module();
}

TEST(test_exit_codes_as_grep)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "test", "-q", "10.9.9.9", "192.0.2.7");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.out);
	RUN(&r, "new", "", "test", "10.9.9.9", "198.51.100.1");
	EXPECT_EQ(1, r.status);
	/* No such set: an error, not an answer. */
	EXPECT_RUN(&r, "new", 8, "cuckooctl: test 10.9.9.9: no set named nosuch\n",
		   "test", "-s", "nosuch", "10.9.9.9");
	RUN(&r, "new", "", "test", "bogus");
	EXPECT_EQ(3, r.status);
	RUN(&r, "new", "", "test");
	EXPECT_EQ(2, r.status);
	drop_module();
	/* No module. */
	{
		const char *argv[] = { CTL_BIN, "-d", "/nonexistent/cuckoo_nf",
				       "test", "10.0.0.1", NULL };
		pid_t pid = fork();
		int st;

		ASSERT_LE(0, pid);
		if (!pid) {
			int fd = open("/dev/null", O_WRONLY);

			dup2(fd, 2);
			execv(CTL_BIN, (char *const *)argv);
			_exit(127);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_EQ(6, WEXITSTATUS(st));
	}
}

TEST(replace_refuses_without_calling_the_module)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "192.0.2.1\n10.0.0.5/24\n", "replace", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: replace: stdin:2: 10.0.0.5/24: host bits set; did you mean 10.0.0.0/24?\n"
		     "cuckooctl: replace: 1 bad line, nothing changed\n"
		     "cuckooctl: replace default: nothing sent; the old contents still serve\n",
		     r.err);
	EXPECT_STREQ("", r.log);
	RUN(&r, "new", "# nothing\n\n", "replace", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: replace default: no prefix in the input, refused (--allow-empty empties the set); the old contents still serve\n",
		     r.err);
	EXPECT_STREQ("", r.log);
	RUN(&r, "new", "", "replace", "/nonexistent/list");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("", r.log);
	RUN(&r, "new", "", "list");
	EXPECT_STREQ("10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n", r.out);
	RUN(&r, "new", "", "replace", "--allow-empty", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced the set: 0 entries (was 4)\n", r.out);
	EXPECT_STREQ("SET_LIST\nADD_BATCH replace\n", r.log);
	drop_module();
}

TEST(replace_in_one_step_or_not_at_all)
{
	char big[65 * 16] = "", line[16];
	struct run r;
	int i;

	fresh_module();
	RUN(&r, "new", "", "create", "web");
	RUN(&r, "new", "", "add", "-s", "web", "203.0.113.1");
	RUN(&r, "new", "203.0.113.2\n203.0.113.3\n203.0.113.2\n", "replace",
	    "-s", "web", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced set web: 2 entries (was 1), 1 duplicate line skipped\n",
		     r.out);
	EXPECT_STREQ("SET_LIST\nADD_BATCH web replace\n", r.log);
	RUN(&r, "new", "", "list", "-s", "web");
	EXPECT_STREQ("203.0.113.2\n203.0.113.3\n", r.out);
	/* 65 prefixes: past the fake module's room, at the 65th. */
	for (i = 0; i < 65; i++) {
		snprintf(line, sizeof(line), "198.18.0.%d\n", i);
		strcat(big, line);
	}
	RUN(&r, "new", big, "replace", "-s", "web", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: replace web: line 65 (198.18.0.64): memory limit reached; the old contents still serve\n",
		     r.err);
	RUN(&r, "new", "", "list", "-s", "web");
	EXPECT_STREQ("203.0.113.2\n203.0.113.3\n", r.out);
	RUN(&r, "new", "192.0.2.1\n", "replace", "-s", "nosuch", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: replace nosuch: no set named nosuch\n", r.err);
	drop_module();
}

TEST(restore_of_a_save_of_every_set)
{
	struct run r;
	char saved[4096];

	fresh_module();
	RUN(&r, "new", "", "create", "office", "allow");
	RUN(&r, "new", "", "add", "-s", "office", "10.1.2.0/24");
	RUN(&r, "new", "", "create", "empty");
	RUN(&r, "new", "", "save", "--all");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("# cuckoo_nf save\n"
		     "# cuckoo_nf set default block\n"
		     "10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		     "# cuckoo_nf set office allow\n10.1.2.0/24\n"
		     "# cuckoo_nf set empty block\n", r.out);
	snprintf(saved, sizeof(saved), "%s", r.out);
	/* save -s: that set after its set line; save alone: as always. */
	RUN(&r, "new", "", "save", "-s", "office");
	EXPECT_STREQ("# cuckoo_nf save\n# cuckoo_nf set office allow\n10.1.2.0/24\n",
		     r.out);
	RUN(&r, "new", "", "save");
	EXPECT_STREQ("# cuckoo_nf save\n10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n",
		     r.out);
	/* Into a module that has none of them. */
	drop_module();
	fresh_module();
	RUN(&r, "new", "", "flush");
	RUN(&r, "new", saved, "restore", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced the set: 4 entries (was 0)\n"
		     "replaced set office: 1 entry (was 0)\n"
		     "replaced set empty: 0 entries (was 0)\n", r.out);
	EXPECT_STREQ("SET_LIST\nADD_BATCH replace\nSET_CREATE office\n"
		     "ADD_BATCH office replace\nSET_CREATE empty\n"
		     "ADD_BATCH empty replace\n", r.log);
	RUN(&r, "new", "", "save", "-a");
	EXPECT_STREQ(saved, r.out);
	/* A set of the other kind: refused, and the set keeps its prefixes. */
	RUN(&r, "new", "# cuckoo_nf save\n# cuckoo_nf set office block\n10.9.0.0/16\n",
	    "restore", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: restore office: kind block in the input, allow in the module; the old contents still serve\n",
		     r.err);
	/* A bad set line, or a set twice: nothing is sent. */
	RUN(&r, "new", "# cuckoo_nf save\n# cuckoo_nf set a/b block\n"
	    "# cuckoo_nf set x block\n# cuckoo_nf set x allow\n", "restore", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("", r.log);
	EXPECT_NE(NULL, strstr(r.err, "stdin:2: # cuckoo_nf set a/b block: a set line is"));
	EXPECT_NE(NULL, strstr(r.err, "stdin:4: # cuckoo_nf set x allow: a set given twice"));
	/* --set takes a save of one set, into the set it names. */
	RUN(&r, "new", "# cuckoo_nf save\n# cuckoo_nf set office allow\n10.7.0.0/16\n",
	    "restore", "-s", "guests", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced set guests: 1 entry (was 0)\n", r.out);
	RUN(&r, "new", saved, "restore", "-s", "guests", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: restore guests: the input holds 3 sets; restore it without --set\n",
		     r.err);
	drop_module();
}

TEST(json_of_sets_and_stats)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "create", "office", "allow");
	RUN(&r, "new", "", "sets", "-j");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("[{\"name\":\"default\",\"kind\":\"block\",\"entries\":4,"
		     "\"v4_entries\":3,\"v6_entries\":1,\"bytes\":512,\"matched\":0,"
		     "\"timeout\":0,\"timed\":0,\"rules_only\":false,\"rules\":0,\"log\":\"off\",\"log_group\":0,\"matched_bytes\":0},"
		     "{\"name\":\"office\",\"kind\":\"allow\",\"entries\":0,"
		     "\"v4_entries\":0,\"v6_entries\":0,\"bytes\":1024,\"matched\":10,"
		     "\"timeout\":0,\"timed\":0,\"rules_only\":false,\"rules\":0,\"log\":\"off\",\"log_group\":0,\"matched_bytes\":0}]\n",
		     r.out);
	RUN(&r, "new", "", "-j", "stats");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "\"tc_dropped\":0,\"rule_checked\":51,\"rule_matched\":12,\"marked\":0,"
		  "\"checked_bytes\":0,\"matched_bytes\":0,\"dropped_bytes\":0,\"xdp_checked_bytes\":0,\"xdp_matched_bytes\":0,\"xdp_dropped_bytes\":98,\"tc_checked_bytes\":0,\"tc_matched_bytes\":0,\"tc_dropped_bytes\":0,\"rule_checked_bytes\":5304,\"rule_matched_bytes\":1248,\"marked_bytes\":0},\"log\":{\"lines\":7,\"suppressed\":3,\"rate\":10,\"burst\":20},\"expiry\":{\"entries\":0,"
			       "\"bytes\":0,\"bytes_per_entry\":0.00,\"expired\":7,"
			       "\"late\":2,\"max_late_ms\":1250},"
			       "\"sets\":[{\"name\":\"default\","));
	EXPECT_NE(NULL, strstr(r.out, "\"matched\":10,\"timeout\":0,\"timed\":0,\"rules_only\":false,\"rules\":0,\"log\":\"off\",\"log_group\":0,\"matched_bytes\":0}]}\n"));
	RUN(&r, "new", "", "stats");
	EXPECT_NE(NULL, strstr(r.out, "sets:\nname     kind         entries"));
	drop_module();
}

TEST(old_module_default_set_only)
{
	struct run r;

	RUN(&r, "old", "", "add", "192.0.2.9");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("ADD\nADD/1\n", r.log);
	RUN(&r, "old", "", "list");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n", r.out);
	EXPECT_STREQ("DUMP\nDUMP/1\n", r.log);
	RUN(&r, "old", "192.0.2.10\n", "load", "-s", "default");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("ADD_BATCH\nADD_BATCH/1\n", r.log);
	EXPECT_RUN(&r, "old", 1, "cuckooctl: add 192.0.2.9: the loaded module has no named sets\n",
		   "add", "-s", "foo", "192.0.2.9");
	EXPECT_RUN(&r, "old", 1, "cuckooctl: create foo: the loaded module has no named sets\n",
		   "create", "foo");
	EXPECT_RUN(&r, "old", 1, "cuckooctl: sets: the loaded module has no named sets\n",
		   "sets");
	RUN(&r, "old", "192.0.2.1\n", "replace", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: replace default: the loaded module has no atomic replace (a version without sets); the old contents still serve\n",
		     r.err);
	EXPECT_STREQ("SET_LIST\n", r.log);
	RUN(&r, "old", "", "stats");
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(NULL, strstr(r.out, "sets:"));
	RUN(&r, "old", "", "save", "--all");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("# cuckoo_nf save\n10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n",
		     r.out);
}

TEST(save_all_and_restore_all_keep_every_set)
{
	char dir[] = "/tmp/test_ctl_cli.dir.XXXXXX", path[96];
	struct run r;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	fresh_module();
	RUN(&r, "new", "", "create", "office", "allow");
	RUN(&r, "new", "", "add", "-s", "office", "10.1.2.0/24", "2001:db8:5::/48");
	RUN(&r, "new", "", "create", "gone");
	RUN(&r, "new", "", "save-all", dir);
	EXPECT_EQ(0, r.status);
	snprintf(path, sizeof(path), "%s/office.list", dir);
	f = fopen(path, "re");
	ASSERT_NE(NULL, f);
	{
		char text[256] = "";

		EXPECT_LT(0, (int)fread(text, 1, sizeof(text) - 1, f));
		EXPECT_STREQ("# cuckoo_nf save\n# cuckoo_nf set office allow\n"
			     "10.1.2.0/24\n2001:db8:5::/48\n"
			     "# cuckoo_nf end 2 entries\n", text);
	}
	fclose(f);
	/* A set destroyed: its file goes at the next save-all. */
	RUN(&r, "new", "", "destroy", "gone");
	RUN(&r, "new", "", "save-all", dir);
	EXPECT_EQ(0, r.status);
	snprintf(path, sizeof(path), "%s/gone.list", dir);
	EXPECT_NE(0, access(path, F_OK));
	EXPECT_NE(NULL, strstr(r.out, "gone: no such set any more, removed ")) TH_LOG("%s", r.out);
	/* Into a module without them: created with their kind. */
	drop_module();
	fresh_module();
	RUN(&r, "new", "", "flush");
	RUN(&r, "new", "", "restore-all", dir);
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced the set: 4 entries (was 0)\n"
		     "replaced set office: 2 entries (was 0)\n", r.out);
	RUN(&r, "new", "", "sets");
	EXPECT_NE(NULL, strstr(r.out, "\noffice   allow              2 "));
	/* A file saved for another set is not this set's. */
	snprintf(path, sizeof(path), "%s/other.list", dir);
	f = fopen(path, "we");
	ASSERT_NE(NULL, f);
	fputs("# cuckoo_nf save\n# cuckoo_nf set office allow\n10.0.0.1\n"
	      "# cuckoo_nf end 1 entries\n", f);
	fclose(f);
	RUN(&r, "new", "", "restore-all", dir);
	EXPECT_EQ(3, r.status);
	EXPECT_NE(NULL, strstr(r.err, "other.list: not a complete save (not the set's own save)"));
	drop_module();
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	EXPECT_EQ(0, system(path));
}

#define TIMEOUTS_NOT_SUPPORTED \
	"the loaded module does not support timeouts (a version without them)"

TEST(add_with_a_timeout_per_address)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "add", "10.9.0.1", "timeout", "60", "10.9.0.2",
	    "192.0.2.50", "timeout", "0");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	/* Asked once whether the module has timeouts, then one call each. */
	EXPECT_STREQ("SET_CREATE default timeout=1\nADD timeout=60\nADD\n"
		     "ADD timeout=0\n", r.log);
	RUN(&r, "new", "", "list");
	EXPECT_STREQ("10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		     "10.9.0.1 timeout 60\n10.9.0.2\n192.0.2.50\n", r.out);
	RUN(&r, "new", "", "test", "10.9.0.1", "10.9.0.2");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("10.9.0.1: dropped: default (10.9.0.1 timeout 60)\n"
		     "10.9.0.2: dropped: default (10.9.0.2)\n", r.out);
	/* Without a timeout anywhere, no question and no flag. */
	RUN(&r, "new", "", "add", "10.9.0.3");
	EXPECT_STREQ("ADD\n", r.log);
	drop_module();
}

TEST(add_refuses_bad_timeouts_before_any_call)
{
	struct run r;

	EXPECT_RUN(&r, "new", 3, "cuckooctl: add abc: not a timeout: seconds from 0 (none) to 4294967295, or a duration such as 90s, 15m, 1h30m, 7d\n",
		   "add", "10.9.0.1", "timeout", "abc");
	EXPECT_STREQ("", r.log);
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add -1: not a timeout: seconds from 0 (none) to 4294967295, or a duration such as 90s, 15m, 1h30m, 7d\n",
		   "add", "10.9.0.1", "timeout", "--", "-1");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add 4294967296: timeout past 4294967295 seconds, the longest there is\n",
		   "add", "10.9.0.1", "10.9.0.2", "timeout", "4294967296");
	EXPECT_STREQ("", r.log);
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add timeout: 'timeout' without its number of seconds\n",
		   "add", "10.9.0.1", "timeout");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add timeout: 'timeout SECONDS' goes after the address it is for\n",
		   "add", "timeout", "5", "10.9.0.1");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add timeout: a second timeout for the same address\n",
		   "add", "10.9.0.1", "timeout", "5", "timeout", "6");
	EXPECT_STREQ("", r.log);
	/* Only add takes one. */
	EXPECT_RUN(&r, "new", 3, "cuckooctl: del timeout: not an IPv4 or IPv6 address or prefix\n"
		   "cuckooctl: del 5: not an IPv4 or IPv6 address or prefix\n",
		   "del", "10.9.0.1", "timeout", "5");
	EXPECT_STREQ("", r.log);
}

TEST(add_exist_sets_the_timeout_anew)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "add", "10.9.0.1", "timeout", "60");
	EXPECT_EQ(0, r.status);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: add 10.9.0.1: already present\n",
		   "add", "10.9.0.1", "timeout", "5");
	RUN(&r, "new", "", "add", "--exist", "10.9.0.1", "timeout", "5",
	    "10.9.0.9");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("SET_CREATE default timeout=1\nADD exist timeout=5\n"
		     "ADD exist\n", r.log);
	RUN(&r, "new", "", "test", "10.9.0.1");
	EXPECT_STREQ("10.9.0.1: dropped: default (10.9.0.1 timeout 5)\n", r.out);
	drop_module();
}

TEST(create_with_a_default_timeout)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "create", "f2b", "timeout", "600");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("SET_CREATE f2b timeout=600\n", r.log);
	RUN(&r, "new", "", "create", "ok", "allow", "timeout", "0");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("SET_CREATE ok\n", r.log);
	/* Entries added without one get the set's. */
	RUN(&r, "new", "", "-s", "f2b", "add", "192.0.2.1", "192.0.2.2",
	    "timeout", "0");
	EXPECT_STREQ("SET_CREATE default timeout=1\nADD f2b\nADD f2b timeout=0\n",
		     r.log);
	RUN(&r, "new", "", "-s", "f2b", "list");
	EXPECT_STREQ("192.0.2.1 timeout 600\n192.0.2.2\n", r.out);
	RUN(&r, "new", "", "sets");
	EXPECT_STREQ("name     kind         entries        bytes      matched    timeout        timed  rules log         flags\n"
		     "default  block              4          512            0          -            0      0 off         -\n"
		     "f2b      block              2         1024           10        600            1      0 off         -\n"
		     "ok       allow              0         1536           20          -            0      0 off         -\n",
		     r.out);
	RUN(&r, "new", "", "sets", "-j");
	EXPECT_NE(NULL, strstr(r.out, "\"name\":\"f2b\",\"kind\":\"block\",\"entries\":2,"
			       "\"v4_entries\":2,\"v6_entries\":0,\"bytes\":1024,"
			       "\"matched\":10,\"timeout\":600,\"timed\":1,\"rules_only\":false,\"rules\":0,\"log\":\"off\",\"log_group\":0,\"matched_bytes\":0}"))
		TH_LOG("%s", r.out);
	RUN(&r, "new", "", "stats");
	EXPECT_NE(NULL, strstr(r.out, "expiry:\n  timed:        1 entry\n"
			       "  memory:       48 bytes (48 B)\n"
			       "  bytes/entry:  48.00\n  expired:      7\n"
			       "  late:         2 (removed over a second late), at most 1250 ms\n"))
		TH_LOG("%s", r.out);
	EXPECT_RUN(&r, "new", 2, "cuckooctl: create timeout: needs a number of seconds\n"
		   "Usage: cuckooctl create [OPTION...] NAME [block|allow] [timeout SECONDS] [log on|nflog GROUP]\n"
		   "Try 'cuckooctl help create' for more.\n",
		   "create", "x", "block", "timeout");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: create 1x: not a timeout: seconds from 0 (none) to 4294967295, or a duration such as 90s, 15m, 1h30m, 7d\n",
		   "create", "x", "timeout", "1x");
	RUN(&r, "new", "", "create", "x", "allow", "timeout", "5", "more");
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("", r.log);
	drop_module();
}

/*
 * A rules-only set: created so, listed and saved so, restored so; the
 * verdict of test names it apart and lets its sources pass; a swap with
 * a set the hooks consult is refused.
 */
TEST(rules_only_sets)
{
	static const char saved[] =
		"# cuckoo_nf save\n"
		"# cuckoo_nf set default block\n"
		"10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		"# cuckoo_nf set f2b-sshd block rules-only timeout 600\n"
		"192.0.2.1 timeout 600\n"
		"# cuckoo_nf set feed block\n";
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "create", "f2b-sshd", "block", "timeout", "600",
	    "--rules-only");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("SET_CREATE f2b-sshd timeout=600 rules-only\n", r.log);
	RUN(&r, "new", "", "create", "feed");
	RUN(&r, "new", "", "-s", "f2b-sshd", "add", "192.0.2.1");
	EXPECT_EQ(0, r.status);
	RUN(&r, "new", "", "sets");
	EXPECT_NE(NULL, strstr(r.out, "f2b-sshd  block              1         1024           10        600            1      0 off         rules-only\n"))
		TH_LOG("%s", r.out);
	RUN(&r, "new", "", "sets", "-j");
	EXPECT_NE(NULL, strstr(r.out, "\"name\":\"f2b-sshd\",\"kind\":\"block\",\"entries\":1,"
			       "\"v4_entries\":1,\"v6_entries\":0,\"bytes\":1024,"
			       "\"matched\":10,\"timeout\":600,\"timed\":1,\"rules_only\":true,\"rules\":0,\"log\":\"off\",\"log_group\":0,\"matched_bytes\":0}"))
		TH_LOG("%s", r.out);
	RUN(&r, "new", "", "save", "--all");
	EXPECT_STREQ(saved, r.out);
	/* Only rules consult it: test says the address passes, and why. */
	RUN(&r, "new", "", "test", "192.0.2.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("192.0.2.1: passes: in no set; in rules-only set, which only iptables rules consult: f2b-sshd (192.0.2.1 timeout 600)\n",
		     r.out);
	RUN(&r, "new", "", "-j", "test", "192.0.2.1");
	EXPECT_NE(NULL, strstr(r.out, "\"rules_only\":[{\"set\":\"f2b-sshd\""))
		TH_LOG("%s", r.out);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: swap f2b-sshd feed: the sets are of different kinds (block, allow, rules-only)\n",
		   "swap", "f2b-sshd", "feed");
	/* Restored into a fresh module, it is rules-only again. */
	fresh_module();
	RUN(&r, "new", saved, "restore", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_NE(NULL, strstr(r.log, "SET_CREATE f2b-sshd timeout=600 rules-only\n"))
		TH_LOG("%s", r.log);
	RUN(&r, "new", "", "save", "--all");
	EXPECT_STREQ(saved, r.out);
	/* A set the hooks consult is not turned into one by a restore. */
	RUN(&r, "new", "# cuckoo_nf set feed block rules-only\n192.0.2.9\n",
	    "restore", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: restore feed: kind block rules-only in the input, block in the module; the old contents still serve\n",
		     r.err);
	drop_module();
}

TEST(save_and_restore_round_trip_timeouts)
{
	static const char saved[] =
		"# cuckoo_nf save\n"
		"# cuckoo_nf set default block\n"
		"10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		"10.9.0.1 timeout 60\n"
		"# cuckoo_nf set f2b block timeout 600\n"
		"192.0.2.1 timeout 600\n192.0.2.2 timeout 0\n"
		"192.0.2.3 timeout 30\n";
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "create", "f2b", "timeout", "600");
	RUN(&r, "new", "", "-s", "f2b", "add", "192.0.2.1", "192.0.2.2",
	    "timeout", "0", "192.0.2.3", "timeout", "30");
	RUN(&r, "new", "", "add", "10.9.0.1", "timeout", "60");
	RUN(&r, "new", "", "save", "--all");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(saved, r.out);
	/* save -s of a set with a default: its set line and every timeout. */
	RUN(&r, "new", "", "save", "-s", "f2b");
	EXPECT_STREQ("# cuckoo_nf save\n# cuckoo_nf set f2b block timeout 600\n"
		     "192.0.2.1 timeout 600\n192.0.2.2 timeout 0\n"
		     "192.0.2.3 timeout 30\n", r.out);
	/* A fresh module: the set comes back with its default and entries. */
	fresh_module();
	RUN(&r, "new", saved, "restore", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("SET_CREATE default timeout=1\nSET_LIST\n"
		     "ADD_BATCH replace timeouts\nSET_CREATE f2b timeout=600\n"
		     "ADD_BATCH f2b replace timeouts\n", r.log);
	RUN(&r, "new", "", "save", "--all");
	EXPECT_STREQ(saved, r.out);
	/* Lines without a timeout get the set's default, as ipset's do. */
	RUN(&r, "new", "# cuckoo_nf set f2b block timeout 600\n"
		       "192.0.2.9\n192.0.2.8 timeout 5\n", "restore", "-");
	EXPECT_EQ(0, r.status);
	RUN(&r, "new", "", "-s", "f2b", "list");
	EXPECT_STREQ("192.0.2.9 timeout 600\n192.0.2.8 timeout 5\n", r.out);
	/* A set keeps its default: another one in the input is refused. */
	RUN(&r, "new", "# cuckoo_nf set f2b block timeout 60\n192.0.2.9\n",
	    "restore", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: restore f2b: default timeout 60 in the input, 600 in the module (destroy the set to restore it); the old contents still serve\n",
		     r.err);
	/* load: the same per line, and no array without a timeout. */
	RUN(&r, "new", "192.0.2.20 timeout 7\n192.0.2.21\n", "load", "-s", "f2b");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("SET_CREATE default timeout=1\nSET_LIST\nADD_BATCH f2b timeouts\n",
		     r.log);
	RUN(&r, "new", "192.0.2.22\n", "load", "-s", "f2b");
	EXPECT_STREQ("ADD_BATCH f2b\n", r.log);
	RUN(&r, "new", "", "-s", "f2b", "list");
	EXPECT_STREQ("192.0.2.9 timeout 600\n192.0.2.8 timeout 5\n"
		     "192.0.2.20 timeout 7\n192.0.2.21 timeout 600\n"
		     "192.0.2.22 timeout 600\n", r.out);
	drop_module();
}

TEST(module_without_timeouts_refuses_them_only)
{
	const char *const kernels[] = { "sets", "old" };
	struct run r;
	size_t i;

	for (i = 0; i < 2; i++) {
		const char *k = kernels[i];

		fresh_module();
		EXPECT_RUN(&r, k, 1, "cuckooctl: add: " TIMEOUTS_NOT_SUPPORTED "\n",
			   "add", "10.9.0.2", "10.9.0.1", "timeout", "60");
		/* Asked before anything changed. */
		EXPECT_STREQ("SET_CREATE default timeout=1\n", r.log);
		RUN(&r, k, "10.9.0.1 timeout 60\n", "load");
		EXPECT_EQ(1, r.status);
		EXPECT_STREQ("cuckooctl: load: " TIMEOUTS_NOT_SUPPORTED "; 0 added\n",
			     r.err);
		RUN(&r, k, "# cuckoo_nf save\n10.9.0.1 timeout 60\n", "restore", "-");
		EXPECT_EQ(1, r.status);
		EXPECT_STREQ("cuckooctl: restore: " TIMEOUTS_NOT_SUPPORTED "; nothing changed\n",
			     r.err);
		RUN(&r, k, "", "stats");
		EXPECT_EQ(0, r.status);
		EXPECT_NE(NULL, strstr(r.out, "expiry:       timeouts not supported by the loaded module\n"));
		RUN(&r, k, "", "stats", "-j");
		EXPECT_EQ(NULL, strstr(r.out, "expiry"));
		/* The rest as before: --exist passes over a present prefix. */
		RUN(&r, k, "", "add", "--exist", "192.0.2.7", "192.0.2.60");
		EXPECT_EQ(0, r.status);
		EXPECT_STREQ("", r.err);
		RUN(&r, k, "", "list");
		EXPECT_EQ(0, r.status);
		EXPECT_STREQ("10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
			     "192.0.2.60\n", r.out);
		RUN(&r, k, "", "test", "192.0.2.60");
		EXPECT_EQ(0, r.status);
		drop_module();
	}
	/* A module with sets: the flag is dropped once, then not sent. */
	fresh_module();
	RUN(&r, "sets", "", "add", "--exist", "10.0.0.0/8", "192.0.2.60");
	EXPECT_STREQ("ADD exist\nADD\nADD\n", r.log);
	RUN(&r, "sets", "", "list");
	EXPECT_STREQ("DUMP\nDUMP\n", r.log);
	EXPECT_RUN(&r, "sets", 1, "cuckooctl: create f2b: " TIMEOUTS_NOT_SUPPORTED "\n",
		   "create", "f2b", "timeout", "600");
	RUN(&r, "sets", "", "create", "f2b");
	EXPECT_EQ(0, r.status);
	RUN(&r, "sets", "", "save", "--all");
	EXPECT_STREQ("# cuckoo_nf save\n# cuckoo_nf set default block\n"
		     "10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		     "192.0.2.60\n# cuckoo_nf set f2b block\n", r.out);
	drop_module();
	/* One from before sets: -ENOTTY, then the first version's call. */
	RUN(&r, "old", "", "add", "--exist", "192.0.2.7");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("ADD exist\nADD/1\n", r.log);
}

/*
 * test without -s: the namespace's verdict, every covering set named, the
 * allow sets that exempt a source, and a loopback device never judged.
 */
TEST(test_tells_the_namespace_verdict)
{
	struct run r;

	fresh_module();
	RUN(&r, "new", "", "create", "feed");
	RUN(&r, "new", "", "create", "office", "allow");
	RUN(&r, "new", "", "add", "-s", "feed", "10.0.0.0/8", "192.0.2.0/24");
	RUN(&r, "new", "", "add", "-s", "office", "10.20.0.0/16");
	RUN(&r, "new", "", "test", "192.0.2.7", "10.20.1.1", "198.51.100.1",
	    "10.20.0.0/24");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("192.0.2.7: dropped: default (192.0.2.7), feed (192.0.2.0/24)\n"
		     "10.20.1.1: passes: default (10.0.0.0/8), feed (10.0.0.0/8) allowed by office (10.20.0.0/16)\n"
		     "198.51.100.1: passes: in no set\n"
		     "10.20.0.0/24: passes: default (10.0.0.0/8), feed (10.0.0.0/8) allowed by office (10.20.0.0/16)\n",
		     r.out);
	EXPECT_STREQ("", r.err);
	RUN(&r, "new", "", "test", "-q", "192.0.2.7", "10.9.9.9");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.out);
	RUN(&r, "new", "", "-j", "test", "192.0.2.7", "198.51.100.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("[{\"address\":\"192.0.2.7\",\"verdict\":\"dropped\",\"reason\":\"listed\","
		     "\"block\":[{\"set\":\"default\",\"prefix\":\"192.0.2.7\",\"timeout\":0},"
		     "{\"set\":\"feed\",\"prefix\":\"192.0.2.0/24\",\"timeout\":0}],\"allow\":[],\"rules_only\":[]},"
		     "{\"address\":\"198.51.100.1\",\"verdict\":\"passes\",\"reason\":\"in no set\","
		     "\"block\":[],\"allow\":[],\"rules_only\":[]}]\n", r.out);
	RUN(&r, "new", "", "test", "--iif", "lo", "192.0.2.7");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("192.0.2.7: passes: arrives on lo, a loopback device, never judged\n",
		     r.out);
	EXPECT_RUN(&r, "new", 3, "cuckooctl: test --iif cnf-nosuch0: no such device here\n",
		   "test", "--iif", "cnf-nosuch0", "192.0.2.7");
	RUN(&r, "new", "", "test", "-s", "feed", "--iif", "lo", "192.0.2.7");
	EXPECT_EQ(2, r.status);
	/* A module without sets: the default set's answer, the stats' mode. */
	RUN(&r, "old", "", "test", "10.0.0.1", "198.51.100.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("10.0.0.1: dropped: default\n198.51.100.1: passes: in no set\n",
		     r.out);
}

/* hooks on --iif: checked, set, shown, saved and restored; mark mode. */
TEST(hooks_scope_and_mark_mode)
{
	char dir[] = "/tmp/test_ctl_cli.dir.XXXXXX", path[96], text[256] = "";
	struct run r;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	fresh_module();
	RUN(&r, "new", "", "hooks", "on", "--iif", "eth0", "--iif", "veth+");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	RUN(&r, "new", "", "hooks");
	EXPECT_STREQ("on --iif eth0 --iif veth+\n", r.out);
	RUN(&r, "new", "", "stats");
	EXPECT_NE(NULL, strstr(r.out, "\nhooks:        on --iif eth0 --iif veth+\n")) TH_LOG("%s", r.out);
	RUN(&r, "new", "", "-j", "stats");
	EXPECT_NE(NULL, strstr(r.out, ",\"mark\":0,\"mark_mask\":0,\"iif\":[\"eth0\",\"veth+\"],")) TH_LOG("%s", r.out);
	/* Refused before any call, naming the value. */
	EXPECT_RUN(&r, "new", 3, "cuckooctl: hooks --iif a/b: not a device name: no '/', ':' or white space\n",
		   "hooks", "on", "--iif", "a/b");
	EXPECT_STREQ("", r.log);
	EXPECT_RUN(&r, "new", 3, "cuckooctl: hooks --iif 0123456789abcdef: longer than a device name (15 bytes)\n",
		   "hooks", "on", "--iif", "0123456789abcdef");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: hooks --iif i: more than 8 devices (the most a scope has)\n",
		   "hooks", "on", "--iif", "a", "--iif", "b", "--iif", "c",
		   "--iif", "d", "--iif", "e", "--iif", "f", "--iif", "g",
		   "--iif", "h", "--iif", "i");
	RUN(&r, "new", "", "hooks", "off", "--iif", "eth0");
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("", r.log);
	/* What the scope changes in a verdict. */
	RUN(&r, "new", "", "test", "--iif", "lo", "192.0.2.7");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("192.0.2.7: passes: not judged on lo: outside the hooks' scope (eth0 veth+)\n",
		     r.out);
	RUN(&r, "new", "", "test", "192.0.2.7");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("192.0.2.7: dropped: default (192.0.2.7) (on eth0 veth+ only: the hooks' scope)\n",
		     r.out);
	/* Mark mode: VALUE/MASK checked, shown, and its verdict. */
	EXPECT_RUN(&r, "new", 3, "cuckooctl: mode mark 0x1ff/0xf: the mark has bits outside the mask\n",
		   "mode", "mark", "0x1ff/0xf");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: mode mark 0x10/0: the mask is 0: no bit to set\n",
		   "mode", "mark", "0x10/0");
	EXPECT_RUN(&r, "new", 3, "cuckooctl: mode mark ten: not a number up to 0xffffffff\n",
		   "mode", "mark", "ten");
	RUN(&r, "new", "", "mode", "mark");
	EXPECT_EQ(2, r.status);
	RUN(&r, "new", "", "mode", "mark", "0x10/0x10");
	EXPECT_EQ(0, r.status);
	RUN(&r, "new", "", "mode");
	EXPECT_STREQ("mark 0x10/0x10\n", r.out);
	RUN(&r, "new", "", "test", "192.0.2.7");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("192.0.2.7: marked 0x10/0x10, nft decides: listed by default (192.0.2.7) (on eth0 veth+ only: the hooks' scope)\n",
		     r.out);
	RUN(&r, "new", "", "stats");
	EXPECT_NE(NULL, strstr(r.out, "mode:         mark 0x10/0x10\n")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "  marked:       0\n")) TH_LOG("%s", r.out);
	/* Saved, and restored into a module without them. */
	RUN(&r, "new", "", "save-all", dir);
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "hooks: saved 'on --iif eth0 --iif veth+' to ")) TH_LOG("%s", r.out);
	snprintf(path, sizeof(path), "%s/hooks", dir);
	f = fopen(path, "re");
	ASSERT_NE(NULL, f);
	EXPECT_LT(0, (int)fread(text, 1, sizeof(text) - 1, f));
	fclose(f);
	EXPECT_STREQ("# cuckoo_nf hooks\non --iif eth0 --iif veth+\n# cuckoo_nf end\n", text);
	drop_module();
	fresh_module();
	RUN(&r, "new", "", "restore-all", dir);
	EXPECT_EQ(0, r.status);
	RUN(&r, "new", "", "hooks");
	EXPECT_STREQ("on --iif eth0 --iif veth+\n", r.out);
	/* hooks on alone: every device but loopback again. */
	RUN(&r, "new", "", "hooks", "on");
	RUN(&r, "new", "", "hooks");
	EXPECT_STREQ("on\n", r.out);
	/* A hooks file that is not a save: renamed, the rest restored. */
	f = fopen(path, "we");
	ASSERT_NE(NULL, f);
	fputs("# cuckoo_nf hooks\non --iif\n# cuckoo_nf end\n", f);
	fclose(f);
	RUN(&r, "new", "", "restore-all", dir);
	EXPECT_EQ(3, r.status);
	EXPECT_NE(NULL, strstr(r.err, "hooks: not a complete save (--iif without its device), skipped and renamed ")) TH_LOG("%s", r.err);
	RUN(&r, "new", "", "hooks");
	EXPECT_STREQ("on\n", r.out);
	drop_module();
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	EXPECT_EQ(0, system(path));
}

/* A block prefix covering an address of the namespace's own is named. */
TEST(add_names_covered_own_addresses)
{
	struct run r;

	fresh_module();
	setenv("CNF_FAKE_IFADDRS", "lo=127.0.0.1,lo=::1,eth1=10.20.0.5", 1);
	EXPECT_RUN(&r, "new", 0,
		   "cuckooctl: add: 10.0.0.0/8 covers 10.20.0.5, an address of eth1 here\n"
		   "cuckooctl: add: 127.0.0.0/8 covers 127.0.0.1, an address of lo here\n"
		   "cuckooctl: add: ::1 covers ::1, an address of lo here\n",
		   "add", "--exist", "10.0.0.0/8", "127.0.0.0/8", "::1", "192.0.2.9");
	EXPECT_RUN(&r, "new", 0, "", "add", "-q", "10.30.0.0/16");
	RUN(&r, "new", "", "create", "office", "allow");
	EXPECT_RUN(&r, "new", 0, "", "add", "-s", "office", "10.20.0.0/16");
	unsetenv("CNF_FAKE_IFADDRS");
	RUN(&r, "new", "", "test", "-s", "default", "127.0.0.1");
	EXPECT_EQ(0, r.status);
}

TEST(ranges_durations_and_ipset_spellings)
{
	struct run r;

	fresh_module();
	/* A range: the fewest prefixes, each a call with the timeout. */
	RUN(&r, "new", "", "add", "10.9.0.1-10.9.0.6", "timeout", "1h30m",
	    "10.9.1.0-10.9.1.255");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("SET_CREATE default timeout=1\nADD timeout=5400\n"
		     "ADD timeout=5400\nADD timeout=5400\nADD timeout=5400\n"
		     "ADD\n", r.log);
	RUN(&r, "new", "", "list");
	EXPECT_STREQ("10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		     "10.9.0.1 timeout 5400\n10.9.0.2/31 timeout 5400\n"
		     "10.9.0.4/31 timeout 5400\n10.9.0.6 timeout 5400\n"
		     "10.9.1.0/24\n", r.out);
	/* ipset's -exist, one dash. */
	RUN(&r, "new", "", "add", "-exist", "10.9.0.2-10.9.0.3", "timeout", "7d");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("SET_CREATE default timeout=1\nADD exist timeout=604800\n",
		     r.log);
	/* A prefix of a range absent: named with the range. */
	RUN(&r, "new", "", "del", "10.9.0.2-10.9.0.4");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: del 10.9.0.2-10.9.0.4: 10.9.0.4: not present\n",
		     r.err);
	EXPECT_STREQ("DEL\nDEL\n", r.log);
	RUN(&r, "new", "", "del", "-exist", "10.9.0.4-10.9.0.7", "10.9.0.1");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	/* A bad range: nothing called. */
	EXPECT_RUN(&r, "new", 3, "cuckooctl: add 10.9.0.9-10.9.0.1: a range whose first address comes after its last\n",
		   "add", "10.9.0.5", "10.9.0.9-10.9.0.1");
	EXPECT_STREQ("", r.log);
	/* test asks about addresses, not ranges. */
	EXPECT_RUN(&r, "new", 3, "cuckooctl: test 10.9.0.1-10.9.0.2: not an IPv4 or IPv6 address or prefix\n",
		   "test", "-s", "default", "10.9.0.1-10.9.0.2");
	/* create --exist: the same set is no error, another is. */
	RUN(&r, "new", "", "create", "web", "block", "timeout", "10m");
	EXPECT_EQ(0, r.status);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: create web: a set named web exists already\n",
		   "create", "web", "block", "timeout", "600");
	RUN(&r, "new", "", "create", "-exist", "web", "block", "timeout", "600");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_RUN(&r, "new", 1, "cuckooctl: create web: exists as a block set with default timeout 600, not an allow set with 0\n",
		   "create", "--exist", "web", "allow");
	drop_module();
}

TEST(restore_from_an_ipset_save)
{
	struct run r;

	fresh_module();
	RUN(&r, "new",
	    "create f2b-sshd hash:ip family inet hashsize 1024 maxelem 65536 timeout 600 bucketsize 12 initval 0x5b7e24c6\n"
	    "add f2b-sshd 203.0.113.9 timeout 583\n"
	    "create lan hash:net family inet hashsize 1024 maxelem 65536 comment\n"
	    "add lan 10.20.0.0/16 comment \"office\"\n"
	    "add lan 10.20.5.0/24 nomatch\n",
	    "restore", "--from-ipset", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("replaced set f2b-sshd: 1 entry (was 0)\n"
		     "replaced set lan: 1 entry (was 0)\n"
		     "replaced set lan-nomatch: 1 entry (was 0)\n", r.out);
	EXPECT_STREQ("cuckooctl: restore stdin:3: note: comments are not kept: cuckoo_nf stores prefixes only\n"
		     "cuckooctl: restore stdin:3: note: nomatch entries go to an allow set NAME-nomatch, which exempts them from every block set of the namespace\n",
		     r.err);
	EXPECT_STREQ("SET_CREATE default timeout=1\nSET_LIST\n"
		     "SET_CREATE f2b-sshd timeout=600\n"
		     "ADD_BATCH f2b-sshd replace timeouts\n"
		     "SET_CREATE lan\nADD_BATCH lan replace\n"
		     "SET_CREATE lan-nomatch\nADD_BATCH lan-nomatch replace\n",
		     r.log);
	RUN(&r, "new", "", "save", "-a");
	EXPECT_STREQ("# cuckoo_nf save\n"
		     "# cuckoo_nf set default block\n"
		     "10.0.0.0/8\n10.1.0.0/16\n192.0.2.7\n2001:db8::/32\n"
		     "# cuckoo_nf set f2b-sshd block timeout 600\n"
		     "203.0.113.9 timeout 583\n"
		     "# cuckoo_nf set lan block\n10.20.0.0/16\n"
		     "# cuckoo_nf set lan-nomatch allow\n10.20.5.0/24\n", r.out);
	/* -q: no notes. */
	RUN(&r, "new", "create lan hash:net comment\nadd lan 10.20.0.0/16\n",
	    "restore", "-q", "--from-ipset", "-");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	/* A line it cannot map: named, nothing sent. */
	RUN(&r, "new", "create p hash:ip,port\ncreate lan hash:net\nadd lan 10.9.0.0/16\n",
	    "restore", "--from-ipset", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: restore stdin:1: p: type hash:ip,port holds more than addresses and prefixes; cuckoo_nf takes hash:ip, hash:net and bitmap:ip sets\n"
		     "cuckooctl: restore: 1 line that cuckoo_nf cannot take, nothing changed\n",
		     r.err);
	EXPECT_STREQ("", r.log);
	/* No set at all: the default set is left alone. */
	RUN(&r, "new", "# nothing\n", "restore", "--from-ipset", "-");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: restore stdin: no create line of a set, nothing changed\n",
		     r.err);
	EXPECT_STREQ("", r.log);
	drop_module();
}

TEST_HARNESS_MAIN
