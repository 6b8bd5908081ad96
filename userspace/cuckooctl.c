// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl - control the cuckoo_nf source address filter.
 *
 * Every command is one or a few ioctls on /dev/cuckoo_nf; see cuckooctl(8)
 * for the commands and uapi/linux/cuckoo_nf.h for the calls.  Arguments are
 * all checked before the device is opened, so a typo never half-applies.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"

#ifndef CTL_VERSION
#error "CTL_VERSION: build with make, which takes it from dkms.conf"
#endif

const char *ctl_device = CNF_DEVICE_PATH;
static bool opt_json;

struct ctl_cmd {
	const char *name;
	int (*run)(const struct ctl_cmd *cmd, int argc, char **argv);
	const char *usage;	/* arguments, after "cuckooctl NAME " */
	const char *summary;	/* one line, for the command list */
	const char *help;	/* the rest of "cuckooctl help NAME" */
};

static const struct ctl_cmd *find_cmd(const char *name);
static void print_cmd_help(const struct ctl_cmd *cmd);

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(CTL_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ctl_fail(const char *what, int err)
{
	ctl_err("%s: %s", what, ctl_strerror(err));
	return ctl_exit_code(err);
}

int ctl_usage_error(const char *cmd, const char *fmt, ...)
{
	const struct ctl_cmd *c = find_cmd(cmd);
	va_list ap;

	fputs(CTL_NAME " ", stderr);
	fputs(cmd, stderr);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c)
		fprintf(stderr, "Usage: " CTL_NAME " %s %s\n", c->name, c->usage);
	fprintf(stderr, "Try '" CTL_NAME " help %s' for more.\n", cmd);
	return CTL_EXIT_USAGE;
}

int ctl_module_version(int fd, struct cnf_version *v)
{
	memset(v, 0, sizeof(*v));
	if (ioctl(fd, CNF_IOC_VERSION, v) < 0)
		return -errno;
	/* Never trust the kernel to terminate it. */
	v->version[sizeof(v->version) - 1] = '\0';
	return 0;
}

/*
 * The module's ABI must be one this tool knows.  A module without
 * CNF_IOC_VERSION (-ENOTTY) predates it and speaks ABI 1; any other
 * failure is left for the command's own call to report.
 */
static int check_abi(int fd)
{
	struct cnf_version v;

	if (ctl_module_version(fd, &v) || v.abi == CNF_ABI_VERSION)
		return 0;
	ctl_err("the loaded module (version %s) speaks ABI %u; this cuckooctl (" CTL_VERSION ") knows ABI %u only: install a cuckooctl matching the module",
		v.version, v.abi, CNF_ABI_VERSION);
	return -CTL_EXIT_ABI;
}

static int open_device(void)
{
	int fd = open(ctl_device, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOENT:
	case ENOTDIR:
	case ENXIO:	/* a stale node whose driver is gone */
	case ENODEV:
		return -CTL_EXIT_NODEV;
	case EPERM:
	case EACCES:
		return -CTL_EXIT_PERM;
	}
	return -CTL_EXIT_FAIL;
}

int ctl_open_device(void)
{
	int fd = open_device(), rc;

	if (fd >= 0) {
		rc = check_abi(fd);
		if (!rc)
			return fd;
		close(fd);
		return rc;
	}
	if (fd == -CTL_EXIT_NODEV)
		ctl_err("%s not found: load the module (modprobe cuckoo_nf / insmod cuckoo_nf.ko)",
			ctl_device);
	else if (fd == -CTL_EXIT_PERM)
		ctl_err("%s: %s", ctl_device, ctl_strerror(errno));
	else
		ctl_err("%s: %s", ctl_device, strerror(errno));
	return fd;
}

/*
 * The options every command takes: -h/--help, and those in @extra.  Returns
 * the option character, 0 at the end of the options, or -1 after printing
 * help or a usage error (exit code in *rc).
 */
