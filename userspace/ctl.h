/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: what the command files share.
 */
#ifndef _CTL_H
#define _CTL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>

#include "ctl_dev.h"
#include "ctl_format.h"
#include "ctl_parse.h"
#include "ctl_report.h"
#include "ctl_setname.h"

#define CTL_NAME	"cuckooctl"

/* Where save-all and restore-all keep the sets. */
#define CTL_STATE_DIR	"/var/lib/cuckoo_nf"
/* First line of 'save' and 'save-all' output. */
#define CTL_SAVE_HEADER	"# cuckoo_nf save"

/* Read all of @path ("-" or NULL: stdin) into @in: exit code. */
int ctl_read_input(const char *cmd, const char *path, struct ctl_input *in);

/* What a command's options asked for (cuckooctl.c parses them). */
struct ctl_opts {
	const char *cmd;	/* the command's name */
	const char *set;	/* -s: the set, NULL for the default set */
	bool one_set;		/* -s given, the default set's name included */
	const char *file;	/* del --file */
	unsigned int flags;	/* CTL_PARSE_F_ALL: --all-addresses */
	bool exist;		/* --exist: present (add) / absent (del) is fine */
	bool quiet;		/* -q: nothing printed on success */
	bool strict;		/* load --strict */
	bool json;		/* -j */
	bool all;		/* save --all */
	bool allow_empty;	/* replace --allow-empty */
	bool from_ipset;	/* restore --from-ipset: FILE is an ipset save */
	bool prometheus;	/* stats --prometheus */
	const char *iif;	/* test --iif: the device a packet arrives on */
	/* hooks on --iif: the scope's devices, @niif of them */
	const char *iifs[CNF_IIF_MAX];
	unsigned int niif;
	bool rules_only;	/* create --rules-only */
};

/*
 * The commands: @argc and @argv are the operands, options taken out.
 * Each returns its exit code.
 */
int ctl_cmd_add(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_del(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_test(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_list(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_save(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_flush(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_reset(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_stats(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_mode(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_hooks(const struct ctl_opts *o, int argc, char **argv);
/*
 * hooks on|off [--iif NAME...] into @cfg, checked: the exit code.  Sets
 * the scope too: none without --iif.
 */
int ctl_hooks_config(const struct ctl_opts *o, int argc, char **argv,
		     struct cnf_config *cfg);
/* Apply @cfg from ctl_hooks_config(), errors reported: the exit code. */
int ctl_set_hooks(const char *what, struct cnf_config *cfg);
int ctl_cmd_limit(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_log_limit(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_set(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_create(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_destroy(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_swap(const struct ctl_opts *o, int argc, char **argv);
int ctl_cmd_sets(const struct ctl_opts *o, int argc, char **argv);
/* xdp attach|detach|status (ctl_xdp.c). */
int ctl_cmd_xdp(const struct ctl_opts *o, int argc, char **argv);

/*
 * test without a set (ctl_verdict.c): what the namespace does with a
 * packet from each of @e's @n addresses (@argv: their operands), and why.
 * Exit code: 0 when every one is dropped, 1 when one passes.
 */
struct ctl_entry;
int ctl_test_verdicts(const struct ctl_opts *o, int fd,
		      const struct ctl_entry *e, size_t n, char **argv);

/* A set name from the command line: CTL_EXIT_OK, or the error reported. */
int ctl_check_set_name(const char *cmd, const char *name);
/* save of @set (NULL: the default set, as before sets), or of every set. */
int ctl_save_set(int fd, const char *set, FILE *out);
int ctl_save_sets(int fd, FILE *out);
/* The line of a save that starts set @s: name, kind, default timeout, log. */
void ctl_print_set_line(FILE *out, const struct cnf_set_info *s);

/* The commands reading prefix files (ctl_load.c, ctl_replace.c). */
int ctl_load(const struct ctl_opts *o, const char *path);
int ctl_del_file(const struct ctl_opts *o, const char *path);
int ctl_replace(const struct ctl_opts *o, const char *path);
int ctl_restore(const struct ctl_opts *o, const char *path);
/*
 * Replace @set (NULL: default) with in->addrs[first..end), as restore
 * does: created with @kind and default @timeout when missing, in one
 * step.  Exit code.
 */
int ctl_replace_set(const char *cmd, int fd, const char *set, uint32_t kind,
		    uint32_t timeout, const struct ctl_log *log,
		    const struct ctl_input *in, size_t first, size_t end);

/* What ctl_load.c shares with ctl_replace.c. */
struct ctl_batch_result {
	uint64_t applied, skipped;
};
/* "cuckooctl: CMD: FILE:LINE: VALUE: reason" for each bad line. */
void ctl_report_bad_lines(const char *cmd, const char *path,
			  const struct ctl_input *in);
/* Add in->addrs[first..end) to @set in batches: exit code, reported. */
int ctl_add_batches(const char *cmd, int fd, const char *set,
		    const struct ctl_input *in, size_t first, size_t end,
		    struct ctl_batch_result *res);
const char *ctl_plural(uint64_t n, const char *one, const char *many);
/*
 * The timeouts of in->addrs[first..end) for a batch into *@timeouts
 * (malloc'd): each line's, or @deflt for a line without one.  NULL when
 * no line of the range gave one.  0 or ENOMEM.
 */
int ctl_batch_timeouts(const struct ctl_input *in, size_t first, size_t end,
		       uint32_t deflt, uint32_t **timeouts);
/*
 * The default timeout of @set (NULL: default) into *@deflt (0 for a set
 * the module does not have): 0, CTL_ENOTIMEOUT for a module without
 * timeouts, or the errno of the set list.
 */
int ctl_set_timeout(int fd, const char *set, uint32_t *deflt);

/* save-all and restore-all (ctl_persist.c). */
int ctl_save_all(const char *dir);
int ctl_restore_all(const char *dir);

#endif /* _CTL_H */
