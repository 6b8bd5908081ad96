/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: parsing of prefixes, address files and sizes.
 *
 * Nothing here touches the device, so all of it is unit-tested on the host
 * (userspace/tests/test_ctl_parse.c).
 */
#ifndef _CTL_PARSE_H
#define _CTL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>
#include "ctl_setname.h"

/* A bad line keeps this much of its text for the report, then "...". */
#define CTL_BADLINE_TEXT	120

/* ctl_parse_prefix() flags: take a /0 (and set CNF_ADDR_F_ALL). */
#define CTL_PARSE_F_ALL		1u
/* ctl_input_read() flags: CTL_SET_LINE lines start sets (a save's). */
#define CTL_PARSE_F_SETS	2u
/* Entries and lines: take a range "A-B" as well as a prefix. */
#define CTL_PARSE_F_RANGE	4u

/* The most prefixes a range can need: two of each length but /0. */
#define CTL_RANGE_MAX		(2 * 128)

/* Why a prefix, or a line of an input file, was refused. */
enum ctl_parse_err {
	CTL_PARSE_OK = 0,
	CTL_PARSE_NOT_ADDR,	/* before any '/': no IPv4 or IPv6 address */
	CTL_PARSE_BAD_LEN,	/* after '/': no decimal length (hint: family) */
	CTL_PARSE_NETMASK,	/* after '/': a netmask (hint: family, and
				 * prefixlen the length it stands for, or
				 * 0xff when its bits are not contiguous) */
	CTL_PARSE_LEN_RANGE,	/* longer than the family's width (hint: family) */
	CTL_PARSE_ALL,		/* /0 without CTL_PARSE_F_ALL (hint: family) */
	CTL_PARSE_HOST_BITS,	/* bits set past the length (hint: the network) */
	CTL_PARSE_V4MAPPED,	/* ::ffff:0:0/96 or longer (hint: IPv4 form) */
	CTL_PARSE_EXTRA,	/* a line: more text after its entry */
	CTL_PARSE_NUL,		/* a line: a NUL byte in it */
	CTL_PARSE_SET_LINE,	/* a set line without a valid name and kind */
	CTL_PARSE_SET_TWICE,	/* a set line naming a set started before */
	CTL_PARSE_TIMEOUT,	/* after "timeout": not a number of seconds */
	CTL_PARSE_TIMEOUT_RANGE,	/* after "timeout": past UINT32_MAX */
	CTL_PARSE_TIMEOUT_MISSING,	/* "timeout" without its number */
	CTL_PARSE_TIMEOUT_ALONE,	/* "timeout" with no address before it */
	CTL_PARSE_TIMEOUT_TWICE,	/* a second "timeout" for one address */
	CTL_PARSE_RANGE_PREFIX,	/* a range's end with a '/' length */
	CTL_PARSE_RANGE_FAMILY,	/* a range from IPv4 to IPv6 or back */
	CTL_PARSE_RANGE_ORDER,	/* a range that ends before it starts */
};

/* The word before an entry's timeout, on the command line and in files. */
#define CTL_TIMEOUT_WORD	"timeout"

/*
 * One prefix, or with CTL_PARSE_F_RANGE one range of addresses, with the
 * timeout given for it, if any.
 */
struct ctl_entry {
	struct cnf_addr a;	/* the prefix; a range's first address */
	struct cnf_addr last;	/* a range's last address, when @range */
	uint32_t timeout;	/* seconds, 0: none; when @timed */
	bool timed;		/* "timeout N" was given */
	bool range;		/* "A-B": ctl_range_split() gives its prefixes */
	int arg;		/* ctl_parse_entry_args(): its operand's index */
};

/*
 * @s as an entry: a prefix as ctl_parse_prefix() takes it, or with
 * CTL_PARSE_F_RANGE in @flags a range "A-B", into @e (zeroed first; no
 * timeout), or the reason with @hint (may be NULL) as for
 * ctl_parse_reason().
 */
