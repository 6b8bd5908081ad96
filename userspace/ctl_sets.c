// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: the commands on sets as a whole - create, destroy, swap,
 * sets - and 'save' of one set or of all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

int ctl_check_set_name(const char *cmd, const char *name)
{
	if (ctl_set_name_ok(name))
		return CTL_EXIT_OK;
	ctl_err("%s %s: " CTL_SET_NAME_RULE, cmd, name);
	return CTL_EXIT_BADINPUT;
}

/* "cuckooctl: CMD NAME: reason" for a failed set call: exit code. */
static int set_fail(const char *cmd, const char *name, int err)
{
	char why[CTL_SET_ERRLEN];

	ctl_err("%s %s: %s", cmd, name,
		ctl_strerror_set(err, name, why, sizeof(why)));
	return ctl_exit_code(err);
}

/*
 * "log on", "log off" or "log nflog GROUP" at @argv for @cmd NAME: the
 * words taken, or -the exit code, reported.
 */
static int log_args(const char *cmd, const char *name, int argc, char **argv,
		    struct ctl_log *log)
{
	int n = argc > 1 ? ctl_log_parse(argc - 1, argv + 1, log) : -EINVAL;

	if (n == -ERANGE) {
		ctl_err("%s %s: log nflog %s: not an NFLOG group (0 to 65535)",
			cmd, name, argc > 2 ? argv[2] : "");
		return -CTL_EXIT_BADINPUT;
	}
	if (n < 0) {
		ctl_err("%s %s: log %s: not a logging (on, off or nflog GROUP)",
			cmd, name, argc > 1 ? argv[1] : "");
		return -CTL_EXIT_BADINPUT;
	}
	return n + 1;
}

/*
 * create's operands after the name: [KIND] [timeout SECONDS] [log on|
 * nflog GROUP].
 */
static int create_args(const char *name, int argc, char **argv, int *kind,
		       uint32_t *timeout, struct ctl_log *log)
{
	static const struct cnf_addr no_hint;
	char reason[CTL_REASONLEN];
	enum ctl_parse_err err;
	int i = 0, n;

	for (n = 0; n < argc; n++) {
		if (strcmp(argv[n], CTL_LOG_WORD))
			continue;
		i = log_args("create", name, argc - n, argv + n, log);
		if (i < 0)
			return -i;
		if (n + i < argc)
			return ctl_usage_error("create", argv[n + i],
					       "unexpected argument");
		argc = n;
		break;
	}
	i = 0;

	if (argc && strcmp(argv[0], CTL_TIMEOUT_WORD)) {
		*kind = ctl_set_kind_parse(argv[0]);
		if (*kind < 0) {
			ctl_err("create %s: unknown kind (block or allow)",
				argv[0]);
			return CTL_EXIT_BADINPUT;
		}
		i++;
	}
	if (i == argc)
		return CTL_EXIT_OK;
	if (strcmp(argv[i], CTL_TIMEOUT_WORD))
		return ctl_usage_error("create", argv[i], "unexpected argument");
	if (i + 1 == argc)
		return ctl_usage_error("create", argv[i],
				       "needs a number of seconds");
	if (i + 2 < argc)
		return ctl_usage_error("create", argv[i + 2],
				       "unexpected argument");
	err = ctl_parse_timeout(argv[i + 1], timeout);
	if (err) {
		ctl_err("create %s: %s", argv[i + 1],
			ctl_parse_reason(err, &no_hint, reason, sizeof(reason)));
		return CTL_EXIT_BADINPUT;
	}
	return CTL_EXIT_OK;
}

/*
 * create --exist of set @name, which exists: no error when it is what the
 * command asks for (@kind, default @timeout), as ipset's -exist; else
 * say how it differs.  Exit code.
 */
/* "a block", "an allow", "a rules-only block" set, for @kind. */
static const char *kind_words(uint32_t kind, char *buf, size_t len)
{
	bool rules = kind & CTL_KIND_RULES_ONLY;
	uint32_t k = kind & ~CTL_KIND_RULES_ONLY;

	snprintf(buf, len, "%s%s", rules ? "a " CTL_RULES_ONLY_WORD " " :
		 k == CNF_SET_ALLOW ? "an " : "a ",
		 ctl_set_kind_name(k) ?: "unknown");
	return buf;
}

