// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: the commands on the prefixes of one set named on the command
 * line - add, del, test - and those printing or emptying a set: list,
 * save, flush.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_local.h"

/* "cuckooctl: CMD VALUE: reason" for a bad operand. */
static void report_bad_arg(void *ctx, const char *value,
			   enum ctl_parse_err err, const struct cnf_addr *hint)
{
	char reason[CTL_REASONLEN];

	ctl_err("%s %s: %s", (const char *)ctx, value,
		ctl_parse_reason(err, hint, reason, sizeof(reason)));
}

/*
 * The operands of add, del and test parsed into *@e (malloc'd), *@n of
 * them, every one first: nothing may change on a typo.  Then the device
 * opened: the fd, or minus the exit code.  Timeouts (add only) need a
 * module that has them, asked before anything changes.
 */
static int parse_and_open(const struct ctl_opts *o, int argc, char **argv,
			  unsigned int flags, bool timeouts,
			  struct ctl_entry **e, size_t *n)
{
	size_t i, timed = 0;
	int fd;

	*e = NULL;
	if (!argc)
		return -ctl_usage_error(o->cmd, NULL, "no address given");
	*e = calloc(argc, sizeof(**e));
	if (!*e)
		return -ctl_fail(o->cmd, ENOMEM);
	if (ctl_parse_entry_args(argc, argv, flags, timeouts, *e, n,
				 report_bad_arg, (void *)o->cmd))
		return -CTL_EXIT_BADINPUT;
	if (!*n)
		return -ctl_usage_error(o->cmd, NULL, "no address given");
	for (i = 0; i < *n; i++)
		timed += (*e)[i].timed;
	fd = ctl_open_device();
	if (fd >= 0 && timed && !ctl_has_timeouts(fd)) {
		close(fd);
		return -ctl_fail(o->cmd, CTL_ENOTIMEOUT);
	}
	return fd;
}

/*
 * One prefix of operand @e (a range is several) for per_address(): 0, or
 * the error, reported naming the operand (@arg) and, for a range, the
 * prefix; @soft under --exist is passed over without a word.
 */
static int one_prefix(const struct ctl_opts *o, int fd, enum ctl_entry_op op,
		      int soft, const struct ctl_entry *e, struct cnf_addr *a,
		      const char *arg)
{
	char buf[CTL_SET_ERRLEN], text[CTL_PREFIXSTRLEN];
	const char *why;
	uint32_t flags = e->timed ? CNF_ENTRY_F_TIMEOUT : 0;
	uint32_t timeout = e->timeout;
	int err;

	if (op == CTL_ADD && o->exist)
		flags |= CNF_ENTRY_F_EXIST;
	err = ctl_entry_call(fd, op, o->set, a, flags, &timeout);
	if (!err || (err == soft && o->exist))
		return err;
	why = ctl_strerror_entry(err, a, o->set, buf, sizeof(buf));
	if (e->range)
		ctl_err("%s %s: %s: %s", o->cmd, arg,
			ctl_format_prefix(a, text, sizeof(text)), why);
	else
		ctl_err("%s %s: %s", o->cmd, arg, why);
	return err;
}

/*
 * add and del: one call per prefix.  @soft is the errno that only
 * concerns that prefix (EEXIST for add, ENOENT for del): report it and go
 * on, or under --exist pass over it; any other error stops.  add --exist
 * also asks the module to set a present prefix's timeout anew.  A range
 * is the fewest prefixes that cover it, each a call.
 */
static int per_address(const struct ctl_opts *o, enum ctl_entry_op op,
		       int soft, int argc, char **argv)
{
	struct cnf_addr split[CTL_RANGE_MAX];
	struct ctl_local *local = NULL;
	struct ctl_entry *e;
	int fd, rc = 0, err = 0;
	size_t i, j, n, parts;

	fd = parse_and_open(o, argc, argv, o->flags | CTL_PARSE_F_RANGE,
			    op == CTL_ADD, &e, &n);
	if (fd < 0) {
		free(e);
		return -fd;
	}
	if (op == CTL_ADD)
		local = ctl_local_for(fd, o->set, o->quiet);
	for (i = 0; i < n; i++) {
		parts = ctl_range_split(&e[i], split);
		for (j = 0; j < parts; j++) {
			ctl_local_warn(local, o->cmd, &split[j]);
			err = one_prefix(o, fd, op, soft, &e[i], &split[j],
					 argv[e[i].arg]);
			if (!err || err == soft)
				continue;
			rc = ctl_exit_code(err);
			break;
		}
		if (err && err != soft)
			break;
		if (err == soft && !o->exist)
			rc = CTL_EXIT_FAIL;
	}
	ctl_local_free(local);
	close(fd);
	free(e);
	return rc;
}

int ctl_cmd_add(const struct ctl_opts *o, int argc, char **argv)
{
	return per_address(o, CTL_ADD, EEXIST, argc, argv);
}

