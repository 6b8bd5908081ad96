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

/* Parse every prefix argument first: nothing may change on a typo. */
static int parse_addr_args(const char *cmd, int argc, char **argv,
			   unsigned int flags, struct cnf_addr *addrs)
{
	char reason[CTL_REASONLEN];
	enum ctl_parse_err err;
	struct cnf_addr hint;
	int i, bad = 0;

	for (i = 0; i < argc; i++) {
		err = ctl_parse_prefix(argv[i], flags, &addrs[i], &hint);
		if (err)
			ctl_err("%s %s: %s", cmd, argv[i],
				ctl_parse_reason(err, &hint, reason,
						 sizeof(reason)));
		bad += !!err;
	}
	return bad ? CTL_EXIT_BADINPUT : CTL_EXIT_OK;
}

/*
 * The prefix arguments of add, del and test parsed into *@addrs
 * (malloc'd), then the device opened: the fd, or minus the exit code.
 */
static int parse_and_open(const struct ctl_opts *o, int argc, char **argv,
			  struct cnf_addr **addrs)
{
	int fd, rc;

	*addrs = NULL;
	if (!argc)
		return -ctl_usage_error(o->cmd, NULL, "no address given");
	*addrs = calloc(argc, sizeof(**addrs));
	if (!*addrs)
		return -ctl_fail(o->cmd, ENOMEM);
	rc = parse_addr_args(o->cmd, argc, argv, o->flags, *addrs);
	if (rc)
		return -rc;
	fd = ctl_open_device();
	return fd;
}

/*
 * add and del: one call per prefix.  @soft is the errno that only
 * concerns that prefix (EEXIST for add, ENOENT for del): report it and go
 * on, or under --exist pass over it; any other error stops.
 */
static int per_address(const struct ctl_opts *o, enum ctl_entry_op op,
		       int soft, int argc, char **argv)
{
	char why[CTL_SET_ERRLEN];
	struct cnf_addr *addrs;
	int i, fd, rc = 0, err;

	fd = parse_and_open(o, argc, argv, &addrs);
	if (fd < 0) {
		free(addrs);
		return -fd;
	}
	for (i = 0; i < argc; i++) {
		err = ctl_entry_call(fd, op, o->set, &addrs[i]);
		if (!err || (err == soft && o->exist))
			continue;
		ctl_err("%s %s: %s", o->cmd, argv[i],
			ctl_strerror_entry(err, &addrs[i], o->set, why,
					   sizeof(why)));
		if (err != soft) {
			rc = ctl_exit_code(err);
			break;
		}
		rc = CTL_EXIT_FAIL;
	}
	close(fd);
	free(addrs);
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
	int err = 0, rc;

	if (!*no_match) {
		err = ctl_entry_call(fd, CTL_MATCH, o->set, &m);
		if (!err) {
			if (!o->quiet)
				printf("%s: present (%s)\n", arg,
				       ctl_format_prefix(&m, text, sizeof(text)));
			return CTL_EXIT_OK;
		}
		*no_match = err == ENOTTY;
	}
	if (*no_match) {
		m = *a;
		err = ctl_entry_call(fd, CTL_TEST, o->set, &m);
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
	struct cnf_addr *addrs;
	bool no_match = false;
	int i, fd, rc = 0, r;

	fd = parse_and_open(o, argc, argv, &addrs);
	if (fd < 0) {
		free(addrs);
		/* Usage and bad input keep their codes; any failure is 2+. */
		return -fd == CTL_EXIT_FAIL ? CTL_EXIT_ERROR : -fd;
	}
	for (i = 0; i < argc; i++) {
		r = test_one(fd, o, argv[i], &addrs[i], &no_match);
		if (r < 0) {
			rc = -r;
			break;
		}
		rc |= r;
	}
	close(fd);
	free(addrs);
	return rc;
}

static int list_or_save(const struct ctl_opts *o, int argc, char **argv,
			bool save)
{
	static char outbuf[1 << 16];
	uint64_t count;
	int fd, rc;

	fd = ctl_open_no_args(o, argc, argv);
	if (fd < 0)
		return -fd;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (save && o->all)
		rc = ctl_save_sets(fd, stdout);
	else if (save)
		rc = ctl_save_set(fd, o->set, stdout);
	else
		rc = ctl_dump(o->cmd, fd, o->set, stdout, &count);
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

	fd = ctl_open_no_args(o, argc, argv);
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