static int create_exists(int fd, const char *name, int kind,
			 uint32_t timeout, const struct ctl_log *log)
{
	char la[CTL_LOGSTRLEN], lb[CTL_LOGSTRLEN];
	struct ctl_log hl;
	char a[48], b[48];
	uint32_t have;
	struct cnf_set_info *sets;
	size_t n;
	long i;
	int err = ctl_set_list(fd, &sets, &n);

	if (err)
		return set_fail("create", name, err);
	i = ctl_find_set(sets, n, name);
	/* Destroyed between the two calls: create would have worked. */
	if (i < 0) {
		free(sets);
		err = ctl_set_log_call(fd, CNF_IOC_SET_CREATE, name, kind,
				       timeout, log);
		return err ? set_fail("create", name, err) : CTL_EXIT_OK;
	}
	have = sets[i].kind | (sets[i].flags & CNF_SET_F_RULES_ONLY ?
			       CTL_KIND_RULES_ONLY : 0);
	hl = ctl_set_log_of(&sets[i]);
	if (have == (uint32_t)kind && sets[i].timeout == timeout &&
	    hl.flags == log->flags && hl.group == log->group) {
		free(sets);
		return CTL_EXIT_OK;
	}
	if (have == (uint32_t)kind && sets[i].timeout == timeout) {
		ctl_err("create %s: exists with log %s, not %s ('cuckooctl set %s log ...' changes it)",
			name, ctl_format_log(&hl, la, sizeof(la)),
			ctl_format_log(log, lb, sizeof(lb)), name);
		free(sets);
		return CTL_EXIT_FAIL;
	}
	ctl_err("create %s: exists as %s set with default timeout %u, not %s set with %u",
		name, kind_words(have, a, sizeof(a)), sets[i].timeout,
		kind_words(kind, b, sizeof(b)), timeout);
	free(sets);
	return CTL_EXIT_FAIL;
}

int ctl_cmd_create(const struct ctl_opts *o, int argc, char **argv)
{
	int kind = CNF_SET_BLOCK, rc, fd, err;
	struct ctl_log log = { 0, 0 };
	uint32_t timeout = 0;

	if (argc < 1 || argc > 7)
		return ctl_usage_error("create", NULL,
				       "a name, then at most a kind, a timeout and a logging");
	rc = ctl_check_set_name("create", argv[0]);
	if (!rc)
		rc = create_args(argv[0], argc - 1, argv + 1, &kind, &timeout,
				 &log);
	if (rc)
		return rc;
	if (o->rules_only)
		kind |= CTL_KIND_RULES_ONLY;
	if ((o->rules_only || kind == CNF_SET_ALLOW) && log.flags) {
		ctl_err("create %s: %s drops nothing itself: it has nothing to log",
			argv[0], o->rules_only ? "a " CTL_RULES_ONLY_WORD " set" :
			"an allow set");
		return CTL_EXIT_BADINPUT;
	}
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	err = ctl_set_log_call(fd, CNF_IOC_SET_CREATE, argv[0], kind, timeout,
			       &log);
	if (err == EEXIST && o->exist)
		rc = create_exists(fd, argv[0], kind, timeout, &log);
	else if (err)
		rc = set_fail("create", argv[0], err);
	close(fd);
	return rc;
}

/*
 * Why a module with logging refused to log set @name: EINVAL, reported,
 * for a rules-only or an allow set; else CTL_ENOLOG (a module without).
 */
static int log_refused(int fd, const char *name)
{
	struct cnf_set_info *sets;
	int err = CTL_ENOLOG;
	size_t n;
	long i;

	if (ctl_set_list(fd, &sets, &n))
		return err;
	i = ctl_find_set(sets, n, name);
	if (i >= 0 && ((sets[i].flags & CNF_SET_F_RULES_ONLY) ||
		       sets[i].kind == CNF_SET_ALLOW)) {
		ctl_err("set %s: %s drops nothing itself: it has nothing to log",
			name, sets[i].flags & CNF_SET_F_RULES_ONLY ?
			"a " CTL_RULES_ONLY_WORD " set" : "an allow set");
		err = EINVAL;
	}
	free(sets);
	return err;
}

