// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: the namespace's settings and figures - reset, stats, mode, hooks,
 * limit.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_prom.h"

int ctl_cmd_reset(const struct ctl_opts *o, int argc, char **argv)
{
	int fd, rc;

	fd = ctl_open_no_args(o->cmd, argc, argv);
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
	if (o->json && o->prometheus)
		return ctl_usage_error("stats", NULL,
				       "-j and --prometheus do not mix");
	fd = ctl_open_no_args(o->cmd, argc, argv);
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
	if (o->prometheus) {
		ctl_print_stats_prometheus(stdout, &st, ex, sets, n);
	} else if (o->json) {
		ctl_print_stats_json(stdout, &st, ex, sets, n);
	} else {
		ctl_print_stats_text(stdout, &st);
		ctl_print_log_text(stdout, &st);
		ctl_print_expiry_text(stdout, ex);
		if (sets) {
			puts("sets:");
			ctl_print_sets_text(stdout, sets, n);
		}
	}
	free(sets);
	return CTL_EXIT_OK;
}

/*
 * One CNF_IOC_SET_CONFIG: 0, or the errno (-the exit code when the device
 * would not open, reported).
 */
static int config_call(const struct cnf_config *cfg)
{
	int fd, err = 0;

	fd = ctl_open_device();
	if (fd < 0)
		return fd;
	if (ioctl(fd, CNF_IOC_SET_CONFIG, cfg) < 0)
		err = errno;
	close(fd);
	return err;
}

/* A failed setting, reported: the exit code. */
static int config_error(const char *what, const struct cnf_config *cfg,
			int err)
{
	/* The one EINVAL a valid request can get. */
	if (err == EINVAL && (cfg->set & CNF_CONFIG_MEM_LIMIT)) {
		ctl_err("%s: below the memory already in use", what);
	} else if (err == EINVAL &&
		   (cfg->set & (CNF_CONFIG_MARK | CNF_CONFIG_IIF))) {
		/* Checked here before: a module from before them. */
		ctl_err("%s: the loaded cuckoo_nf has no %s (too old)", what,
			cfg->set & CNF_CONFIG_MARK ? "mark mode" :
			"scope of devices for its hooks");
	} else if (err == ENOSPC && (cfg->set & CNF_CONFIG_IIF)) {
		ctl_err("%s: the scope does not fit in the memory limit", what);
	} else if ((err == EINVAL || err == E2BIG) &&
		   (cfg->set & CNF_CONFIG_LOG_LIMIT)) {
		/* Checked here before: a module from before logging. */
		ctl_err("%s: %s", what, ctl_strerror(CTL_ENOLOG));
	} else if ((err == EINVAL || err == E2BIG) &&
		   (cfg->set & CNF_CONFIG_HOOKS)) {
		/* A module from before the setting. */
		ctl_err("%s: the loaded cuckoo_nf cannot turn its netfilter hooks off (too old)",
			what);
	} else {
		return ctl_fail(what, err);
	}
	return CTL_EXIT_FAIL;
}

static int set_config(const char *what, const struct cnf_config *cfg)
{
	int err = config_call(cfg);

	if (err < 0)
		return -err;
	return err ? config_error(what, cfg, err) : CTL_EXIT_OK;
}

static int show_mode(void)
{
	struct cnf_stats st;
	int rc = read_stats("mode", &st);

	if (rc)
		return rc;
	ctl_print_mode(stdout, &st);
	putchar('\n');
	return CTL_EXIT_OK;
}

int ctl_cmd_mode(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_config cfg;
	const char *why;
	int mode;

	if (!argc)
		return show_mode();
	mode = ctl_mode_parse(argv[0]);
	if (mode < 0) {
		ctl_err("mode %s: unknown mode (drop, monitor or mark)", argv[0]);
		return CTL_EXIT_BADINPUT;
	}
	if (mode == CNF_MODE_MARK && argc != 2)
		return ctl_usage_error("mode", NULL,
				       "mark needs its VALUE[/MASK], and no more");
	if (mode != CNF_MODE_MARK && argc > 1)
		return ctl_usage_error("mode", NULL, "one mode only");
	memset(&cfg, 0, sizeof(cfg));
	cfg.set = CNF_CONFIG_MODE;
	cfg.mode = mode;
	if (mode == CNF_MODE_MARK) {
		why = ctl_parse_mark(argv[1], &cfg.mark, &cfg.mark_mask);
		if (why) {
			ctl_err("mode mark %s: %s", argv[1], why);
			return CTL_EXIT_BADINPUT;
		}
		cfg.set |= CNF_CONFIG_MARK;
	}
	return set_config("mode", &cfg);
}