static int next_opt(const struct ctl_cmd *cmd, int argc, char **argv,
		    const char *shortopts, const struct option *longopts,
		    int *rc)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (c) {
	case -1:
		return 0;
	case 'h':
		print_cmd_help(cmd);
		*rc = CTL_EXIT_OK;
		return -1;
	case '?':
		if (optopt)
			*rc = ctl_usage_error(cmd->name, "unknown option '-%c'", optopt);
		else
			*rc = ctl_usage_error(cmd->name, "unknown option '%s'",
					      argv[optind - 1]);
		return -1;
	case ':':
		*rc = ctl_usage_error(cmd->name, "option '%s' needs an argument",
				      argv[optind - 1]);
		return -1;
	}
	return c;
}

static const struct option help_only_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ }
};

/* For commands with no option but --help: 0 to go on, else -1 and *rc. */
static int no_options(const struct ctl_cmd *cmd, int argc, char **argv, int *rc)
{
	int c;

	/* "+": an address or file name never starts an option list. */
	while ((c = next_opt(cmd, argc, argv, "+:h", help_only_opts, rc)) > 0)
		;
	return c;
}

/* The option of every command taking prefixes: a /0 is meant. */
#define CTL_OPT_ALL	0x100
#define CTL_OPTION_ALL	{ "all-addresses", no_argument, NULL, CTL_OPT_ALL }

/*
 * Options of add, test and restore: --all-addresses into *@flags.  0 to go
 * on, else -1 and *rc.
 */