/* set NAME log on|off|nflog GROUP: change a set's logging. */
int ctl_cmd_set(const struct ctl_opts *o, int argc, char **argv)
{
	struct ctl_log log;
	int fd, err, rc, n;

	if (argc < 1)
		return ctl_usage_error("set", NULL,
				       "a set name, then 'log' and a logging");
	rc = ctl_check_set_name("set", argv[0]);
	if (rc)
		return rc;
	if (argc < 2 || strcmp(argv[1], CTL_LOG_WORD))
		return ctl_usage_error("set", argc > 1 ? argv[1] : NULL,
				       "'log' and a logging (on, off or nflog GROUP)");
	n = log_args("set", argv[0], argc - 1, argv + 1, &log);
	if (n < 0)
		return -n;
	if (1 + n < argc)
		return ctl_usage_error("set", argv[1 + n], "unexpected argument");
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	err = ctl_set_log_call(fd, CNF_IOC_SET_CHANGE, argv[0], 0, 0, &log);
	/* Only a rules-only or an allow set refuses a valid logging. */
	if (err == CTL_ENOLOG && log.flags)
		err = log_refused(fd, argv[0]);
	rc = err == EINVAL ? CTL_EXIT_FAIL :
	     err ? set_fail("set", argv[0], err) : CTL_EXIT_OK;
	close(fd);
	return rc;
}

/* "destroy NAME: in use by N iptables rules", the rules named: exit code. */
static int in_use(const char *cmd, int fd, const char *name)
{
	struct cnf_set_info *sets;
	unsigned long rules = 0;
	size_t n;
	long i;

	if (!ctl_set_list(fd, &sets, &n)) {
		i = ctl_find_set(sets, n, name);
		rules = i < 0 ? 0 : sets[i].rules;
		free(sets);
	}
	ctl_err("%s %s: in use by %lu iptables %s (-m cuckoo --match-set %s): delete %s first",
		cmd, name, rules, ctl_plural(rules, "rule", "rules"), name,
		ctl_plural(rules, "it", "them"));
	return CTL_EXIT_FAIL;
}

int ctl_cmd_destroy(const struct ctl_opts *o, int argc, char **argv)
{
	int fd, err, rc;

	if (argc != 1)
		return ctl_usage_error("destroy", NULL, "one set name");
	rc = ctl_check_set_name("destroy", argv[0]);
	if (rc)
		return rc;
	if (ctl_set_is_default(argv[0]))
		return set_fail("destroy", argv[0], EBUSY);
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	err = ctl_set_call(fd, CNF_IOC_SET_DESTROY, argv[0], 0, 0);
	rc = err == EBUSY ? in_use("destroy", fd, argv[0]) :
	     err ? set_fail("destroy", argv[0], err) : CTL_EXIT_OK;
	close(fd);
	return rc;
}

/* Why a swap of @a and @b failed, naming the set at fault. */
static int swap_fail(int fd, const char *a, const char *b, int err)
{
	struct cnf_set_info *sets;
	const char *missing = a;
	char what[2 * CNF_SET_NAME_LEN + 8];
	size_t n;

	snprintf(what, sizeof(what), "swap %s %s", a, b);
	if (err == EINVAL) {
		ctl_err("%s: the sets are of different kinds (block, allow, rules-only)",
			what);
		return CTL_EXIT_FAIL;
	}
	if (err == ENOENT && !ctl_set_list(fd, &sets, &n)) {
		if (ctl_find_set(sets, n, a) >= 0)
			missing = b;
		free(sets);
	}
	if (err == ENOENT)
		ctl_err("%s: no set named %s", what, missing);
	else
		ctl_fail(what, err);
	return ctl_exit_code(err);
}