static int show_hooks(void)
{
	struct cnf_stats st;
	int rc = read_stats("hooks", &st);

	if (rc)
		return rc;
	ctl_print_hooks(stdout, &st);
	putchar('\n');
	return CTL_EXIT_OK;
}

/* hooks on|off [--iif NAME...] into @cfg: exit code. */
int ctl_hooks_config(const struct ctl_opts *o, int argc, char **argv,
		     struct cnf_config *cfg)
{
	const char *why;
	unsigned int i;

	if (argc > 1)
		return ctl_usage_error("hooks", NULL, "one setting only");
	if (strcmp(argv[0], "on") && strcmp(argv[0], "off")) {
		ctl_err("hooks %s: unknown setting (on or off)", argv[0]);
		return CTL_EXIT_BADINPUT;
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->set = CNF_CONFIG_HOOKS | CNF_CONFIG_IIF;
	cfg->hooks = strcmp(argv[0], "on") ? CNF_HOOKS_OFF : CNF_HOOKS_ON;
	if (o->niif && cfg->hooks == CNF_HOOKS_OFF)
		return ctl_usage_error("hooks", "--iif",
				       "scopes hooks that are on, not off");
	for (i = 0; i < o->niif; i++) {
		why = ctl_iif_pattern_error(o->iifs[i]);
		if (why) {
			ctl_err("hooks --iif %s: %s", o->iifs[i], why);
			return CTL_EXIT_BADINPUT;
		}
		memcpy(cfg->iif[i], o->iifs[i], strlen(o->iifs[i]));
	}
	cfg->iif_count = o->niif;
	return CTL_EXIT_OK;
}

int ctl_cmd_hooks(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_config cfg;
	int rc;

	if (!argc) {
		if (o->niif)
			return ctl_usage_error("hooks", "--iif",
					       "needs 'on' before it");
		return show_hooks();
	}
	rc = ctl_hooks_config(o, argc, argv, &cfg);
	return rc ? rc : ctl_set_hooks("hooks", &cfg);
}

int ctl_set_hooks(const char *what, struct cnf_config *cfg)
{
	int err = config_call(cfg);

	/*
	 * A module from before the scope knows no CNF_CONFIG_IIF: without
	 * --iif, on and off mean what they meant to it.
	 */
	if (err == EINVAL && !cfg->iif_count) {
		cfg->set &= ~CNF_CONFIG_IIF;
		err = config_call(cfg);
	}
	if (err < 0)
		return -err;
	return err ? config_error(what, cfg, err) : CTL_EXIT_OK;
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

/* A number of lines for log-limit, 1 to @max: 0 when it is not one. */
static uint32_t log_number(const char *s, uint32_t max)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	return errno || *end || v > max ? 0 : (uint32_t)v;
}

int ctl_cmd_log_limit(const struct ctl_opts *o, int argc, char **argv)
{
	struct cnf_config cfg;
	struct cnf_stats st;
	char what[64];
	int rc;

	if (!argc) {
		rc = read_stats("log-limit", &st);
		if (rc)
			return rc;
		if (!st.log_rate)
			return ctl_fail("log-limit", CTL_ENOLOG);
		printf("%lu %lu\n", (unsigned long)st.log_rate,
		       (unsigned long)st.log_burst);
		return CTL_EXIT_OK;
	}
	if (argc > 2)
		return ctl_usage_error("log-limit", argv[2],
				       "a rate and at most a burst");
	memset(&cfg, 0, sizeof(cfg));
	cfg.set = CNF_CONFIG_LOG_LIMIT;
	cfg.log_rate = log_number(argv[0], CNF_LOG_RATE_MAX);
	if (!cfg.log_rate) {
		ctl_err("log-limit %s: not a rate (lines a second, 1 to %u)",
			argv[0], CNF_LOG_RATE_MAX);
		return CTL_EXIT_BADINPUT;
	}
	/* A burst of twice the rate unless given, as the defaults have. */
	cfg.log_burst = argc > 1 ? log_number(argv[1], CNF_LOG_BURST_MAX) :
		       cfg.log_rate > CNF_LOG_BURST_MAX / 2 ? CNF_LOG_BURST_MAX :
		       2 * cfg.log_rate;
	if (!cfg.log_burst) {
		ctl_err("log-limit %s: not a burst (lines at once, 1 to %u)",
			argv[1], CNF_LOG_BURST_MAX);
		return CTL_EXIT_BADINPUT;
	}
	snprintf(what, sizeof(what), "log-limit %s%s%s", argv[0],
		 argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	return set_config(what, &cfg);
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
