// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: set names, set kinds and logging, and their words.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_setname.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

bool ctl_set_name_ok_len(const char *s, size_t len)
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
	return ctl_set_name_ok_len(s, strlen(s));
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

const char *ctl_format_log(const struct ctl_log *log, char *buf, size_t len)
{
	if (log->flags & CNF_SET_F_NFLOG)
		snprintf(buf, len, "nflog %u", log->group);
	else
		snprintf(buf, len, "%s", log->flags ? "on" : "off");
	return buf;
}
