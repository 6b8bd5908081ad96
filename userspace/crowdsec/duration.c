// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: Go's duration strings, as the Local API writes a
 * decision's time left ("3h59m58.123456s", "-1.5s") and as the bouncers'
 * configurations write update_frequency ("10s").  The grammar of Go's
 * time.ParseDuration: an optional sign, then "0" or one or more decimal
 * numbers (a fraction allowed) each with its unit: ns, us (µs, μs), ms,
 * s, m, h.  At most 2^63-1 ns (about 292 years), as Go.
 */
#include <stdio.h>
#include <string.h>

#include "cbn.h"

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	/* Longest names first: "ms" before "m". */
	{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 },
	{ "\xce\xbcs", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	{ "m", 60000000000ull }, { "h", 3600000000000ull },
};

#define NS_MAX	((uint64_t)INT64_MAX)

int cbn_duration_parse(const char *s, int64_t *ns, char *err, size_t len)
{
	const char *p = s;
	uint64_t total = 0;
	bool neg = false;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!strcmp(p, "0")) {
		*ns = 0;
		return 0;
	}
	if (!*p) {
		snprintf(err, len, "'%s': not a duration (such as 10s, 1m30s, 4h)", s);
		return -1;
	}
	while (*p) {
		uint64_t whole = 0, frac = 0, scale = 1, unit = 0, v;
		bool digits = false;
		size_t i, n = 0;

		for (; *p >= '0' && *p <= '9'; p++) {
			if (whole > (NS_MAX - (*p - '0')) / 10)
				goto range;
			whole = whole * 10 + (*p - '0');
			digits = true;
		}
		if (*p == '.') {
			/* Digits past what 2^63 holds change nothing. */
			for (p++; *p >= '0' && *p <= '9'; p++) {
				if (scale <= NS_MAX / 10) {
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
				digits = true;
			}
		}
		if (!digits) {
			snprintf(err, len, "'%s': a number expected at '%s'", s, p);
			return -1;
		}
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			n = strlen(units[i].name);
			/* "m" must not take the "m" of "ms". */
			if (!strncmp(p, units[i].name, n)) {
				unit = units[i].ns;
				break;
			}
		}
		if (!unit) {
			snprintf(err, len,
				 "'%s': a unit (ns, us, ms, s, m, h) expected at '%s'",
				 s, p);
			return -1;
		}
		p += n;
		if (whole > NS_MAX / unit)
			goto range;
		v = whole * unit;
		if (frac)
			v += (uint64_t)((long double)frac * unit / scale);
		if (v > NS_MAX - total)
			goto range;
		total += v;
	}
	*ns = neg ? -(int64_t)total : (int64_t)total;
	return 0;
range:
	snprintf(err, len, "'%s': out of range (at most 2562047h)", s);
	return -1;
}

uint64_t cbn_duration_secs(int64_t ns)
{
	if (ns <= 0)
		return 0;
	return ((uint64_t)ns + 999999999) / 1000000000;
}
