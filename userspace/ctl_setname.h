/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: set names, set kinds and logging, and their words; what
 * reads them from the command line and from a save is ctl_parse.h's.
 * Pure functions, unit-tested on the host (tests/test_ctl_parse.c).
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
/* The same for the @len bytes at @s, not terminated. */
bool ctl_set_name_ok_len(const char *s, size_t len);

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

/* "on", "off" or "nflog GROUP", as ctl_log_parse() reads it, into @buf. */
const char *ctl_format_log(const struct ctl_log *log, char *buf, size_t len);

#endif /* _CTL_SETNAME_H */
