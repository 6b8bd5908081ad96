// SPDX-License-Identifier: GPL-2.0
/*
 * libxt_cuckoo.so: the iptables and ip6tables extension of the match
 * `cuckoo` (struct cnf_xt_info, module/xt_cuckoo.c), for iptables-legacy
 * and iptables-nft alike:
 *
 *	-m cuckoo [!] --match-set NAME src|dst [--with-allow]
 *
 * As ipset's `-m set --match-set NAME src`, the set is named with the
 * address it is asked about; and as there, a set that does not exist is
 * refused while the rule is parsed, by name, before the kernel is asked
 * (which refuses it too, but iptables would only say "No chain/target/
 * match by that name").
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xtables.h>
#include <linux/cuckoo_nf.h>

enum { O_MATCH_SET = 1, O_WITH_ALLOW };

static const struct option cuckoo_opts[] = {
	{ .name = "match-set", .has_arg = required_argument, .val = O_MATCH_SET },
	{ .name = "with-allow", .has_arg = no_argument, .val = O_WITH_ALLOW },
	{ NULL },
};

static void cuckoo_help(void)
{
	printf("cuckoo match options:\n"
	       "[!] --match-set NAME src|dst\n"
	       "                 match the packet's source (src) or destination\n"
	       "                 (dst) address against cuckoo_nf set NAME of this\n"
	       "                 network namespace (cuckooctl sets lists them)\n"
	       " --with-allow    with a block set: not when an allow set the\n"
	       "                 hooks consult covers the address too\n");
}

/* As the module takes it: 1 to 31 of [A-Za-z0-9_.-]. */
static bool cuckoo_name_ok(const char *s)
{
	size_t len = strlen(s);

	return len && len < CNF_SET_NAME_LEN &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") == len;
}

/*
 * Does this namespace have set @name?  Asked of /dev/cuckoo_nf, which acts
 * on the namespace iptables runs in, the rule's.  An error names the set.
 */
static void cuckoo_check_set(const char *name)
{
	struct cnf_set_info *sets = NULL;
	struct cnf_set_list l;
	uint32_t i, room = CNF_SETS_MAX;
	int fd, err = 0;

	fd = open(CNF_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		xtables_error(PARAMETER_PROBLEM,
			      "cuckoo: --match-set %s: %s: %s (is cuckoo_nf loaded?)",
			      name, CNF_DEVICE_PATH, strerror(errno));
	sets = calloc(room, sizeof(*sets));
	if (!sets)
		xtables_error(OTHER_PROBLEM, "cuckoo: out of memory");
	memset(&l, 0, sizeof(l));
	l.sets = (uintptr_t)sets;
	l.count = room;
	l.size = sizeof(*sets);
	if (ioctl(fd, CNF_IOC_SET_LIST, &l))
		err = errno;
	close(fd);
	if (err)
		xtables_error(PARAMETER_PROBLEM,
			      "cuckoo: --match-set %s: listing the sets: %s",
			      name, strerror(err));
	for (i = 0; i < l.count; i++)
		if (!strncmp(sets[i].name, name, CNF_SET_NAME_LEN))
			break;
	free(sets);
	if (i == l.count)
		xtables_error(PARAMETER_PROBLEM,
			      "cuckoo: --match-set %s: no set of that name in this network namespace (cuckooctl create %s [--rules-only])",
			      name, name);
}

static int cuckoo_parse(int c, char **argv, int invert, unsigned int *flags,
			const void *entry, struct xt_entry_match **match)
{
	struct cnf_xt_info *info = (void *)(*match)->data;
	const char *dir;

	switch (c) {
	case O_MATCH_SET:
		if (*flags & (1 << O_MATCH_SET))
			xtables_error(PARAMETER_PROBLEM,
				      "cuckoo: --match-set may be given once: a rule asks one set");
		if (!cuckoo_name_ok(optarg))
			xtables_error(PARAMETER_PROBLEM,
				      "cuckoo: --match-set %s: not a set name (1 to %d characters of A-Z a-z 0-9 _ . -)",
				      optarg, CNF_SET_NAME_LEN - 1);
		dir = argv[optind];
		if (!dir || dir[0] == '-' || dir[0] == '!')
			xtables_error(PARAMETER_PROBLEM,
				      "cuckoo: --match-set %s: needs src or dst after the name",
				      optarg);
		if (strcmp(dir, "src") && strcmp(dir, "dst"))
			xtables_error(PARAMETER_PROBLEM,
				      "cuckoo: --match-set %s %s: src or dst, the address the set is asked about",
				      optarg, dir);
		optind++;
		cuckoo_check_set(optarg);
		strncpy(info->set, optarg, sizeof(info->set) - 1);
		if (!strcmp(dir, "dst"))
			info->flags |= CNF_XT_F_DST;
		if (invert)
			info->flags |= CNF_XT_F_INV;
		*flags |= 1 << O_MATCH_SET;
		return 1;
	case O_WITH_ALLOW:
		if (invert)
			xtables_error(PARAMETER_PROBLEM,
				      "cuckoo: --with-allow cannot be inverted (! --match-set inverts the match)");
		info->flags |= CNF_XT_F_WITH_ALLOW;
		*flags |= 1 << O_WITH_ALLOW;
		return 1;
	}
	return 0;
}

static void cuckoo_final_check(unsigned int flags)
{
	if (!(flags & (1 << O_MATCH_SET)))
		xtables_error(PARAMETER_PROBLEM,
			      "cuckoo: --match-set NAME src|dst is needed");
}

/* The rule as iptables-save writes it and iptables-restore reads it back. */
static void cuckoo_save(const void *ip, const struct xt_entry_match *match)
{
	const struct cnf_xt_info *info = (const void *)match->data;

	printf("%s --match-set %.*s %s%s",
	       info->flags & CNF_XT_F_INV ? " !" : "",
	       (int)sizeof(info->set), info->set,
	       info->flags & CNF_XT_F_DST ? "dst" : "src",
	       info->flags & CNF_XT_F_WITH_ALLOW ? " --with-allow" : "");
}

static void cuckoo_print(const void *ip, const struct xt_entry_match *match,
			 int numeric)
{
	const struct cnf_xt_info *info = (const void *)match->data;

	printf(" %scuckoo-set %.*s %s%s",
	       info->flags & CNF_XT_F_INV ? "! " : "",
	       (int)sizeof(info->set), info->set,
	       info->flags & CNF_XT_F_DST ? "dst" : "src",
	       info->flags & CNF_XT_F_WITH_ALLOW ? " with-allow" : "");
}

static struct xtables_match cuckoo_match = {
	.name		= CNF_XT_NAME,
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.version	= XTABLES_VERSION,
	.size		= XT_ALIGN(sizeof(struct cnf_xt_info)),
	.userspacesize	= offsetof(struct cnf_xt_info, priv),
	.help		= cuckoo_help,
	.parse		= cuckoo_parse,
	.final_check	= cuckoo_final_check,
	.print		= cuckoo_print,
	.save		= cuckoo_save,
	.extra_opts	= cuckoo_opts,
};

/* iptables dlopen()s the extension: registered as it is loaded. */
static void __attribute__((constructor)) cuckoo_init(void)
{
	xtables_register_match(&cuckoo_match);
}
