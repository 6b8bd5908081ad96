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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

#ifndef CTL_VERSION
#error "CTL_VERSION: build with make, which takes it from dkms.conf"
#endif

/* The global options -j and -s, before the command. */
static bool opt_json;
static const char *opt_set;

struct ctl_cmd {
	const char *name;
	int (*run)(const struct ctl_opts *o, int argc, char **argv);
	unsigned int opts;	/* the O_* options it takes */
	const char *usage;	/* operands, after "cuckooctl NAME [OPTION...] " */
	const char *summary;	/* one line, for the command list */
	const char *help;	/* the rest of "cuckooctl help NAME" */
};

static const struct ctl_cmd *find_cmd(const char *name);
static void print_cmd_help(const struct ctl_cmd *cmd);

/*
 * libcnfctl's reports (ctl_report.h): "cuckooctl: " and the line on
 * stderr, after what was printed on stdout; a usage error adds the
 * command's usage line and where to read more.
 */
static void report(enum ctl_report_kind kind, const char *cmd,
		   const char *msg)
{
	const struct ctl_cmd *c;

	fflush(stdout);
	fprintf(stderr, CTL_NAME ": %s\n", msg);
	if (kind != CTL_REPORT_USAGE)
		return;
	c = find_cmd(cmd);
	if (c)
		fprintf(stderr, "Usage: " CTL_NAME " %s %s%s\n", c->name,
			c->opts ? "[OPTION...] " : "", c->usage);
	fprintf(stderr, "Try '" CTL_NAME " help %s' for more.\n", cmd);
}

/* Command options; a command takes those its ctl_cmd.opts names. */
enum {
	O_SET = 1 << 0,		/* -s, --set NAME */
	O_EXIST = 1 << 1,	/* --exist */
	O_QUIET = 1 << 2,	/* -q, --quiet */
	O_ADDRS = 1 << 3,	/* --all-addresses */
	O_STRICT = 1 << 4,	/* --strict */
	O_FILE = 1 << 5,	/* -f, --file FILE */
	O_JSON = 1 << 6,	/* -j, --json */
	O_ALL = 1 << 7,		/* -a, --all */
	O_EMPTY = 1 << 8,	/* --allow-empty */
	O_IIF = 1 << 9,		/* --iif NAME */
	O_IPSET = 1 << 10,	/* --from-ipset */
	O_PROM = 1 << 11,	/* --prometheus */
	O_RULES = 1 << 12,	/* --rules-only */
};

/* Long options without a short one: values past any character. */
enum {
	V_EXIST = 0x100, V_ADDRS, V_STRICT, V_EMPTY, V_IIF, V_IPSET, V_PROM,
	V_RULES,
};

static const struct {
	unsigned int bit;
	struct option opt;
	const char *help;	/* its line in "cuckooctl help COMMAND" */
} cmd_options[] = {
	{ O_SET, { "set", required_argument, NULL, 's' },
	  "-s, --set NAME       the set (default: the set 'default')" },
	{ O_EXIST, { "exist", no_argument, NULL, V_EXIST },
	  "    --exist          no error for what is there (add: its timeout set\n"
	  "                       anew; create: a set of that kind and timeout)\n"
	  "                       or absent (del); ipset's -exist is taken too" },
	{ O_QUIET, { "quiet", no_argument, NULL, 'q' },
	  "-q, --quiet          print nothing but errors" },
	{ O_ADDRS, { "all-addresses", no_argument, NULL, V_ADDRS },
	  "    --all-addresses  take a /0 (every address of its family)" },
	{ O_STRICT, { "strict", no_argument, NULL, V_STRICT },
	  "    --strict         any bad line: change nothing, exit 3" },
	{ O_FILE, { "file", required_argument, NULL, 'f' },
	  "-f, --file FILE      read the prefixes from FILE ('-': stdin)" },
	{ O_JSON, { "json", no_argument, NULL, 'j' },
	  "-j, --json           one line of JSON instead" },
	{ O_ALL, { "all", no_argument, NULL, 'a' },
	  "-a, --all            every set, each after its set line" },
	{ O_EMPTY, { "allow-empty", no_argument, NULL, V_EMPTY },
	  "    --allow-empty    take an input without prefixes: empty the set" },
	{ O_IIF, { "iif", required_argument, NULL, V_IIF },
	  "    --iif NAME       test: for a packet arriving on device NAME; hooks\n"
	  "                       on: only packets arriving on device NAME (NAME+:\n"
	  "                       on those whose name begins with NAME), repeated\n"
	  "                       for up to 8 names" },
	{ O_IPSET, { "from-ipset", no_argument, NULL, V_IPSET },
	  "    --from-ipset     FILE is what 'ipset save' prints" },
	{ O_PROM, { "prometheus", no_argument, NULL, V_PROM },
	  "    --prometheus     Prometheus' text format, for node_exporter" },
	{ O_RULES, { "rules-only", no_argument, NULL, V_RULES },
	  "    --rules-only     only iptables rules (-m cuckoo) consult the set" },
};

