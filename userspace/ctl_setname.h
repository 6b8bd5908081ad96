/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: set names, set kinds and the lines of a save that start a
 * set.  Pure functions, unit-tested on the host (tests/test_ctl_parse.c).
 */
#ifndef _CTL_SETNAME_H
#define _CTL_SETNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/cuckoo_nf.h>

/* What a refused set name is told, after "cuckooctl: COMMAND NAME: ". */
#define CTL_SET_NAME_RULE \
	"not a set name (1 to 31 characters of A-Z a-z 0-9 _ . -)"

/* The line of a save that starts a set: the prefix, then "NAME KIND". */
#define CTL_SET_LINE	"# cuckoo_nf set "

/* Whether @s is a set name the module takes: 1 to 31 of [A-Za-z0-9_.-]. */
bool ctl_set_name_ok(const char *s);

/* Whether @s names the set every namespace has (CNF_SET_DEFAULT). */
bool ctl_set_is_default(const char *s);

/*
 * @name as the device takes it: NUL-padded, all zero for the default set
 * (which every module takes, with or without sets).  @name must be valid.
 */
void ctl_set_field(char field[CNF_SET_NAME_LEN], const char *name);

/*
 * A set's kind as cuckooctl carries it from a save's set line or the
 * module's list to a create: enum cnf_set_kind, with CTL_KIND_RULES_ONLY
 * for a set created with CNF_SET_F_RULES_ONLY, which is as much part of
 * what the set does as its kind.
 */
#define CTL_KIND_RULES_ONLY	0x100u
/* The word for it, on a set line and in the lists. */
#define CTL_RULES_ONLY_WORD	"rules-only"

/* @s's kind, CTL_KIND_RULES_ONLY included. */
static inline uint32_t ctl_set_kind_of(const struct cnf_set_info *s)
{
	return s->kind | (s->flags & CNF_SET_F_RULES_ONLY ?
			  CTL_KIND_RULES_ONLY : 0);
}

/*
 * "block", "allow", or NULL for a kind this tool does not know;
 * CTL_KIND_RULES_ONLY is left out.
 */
const char *ctl_set_kind_name(uint32_t kind);
/* CNF_SET_* for "block" or "allow", else -EINVAL. */
int ctl_set_kind_parse(const char *s);

/*
 * A set's drop log: CNF_SET_F_LOG (the kernel log), CNF_SET_F_NFLOG (the
 * NFLOG group @group) or 0 (none).
 */
struct ctl_log {
	uint32_t flags;
	uint32_t group;
};

/* The word before a set's logging, on a set line and on the command line. */
#define CTL_LOG_WORD	"log"
/* Room for ctl_format_log()'s text: "nflog 65535". */
#define CTL_LOGSTRLEN	12

/* @s's logging, as the module reports it. */
static inline struct ctl_log ctl_set_log_of(const struct cnf_set_info *s)
{
	struct ctl_log l = { s->flags & (CNF_SET_F_LOG | CNF_SET_F_NFLOG), 0 };

	if (l.flags & CNF_SET_F_NFLOG)
		l.group = s->log_group;
	return l;
}

/*
 * A logging as the commands take it, from @argc words of @argv: "on"
 * (the kernel log), "off", or "nflog GROUP" (0 to 65535).  Returns the
 * words it took (1 or 2), -EINVAL for a word it does not know, -ERANGE
 * for a bad or missing group.
 */
int ctl_log_parse(int argc, char *const *argv, struct ctl_log *log);
/* "on", "off" or "nflog GROUP", as ctl_log_parse() reads it, into @buf. */
const char *ctl_format_log(const struct ctl_log *log, char *buf, size_t len);

/*
 * Whether @line (@len bytes, its line ending allowed) starts with
 * CTL_SET_LINE.  If so, 1 with @name, *@kind, *@timeout and *@log from
 * "NAME KIND [rules-only] [timeout SECONDS] [log on|nflog GROUP]"
 * (*@timeout 0 and *@log off without, *@kind with CTL_KIND_RULES_ONLY
 * for "rules-only"), or -1 when they are not a valid name, kind, timeout
 * and logging.  0 for any other line.
 */
int ctl_parse_set_line(const char *line, size_t len,
		       char name[CNF_SET_NAME_LEN], uint32_t *kind,
		       uint32_t *timeout, struct ctl_log *log);

#endif /* _CTL_SETNAME_H */
