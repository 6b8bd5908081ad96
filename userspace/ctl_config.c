// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: the namespace's settings and figures - reset, stats, mode, hooks,
 * limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"

int ctl_cmd_reset(const struct ctl_opts *o, int argc, char **argv)
{
	int fd, rc;

	fd = ctl_open_no_args(o, argc, argv);
	if (fd < 0)
		return -fd;
	rc = ioctl(fd, CNF_IOC_RESET) < 0 ? errno : 0;
	if (rc == EBUSY) {
		ctl_err("reset: a set is in use by iptables rules (-m cuckoo; 'cuckooctl sets' counts them): delete them first");
		rc = CTL_EXIT_FAIL;
	} else if (rc) {
		rc = ctl_fail("reset", rc);
	}
	close(fd);
	return rc;
}

static int read_stats(const char *cmd, struct cnf_stats *st)
{
	int fd, rc = CTL_EXIT_OK;

	memset(st, 0, sizeof(*st));
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	if (ioctl(fd, CNF_IOC_STATS, st) < 0)
		rc = ctl_fail(cmd, errno);
	close(fd);
	return rc;
}

int ctl_cmd_stats(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_set_info *sets = NULL;
	const struct cnf_expiry_stats *ex;
	struct cnf_stats st;
	size_t n = 0;
	int fd, err;

	memset(&st, 0, sizeof(st));
	fd = ctl_open_no_args(o, argc, argv);
	if (fd < 0)
		return -fd;
	err = ioctl(fd, CNF_IOC_STATS, &st) ? errno : 0;
	/* A module without timeouts leaves them zero: not reported. */
	ex = !err && ctl_has_timeouts(fd) ? &st.expiry : NULL;
	/* Per set figures when the module has sets. */
	if (!err)
		err = ctl_set_list(fd, &sets, &n);
	close(fd);
	if (err && err != CTL_ENOSETS)
		return ctl_fail("stats", err);
	if (o->json) {
		ctl_print_stats_json(stdout, &st, ex, sets, n);
	} else {
		ctl_print_stats_text(stdout, &st);
		ctl_print_expiry_text(stdout, ex);
		if (sets) {
			puts("sets:");
			ctl_print_sets_text(stdout, sets, n);
		}
	}
	free(sets);
	return CTL_EXIT_OK;
}

static int set_config(const char *what, const struct cnf_config *cfg)
{
	int fd, rc = CTL_EXIT_OK;

	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	if (ioctl(fd, CNF_IOC_SET_CONFIG, cfg) < 0) {
		/* The one EINVAL a valid request can get. */
		if (errno == EINVAL && (cfg->set & CNF_CONFIG_MEM_LIMIT)) {
			ctl_err("%s: below the memory already in use", what);
			rc = CTL_EXIT_FAIL;
		} else if ((errno == EINVAL || errno == E2BIG) &&
			   (cfg->set & CNF_CONFIG_HOOKS)) {
			/* A module from before the setting. */
			ctl_err("%s: the loaded cuckoo_nf cannot turn its netfilter hooks off (too old)",
				what);
			rc = CTL_EXIT_FAIL;
		} else {
			rc = ctl_fail(what, errno);
		}
	}
	close(fd);
	return rc;
}

static int show_mode(void)
{
	struct cnf_stats st;
	const char *name;
	int rc = read_stats("mode", &st);

	if (rc)
		return rc;
	name = ctl_mode_name(st.mode);
	if (name)
		puts(name);
	else
		printf("unknown (%u)\n", st.mode);
	return CTL_EXIT_OK;
}

int ctl_cmd_mode(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_config cfg;
	int mode;

	if (!argc)
		return show_mode();
	if (argc > 1)
		return ctl_usage_error("mode", NULL, "one mode only");
	mode = ctl_mode_parse(argv[0]);
	if (mode < 0) {
		ctl_err("mode %s: unknown mode (drop or monitor)", argv[0]);
		return CTL_EXIT_BADINPUT;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.set = CNF_CONFIG_MODE;
	cfg.mode = mode;
	return set_config("mode", &cfg);
}

static int show_hooks(void)
{
	struct cnf_stats st;
	int rc = read_stats("hooks", &st);

	if (rc)
		return rc;
	puts(ctl_hooks_name(&st));
	return CTL_EXIT_OK;
}

int ctl_cmd_hooks(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_config cfg;

	if (!argc)
		return show_hooks();
	if (argc > 1)
		return ctl_usage_error("hooks", NULL, "one setting only");
	if (strcmp(argv[0], "on") && strcmp(argv[0], "off")) {
		ctl_err("hooks %s: unknown setting (on or off)", argv[0]);
		return CTL_EXIT_BADINPUT;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.set = CNF_CONFIG_HOOKS;
	cfg.hooks = strcmp(argv[0], "on") ? CNF_HOOKS_OFF : CNF_HOOKS_ON;
	return set_config("hooks", &cfg);
}

static int show_limit(void)
{
	struct cnf_stats st;
	char human[32];
	int rc = read_stats("limit", &st);

	if (rc)
		return rc;
	printf("%llu (%s)\n", (unsigned long long)st.mem_limit,
	       ctl_format_bytes(st.mem_limit, human, sizeof(human)));
	return CTL_EXIT_OK;
}

int ctl_cmd_limit(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_config cfg;
	uint64_t bytes;
	char what[64];

	if (!argc)
		return show_limit();
	if (argc > 1)
		return ctl_usage_error("limit", NULL, "one size only");
	switch (ctl_parse_size(argv[0], &bytes)) {
	case 0:
		break;
	case -ERANGE:
		ctl_err("limit %s: too large", argv[0]);
		return CTL_EXIT_BADINPUT;
	default:
		ctl_err("limit %s: not a size (bytes, or a number with K, M or G)",
			argv[0]);
		return CTL_EXIT_BADINPUT;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.set = CNF_CONFIG_MEM_LIMIT;
	cfg.mem_limit = bytes;
	snprintf(what, sizeof(what), "limit %s", argv[0]);
	return set_config(what, &cfg);
}