#define NOPTIONS	ARRAY_SIZE(cmd_options)

/* @val's option into @o; -s is checked here, before any device call. */
static int take_option(const struct ctl_cmd *cmd, int val,
		       struct ctl_opts *o)
{
	switch (val) {
	case 's':
		o->set = optarg;
		return ctl_check_set_name(cmd->name, optarg);
	case V_EXIST:
		o->exist = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case V_ADDRS:
		o->flags |= CTL_PARSE_F_ALL;
		break;
	case V_STRICT:
		o->strict = true;
		break;
	case 'f':
		o->file = optarg;
		break;
	case 'j':
		o->json = true;
		break;
	case 'a':
		o->all = true;
		break;
	case V_EMPTY:
		o->allow_empty = true;
		break;
	case V_IIF:
		if (o->niif == CNF_IIF_MAX) {
			ctl_err("%s --iif %s: more than %u devices (the most a scope has)",
				cmd->name, optarg, CNF_IIF_MAX);
			return CTL_EXIT_BADINPUT;
		}
		o->iif = o->iif ? o->iif : optarg;
		o->iifs[o->niif++] = optarg;
		break;
	case V_IPSET:
		o->from_ipset = true;
		break;
	case V_PROM:
		o->prometheus = true;
		break;
	case V_RULES:
		o->rules_only = true;
		break;
	}
	return CTL_EXIT_OK;
}

/*
 * @cmd's options, anywhere among its operands until "--", into @o: -1 to
 * go on with the operands from argv[optind], else the exit code (help
 * printed, or a usage error).
 */
static int parse_cmd_opts(const struct ctl_cmd *cmd, int argc, char **argv,
			  struct ctl_opts *o)
{
	struct option longopts[NOPTIONS + 2];
	char shortopts[2 * NOPTIONS + 4] = ":h";
	size_t i, n = 0, k = 2;
	int c, rc;

	for (i = 0; i < NOPTIONS; i++) {
		if (!(cmd->opts & cmd_options[i].bit))
			continue;
		longopts[n++] = cmd_options[i].opt;
		c = cmd_options[i].opt.val;
		if (c < V_EXIST) {
			shortopts[k++] = (char)c;
			if (cmd_options[i].opt.has_arg)
				shortopts[k++] = ':';
		}
	}
	shortopts[k] = '\0';
	/* ipset's spelling, one dash, as its users type it. */
	for (c = 1; (cmd->opts & O_EXIST) && c < argc && strcmp(argv[c], "--");
	     c++)
		if (!strcmp(argv[c], "-exist"))
			argv[c] = (char *)"--exist";
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option){ };
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			print_cmd_help(cmd);
			return CTL_EXIT_OK;
		case '?':
			if (optopt && optopt < V_EXIST) {
				char opt[3] = { '-', (char)optopt, '\0' };

				return ctl_usage_error(cmd->name, opt,
						       "unknown option");
			}
			return ctl_usage_error(cmd->name, argv[optind - 1],
					       "unknown option");
		case ':':
			return ctl_usage_error(cmd->name, argv[optind - 1],
					       "needs an argument");
		}
		rc = take_option(cmd, c, o);
		if (rc)
			return rc;
	}
	return -1;
}

