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

TEST(test_names_the_longest_cover)
{
	struct run r;

	RUN(&r, "new", "", "test", "10.1.2.3", "10.2.0.1", "192.0.2.7",
	    "2001:db8::1", "10.1.0.0/17", "198.51.100.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("10.1.2.3: present (10.1.0.0/16)\n"
		     "10.2.0.1: present (10.0.0.0/8)\n"
		     "192.0.2.7: present (192.0.2.7)\n"
		     "2001:db8::1: present (2001:db8::/32)\n"
		     "10.1.0.0/17: present (10.1.0.0/16)\n"
		     "198.51.100.1: absent\n", r.out);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("MATCH\nMATCH\nMATCH\nMATCH\nMATCH\nMATCH\n", r.log);

	RUN(&r, "new", "", "test", "10.9.9.9", "192.0.2.7");
	EXPECT_EQ(0, r.status);
}

/* -ENOTTY for MATCH once, then TEST for every address: present alone. */
TEST(test_falls_back_on_an_older_module)
{
	struct run r;

	RUN(&r, "old", "", "test", "10.1.2.3", "192.0.2.7", "198.51.100.1");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("10.1.2.3: present\n192.0.2.7: present\n"
		     "198.51.100.1: absent\n", r.out);
	EXPECT_STREQ("", r.err);
	/* Each call once in the new size, then the first version's. */
	EXPECT_STREQ("MATCH\nMATCH/1\nTEST\nTEST/1\nTEST/1\nTEST/1\n", r.log);

	RUN(&r, "old", "", "test", "10.0.0.1");
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
				       "  tables:       3 per packet\n"
				       "  capacity:     1024\n"
				       "  load factor:  25.00%\n")) TH_LOG("%s", r.out);
	RUN(&r, "old", "", "stats");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "ipv4:\n  prefixes:     3\n"
				       "  lookup:       not reported by the loaded module\n"
				       "  capacity:     1024\n")) TH_LOG("%s", r.out);
	RUN(&r, "old", "", "stats", "-j");
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "\"dropped\":0,\"prefixes\":3},"));
	EXPECT_EQ(NULL, strstr(r.out, "\"keys\""));
	RUN(&r, "new", "", "stats", "-j");
	EXPECT_NE(NULL, strstr(r.out, "\"prefixes\":3,\"lengths\":3,\"keys\":256,"
				       "\"tables\":3}"));
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

	RUN(&r, "new", "", "add", "10.0.0.0/8", "10.0.0.5/24");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: add 10.0.0.5/24: host bits set; did you mean 10.0.0.0/24?\n",
		     r.err);
	EXPECT_STREQ("", r.log);
	RUN(&r, "new", "", "add", "0.0.0.0/0");
	EXPECT_EQ(3, r.status);
	EXPECT_STREQ("cuckooctl: add 0.0.0.0/0: /0 is every IPv4 address: give --all-addresses to mean that\n",
		     r.err);
	RUN(&r, "new", "", "add", "--all-addresses", "0.0.0.0/0", "172.16.0.0/12");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("ADD\nADD\n", r.log);
	/* An older module refuses the prefix; the message says why. */
	RUN(&r, "old", "", "add", "10.0.0.0/8");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("cuckooctl: add 10.0.0.0/8: prefix refused by the loaded module (a version without prefixes?)\n",
		     r.err);
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

TEST_HARNESS_MAIN
