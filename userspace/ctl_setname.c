// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: set names, set kinds and the lines of a save that start a set.
 */
#include <errno.h>
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

int ctl_parse_set_line(const char *line, size_t len,
		       char name[CNF_SET_NAME_LEN], uint32_t *kind,
		       uint32_t *timeout)
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