/* At most one operand, a file or '-' (stdin). */
static const char *one_file(const struct ctl_opts *o, int argc, char **argv,
			    bool needed, int *rc)
{
	*rc = CTL_EXIT_OK;
	if (argc > 1 || (needed && !argc))
		*rc = ctl_usage_error(o->cmd, NULL, needed ?
				      "one file needed ('-' for stdin)" :
				      "one file at most");
	return argc ? argv[0] : NULL;
}

static int cmd_load(const struct ctl_opts *o, int argc, char **argv)
{
	int rc;
	const char *path = one_file(o, argc, argv, false, &rc);

	return rc ? rc : ctl_load(o, path);
}

static int cmd_restore(const struct ctl_opts *o, int argc, char **argv)
{
	int rc;
	const char *path = one_file(o, argc, argv, true, &rc);

	return rc ? rc : ctl_restore(o, path);
}

static int cmd_replace(const struct ctl_opts *o, int argc, char **argv)
{
	int rc;
	const char *path = one_file(o, argc, argv, true, &rc);

	return rc ? rc : ctl_replace(o, path);
}

/* save-all and restore-all: at most one argument, the directory. */
static int cmd_save_all(const struct ctl_opts *o, int argc, char **argv)
{
	if (argc > 1)
		return ctl_usage_error(o->cmd, NULL, "one directory at most");
	return ctl_save_all(argc ? argv[0] : CTL_STATE_DIR);
}

static int cmd_restore_all(const struct ctl_opts *o, int argc, char **argv)
{
	if (argc > 1)
		return ctl_usage_error(o->cmd, NULL, "one directory at most");
	return ctl_restore_all(argc ? argv[0] : CTL_STATE_DIR);
}

static int cmd_help(const struct ctl_opts *o, int argc, char **argv);

#define O_PREFIXES	(O_SET | O_ADDRS)

