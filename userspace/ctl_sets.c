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

/* One set call on @name, opening the device: exit code. */
static int one_set_call(const char *cmd, unsigned long req, const char *name,
			uint32_t kind)
{
	int fd, err;

	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	err = ctl_set_call(fd, req, name, kind);
	close(fd);
	return err ? set_fail(cmd, name, err) : CTL_EXIT_OK;
}

int ctl_cmd_create(const struct ctl_opts *o, int argc, char **argv)
{
	int kind = CNF_SET_BLOCK, rc;

	if (argc < 1 || argc > 2)
		return ctl_usage_error("create", NULL, "a name and at most a kind");
	rc = ctl_check_set_name("create", argv[0]);
	if (rc)
		return rc;
	if (argc == 2) {
		kind = ctl_set_kind_parse(argv[1]);
		if (kind < 0) {
			ctl_err("create %s: unknown kind (block or allow)",
				argv[1]);
			return CTL_EXIT_BADINPUT;
		}
	}
	return one_set_call("create", CNF_IOC_SET_CREATE, argv[0], kind);
}

int ctl_cmd_destroy(const struct ctl_opts *o, int argc, char **argv)
{
	int rc;

	if (argc != 1)
		return ctl_usage_error("destroy", NULL, "one set name");
	rc = ctl_check_set_name("destroy", argv[0]);
	if (rc)
		return rc;
	if (ctl_set_is_default(argv[0]))
		return set_fail("destroy", argv[0], EBUSY);
	return one_set_call("destroy", CNF_IOC_SET_DESTROY, argv[0], 0);
}

/*
 * Whether @name is among @sets: its index, or -1.  For messages naming
 * the set a failed call missed.
 */
static long find_set(const struct cnf_set_info *sets, size_t n,
		     const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strncmp(sets[i].name, name, sizeof(sets[i].name)))
			return i;
	return -1;
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
		ctl_err("%s: the sets are of different kinds", what);
		return CTL_EXIT_FAIL;
	}
	if (err == ENOENT && !ctl_set_list(fd, &sets, &n)) {
		if (find_set(sets, n, a) >= 0)
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

	fd = ctl_open_no_args(o, argc, argv);
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

/* The set line of @s and its prefixes. */
static int save_section(int fd, const struct cnf_set_info *s, FILE *out)
{
	char name[CNF_SET_NAME_LEN + 1] = "";
	uint64_t count;

	memcpy(name, s->name, sizeof(s->name));
	fprintf(out, CTL_SET_LINE "%s %s\n", name,
		ctl_set_kind_name(s->kind) ? ctl_set_kind_name(s->kind) :
					     "block");
	return ctl_dump("save", fd, name, out, &count);
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
		return ctl_dump("save", fd, NULL, out, &count);
	err = ctl_set_list(fd, &sets, &n);
	if (err)
		return set_fail("save", set, err);
	i = find_set(sets, n, set);
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
		return ctl_dump("save", fd, NULL, out, &count);
	if (err)
		return ctl_fail("save", err);
	for (i = 0; i < n && !rc; i++)
		rc = save_section(fd, &sets[i], out);
	free(sets);
	return rc;
}