enum ctl_parse_err ctl_parse_entry(const char *s, unsigned int flags,
				   struct ctl_entry *e, struct cnf_addr *hint);

/*
 * The fewest prefixes that cover exactly the addresses of @e (one, for a
 * prefix), in order, into @out (room for CTL_RANGE_MAX).  Returns how many.
 */
size_t ctl_range_split(const struct ctl_entry *e, struct cnf_addr *out);

/*
 * Seconds of a timeout: decimal digits only (no sign, no space), or a
 * duration, decimal numbers each followed by its unit (w, d, h, m, s),
 * largest unit first, none twice ("1h30m"); at most UINT32_MAX seconds.
 * CTL_PARSE_OK with *@sec, CTL_PARSE_TIMEOUT or CTL_PARSE_TIMEOUT_RANGE.
 */
enum ctl_parse_err ctl_parse_timeout(const char *s, uint32_t *sec);

/*
 * Fill @a from @s: an IPv4 or IPv6 address (exactly as inet_pton takes it),
 * optionally followed by '/' and a prefix length in decimal without sign or
 * leading zero, at most the family's width.  No length is the width (a
 * single address).  Bits past the length must be zero; a /0 needs
 * CTL_PARSE_F_ALL in @flags; an IPv4-mapped IPv6 prefix (::ffff:0:0/96 and
 * longer) is refused: IPv4 packets are matched by IPv4 entries.
 *
 * Returns CTL_PARSE_OK with @a ready for the device (everything else in it
 * zero), or the reason with @a zeroed and @hint (may be NULL) filled as the
 * reason says, for ctl_parse_reason().
 */
enum ctl_parse_err ctl_parse_prefix(const char *s, unsigned int flags,
				    struct cnf_addr *a, struct cnf_addr *hint);

/*
 * The @n bytes at @s as an address of @family (AF_INET: 4 bytes into @out,
 * AF_INET6: 16): true when they are one.  It takes what inet_pton() takes
 * (dotted quads without leading zeros; IPv6 groups of 1 to 4 hex digits,
 * one "::", a dotted quad in place of the last two groups), in a single
 * pass over text that need not end with a NUL.  @out is written only
 * when they are.
 */
bool ctl_parse_addr(int family, const char *s, size_t n, uint8_t *out);

/*
 * Text for @err with the @hint ctl_parse_prefix() gave, as it follows
 * "cuckooctl: add VALUE: ", into @buf; returns @buf.
 */
const char *ctl_parse_reason(enum ctl_parse_err err,
			     const struct cnf_addr *hint,
			     char *buf, size_t len);

/* Room ctl_parse_reason() needs. */
#define CTL_REASONLEN		128

enum ctl_line_kind {
	CTL_LINE_EMPTY,		/* blank or comment only */
	CTL_LINE_ADDR,		/* one prefix, @a filled */
	CTL_LINE_BAD,		/* anything else */
};

/*
 * Classify one input line of @len bytes (line ending allowed): optional
 * whitespace, a prefix (or with CTL_PARSE_F_RANGE a range "A-B" of two
 * addresses of one family, no space around the '-'), optionally whitespace, "timeout" and whitespace
 * and its seconds, optional whitespace, an optional comment from '#' or
 * ';' to the end.  May modify @line.  On CTL_LINE_ADDR, @e holds the
 * prefix and its timeout.  On CTL_LINE_BAD, *@err and @hint say why and
 * *@value / *@value_len delimit the offending text in @line (the entry,
 * without comment or surrounding whitespace).
 */
enum ctl_line_kind ctl_parse_line(char *line, size_t len, unsigned int flags,
				  struct ctl_entry *e, enum ctl_parse_err *err,
				  struct cnf_addr *hint, const char **value,
				  size_t *value_len);

struct ctl_bad_line {
	unsigned long lineno;
	enum ctl_parse_err err;
	struct cnf_addr hint;		/* for ctl_parse_reason() */
	char text[CTL_BADLINE_TEXT + 4];	/* the value, printable */
};