static int prefix_options(const struct ctl_cmd *cmd, int argc, char **argv,
			  unsigned int *flags, int *rc)
{
	static const struct option opts[] = {
		CTL_OPTION_ALL,
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int c;

	*flags = 0;
	while ((c = next_opt(cmd, argc, argv, "+:h", opts, rc)) > 0)
		*flags |= CTL_PARSE_F_ALL;
	return c;
}

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
 * add and del: one ioctl per prefix.  @soft is the errno that only
 * concerns that prefix (EEXIST for add, ENOENT for del): report it and go
 * on; any other error stops.
 */
static int per_address(const char *cmd, unsigned long req, int soft,
		       unsigned int flags, int argc, char **argv)
{
	struct cnf_addr *addrs;
	int i, fd, rc, err;

	if (!argc)
		return ctl_usage_error(cmd, "no address given");
	addrs = calloc(argc, sizeof(*addrs));
	if (!addrs) {
		ctl_err("%s: %s", cmd, strerror(ENOMEM));
		return CTL_EXIT_FAIL;
	}
	rc = parse_addr_args(cmd, argc, argv, flags, addrs);
	if (rc)
		goto out;
	fd = ctl_open_device();
	if (fd < 0) {
		rc = -fd;
		goto out;
	}
	for (i = 0; i < argc; i++) {
		if (!ioctl(fd, req, &addrs[i]))
			continue;
		err = errno;
		ctl_err("%s %s: %s", cmd, argv[i],
			ctl_strerror_addr(err, &addrs[i]));
		if (err != soft) {
			rc = ctl_exit_code(err);
			break;
		}
		rc = CTL_EXIT_FAIL;
	}
	close(fd);
out:
	free(addrs);
	return rc;
}

static int cmd_add(const struct ctl_cmd *cmd, int argc, char **argv)
{
	unsigned int flags;
	int rc;

	if (prefix_options(cmd, argc, argv, &flags, &rc))
		return rc;
	return per_address("add", CNF_IOC_ADD, EEXIST, flags, argc - optind,
			   argv + optind);
}

static int cmd_del(const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		CTL_OPTION_ALL,
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *file = NULL;
	unsigned int flags = 0;
	int c, rc;

	while ((c = next_opt(cmd, argc, argv, "+:f:h", opts, &rc)) > 0) {
		if (c == 'f')
			file = optarg;
		else
			flags |= CTL_PARSE_F_ALL;
	}
	if (c < 0)
		return rc;
	if (!file)
		return per_address("del", CNF_IOC_DEL, ENOENT, flags,
				   argc - optind, argv + optind);
	if (optind < argc)
		return ctl_usage_error("del", "addresses and --file do not mix");
	return ctl_del_file(file, flags);
}

/*
 * CNF_IOC_MATCH: 0 with the longest covering prefix, -ENOENT when nothing
 * covers @a.  A module from before prefixes has no MATCH (-ENOTTY): then
 * CNF_IOC_TEST, which says present or absent only, from then on (*@no_match).
 */
static int test_one(int fd, const char *arg, const struct cnf_addr *a,
		    bool *no_match)
{
	char text[CTL_PREFIXSTRLEN];
	struct cnf_addr m = *a;
	int err = 0;

	if (!*no_match) {
		if (!ioctl(fd, CNF_IOC_MATCH, &m)) {
			printf("%s: present (%s)\n", arg,
			       ctl_format_prefix(&m, text, sizeof(text)));
			return CTL_EXIT_OK;
		}
		err = errno;
		*no_match = err == ENOTTY;
	}
	if (*no_match) {
		m = *a;
		err = ioctl(fd, CNF_IOC_TEST, &m) ? errno : 0;
		if (!err) {
			printf("%s: present\n", arg);
			return CTL_EXIT_OK;
		}
	}
	if (err == ENOENT) {
		printf("%s: absent\n", arg);
		return CTL_EXIT_FAIL;
	}
	ctl_err("test %s: %s", arg, ctl_strerror_addr(err, a));
	return -ctl_exit_code(err);
}

static int cmd_test(const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct cnf_addr *addrs;
	bool no_match = false;
	unsigned int flags;
	int i, fd, rc, r;

	if (prefix_options(cmd, argc, argv, &flags, &rc))
		return rc;
	argc -= optind;
	argv += optind;
	if (!argc)
		return ctl_usage_error("test", "no address given");
	addrs = calloc(argc, sizeof(*addrs));
	if (!addrs) {
		ctl_err("test: %s", strerror(ENOMEM));
		return CTL_EXIT_FAIL;
	}
	rc = parse_addr_args("test", argc, argv, flags, addrs);
	if (rc)
		goto out;
	fd = ctl_open_device();
	if (fd < 0) {
		rc = -fd;
		goto out;
	}
	for (i = 0; i < argc; i++) {
		r = test_one(fd, argv[i], &addrs[i], &no_match);
		if (r < 0) {
			rc = -r;
			break;
		}
		rc |= r;
	}
	close(fd);
out:
	free(addrs);
	return rc;
}

static int cmd_load(const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "strict", no_argument, NULL, 's' },
		CTL_OPTION_ALL,
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned int flags = 0;
	bool strict = false;
	int c, rc;

	while ((c = next_opt(cmd, argc, argv, "+:sh", opts, &rc)) > 0) {
		if (c == 's')
			strict = true;
		else
			flags |= CTL_PARSE_F_ALL;
	}
	if (c < 0)
		return rc;
	if (argc - optind > 1)
		return ctl_usage_error("load", "one file at most");
	return ctl_load(optind < argc ? argv[optind] : NULL, strict, flags);
}

static int dump_chunk(int fd, struct cnf_dump *d, struct cnf_addr *buf,
		      uint32_t room, FILE *out)
{
	char text[CTL_PREFIXSTRLEN];
	uint32_t i;

	d->addrs = (uintptr_t)buf;
	d->count = room;
	d->flags = 0;
	if (ioctl(fd, CNF_IOC_DUMP, d) < 0)
		return -errno;
	if (d->count > room)
		return -EPROTO;
	for (i = 0; i < d->count; i++) {
		fputs(ctl_format_prefix(&buf[i], text, sizeof(text)), out);
		putc('\n', out);
	}
	return 0;
}