int ctl_cmd_del(const struct ctl_opts *o, int argc, char **argv)
{
	if (!o->file)
		return per_address(o, CTL_DEL, ENOENT, argc, argv);
	if (argc)
		return ctl_usage_error("del", NULL, "addresses and --file do not mix");
	return ctl_del_file(o, o->file);
}

/*
 * CTL_MATCH: 0 with the longest covering prefix, ENOENT when nothing
 * covers @a.  A module from before prefixes has no MATCH (ENOTTY): then
 * CTL_TEST, which says present or absent only, from then on (*@no_match).
 * Returns 0 (present), 1 (absent), or minus the exit code of an error.
 */
static int test_one(int fd, const struct ctl_opts *o, const char *arg,
		    const struct cnf_addr *a, bool *no_match)
{
	char text[CTL_PREFIXSTRLEN], why[CTL_SET_ERRLEN];
	struct cnf_addr m = *a;
	uint32_t left = 0;
	int err = 0, rc;

	if (!*no_match) {
		err = ctl_entry_call(fd, CTL_MATCH, o->set, &m, 0, &left);
		if (!err) {
			if (o->quiet)
				return CTL_EXIT_OK;
			printf("%s: present (%s", arg,
			       ctl_format_prefix(&m, text, sizeof(text)));
			if (left)
				printf(" " CTL_TIMEOUT_WORD " %lu",
				       (unsigned long)left);
			puts(")");
			return CTL_EXIT_OK;
		}
		*no_match = err == ENOTTY;
	}
	if (*no_match) {
		m = *a;
		err = ctl_entry_call(fd, CTL_TEST, o->set, &m, 0, NULL);
		if (!err) {
			if (!o->quiet)
				printf("%s: present\n", arg);
			return CTL_EXIT_OK;
		}
	}
	if (err == ENOENT) {
		if (!o->quiet)
			printf("%s: absent\n", arg);
		return CTL_EXIT_FAIL;
	}
	ctl_err("test %s: %s", arg,
		ctl_strerror_entry(err, a, o->set, why, sizeof(why)));
	/* As grep: 1 is an answer ("absent"), an error is 2 or more. */
	rc = ctl_exit_code(err);
	return -(rc == CTL_EXIT_FAIL ? CTL_EXIT_ERROR : rc);
}

int ctl_cmd_test(const struct ctl_opts *o, int argc, char **argv)
{
	struct ctl_entry *e;
	bool no_match = false;
	int fd, rc = 0, r;
	size_t i, n;

	if (o->one_set && o->iif)
		return ctl_usage_error("test", NULL,
				       "--iif asks the namespace, -s one set: not both");
	fd = parse_and_open(o, argc, argv, o->flags, false, &e, &n);
	if (fd < 0) {
		free(e);
		/* Usage and bad input keep their codes; any failure is 2+. */
		return -fd == CTL_EXIT_FAIL ? CTL_EXIT_ERROR : -fd;
	}
	if (!o->one_set) {
		rc = ctl_test_verdicts(o, fd, e, n, argv);
		close(fd);
		free(e);
		return rc;
	}
	for (i = 0; i < n; i++) {
		r = test_one(fd, o, argv[e[i].arg], &e[i].a, &no_match);
		if (r < 0) {
			rc = -r;
			break;
		}
		rc |= r;
	}
	close(fd);
	free(e);
	return rc;
}

static int list_or_save(const struct ctl_opts *o, int argc, char **argv,
			bool save)
{
	static char outbuf[1 << 16];
	uint64_t count;
	int fd, rc;

	fd = ctl_open_no_args(o->cmd, argc, argv);
	if (fd < 0)
		return -fd;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (save && o->all)
		rc = ctl_save_sets(fd, stdout);
	else if (save)
		rc = ctl_save_set(fd, o->set, stdout);
	else
		rc = ctl_dump(o->cmd, fd, o->set, false, stdout, &count);
	close(fd);
	return rc;
}

int ctl_cmd_list(const struct ctl_opts *o, int argc, char **argv)
{
	return list_or_save(o, argc, argv, false);
}

int ctl_cmd_save(const struct ctl_opts *o, int argc, char **argv)
{
	if (o->all && o->set)
		return ctl_usage_error("save", NULL, "--all and --set do not mix");
	return list_or_save(o, argc, argv, true);
}

int ctl_cmd_flush(const struct ctl_opts *o, int argc, char **argv)
{
	char why[CTL_SET_ERRLEN];
	int fd, err;

	fd = ctl_open_no_args(o->cmd, argc, argv);
	if (fd < 0)
		return -fd;
	err = ctl_flush_call(fd, o->set);
	close(fd);
	if (!err)
		return CTL_EXIT_OK;
	if (o->set)
		ctl_err("flush %s: %s", o->set,
			ctl_strerror_set(err, o->set, why, sizeof(why)));
	else
		ctl_err("flush: %s", ctl_strerror(err));
	return ctl_exit_code(err);
}