/*
 * The operands of add (@timeouts) or of del and test: each a prefix (or
 * with CTL_PARSE_F_RANGE in @flags a range "A-B"), with
 * @timeouts optionally followed by "timeout" and its seconds, into @out
 * (room for @argc), *@n of them.  Every bad operand is passed to @bad
 * with @ctx: its text, the reason and the hint for ctl_parse_reason().
 * Returns how many were bad.
 */
typedef void ctl_bad_arg_fn(void *ctx, const char *value,
			    enum ctl_parse_err err,
			    const struct cnf_addr *hint);
size_t ctl_parse_entry_args(int argc, char *const *argv, unsigned int flags,
			    bool timeouts, struct ctl_entry *out, size_t *n,
			    ctl_bad_arg_fn *bad, void *ctx);

/*
 * A set of a save (CTL_PARSE_F_SETS): the prefixes after its set line,
 * addrs[first] up to the next section's first (or the input's end).
 */
struct ctl_section {
	char name[CNF_SET_NAME_LEN];
	uint32_t kind;			/* enum cnf_set_kind */
	uint32_t timeout;		/* the set's default timeout, 0: none */
	struct ctl_log log;		/* the set's logging */
	size_t first;
	unsigned long lineno;		/* of its set line */
};

/*
 * Every prefix of an input, in order, and the lines that did not parse.
 * Under CTL_PARSE_F_SETS, the prefixes before the first section (or all
 * of them, with no section) are the default set's.
 */
struct ctl_input {
	unsigned int flags;		/* ctl_parse_prefix() flags */
	struct cnf_addr *addrs;
	uint32_t *timeout;		/* timeout of addrs[i], when timed[i] */
	uint8_t *timed;			/* 1: addrs[i]'s line gave a timeout */
	size_t ntimed;			/* lines that gave a timeout */
	unsigned long *lineno;		/* input line of addrs[i] */
	size_t n, room;
	struct ctl_bad_line *bad;
	size_t nbad, bad_room;
	struct ctl_section *sect;
	size_t nsect;
};

/* @flags: for every line, as ctl_parse_prefix() takes them. */
void ctl_input_init(struct ctl_input *in, unsigned int flags);
void ctl_input_free(struct ctl_input *in);
/* Read all of @f into @in: 0, or -errno on a read or allocation failure. */
int ctl_input_read(struct ctl_input *in, FILE *f);
/*
 * The prefixes of @e (a range's, or the one) after @in's, from line
 * @lineno: 0 or -ENOMEM.
 */
int ctl_input_add(struct ctl_input *in, const struct ctl_entry *e,
		  unsigned long lineno);

/* Bytes with an optional K, M or G suffix (base 1024): 0 or -EINVAL/-ERANGE. */
int ctl_parse_size(const char *s, uint64_t *bytes);

/*
 * A device name or pattern of the hooks' scope (hooks on --iif): a name a
 * device could have, up to %CNF_IFNAMSIZ - 1 bytes without '/', ':' or
 * white space and neither "." nor ".."; ending in '+', a prefix of names
 * ("+" alone: every name).  NULL when @pat is one, else why not.
 */
const char *ctl_iif_pattern_error(const char *pat);
/* Whether pattern @pat covers device @name, as the module matches. */
bool ctl_iif_matches(const char *pat, const char *name);

/*
 * A mark and its mask, "VALUE[/MASK]", each a number in C's notation
 * (0x10, 16, 020) up to 32 bits; without MASK, every bit.  NULL when @s is
 * one, else why not.
 */
const char *ctl_parse_mark(const char *s, uint32_t *mark, uint32_t *mask);

/*
 * A logging as the commands take it, from @argc words of @argv: "on"
 * (the kernel log), "off", or "nflog GROUP" (0 to 65535).  Returns the
 * words it took (1 or 2), -EINVAL for a word it does not know, -ERANGE
 * for a bad or missing group.
 */
int ctl_log_parse(int argc, char *const *argv, struct ctl_log *log);
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

#endif /* _CTL_PARSE_H */