/* The dump loop: a chunk per call until the kernel says done. */
int ctl_dump(const char *cmd, int fd, FILE *out, uint64_t *count)
{
	const uint32_t room = 65536;
	struct cnf_addr *buf = calloc(room, sizeof(*buf));
	struct cnf_dump d;
	int err = 0;

	*count = 0;
	if (!buf)
		return ctl_fail(cmd, ENOMEM);
	memset(&d, 0, sizeof(d));
	do {
		err = dump_chunk(fd, &d, buf, room, out);
		if (!err)
			*count += d.count;
		/* Neither done nor progress would loop forever. */
		if (!err && !d.count && !(d.flags & CNF_DUMP_F_DONE))
			err = -EPROTO;
	} while (!err && !(d.flags & CNF_DUMP_F_DONE));
	free(buf);
	if (err == -ENOSPC) {
		/* The kernel copies the set first, within the memory limit. */
		ctl_err("%s: no room for a copy of the set within the namespace's memory limit: raise it ('cuckooctl limit')",
			cmd);
		return ctl_exit_code(ENOSPC);
	}
	return err ? ctl_fail(cmd, -err) : CTL_EXIT_OK;
}

static int list_or_save(const struct ctl_cmd *cmd, int argc, char **argv,
			bool save)
{
	static char outbuf[1 << 16];
	uint64_t count;
	int fd, rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	if (optind < argc)
		return ctl_usage_error(cmd->name, "unexpected argument '%s'",
				       argv[optind]);
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (save)
		puts(CTL_SAVE_HEADER);
	rc = ctl_dump(cmd->name, fd, stdout, &count);
	close(fd);
	return rc;
}

static int cmd_list(const struct ctl_cmd *cmd, int argc, char **argv)
{
	return list_or_save(cmd, argc, argv, false);
}

static int cmd_save(const struct ctl_cmd *cmd, int argc, char **argv)
{
	return list_or_save(cmd, argc, argv, true);
}

static int cmd_restore(const struct ctl_cmd *cmd, int argc, char **argv)
{
	unsigned int flags;
	int rc;

	if (prefix_options(cmd, argc, argv, &flags, &rc))
		return rc;
	if (argc - optind != 1)
		return ctl_usage_error("restore", "one file needed ('-' for stdin)");
	return ctl_restore(argv[optind], flags);
}

/* save-all and restore-all: at most one argument, the directory. */
static int cmd_save_all(const struct ctl_cmd *cmd, int argc, char **argv)
{
	int rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	if (argc - optind > 1)
		return ctl_usage_error(cmd->name, "one directory at most");
	return ctl_save_all(optind < argc ? argv[optind] : CTL_STATE_DIR);
}

static int cmd_restore_all(const struct ctl_cmd *cmd, int argc, char **argv)
{
	int rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	if (argc - optind > 1)
		return ctl_usage_error(cmd->name, "one directory at most");
	return ctl_restore_all(optind < argc ? argv[optind] : CTL_STATE_DIR);
}

/* Commands with no argument at all and one ioctl with no struct. */
static int cmd_flush(const struct ctl_cmd *cmd, int argc, char **argv)
{
	int fd, rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	if (optind < argc)
		return ctl_usage_error("flush", "unexpected argument '%s'",
				       argv[optind]);
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	rc = ioctl(fd, CNF_IOC_FLUSH) < 0 ? ctl_fail("flush", errno) : 0;
	close(fd);
	return rc;
}