static const struct ctl_cmd commands[] = {
	{ "add", ctl_cmd_add, O_PREFIXES | O_EXIST | O_QUIET,
	  "PREFIX [timeout SECONDS]...", "add prefixes to a set",
	  "Add each IPv4 or IPv6 PREFIX: ADDR/LEN with every bit past LEN zero,\n"
	  "an address alone (a /32 or /128), or a range FIRST-LAST (the fewest\n"
	  "prefixes that cover it).  'timeout SECONDS' after a PREFIX: the\n"
	  "module removes it that long after (0: never; or 90s, 15m, 1h30m,\n"
	  "7d); without, it gets the set's default timeout.  All are checked\n"
	  "before any is added.  A prefix already present is reported and the\n"
	  "command exits 1 (with --exist: its timeout is set anew); the others\n"
	  "are still added.\n" },
	{ "del", ctl_cmd_del, O_PREFIXES | O_EXIST | O_QUIET | O_FILE,
	  "PREFIX... | --file FILE|-", "delete prefixes from a set",
	  "Delete each PREFIX (or the prefixes of a range FIRST-LAST), exactly\n"
	  "as it was added (a prefix covering it or covered by it stays), or\n"
	  "every prefix listed in FILE ('-': stdin), in the format of 'load'.  An absent PREFIX is reported and the command\n"
	  "exits 1 (with --exist: passed over); with --file absent ones are\n"
	  "counted, and bad lines make the exit status 1.\n" },
	{ "test", ctl_cmd_test, O_PREFIXES | O_QUIET | O_JSON | O_IIF,
	  "[--iif NAME] PREFIX...",
	  "tell what the namespace does with packets from addresses, and why",
	  "Without -s: for each PREFIX (usually an address), what the namespace\n"
	  "does with a packet from it, and why: 'ADDR: dropped: SET (STORED),\n"
	  "...' naming every block set that covers it with its longest covering\n"
	  "prefix; 'ADDR: passes: SET (STORED) allowed by SET (STORED)' when an\n"
	  "allow set exempts it; 'ADDR: passes: in no set'; and what monitor\n"
	  "mode, mark mode ('marked VALUE/MASK, nft decides'), hooks off, the\n"
	  "hooks' scope and --iif of a loopback device change.  Exits 0 when\n"
	  "every one is dropped, 1 when one passes or is marked, 2 or more\n"
	  "when it cannot answer (8: a device call failed).  -j: a JSON array.\n"
	  "With -s SET: whether that set covers each PREFIX: 'PREFIX: present\n"
	  "(STORED)' ('STORED timeout N' when it has N seconds left) or 'PREFIX:\n"
	  "absent'; exits 0 when all are present, 1 when one is absent.  With a\n"
	  "module that cannot name the covering prefix, 'present' alone.\n" },
	{ "load", cmd_load, O_PREFIXES | O_QUIET | O_STRICT, "[FILE|-]",
	  "add every prefix of a file to a set",
	  "Add the prefixes of FILE (default: stdin), one per line (or a range\n"
	  "FIRST-LAST), each optionally followed by 'timeout SECONDS' (the\n"
	  "others then get the set's default); '#' or ';' starts a comment, on\n"
	  "a line of its own or after the entry; blank lines and whitespace\n"
	  "around entries are skipped (FireHOL netsets, Spamhaus DROP lists and\n"
	  "'save' output load as they are).  Prints how many were added and how\n"
	  "many were already present.  Each bad line is reported as\n"
	  "FILE:LINE: VALUE: reason; the good lines are still added and the exit\n"
	  "status is 1 (with no good line: nothing changed, exit 3).\n" },
	{ "replace", cmd_replace, O_PREFIXES | O_QUIET | O_EMPTY, "FILE|-",
	  "make a file's prefixes a set's contents, in one step",
	  "Read FILE ('-': stdin) completely, in the format of 'load'; if every\n"
	  "line is good, the set's contents become the file's prefixes in one\n"
	  "step: packets see the old contents until the new ones are in place.\n"
	  "On any failure nothing changes and the old contents still serve.  An\n"
	  "input without a prefix is refused unless --allow-empty.\n" },
	{ "list", ctl_cmd_list, O_SET, "", "print a set, one prefix per line",
	  "Print every prefix in the set, one per line, single addresses without\n"
	  "/32 or /128, followed by 'timeout N' when it has N seconds left, in a\n"
	  "form 'load' and 'restore' read back.\n" },
	{ "save", ctl_cmd_save, O_SET | O_ALL, "", "print sets for 'restore'",
	  "As 'list', with a leading '# cuckoo_nf save' comment line.  A set\n"
	  "other than the default set, and every set with --all, starts with a\n"
	  "'# cuckoo_nf set NAME KIND' line, ending in 'timeout N' for a set\n"
	  "with a default timeout; such a set's permanent prefixes are written\n"
	  "with 'timeout 0'.\n" },
	{ "restore", cmd_restore, O_PREFIXES | O_QUIET | O_IPSET, "FILE|-",
	  "replace sets with a save's",
	  "Read FILE ('-': stdin) completely; if every line is good, replace\n"
	  "each set it holds, each in one step, creating those missing with\n"
	  "their kind and default timeout (prefixes before any set line are the\n"
	  "default set's), else change nothing (exit 3).  A line without a\n"
	  "timeout gets the set's default.  With --set, the one set of FILE goes\n"
	  "into that set.  A module without sets: the default set is flushed,\n"
	  "then loaded.  With --from-ipset, FILE is what 'ipset save' prints:\n"
	  "its hash:ip, hash:net and bitmap:ip sets become block sets, nomatch\n"
	  "entries an allow set NAME-nomatch (see cuckooctl(8)).\n" },
	{ "create", ctl_cmd_create, O_EXIST | O_RULES,
	  "NAME [block|allow] [timeout SECONDS] [log on|nflog GROUP]",
	  "create a set",
	  "Create an empty set: a block set (the default) drops the sources it\n"
	  "covers, unless an allow set covers them too.  NAME: 1 to 31\n"
	  "characters of A-Z a-z 0-9 _ . -.  With a timeout, prefixes added\n"
	  "without one are removed SECONDS after (the set's default timeout).\n"
	  "With log, the hooks log each packet they drop for the set, as\n"
	  "'set NAME log' says.\n"
	  "With --exist, a set of that name, kind, timeout and log is no error.\n"
	  "With --rules-only, the hooks and the XDP and tc programs never\n"
	  "consult the set: it drops nothing on its own, only iptables rules\n"
	  "(-m cuckoo --match-set NAME src) ask it.\n" },
	{ "set", ctl_cmd_set, 0, "NAME log on|off|nflog GROUP",
	  "change whether a set's drops are logged",
	  "on: the netfilter hooks give each packet they drop because the set\n"
	  "covers its source to the kernel log (nf_log_syslog), prefixed\n"
	  "'cuckoo_nf NAME: ', as iptables' LOG target does; outside the initial\n"
	  "namespace only with the sysctl net.netfilter.nf_log_all_netns=1.\n"
	  "nflog GROUP: to the NFLOG group (nfnetlink_log), which ulogd2 or\n"
	  "'tcpdump -i nflog:GROUP' reads.  off: no more.  The namespace's\n"
	  "log-limit bounds the lines; XDP and tc drops are never logged (the\n"
	  "cuckoo_nf:drop tracepoint shows them).\n" },
	{ "log-limit", ctl_cmd_log_limit, 0, "[RATE [BURST]]",
	  "show or set the rate limit of the drop log",
	  "At most RATE lines a second (1 to 1000000) for all the namespace's\n"
	  "logging sets together, BURST at once after a quiet spell (default\n"
	  "twice RATE); a drop past them is counted in stats as suppressed.\n"
	  "The default is 10 and 20.  Without argument, print RATE and BURST.\n" },
	{ "destroy", ctl_cmd_destroy, 0, "NAME", "remove a set",
	  "Remove the set and its prefixes.  The default set stays, and so\n"
	  "does a set an iptables rule names.\n" },
	{ "swap", ctl_cmd_swap, 0, "NAME NAME", "exchange two sets' contents",
	  "Exchange the contents of two sets of the same kind in one step.\n" },
	{ "sets", ctl_cmd_sets, O_JSON, "[-j]", "list the sets",
	  "Print each set's name, kind, prefixes, memory, packets matched,\n"
	  "default timeout ('-': none) and prefixes with a timeout.\n" },
	{ "save-all", cmd_save_all, 0, "[DIR]", "save every set to files, atomically",
	  "Write each set to DIR/NAME.list (default DIR: " CTL_STATE_DIR "),\n"
	  "in the format of 'save -s NAME' with a closing '# cuckoo_nf end N\n"
	  "entries' line: written to a temporary file in DIR, synced, then\n"
	  "renamed over the old one, so a crash leaves the old file or the new\n"
	  "one, whole.  Once every set is saved, the files of sets that no\n"
	  "longer exist are removed.  DIR/hooks keeps the hooks' setting and\n"
	  "scope ('hooks on --iif eth0'), written the same way.\n" },
	{ "restore-all", cmd_restore_all, 0, "[DIR]", "restore every set saved by 'save-all'",
	  "Set the hooks as DIR/hooks says, then replace each set with\n"
	  "DIR/NAME.list (default DIR: " CTL_STATE_DIR "),\n"
	  "creating the sets missing with their kind, each in one step.  A\n"
	  "missing default.list is reported and the set left as it is.  A file\n"
	  "that is not a complete save (no header, no end line, a count that\n"
	  "does not match, a bad line) is reported, renamed NAME.list.bad and\n"
	  "skipped; the other sets are still restored and the exit status is 3.\n" },
	{ "flush", ctl_cmd_flush, O_SET, "", "remove every prefix of a set",
	  "Empty the set and shrink its tables to their initial size.  The\n"
	  "mode, the limit, the counters and the hooks stay.\n" },
	{ "reset", ctl_cmd_reset, 0, "", "remove everything cuckoo_nf keeps here",
	  "Remove every set's prefixes and every set but the default one, and\n"
	  "forget the mode, the mark, the limit, the hooks setting and scope and\n"
	  "the counters: the\n"
	  "namespace's hooks are unregistered and its memory freed, as before\n"
	  "it was first configured.  The next add, load, restore, mode, hooks\n"
	  "or limit starts again from the module's parameters.\n" },
	{ "stats", ctl_cmd_stats, O_JSON | O_PROM, "[-j | --prometheus]",
	  "show counters and table figures",
	  "Show whether the namespace is active (configured: hooks registered),\n"
	  "the mode, the memory limit and, per family, the prefixes stored, their\n"
	  "distinct lengths, the keys and tables they are looked up in, capacity,\n"
	  "load factor, memory, grows, stashed entries and packet counters; the\n"
	  "prefixes with a timeout, the memory keeping them takes, how many ran\n"
	  "out and how late they were removed; then each set, as 'sets' shows\n"
	  "them.  --prometheus: the same figures as metrics cuckoo_nf_* for\n"
	  "node_exporter's textfile collector (see cuckooctl(8)).\n" },
	{ "mode", ctl_cmd_mode, 0, "[drop|monitor|mark VALUE[/MASK]]",
	  "show or set what matching packets get",
	  "drop: packets from listed sources are dropped.  monitor: they are\n"
	  "only counted as matched.  mark: the hooks set the bits of VALUE under\n"
	  "MASK (default 0xffffffff) in the packet's mark and accept it, for\n"
	  "nft rules on 'meta mark' to decide; XDP and tc programs pass such\n"
	  "packets on to the hooks.  Without argument, print the mode.\n" },
	{ "hooks", ctl_cmd_hooks, O_IIF, "[on [--iif NAME]...|off]",
	  "show or set whether and where netfilter looks packets up",
	  "on (the default): the namespace's netfilter hooks look up every\n"
	  "packet, but those cuckoo_nf's XDP program passed already and those\n"
	  "arriving on a loopback device.  With --iif: only packets arriving on\n"
	  "the devices named (NAME+: every device whose name begins with NAME),\n"
	  "loopback too when named, those created later included.  off: only XDP\n"
	  "programs filter the namespace (cuckooctl xdp attach), which\n"
	  "spares every packet the hooks' cost; a device without the program\n"
	  "then lets listed sources through.  Without argument, print it as\n"
	  "it is set.\n" },
	{ "limit", ctl_cmd_limit, 0, "[BYTES]", "show or set the memory limit",
	  "Set the memory the tables may use; K, M and G suffixes (base 1024).\n"
	  "Below what is in use already: refused.  Without argument, print it.\n" },
	{ "xdp", ctl_cmd_xdp, O_JSON,
	  "attach DEV [native|generic] | detach DEV | status",
	  "drop listed sources at XDP, before the stack",
	  "attach: load cuckoo_nf's XDP program (built into cuckooctl) and attach\n"
	  "it to DEV; it drops what the netfilter hook would, from the filter of\n"
	  "the namespace DEV is in, before the stack sees the packet.  native:\n"
	  "in the driver; generic: after the driver, any device; neither: native\n"
	  "when the driver has it.  Another program attached to DEV is never\n"
	  "replaced; cuckoo_nf's own is (a newer cuckooctl's).  detach: remove\n"
	  "cuckoo_nf's program from DEV.  status: the devices of the namespace\n"
	  "with cuckoo_nf's program, its mode and program id.  Needs the module\n"
	  "loaded with its BTF, and CAP_BPF and CAP_NET_ADMIN (CAP_SYS_ADMIN to\n"
	  "inspect attached programs) in the initial user namespace.\n" },
	{ "help", cmd_help, 0, "[COMMAND]", "show help for the tool or a command",
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
	size_t i;

	printf("Usage: " CTL_NAME " %s %s%s\n%c%s.\n", cmd->name,
	       cmd->opts ? "[OPTION...] " : "", cmd->usage,
	       toupper((unsigned char)cmd->summary[0]), cmd->summary + 1);
	if (*cmd->help)
		printf("\n%s", cmd->help);
	if (!cmd->opts)
		return;
	puts("\nOptions, anywhere before a '--':");
	for (i = 0; i < NOPTIONS; i++)
		if (cmd->opts & cmd_options[i].bit)
			printf("  %s\n", cmd_options[i].help);
}

static void print_main_help(FILE *out)
{
	size_t i;

	fprintf(out,
		"Usage: " CTL_NAME " [-d DEVICE] [-j] [-s SET] COMMAND [ARGS...]\n"
		"Control the cuckoo_nf source address filter.\n\n"
		"Commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\nOptions:\n"
		"  -d, --device PATH  control device (default " CNF_DEVICE_PATH ")\n"
		"  -j, --json         JSON output (stats, sets, test, xdp status)\n"
		"  -s, --set NAME     the set a command acts on (default: default)\n"
		"  -h, --help         this help; '" CTL_NAME " help COMMAND' for a command\n"
		"  -V, --version      print this tool's and the loaded module's versions\n\n"
		"Exit: 0 ok, 1 failed or test negative, 2 usage, 3 bad input,\n"
		"5 permission denied, 6 module not loaded, 7 module ABI unknown,\n"
		"8 test could not answer.  See cuckooctl(8).\n");
}

static int cmd_help(const struct ctl_opts *o, int argc, char **argv)
{
	const struct ctl_cmd *c;

	if (!argc) {
		print_main_help(stdout);
		return CTL_EXIT_OK;
	}
	c = find_cmd(argv[0]);
	if (!c)
		return ctl_usage_error("help", argv[0], "unknown command");
	print_cmd_help(c);
	return CTL_EXIT_OK;
}

/* "cuckooctl: VALUE: reason", the usage line and a hint. */
static int main_usage_error(const char *value, const char *reason)
{
	fprintf(stderr, CTL_NAME ": %s%s%s", value ? value : "",
		value ? ": " : "", reason);
	fputs("\nUsage: " CTL_NAME " [-d DEVICE] [-j] [-s SET] COMMAND [ARGS...]\n"
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
	fd = ctl_open_unchecked();
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
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:d:js:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			ctl_device = optarg;
			break;
		case 'j':
			opt_json = true;
			break;
		case 's':
			opt_set = optarg;
			if (ctl_check_set_name("-s", optarg))
				return CTL_EXIT_BADINPUT;
			break;
		case 'h':
			print_main_help(stdout);
			return CTL_EXIT_OK;
		case 'V':
			return print_version();
		case ':':
			return main_usage_error(argv[optind - 1],
						"needs an argument");
		default:
			return main_usage_error(argv[optind - 1],
						"unknown option");
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

/* The command's options into @o, the global ones first: -1 to go on. */
static int command_opts(const struct ctl_cmd *cmd, int argc, char **argv,
			struct ctl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd->name;
	o->json = opt_json && (cmd->opts & O_JSON);
	if (opt_set && !(cmd->opts & O_SET))
		return ctl_usage_error(cmd->name, NULL, "takes no set (-s)");
	o->set = opt_set;
	return parse_cmd_opts(cmd, argc, argv, o);
}

int main(int argc, char **argv)
{
	const struct ctl_cmd *cmd;
	struct ctl_opts o;
	int rc;

	ctl_set_reporter(report);
	rc = parse_global_opts(argc, argv);
	if (rc >= 0)
		return check_stdout(rc);
	if (optind >= argc)
		return main_usage_error(NULL, "no command given");
	cmd = find_cmd(argv[optind]);
	if (!cmd)
		return main_usage_error(argv[optind], "unknown command");
	argc -= optind;
	argv += optind;
	/* The command's options from argv[1] on, anywhere until "--". */
	optind = 0;
	rc = command_opts(cmd, argc, argv, &o);
	if (rc >= 0)
		return check_stdout(rc);
	/* The default set, named: the same calls as no name. */
	o.one_set = o.set;
	if (ctl_set_is_default(o.set))
		o.set = NULL;
	rc = cmd->run(&o, argc - optind, argv + optind);
	return check_stdout(rc);
}
