/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: parsing of addresses, address files and sizes.
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

/* A bad line keeps this much of its text for the report, then "...". */
#define CTL_BADLINE_TEXT	120

/*
 * Fill @a from @s (IPv4 dotted quad or IPv6, exactly as inet_pton takes):
 * 0, -EINVAL, or -EAFNOSUPPORT for an IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d), which no packet carries as its source: a.b.c.d is meant.
 */
int ctl_parse_addr(const char *s, struct cnf_addr *a);

enum ctl_line_kind {
	CTL_LINE_EMPTY,		/* blank or comment only */
	CTL_LINE_ADDR,		/* one address, @a filled */
	CTL_LINE_BAD,		/* anything else */
};

/*
 * Classify one input line of @len bytes (trailing newline allowed).  May
 * modify @line.  A line is: optional whitespace, an address, optional
 * whitespace, optional '#' comment.
 */
enum ctl_line_kind ctl_parse_line(char *line, size_t len, struct cnf_addr *a);

struct ctl_bad_line {
	unsigned long lineno;
	char text[CTL_BADLINE_TEXT + 4];
};

/* Every address of an input, in order, and the lines that did not parse. */
struct ctl_input {
	struct cnf_addr *addrs;
	unsigned long *lineno;		/* input line of addrs[i] */
	size_t n, room;
	struct ctl_bad_line *bad;
	size_t nbad, bad_room;
};

void ctl_input_init(struct ctl_input *in);
void ctl_input_free(struct ctl_input *in);
/* Read all of @f into @in: 0, or -errno on a read or allocation failure. */
int ctl_input_read(struct ctl_input *in, FILE *f);

/* Bytes with an optional K, M or G suffix (base 1024): 0 or -EINVAL/-ERANGE. */
int ctl_parse_size(const char *s, uint64_t *bytes);

#endif /* _CTL_PARSE_H */
