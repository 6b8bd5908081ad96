// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: the origins of the decisions applied, and the
 * sets each origin's bans go to when the bouncer keeps a set per origin
 * (cbn.h).  The module counts the packets each set covered (struct
 * cnf_set_info.matched), not each entry's: a set per origin is what makes
 * the drops of each origin countable, as crowdsec-firewall-bouncer's
 * nftables mode keeps a set per origin for its counters.
 */
#include <stdio.h>
#include <string.h>

#include "cbn.h"

/* Room the hash takes at a cut name's end: ".%08x". */
#define HASH_LEN	9

/* What a set name holds (ctl_set_name_ok()): [A-Za-z0-9_.-]. */
static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* FNV-1a of @s: two origins cut to one name still get two sets. */
static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

int cbn_origins_init(struct cbn_origins *o, const char *set4,
		     const char *set6, char *err, size_t len)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	snprintf(o->base[0], sizeof(o->base[0]), "%s", set4);
	/* One name for both: IPv6's sets get a 6, as upstream's crowdsec6-. */
	snprintf(o->base[1], sizeof(o->base[1]), "%s%s", set6,
		 strcmp(set4, set6) ? "" : "6");
	for (i = 0; i < 2; i++)
		/* The base, '-', and a letter and the hash at least. */
		if (strlen(o->base[i]) + 2 + HASH_LEN >= CNF_SET_NAME_LEN) {
			snprintf(err, len,
				 "set '%s': too long a name for a set per origin (prometheus): at most %d characters",
				 i ? set6 : set4,
				 CNF_SET_NAME_LEN - 3 - HASH_LEN - (int)i);
			return -1;
		}
	return 0;
}

/* BASE-NAME for origin @name into @set, as cbn.h says. */
static void set_name(const char *base, const char *name, char *set)
{
	size_t room = CNF_SET_NAME_LEN - 1 - strlen(base) - 1, i, n;
	bool same = true;
	char tmp[CBN_ORIGIN_LEN];

	for (i = n = 0; name[i] && n < sizeof(tmp) - 1; i++, n++) {
		bool ok = name_char(name[i]);

		tmp[n] = ok ? name[i] : '_';
		same &= ok;
	}
	tmp[n] = '\0';
	if (same && n <= room && n) {
		snprintf(set, CNF_SET_NAME_LEN, "%s-%s", base, tmp);
		return;
	}
	tmp[room - HASH_LEN < n ? room - HASH_LEN : n] = '\0';
	snprintf(set, CNF_SET_NAME_LEN, "%s-%s.%08x", base, tmp, hash(name));
}

int cbn_origin_id(struct cbn_origins *o, const char *origin,
		  const char *scenario)
{
	char name[CBN_ORIGIN_LEN];
	struct cbn_origin *x;
	size_t i;

	/* Each list of the console's is an origin of its own, "lists:NAME". */
	if (!strcmp(origin, "lists") && scenario)
		snprintf(name, sizeof(name), "%s:%s", origin, scenario);
	else
		snprintf(name, sizeof(name), "%s", origin);
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].name, name))
			return (int)i;
	if (o->n == CBN_ORIGINS_MAX)
		return -1;
	x = &o->v[o->n];
	memset(x, 0, sizeof(*x));
	memcpy(x->name, name, sizeof(name));
	set_name(o->base[0], name, x->set[0]);
	set_name(o->base[1], name, x->set[1]);
	return (int)o->n++;
}

bool cbn_origins_own(const struct cbn_origins *o, const char *set)
{
	size_t i, n;

	for (i = 0; i < 2; i++) {
		n = strlen(o->base[i]);
		if (!strncmp(set, o->base[i], n) && set[n] == '-' && set[n + 1])
			return true;
	}
	return false;
}
