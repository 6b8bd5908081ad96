// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: set names, set kinds and the lines of a save that start a set.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_parse.h"
#include "ctl_setname.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static bool name_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= CNF_SET_NAME_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

bool ctl_set_name_ok(const char *s)
{
	return name_ok(s, strlen(s));
}

bool ctl_set_is_default(const char *s)
{
	return !s || !strcmp(s, CNF_SET_DEFAULT);
}

void ctl_set_field(char field[CNF_SET_NAME_LEN], const char *name)
{
	memset(field, 0, CNF_SET_NAME_LEN);
	if (!ctl_set_is_default(name))
		strncpy(field, name, CNF_SET_NAME_LEN - 1);
}

const char *ctl_set_kind_name(uint32_t kind)
{
	switch (kind & ~CTL_KIND_RULES_ONLY) {
	case CNF_SET_BLOCK:
		return "block";
	case CNF_SET_ALLOW:
		return "allow";
	}
	return NULL;
}

int ctl_set_kind_parse(const char *s)
{
	if (!strcmp(s, "block"))
		return CNF_SET_BLOCK;
	if (!strcmp(s, "allow"))
		return CNF_SET_ALLOW;
	return -EINVAL;
}

int ctl_log_parse(int argc, char *const *argv, struct ctl_log *log)
{
	char *end;
	unsigned long g;

	if (argc < 1)
		return -EINVAL;
	if (!strcmp(argv[0], "on") || !strcmp(argv[0], "off")) {
		*log = (struct ctl_log){ argv[0][1] == 'n' ? CNF_SET_F_LOG : 0, 0 };
		return 1;
	}
	if (strcmp(argv[0], "nflog"))
		return -EINVAL;
	if (argc < 2 || !isdigit((unsigned char)argv[1][0]))
		return -ERANGE;
	errno = 0;
	g = strtoul(argv[1], &end, 10);
	if (errno || *end || g > 65535)
		return -ERANGE;
	*log = (struct ctl_log){ CNF_SET_F_NFLOG, (uint32_t)g };
	return 2;
}

const char *ctl_format_log(const struct ctl_log *log, char *buf, size_t len)
{
	if (log->flags & CNF_SET_F_NFLOG)
		snprintf(buf, len, "nflog %u", log->group);
	else
		snprintf(buf, len, "%s", log->flags ? "on" : "off");
	return buf;
}

/*
 * The " log on" or " log nflog GROUP" that may end a set line's
 * [@p, *@end): parsed into @log, and *@end moved before it.  -1 when it
 * is there but bad.
 */
static int set_line_log(const char *p, const char **end, struct ctl_log *log)
{
	static const char lw[] = " " CTL_LOG_WORD " ";
	char tail[sizeof(" nflog 65535")], *words[2] = { tail, NULL }, *sp;
	const char *at = NULL, *q;
	int n = 1;

	*log = (struct ctl_log){ 0, 0 };
	for (q = p; q + strlen(lw) <= *end; q++)
		if (!memcmp(q, lw, strlen(lw)))
			at = q;
	if (!at)
		return 0;
	q = at + strlen(lw);
	if ((size_t)(*end - q) >= sizeof(tail))
		return -1;
	memcpy(tail, q, *end - q);
	tail[*end - q] = '\0';
	/* Single spaces, as save writes them: "on" or "nflog GROUP". */
	sp = strchr(tail, ' ');
	if (sp) {
		*sp = '\0';
		words[n++] = sp + 1;
		if (strchr(sp + 1, ' '))
			return -1;
	}
	/* "off" is never written: a set without logging has no word. */
	if (ctl_log_parse(n, words, log) != n || !log->flags)
		return -1;
	*end = at;
	return 0;
}

int ctl_parse_set_line(const char *line, size_t len,
		       char name[CNF_SET_NAME_LEN], uint32_t *kind,
		       uint32_t *timeout, struct ctl_log *log)
{
	static const char tw[] = CTL_TIMEOUT_WORD " ";
	static const char rw[] = CTL_RULES_ONLY_WORD;
	const size_t plen = strlen(CTL_SET_LINE);
	const char *p = line + plen, *sp, *end = line + len;
	/* "KIND [rules-only] [timeout SECONDS]", single spaces as save writes. */
	char rest[sizeof("block " CTL_RULES_ONLY_WORD " " CTL_TIMEOUT_WORD
			 " 4294967295")], *sp2;
	uint32_t sec = 0, rules = 0;
	int k;

	if (len < plen || memcmp(line, CTL_SET_LINE, plen))
		return 0;
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	if (set_line_log(p, &end, log))
		return -1;
	sp = memchr(p, ' ', end - p);
	if (!sp || !name_ok(p, sp - p) || (size_t)(end - sp - 1) >= sizeof(rest))
		return -1;
	memcpy(rest, sp + 1, end - sp - 1);
	rest[end - sp - 1] = '\0';
	sp2 = strchr(rest, ' ');
	if (sp2) {
		*sp2++ = '\0';
		if (!strncmp(sp2, rw, strlen(rw)) &&
		    (!sp2[strlen(rw)] || sp2[strlen(rw)] == ' ')) {
			rules = CTL_KIND_RULES_ONLY;
			sp2 += strlen(rw);
			sp2 = *sp2 ? sp2 + 1 : NULL;
		}
	}
	if (sp2) {
		if (strncmp(sp2, tw, strlen(tw)) ||
		    ctl_parse_timeout(sp2 + strlen(tw), &sec))
			return -1;
	}
	k = ctl_set_kind_parse(rest);
	if (k < 0)
		return -1;
	memset(name, 0, CNF_SET_NAME_LEN);
	memcpy(name, p, sp - p);
	*kind = k | rules;
	*timeout = sec;
	return 1;
}