int ctl_cmd_swap(const struct ctl_opts *o, int argc, char **argv)
{
	int fd, err, rc;

	if (argc != 2)
		return ctl_usage_error("swap", NULL, "two set names");
	rc = ctl_check_set_name("swap", argv[0]);
	if (!rc)
		rc = ctl_check_set_name("swap", argv[1]);
	if (rc)
		return rc;
	if (!strcmp(argv[0], argv[1])) {
		ctl_err("swap %s %s: a set cannot be swapped with itself",
			argv[0], argv[1]);
		return CTL_EXIT_BADINPUT;
	}
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	err = ctl_swap_call(fd, argv[0], argv[1]);
	rc = err ? swap_fail(fd, argv[0], argv[1], err) : CTL_EXIT_OK;
	close(fd);
	return rc;
}

int ctl_cmd_sets(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_set_info *sets;
	size_t n;
	int fd, err;

	fd = ctl_open_no_args(o->cmd, argc, argv);
	if (fd < 0)
		return -fd;
	err = ctl_set_list(fd, &sets, &n);
	close(fd);
	if (err)
		return ctl_fail("sets", err);
	if (o->json) {
		ctl_print_sets_json(stdout, sets, n);
		putchar('\n');
	} else {
		ctl_print_sets_text(stdout, sets, n);
	}
	free(sets);
	return CTL_EXIT_OK;
}

void ctl_print_set_line(FILE *out, const struct cnf_set_info *s)
{
	char buf[CTL_LOGSTRLEN];
	struct ctl_log log;

	fprintf(out, CTL_SET_LINE "%.*s %s", (int)sizeof(s->name), s->name,
		ctl_set_kind_name(s->kind) ? ctl_set_kind_name(s->kind) :
					     "block");
	if (s->flags & CNF_SET_F_RULES_ONLY)
		fputs(" " CTL_RULES_ONLY_WORD, out);
	if (s->timeout)
		fprintf(out, " " CTL_TIMEOUT_WORD " %lu",
			(unsigned long)s->timeout);
	log = ctl_set_log_of(s);
	if (log.flags)
		fprintf(out, " " CTL_LOG_WORD " %s",
			ctl_format_log(&log, buf, sizeof(buf)));
	putc('\n', out);
}

/*
 * The set line of @s and its prefixes.  A set with a default timeout has
 * every prefix's timeout written, 0 for none: a restore gives a prefix
 * without one the set's default.
 */
static int save_section(int fd, const struct cnf_set_info *s, FILE *out)
{
	char name[CNF_SET_NAME_LEN + 1] = "";
	uint64_t count;

	memcpy(name, s->name, sizeof(s->name));
	ctl_print_set_line(out, s);
	return ctl_dump("save", fd, name, s->timeout != 0, out, &count);
}

int ctl_save_set(int fd, const char *set, FILE *out)
{
	struct cnf_set_info *sets;
	uint64_t count;
	size_t n;
	long i;
	int err, rc;

	fputs(CTL_SAVE_HEADER "\n", out);
	/* The default set as it always was: no set line, for any module. */
	if (ctl_set_is_default(set))
		return ctl_dump("save", fd, NULL, false, out, &count);
	err = ctl_set_list(fd, &sets, &n);
	if (err)
		return set_fail("save", set, err);
	i = ctl_find_set(sets, n, set);
	rc = i < 0 ? set_fail("save", set, ENXIO) :
		     save_section(fd, &sets[i], out);
	free(sets);
	return rc;
}

int ctl_save_sets(int fd, FILE *out)
{
	struct cnf_set_info *sets;
	uint64_t count;
	size_t n, i;
	int err, rc = CTL_EXIT_OK;

	fputs(CTL_SAVE_HEADER "\n", out);
	err = ctl_set_list(fd, &sets, &n);
	/* A module without sets has the default set only. */
	if (err == CTL_ENOSETS)
		return ctl_dump("save", fd, NULL, false, out, &count);
	if (err)
		return ctl_fail("save", err);
	for (i = 0; i < n && !rc; i++)
		rc = save_section(fd, &sets[i], out);
	free(sets);
	return rc;
}
