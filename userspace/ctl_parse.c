// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: parsing of addresses, address files and sizes.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl_parse.h"

int ctl_parse_addr(const char *s, struct cnf_addr *a)
{
	/* The kernel rejects unknown flags and stray address bytes. */
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->addr) == 1) {
		a->family = AF_INET;
		a->prefixlen = 32;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->addr) == 1) {
		a->family = AF_INET6;
		a->prefixlen = 128;
		/* ::ffff:a.b.c.d: IPv4 packets come from a.b.c.d, never from it. */
		if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a->addr))
			return -EAFNOSUPPORT;
		return 0;
	}
	memset(a, 0, sizeof(*a));
	return -EINVAL;
}

static char *skip_space(char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

static void trim_trailing_space(char *start, char *end)
{
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
}

enum ctl_line_kind ctl_parse_line(char *line, size_t len, struct cnf_addr *a)
{
	char *p, *hash;

	/* An embedded NUL would hide the rest of the line from the parser. */
	if (strnlen(line, len) != len)
		return CTL_LINE_BAD;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	p = skip_space(line);
	trim_trailing_space(p, p + strlen(p));
	if (!*p)
		return CTL_LINE_EMPTY;
	return ctl_parse_addr(p, a) ? CTL_LINE_BAD : CTL_LINE_ADDR;
}

void ctl_input_init(struct ctl_input *in)
{
	memset(in, 0, sizeof(*in));
}

void ctl_input_free(struct ctl_input *in)
{
	free(in->addrs);
	free(in->lineno);
	free(in->bad);
	ctl_input_init(in);
}

static int input_grow_addrs(struct ctl_input *in)
{
	size_t room = in->room ? in->room * 2 : 4096;
	struct cnf_addr *addrs;
	unsigned long *lineno;

	addrs = reallocarray(in->addrs, room, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	in->addrs = addrs;
	lineno = reallocarray(in->lineno, room, sizeof(*lineno));
	if (!lineno)
		return -ENOMEM;
	in->lineno = lineno;
	in->room = room;
	return 0;
}

static int input_add_addr(struct ctl_input *in, const struct cnf_addr *a,
			  unsigned long lineno)
{
	if (in->n == in->room && input_grow_addrs(in))
		return -ENOMEM;
	in->addrs[in->n] = *a;
	in->lineno[in->n] = lineno;
	in->n++;
	return 0;
}

/* Keep the line as it was read, minus its line ending, shortened if long. */
static void copy_bad_text(char *dst, const char *line, size_t len)
{
	size_t i, n = 0;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	for (i = 0; i < len && n < CTL_BADLINE_TEXT; i++)
		dst[n++] = isprint((unsigned char)line[i]) ? line[i] : '?';
	if (i < len) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
}

static int input_add_bad(struct ctl_input *in, const char *line, size_t len,
			 unsigned long lineno)
{
	struct ctl_bad_line *b;

	if (in->nbad == in->bad_room) {
		size_t room = in->bad_room ? in->bad_room * 2 : 16;

		b = reallocarray(in->bad, room, sizeof(*b));
		if (!b)
			return -ENOMEM;
		in->bad = b;
		in->bad_room = room;
	}
	b = &in->bad[in->nbad++];
	b->lineno = lineno;
	copy_bad_text(b->text, line, len);
	return 0;
}

static int input_take_line(struct ctl_input *in, char *line, size_t len,
			   unsigned long lineno, char *scratch)
{
	struct cnf_addr a;

	/* ctl_parse_line() cuts the line up; the report wants it whole. */
	memcpy(scratch, line, len + 1);
	switch (ctl_parse_line(scratch, len, &a)) {
	case CTL_LINE_EMPTY:
		return 0;
	case CTL_LINE_ADDR:
		return input_add_addr(in, &a, lineno);
	default:
		return input_add_bad(in, line, len, lineno);
	}
}

int ctl_input_read(struct ctl_input *in, FILE *f)
{
	char *line = NULL, *scratch = NULL;
	size_t cap = 0, scratch_cap = 0;
	unsigned long lineno = 0;
	ssize_t len;
	int err = 0;

	for (;;) {
		errno = 0;
		len = getline(&line, &cap, f);
		if (len < 0) {
			/* getline() says -1 for both end of file and errors. */
			if (ferror(f))
				err = errno ? -errno : -EIO;
			break;
		}
		lineno++;
		if ((size_t)len + 1 > scratch_cap) {
			free(scratch);
			scratch_cap = cap;
			scratch = malloc(scratch_cap);
			if (!scratch) {
				err = -ENOMEM;
				break;
			}
		}
		err = input_take_line(in, line, len, lineno, scratch);
		if (err)
			break;
	}
	free(line);
	free(scratch);
	return err;
}

static int size_shift(const char *suffix, unsigned int *shift)
{
	if (!*suffix) {
		*shift = 0;
		return 0;
	}
	if (suffix[1])
		return -EINVAL;
	switch (*suffix) {
	case 'k': case 'K':
		*shift = 10;
		return 0;
	case 'm': case 'M':
		*shift = 20;
		return 0;
	case 'g': case 'G':
		*shift = 30;
		return 0;
	}
	return -EINVAL;
}

int ctl_parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned int shift;
	char *end;

	/* strtoull() would take "-1", " 1" and "+1"; a size is digits only. */
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (size_shift(end, &shift))
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*bytes = (uint64_t)v << shift;
	return 0;
}