static int cmd_reset(const struct ctl_cmd *cmd, int argc, char **argv)
{
	int fd, rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	if (optind < argc)
		return ctl_usage_error("reset", "unexpected argument '%s'",
				       argv[optind]);
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	rc = ioctl(fd, CNF_IOC_RESET) < 0 ? ctl_fail("reset", errno) : 0;
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

static int cmd_stats(const struct ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct cnf_stats st;
	bool json = opt_json;
	int c, rc;

	while ((c = next_opt(cmd, argc, argv, "+:jh", opts, &rc)) > 0)
		json = true;
	if (c < 0)
		return rc;
	if (optind < argc)
		return ctl_usage_error("stats", "unexpected argument '%s'",
				       argv[optind]);
	rc = read_stats("stats", &st);
	if (rc)
		return rc;
	if (json)
		ctl_print_stats_json(stdout, &st);
	else
		ctl_print_stats_text(stdout, &st);
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

static int cmd_mode(const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct cnf_config cfg;
	int mode, rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	argc -= optind;
	argv += optind;
	if (!argc)
		return show_mode();
	if (argc > 1)
		return ctl_usage_error("mode", "one mode only");
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

static int cmd_limit(const struct ctl_cmd *cmd, int argc, char **argv)
{
	struct cnf_config cfg;
	uint64_t bytes;
	char what[64];
	int rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	argc -= optind;
	argv += optind;
	if (!argc)
		return show_limit();
	if (argc > 1)
		return ctl_usage_error("limit", "one size only");
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

static int cmd_help(const struct ctl_cmd *cmd, int argc, char **argv);

static const struct ctl_cmd commands[] = {
	{ "add", cmd_add, "[--all-addresses] PREFIX...", "add prefixes to the set",
	  "Add each IPv4 or IPv6 PREFIX: ADDR/LEN with every bit past LEN zero,\n"
	  "or an address alone (a /32 or /128).  All are checked before any is\n"
	  "added.  A prefix already present is reported and the command exits 1;\n"
	  "the others are still added.\n\n"
	  "      --all-addresses  take a /0 (every address of its family)\n" },
	{ "del", cmd_del, "[--all-addresses] PREFIX... | --file FILE|-",
	  "delete prefixes from the set",
	  "Delete each PREFIX, exactly as it was added (a prefix covering it or\n"
	  "covered by it stays), or every prefix listed in FILE ('-': stdin), in\n"
	  "the format of 'load'.  An absent PREFIX is reported and the command\n"
	  "exits 1; with --file absent ones are counted, and bad lines make the\n"
	  "exit status 1.\n\n"
	  "  -f, --file FILE      read the prefixes from FILE\n"
	  "      --all-addresses  take a /0\n" },
	{ "test", cmd_test, "[--all-addresses] PREFIX...",
	  "tell whether the set covers addresses",
	  "Print 'PREFIX: present (STORED)', STORED being the longest prefix in\n"
	  "the set that covers PREFIX, or 'PREFIX: absent', for each PREFIX\n"
	  "(usually an address).  Exits 0 when all are present, 1 when any is\n"
	  "absent.  With a module that cannot name the covering prefix,\n"
	  "'PREFIX: present' alone.\n\n"
	  "      --all-addresses  take a /0\n" },
	{ "load", cmd_load, "[--strict] [--all-addresses] [FILE|-]",
	  "add every prefix of a file",
	  "Add the prefixes of FILE (default: stdin), one per line; '#' or ';'\n"
	  "starts a comment, on a line of its own or after the entry; blank lines\n"
	  "and whitespace around entries are skipped (FireHOL netsets, Spamhaus\n"
	  "DROP lists and 'save' output load as they are).  Prints how many were\n"
	  "added and how many were already present.  Each bad line is reported\n"
	  "as FILE:LINE: VALUE: reason; the good lines are still added and the\n"
	  "exit status is 1 (with no good line: nothing changed, exit 3).\n\n"
	  "  -s, --strict         any bad line: change nothing, exit 3\n"
	  "      --all-addresses  take /0 lines\n" },
	{ "list", cmd_list, "", "print the set, one prefix per line",
	  "Print every prefix in the set, one per line, single addresses without\n"
	  "/32 or /128, in a form 'load' and 'restore' read back.\n" },
	{ "save", cmd_save, "", "print the set for 'restore'",
	  "As 'list', with a leading '# cuckoo_nf save' comment line.\n" },
	{ "restore", cmd_restore, "[--all-addresses] FILE|-",
	  "replace the set with a file's prefixes",
	  "Read FILE ('-': stdin) completely; if every line is good, flush the\n"
	  "set and load the file's prefixes, else change nothing (exit 3).\n\n"
	  "      --all-addresses  take /0 lines\n" },
	{ "save-all", cmd_save_all, "[DIR]", "save every set to files, atomically",
	  "Write each set to DIR/NAME.list (default DIR: " CTL_STATE_DIR "),\n"
	  "in the format of 'save' with a closing '# cuckoo_nf end N entries'\n"
	  "line: written to a temporary file in DIR, synced, then renamed over\n"
	  "the old one, so a crash leaves the old file or the new one, whole.\n"
	  "The namespace's one set is 'default'.\n" },
	{ "restore-all", cmd_restore_all, "[DIR]", "restore every set saved by 'save-all'",
	  "Replace each set with DIR/NAME.list (default DIR: " CTL_STATE_DIR ").\n"
	  "A missing file is reported and its set left as it is.  A file that\n"
	  "is not a complete save (no header, no end line, a count that does\n"
	  "not match, a bad line) is reported, renamed NAME.list.bad and\n"
	  "skipped; the other sets are still restored and the exit status is 3.\n" },
	{ "flush", cmd_flush, "", "remove every address",
	  "Empty the set and shrink its tables to their initial size.  The\n"
	  "mode, the limit, the counters and the hooks stay.\n" },
	{ "reset", cmd_reset, "", "remove everything cuckoo_nf keeps here",
	  "Empty the set and forget the mode, the limit and the counters: the\n"
	  "namespace's hooks are unregistered and its memory freed, as before\n"
	  "it was first configured.  The next add, load, restore, mode or\n"
	  "limit starts again from the module's parameters.\n" },
	{ "stats", cmd_stats, "[-j]", "show counters and table figures",
	  "Show whether the namespace is active (configured: hooks registered),\n"
	  "the mode, the memory limit and, per family, the prefixes stored, their\n"
	  "distinct lengths, the keys and tables they are looked up in, capacity,\n"
	  "load factor, memory, grows, stashed entries and packet counters.\n\n"
	  "  -j, --json        one line of JSON instead\n" },
	{ "mode", cmd_mode, "[drop|monitor]", "show or set what matching packets get",
	  "drop: packets from listed sources are dropped.  monitor: they are\n"
	  "only counted as matched.  Without argument, print the mode.\n" },
	{ "limit", cmd_limit, "[BYTES]", "show or set the memory limit",
	  "Set the memory the tables may use; K, M and G suffixes (base 1024).\n"
	  "Below what is in use already: refused.  Without argument, print it.\n" },
	{ "help", cmd_help, "[COMMAND]", "show help for the tool or a command",
	  "" },
};

#define NCOMMANDS (ARRAY_SIZE(commands))

static const struct ctl_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void print_cmd_help(const struct ctl_cmd *cmd)
{
	printf("Usage: " CTL_NAME " %s %s\n%c%s.\n", cmd->name, cmd->usage,
	       toupper((unsigned char)cmd->summary[0]), cmd->summary + 1);
	if (*cmd->help)
		printf("\n%s", cmd->help);
}

static void print_main_help(FILE *out)
{
	size_t i;

	fprintf(out,
		"Usage: " CTL_NAME " [-d DEVICE] [-j] COMMAND [ARGS...]\n"
		"Control the cuckoo_nf source address filter.\n\n"
		"Commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\nOptions:\n"
		"  -d, --device PATH  control device (default " CNF_DEVICE_PATH ")\n"
		"  -j, --json         JSON output (stats)\n"
		"  -h, --help         this help; '" CTL_NAME " help COMMAND' for a command\n"
		"  -V, --version      print this tool's and the loaded module's versions\n\n"
		"Exit: 0 ok, 1 failed or test negative, 2 usage, 3 bad input,\n"
		"5 permission denied, 6 module not loaded, 7 module ABI unknown.\n"
		"See cuckooctl(8).\n");
}

static int cmd_help(const struct ctl_cmd *cmd, int argc, char **argv)
{
	const struct ctl_cmd *c;
	int rc;

	if (no_options(cmd, argc, argv, &rc))
		return rc;
	if (optind >= argc) {
		print_main_help(stdout);
		return CTL_EXIT_OK;
	}
	c = find_cmd(argv[optind]);
	if (!c)
		return ctl_usage_error("help", "unknown command '%s'", argv[optind]);
	print_cmd_help(c);
	return CTL_EXIT_OK;
}

static int main_usage_error(const char *fmt, const char *arg)
{
	fputs(CTL_NAME ": ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nUsage: " CTL_NAME " [-d DEVICE] [-j] COMMAND [ARGS...]\n"
	      "Try '" CTL_NAME " --help' for more.\n", stderr);
	return CTL_EXIT_USAGE;
}

/* The module's version from sysfs, when the device may not be opened. */
static bool sysfs_module_version(char *buf, size_t size)
{
	FILE *f = fopen("/sys/module/" CNF_DEVICE_NAME "/version", "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/*
 * The tool's version, then the loaded module's: its version and ABI
 * (CNF_IOC_VERSION), "older" for a module without that call, or why it
 * cannot be asked.  Exit 0, or CTL_EXIT_ABI for an ABI not known here.
 */
static int print_version(void)
{
	struct cnf_version v;
	char sysver[CNF_VERSION_LEN];
	int fd, err;

	printf(CTL_NAME " %s (ABI %u)\n", CTL_VERSION, CNF_ABI_VERSION);
	fd = open_device();
	if (fd == -CTL_EXIT_NODEV) {
		puts("module: not loaded");
		return CTL_EXIT_OK;
	}
	if (fd < 0) {
		err = errno;
		if (sysfs_module_version(sysver, sizeof(sysver)))
			printf("module: %s (ABI not known: %s: %s)\n", sysver,
			       ctl_device, strerror(err));
		else
			printf("module: not known: %s: %s\n", ctl_device,
			       strerror(err));
		return CTL_EXIT_OK;
	}
	err = ctl_module_version(fd, &v);
	close(fd);
	if (err == -ENOTTY) {
		puts("module: older than " CTL_NAME " 1.1.0, without a version call (ABI 1)");
		return CTL_EXIT_OK;
	}
	if (err) {
		printf("module: not known: %s\n", ctl_strerror(-err));
		return CTL_EXIT_OK;
	}
	printf("module: %s (ABI %u)\n", v.version, v.abi);
	if (v.abi == CNF_ABI_VERSION)
		return CTL_EXIT_OK;
	ctl_err("the module speaks ABI %u; this cuckooctl knows ABI %u only: install a cuckooctl matching the module",
		v.abi, CNF_ABI_VERSION);
	return CTL_EXIT_ABI;
}

/* Global options, before the command; -1 to go on, else an exit code. */
static int parse_global_opts(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:d:jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			ctl_device = optarg;
			break;
		case 'j':
			opt_json = true;
			break;
		case 'h':
			print_main_help(stdout);
			return CTL_EXIT_OK;
		case 'V':
			return print_version();
		case ':':
			return main_usage_error("option '%s' needs an argument",
						argv[optind - 1]);
		default:
			return main_usage_error("unknown option '%s'",
						argv[optind - 1]);
		}
	}
	return -1;
}

/* Output that did not reach its file is a failure, except for a closed pipe. */
static int check_stdout(int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	if (errno == EPIPE)
		return rc;
	ctl_err("write error: %s", strerror(errno));
	return rc ? rc : CTL_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	int rc;

	rc = parse_global_opts(argc, argv);
	if (rc >= 0)
		return check_stdout(rc);
	if (optind >= argc)
		return main_usage_error("%s", "no command given");
	cmd = find_cmd(argv[optind]);
	if (!cmd)
		return main_usage_error("unknown command '%s'", argv[optind]);
	argc -= optind;
	argv += optind;
	/* The command parses its own options from argv[1] on. */
	optind = 0;
	rc = cmd->run(cmd, argc, argv);
	return check_stdout(rc);
}
