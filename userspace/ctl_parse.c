// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: parsing of prefixes, address files and sizes.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl_format.h"
#include "ctl_parse.h"
#include "ctl_setname.h"

/* What isspace() takes in the C locale, for strcspn(). */
#define CTL_SPACE	" \t\n\v\f\r"
/* A comment starts at '#' (FireHOL, hosts files) or ';' (Spamhaus DROP). */
#define CTL_COMMENT	"#;"

static unsigned int family_width(int family)
{
	return family == AF_INET ? 32 : 128;
}

/* Zero every bit of @addr past @len (of @width); true when one was set. */
static bool clear_host_bits(uint8_t *addr, unsigned int len,
			    unsigned int width)
{
	unsigned int i = len / 8;
	uint8_t set = 0;

	/* The byte holding the boundary keeps its first len % 8 bits. */
	if (len % 8) {
		uint8_t keep = (uint8_t)(0xff00 >> (len % 8));

		set = addr[i] & (uint8_t)~keep;
		addr[i++] &= keep;
	}
	for (; i < width / 8; i++) {
		set |= addr[i];
		addr[i] = 0;
	}
	return set;
}

/*
 * A dotted quad at @s, four numbers of 0 to 255, none with a leading zero,
 * into @out: where it ends, or NULL.  Number by number, each digit read
 * once: this runs on every line of a load.
 */
static const char *scan_ipv4(const char *s, const char *end, uint8_t out[4])
{
	unsigned int i, v, d;
	uint8_t q[4];

	for (i = 0; i < 4; i++) {
		if (i && (s == end || *s++ != '.'))
			return NULL;
		if (s == end || (v = (unsigned int)(*s++ - '0')) > 9)
			return NULL;
		/* Two more digits at most, and none after a leading zero. */
		if (s < end && (d = (unsigned int)(*s - '0')) < 10) {
			if (!v)
				return NULL;
			v = v * 10 + d;
			if (++s < end && (d = (unsigned int)(*s - '0')) < 10) {
				v = v * 10 + d;
				s++;
			}
		}
		if (v > 255)
			return NULL;
		q[i] = (uint8_t)v;
	}
	/* A fourth digit ends no quad. */
	if (s < end && (unsigned int)(*s - '0') < 10)
		return NULL;
	memcpy(out, q, sizeof(q));
	return s;
}

/* Only a quad that is all of [@s, @end) is written to @out. */
static bool parse_ipv4(const char *s, const char *end, uint8_t out[4])
{
	uint8_t q[4];

	if (scan_ipv4(s, end, q) != end)
		return false;
	memcpy(out, q, sizeof(q));
	return true;
}

/* A hex digit's value plus one; zero for any other character. */
static const uint8_t hex_digit[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * One group of an IPv6 address at *@s, its value into *@v: false unless 1
 * to 4 hex digits are there.  A dotted quad's first number reads as one
 * too; the caller sees the '.' after it.
 */
static bool parse_group(const char **s, const char *end, unsigned int *v)
{
	const char *p = *s;

	for (*v = 0; p < end && hex_digit[(unsigned char)*p]; p++)
		*v = *v << 4 | (hex_digit[(unsigned char)*p] - 1U);
	if (p == *s || p - *s > 4)
		return false;
	*s = p;
	return true;
}

/*
 * Groups into @a as they come, two bytes each, or four for a dotted quad
 * at the end; "::" at byte *@gap (-1: none).  Returns the bytes, or -1.
 */
static int parse_groups(const char *s, const char *end, uint8_t a[16],
			int *gap)
{
	const char *start;
	unsigned int v;
	int n = 0;

	*gap = -1;
	if (end - s >= 2 && s[0] == ':' && s[1] == ':') {
		*gap = 0;
		s += 2;
	}
	while (s < end) {
		start = s;
		if (!parse_group(&s, end, &v))
			return -1;
		if (s < end && *s == '.')
			return n <= 12 && parse_ipv4(start, end, a + n) ? n + 4 : -1;
		if (n == 16)
			return -1;
		a[n++] = (uint8_t)(v >> 8);
		a[n++] = (uint8_t)v;
		if (s == end)
			break;
		if (*s++ != ':' || s == end)
			return -1;
		if (*s == ':') {
			if (*gap >= 0)
				return -1;
			*gap = n;
			s++;
		}
	}
	return n;
}

static bool parse_ipv6(const char *s, const char *end, uint8_t out[16])
{
	uint8_t a[16];
	int n, gap;

	n = parse_groups(s, end, a, &gap);
	/* "::" stands for one zero group at least. */
	if (n < 0 || (gap < 0 ? n != 16 : n > 14))
		return false;
	if (gap >= 0) {
		memmove(a + 16 - (n - gap), a + gap, n - gap);
		memset(a + gap, 0, 16 - n);
	}
	memcpy(out, a, sizeof(a));
	return true;
}

bool ctl_parse_addr(int family, const char *s, size_t n, uint8_t *out)
{
	if (family == AF_INET)
		return parse_ipv4(s, s + n, out);
	return family == AF_INET6 && parse_ipv6(s, s + n, out);
}

/* The prefix length netmask @m stands for, 0xff when not contiguous. */
static unsigned int netmask_len(const uint8_t *m, unsigned int width)
{
	uint8_t copy[16];
	unsigned int n = 0;

	while (n < width && (m[n / 8] & (0x80 >> (n % 8))))
		n++;
	memcpy(copy, m, width / 8);
	return clear_host_bits(copy, n, width) ? 0xff : n;
}

/* The length after a '/': digits only, at most three, no leading zero. */
static enum ctl_parse_err parse_len_digits(const char *s, const char *end,
					   unsigned int *len)
{
	const char *p = s;

	while (p < end && (unsigned int)(*p - '0') < 10)
		p++;
	if (p == s || p != end)
		return CTL_PARSE_BAD_LEN;
	/* As an address's 010.0.0.1 is refused: one way to write a number. */
	if (end - s > 1 && *s == '0')
		return CTL_PARSE_BAD_LEN;
	if (end - s > 3)
		return CTL_PARSE_LEN_RANGE;
	/* At most three digits, checked above: no strtoul() on every line. */
	for (*len = 0; s < end; s++)
		*len = *len * 10 + (unsigned int)(*s - '0');
	return CTL_PARSE_OK;
}

/* The length after the '/' of a @family prefix, [@s, @end). */
static enum ctl_parse_err parse_len(const char *s, const char *end,
				    int family, unsigned int *len,
				    struct cnf_addr *hint)
{
	enum ctl_parse_err err = parse_len_digits(s, end, len);
	unsigned int width = family_width(family);
	uint8_t mask[16];

	hint->family = family;
	if (err == CTL_PARSE_BAD_LEN) {
		/* 10.0.0.0/255.255.255.0 is a common way of saying /24. */
		if (ctl_parse_addr(family, s, end - s, mask)) {
			hint->prefixlen = netmask_len(mask, width);
			return CTL_PARSE_NETMASK;
		}
		return err;
	}
	if (err)
		return err;
	return *len > width ? CTL_PARSE_LEN_RANGE : CTL_PARSE_OK;
}

static bool v4mapped(const struct cnf_addr *a)
{
	static const uint8_t mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};

	return a->family == AF_INET6 && a->prefixlen >= 96 &&
	       !memcmp(a->addr, mapped, sizeof(mapped));
}

/* The prefix [@s, @end) into @a, zeroed before, or @hint says why not. */
static enum ctl_parse_err parse_prefix(const char *s, const char *end,
				       unsigned int flags, struct cnf_addr *a,
				       struct cnf_addr *hint)
{
	const char *slash = scan_ipv4(s, end, a->addr);
	unsigned int width, len;
	enum ctl_parse_err err;

	/*
	 * A dotted quad up to the '/' or the end is IPv4.  Other text is
	 * IPv6 if it has a colon before any '/', as IPv4 text never does,
	 * and no address at all if it has none.
	 */
	if (slash && (slash == end || *slash == '/')) {
		a->family = AF_INET;
	} else {
		slash = memchr(s, '/', end - s);
		a->family = AF_INET6;
		if (!memchr(s, ':', (slash ?: end) - s) ||
		    !parse_ipv6(s, slash ?: end, a->addr))
			return CTL_PARSE_NOT_ADDR;
	}
	if (slash == end)
		slash = NULL;
	width = family_width(a->family);
	len = width;
	if (slash) {
		err = parse_len(slash + 1, end, a->family, &len, hint);
		if (err)
			return err;
	}
	a->prefixlen = len;
	hint->family = a->family;
	/* Before the host bits: 10.0.0.5/0 is no typo of 0.0.0.0/0. */
	if (!len && !(flags & CTL_PARSE_F_ALL))
		return CTL_PARSE_ALL;
	if (v4mapped(a)) {
		hint->family = AF_INET;
		hint->prefixlen = len - 96;
		memcpy(hint->addr, a->addr + 12, 4);
		return CTL_PARSE_V4MAPPED;
	}
	*hint = *a;
	if (clear_host_bits(hint->addr, len, width))
		return CTL_PARSE_HOST_BITS;
	memset(hint, 0, sizeof(*hint));
	if (!len)
		a->flags = CNF_ADDR_F_ALL;
	return CTL_PARSE_OK;
}

/* ctl_parse_prefix() of the text [@s, @end). */
static enum ctl_parse_err parse_prefix_text(const char *s, const char *end,
					    unsigned int flags,
					    struct cnf_addr *a,
					    struct cnf_addr *hint)
{
	enum ctl_parse_err err;

	/* The kernel rejects unknown flags and stray address bytes. */
	memset(a, 0, sizeof(*a));
	memset(hint, 0, sizeof(*hint));
	err = parse_prefix(s, end, flags, a, hint);
	if (err)
		memset(a, 0, sizeof(*a));
	return err;
}

/* Set every bit of @addr past @len (of @width). */
static void set_host_bits(uint8_t *addr, unsigned int len, unsigned int width)
{
	unsigned int i = len / 8;

	if (len % 8)
		addr[i++] |= (uint8_t)(0xff >> (len % 8));
	for (; i < width / 8; i++)
		addr[i] = 0xff;
}

/* Whether every bit of @addr past @len (of @width) is set. */
static bool host_bits_set(const uint8_t *addr, unsigned int len,
			  unsigned int width)
{
	uint8_t a[16];

	memcpy(a, addr, width / 8);
	set_host_bits(a, len, width);
	return !memcmp(a, addr, width / 8);
}

/* How many of @a's last bits, of @width, are zero. */
static unsigned int zero_tail(const uint8_t *a, unsigned int width)
{
	unsigned int i, n = 0;

	for (i = width / 8; i--; n += 8)
		if (a[i])
			return n + __builtin_ctz(a[i]);
	return n;
}

/* @a plus one, as a big-endian number of @bytes. */
static void addr_inc(uint8_t *a, unsigned int bytes)
{
	while (bytes-- && !++a[bytes])
		;
}

/*
 * The range [@s, @end), "A-B" split at @dash, into @e: two addresses of
 * one family, A no later than B, or @hint says why not.
 */
static enum ctl_parse_err parse_range(const char *s, const char *dash,
				      const char *end, unsigned int flags,
				      struct ctl_entry *e,
				      struct cnf_addr *hint)
{
	enum ctl_parse_err err;
	unsigned int width;

	/* "10.0.0.0/24-10.0.1.255" means nothing ipset would take either. */
	if (memchr(s, '/', end - s))
		return CTL_PARSE_RANGE_PREFIX;
	err = parse_prefix_text(s, dash, flags | CTL_PARSE_F_ALL, &e->a, hint);
	if (!err)
		err = parse_prefix_text(dash + 1, end, flags | CTL_PARSE_F_ALL,
					&e->last, hint);
	if (err)
		return err;
	if (e->a.family != e->last.family)
		return CTL_PARSE_RANGE_FAMILY;
	width = family_width(e->a.family);
	if (memcmp(e->a.addr, e->last.addr, width / 8) > 0)
		return CTL_PARSE_RANGE_ORDER;
	e->range = true;
	/* The whole family is a /0, which only --all-addresses may mean. */
	memset(hint, 0, sizeof(*hint));
	hint->family = e->a.family;
	if (!(flags & CTL_PARSE_F_ALL) && zero_tail(e->a.addr, width) == width &&
	    host_bits_set(e->last.addr, 0, width))
		return CTL_PARSE_ALL;
	memset(hint, 0, sizeof(*hint));
	return CTL_PARSE_OK;
}

/*
 * The entry [@s, @end): a prefix, or under CTL_PARSE_F_RANGE a range, into
 * @e (its address fields zeroed first), or @hint says why not.
 */
static enum ctl_parse_err parse_entry_text(const char *s, const char *end,
					   unsigned int flags,
					   struct ctl_entry *e,
					   struct cnf_addr *hint)
{
	/* Neither IPv4 nor IPv6 text has a '-': it can only split a range. */
	const char *dash = memchr(s, '-', end - s);
	enum ctl_parse_err err;

	memset(&e->last, 0, sizeof(e->last));
	e->range = false;
	if (!dash || !(flags & CTL_PARSE_F_RANGE))
		return parse_prefix_text(s, end, flags, &e->a, hint);
	err = parse_range(s, dash, end, flags, e, hint);
	if (err) {
		memset(&e->a, 0, sizeof(e->a));
		memset(&e->last, 0, sizeof(e->last));
		e->range = false;
	}
	return err;
}

enum ctl_parse_err ctl_parse_entry(const char *s, unsigned int flags,
				   struct ctl_entry *e, struct cnf_addr *hint)
{
	struct cnf_addr unused;

	memset(e, 0, sizeof(*e));
	return parse_entry_text(s, s + strlen(s), flags, e, hint ?: &unused);
}

size_t ctl_range_split(const struct ctl_entry *e, struct cnf_addr *out)
{
	unsigned int width = family_width(e->a.family), len;
	struct cnf_addr cur = e->a, last;
	size_t n = 0;

	if (!e->range) {
		out[0] = e->a;
		return 1;
	}
	cur.prefixlen = width;
	cur.flags = 0;
	for (;;) {
		/*
		 * The shortest prefix that starts at @cur (its host bits
		 * zero) and ends no later than the range (its last address,
		 * host bits one, not past e->last): each step takes the
		 * largest aligned block left, which makes the fewest.  A
		 * single address always fits, as @cur is in the range.
		 */
		for (len = width - zero_tail(cur.addr, width);; len++) {
			last = cur;
			set_host_bits(last.addr, len, width);
			if (len == width ||
			    memcmp(last.addr, e->last.addr, width / 8) <= 0)
				break;
		}
		out[n] = cur;
		out[n].prefixlen = len;
		out[n].flags = len ? 0 : CNF_ADDR_F_ALL;
		n++;
		if (!memcmp(last.addr, e->last.addr, width / 8))
			return n;
		cur = last;
		addr_inc(cur.addr, width / 8);
	}
}

enum ctl_parse_err ctl_parse_prefix(const char *s, unsigned int flags,
				    struct cnf_addr *a, struct cnf_addr *hint)
{
	struct cnf_addr unused;

	return parse_prefix_text(s, s + strlen(s), flags, a, hint ?: &unused);
}

static const char *family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

const char *ctl_parse_reason(enum ctl_parse_err err,
			     const struct cnf_addr *hint,
			     char *buf, size_t len)
{
	unsigned int width = family_width(hint->family);
	const char *fam = family_name(hint->family);
	char text[CTL_PREFIXSTRLEN];

	switch (err) {
	case CTL_PARSE_OK:
		snprintf(buf, len, "no error");
		break;
	case CTL_PARSE_NOT_ADDR:
		snprintf(buf, len, "not an IPv4 or IPv6 address or prefix");
		break;
	case CTL_PARSE_BAD_LEN:
		snprintf(buf, len,
			 "bad prefix length: a decimal number from 0 to %u, without sign or leading zero",
			 width);
		break;
	case CTL_PARSE_NETMASK:
		if (hint->prefixlen <= width)
			snprintf(buf, len,
				 "a netmask, not a prefix length: write /%u",
				 hint->prefixlen);
		else
			snprintf(buf, len,
				 "a netmask, not a prefix length (0 to %u), and not even a contiguous one",
				 width);
		break;
	case CTL_PARSE_LEN_RANGE:
		snprintf(buf, len, "prefix length past %u, the length of an %s address",
			 width, fam);
		break;
	case CTL_PARSE_ALL:
		snprintf(buf, len,
			 "/0 is every %s address: give --all-addresses to mean that",
			 fam);
		break;
	case CTL_PARSE_HOST_BITS:
		snprintf(buf, len, "host bits set; did you mean %s?",
			 ctl_format_prefix(hint, text, sizeof(text)));
		break;
	case CTL_PARSE_V4MAPPED:
		snprintf(buf, len,
			 "an IPv4-mapped %s, which IPv4 packets do not carry: use the IPv4 form %s",
			 hint->prefixlen == 32 ? "address" : "prefix",
			 ctl_format_prefix(hint, text, sizeof(text)));
		break;
	case CTL_PARSE_EXTRA:
		snprintf(buf, len,
			 "more than one entry on the line (comments start with # or ;)");
		break;
	case CTL_PARSE_NUL:
		snprintf(buf, len, "a NUL byte in the line");
		break;
	case CTL_PARSE_SET_LINE:
		snprintf(buf, len,
			 "a set line is '" CTL_SET_LINE "NAME block' or '... NAME allow', then optionally 'timeout SECONDS', then 'log on' or 'log nflog GROUP'");
		break;
	case CTL_PARSE_SET_TWICE:
		snprintf(buf, len, "a set given twice");
		break;
	case CTL_PARSE_TIMEOUT:
		snprintf(buf, len,
			 "not a timeout: seconds from 0 (none) to %lu, or a duration such as 90s, 15m, 1h30m, 7d",
			 (unsigned long)UINT32_MAX);
		break;
	case CTL_PARSE_TIMEOUT_RANGE:
		snprintf(buf, len, "timeout past %lu seconds, the longest there is",
			 (unsigned long)UINT32_MAX);
		break;
	case CTL_PARSE_TIMEOUT_MISSING:
		snprintf(buf, len,
			 "'" CTL_TIMEOUT_WORD "' without its number of seconds");
		break;
	case CTL_PARSE_TIMEOUT_ALONE:
		snprintf(buf, len,
			 "'" CTL_TIMEOUT_WORD " SECONDS' goes after the address it is for");
		break;
	case CTL_PARSE_TIMEOUT_TWICE:
		snprintf(buf, len, "a second timeout for the same address");
		break;
	case CTL_PARSE_RANGE_PREFIX:
		snprintf(buf, len,
			 "a range goes from one address to another, without '/' lengths");
		break;
	case CTL_PARSE_RANGE_FAMILY:
		snprintf(buf, len,
			 "a range from an IPv4 to an IPv6 address or back");
		break;
	case CTL_PARSE_RANGE_ORDER:
		snprintf(buf, len, "a range whose first address comes after its last");
		break;
	default:
		snprintf(buf, len, "unknown parse error %d", (int)err);
		break;
	}
	return buf;
}

/* Seconds in one of a duration's units, largest first, as they must come. */
static const struct {
	char unit;
	uint32_t sec;
} duration_units[] = {
	{ 'w', 7 * 24 * 3600 }, { 'd', 24 * 3600 }, { 'h', 3600 },
	{ 'm', 60 }, { 's', 1 },
};

/*
 * Digits at *@s, as a number no larger than UINT64_MAX / 2 (past it, a
 * duration is out of range whatever its unit): CTL_PARSE_OK with *@v and
 * *@s moved past them, or why not.
 */
static enum ctl_parse_err parse_count(const char **s, unsigned long long *v)
{
	size_t n = strspn(*s, "0123456789");

	/* strtoull() would take "-1", " 1" and "+1": digits only. */
	if (!n)
		return CTL_PARSE_TIMEOUT;
	errno = 0;
	*v = strtoull(*s, NULL, 10);
	*s += n;
	return errno == ERANGE || *v > UINT64_MAX / 2 ?
	       CTL_PARSE_TIMEOUT_RANGE : CTL_PARSE_OK;
}

enum ctl_parse_err ctl_parse_timeout(const char *s, uint32_t *sec)
{
	unsigned long long v, total = 0;
	enum ctl_parse_err err;
	size_t u = 0;

	/*
	 * Seconds alone, as ipset takes them, or a duration as fail2ban and
	 * systemd write them: numbers each with its unit, largest unit
	 * first, none twice ("1h30m", "7d").
	 */
	do {
		err = parse_count(&s, &v);
		if (err)
			return err;
		if (!*s && !total && !u) {
			total = v;
			break;
		}
		while (u < ARRAY_SIZE(duration_units) &&
		       duration_units[u].unit != *s)
			u++;
		if (u == ARRAY_SIZE(duration_units))
			return CTL_PARSE_TIMEOUT;
		if (v > (UINT32_MAX - total) / duration_units[u].sec)
			return CTL_PARSE_TIMEOUT_RANGE;
		total += v * duration_units[u++].sec;
		s++;
	} while (*s);
	if (total > UINT32_MAX)
		return CTL_PARSE_TIMEOUT_RANGE;
	*sec = (uint32_t)total;
	return CTL_PARSE_OK;
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
	if (!sp || !ctl_set_name_ok_len(p, sp - p) || (size_t)(end - sp - 1) >= sizeof(rest))
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

size_t ctl_parse_entry_args(int argc, char *const *argv, unsigned int flags,
			    bool timeouts, struct ctl_entry *out, size_t *n,
			    ctl_bad_arg_fn *bad, void *ctx)
{
	static const struct cnf_addr no_hint;
	/* The operand a timeout would be for: -1 none, -2 a bad prefix. */
	long last = -1;
	enum ctl_parse_err err;
	struct cnf_addr hint;
	size_t nbad = 0;
	int i;

	*n = 0;
	for (i = 0; i < argc; i++) {
		if (!timeouts || strcmp(argv[i], CTL_TIMEOUT_WORD)) {
			memset(&out[*n], 0, sizeof(out[*n]));
			err = parse_entry_text(argv[i], argv[i] + strlen(argv[i]),
					       flags, &out[*n], &hint);
			if (err) {
				bad(ctx, argv[i], err, &hint);
				nbad++;
				last = -2;
				continue;
			}
			out[*n].arg = i;
			last = (long)(*n)++;
			continue;
		}
		/* "timeout": for the address before it, the number after it. */
		err = i + 1 == argc ? CTL_PARSE_TIMEOUT_MISSING :
		      last == -1 ? CTL_PARSE_TIMEOUT_ALONE :
		      last >= 0 && out[last].timed ? CTL_PARSE_TIMEOUT_TWICE :
		      CTL_PARSE_OK;
		if (!err && last >= 0) {
			err = ctl_parse_timeout(argv[i + 1], &out[last].timeout);
			out[last].timed = !err;
		}
		if (err) {
			bad(ctx, err == CTL_PARSE_TIMEOUT ||
				 err == CTL_PARSE_TIMEOUT_RANGE ?
			    argv[i + 1] : argv[i], err, &no_hint);
			nbad++;
		}
		/* Its number, good or bad, is not an address. */
		i++;
		if (last == -1)
			last = -2;
	}
	return nbad;
}

static char *skip_space(char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/* The end of an entry: the line's, or a comment's start. */
static bool entry_end(char c)
{
	return !c || strchr(CTL_COMMENT, c);
}

/*
 * The words after an entry's prefix, @p: none, or "timeout N" (whitespace
 * around and between them; @p modified).
 */
static enum ctl_parse_err parse_line_timeout(char *p, struct ctl_entry *e)
{
	enum ctl_parse_err err;
	char *word, *num;

	p = skip_space(p);
	if (!*p)
		return CTL_PARSE_OK;
	word = p;
	p += strcspn(p, CTL_SPACE);
	if (*p)
		*p++ = '\0';
	if (strcmp(word, CTL_TIMEOUT_WORD))
		return CTL_PARSE_EXTRA;
	num = skip_space(p);
	if (!*num)
		return CTL_PARSE_TIMEOUT_MISSING;
	p = num + strcspn(num, CTL_SPACE);
	if (*skip_space(p))
		return CTL_PARSE_EXTRA;
	*p = '\0';
	err = ctl_parse_timeout(num, &e->timeout);
	e->timed = !err;
	return err;
}

enum ctl_line_kind ctl_parse_line(char *line, size_t len, unsigned int flags,
				  struct ctl_entry *e, enum ctl_parse_err *err,
				  struct cnf_addr *hint, const char **value,
				  size_t *value_len)
{
	char *p, *word_end, *end;

	memset(hint, 0, sizeof(*hint));
	/* An embedded NUL would hide the rest of the line from the parser. */
	if (strnlen(line, len) != len) {
		*err = CTL_PARSE_NUL;
		*value = line;
		*value_len = len;
		return CTL_LINE_BAD;
	}
	/* The first word, and then, in most lines, only the line's end. */
	p = skip_space(line);
	word_end = p + strcspn(p, CTL_SPACE CTL_COMMENT);
	if (word_end == p)
		return CTL_LINE_EMPTY;
	end = skip_space(word_end);
	if (entry_end(*end)) {
		end = word_end;
	} else {
		end += strcspn(end, CTL_COMMENT);
		while (isspace((unsigned char)end[-1]))
			end--;
	}
	*end = '\0';
	*value = p;
	*value_len = end - p;
	memset(e, 0, sizeof(*e));
	if (word_end < end) {
		/* Words after the prefix; the entry's text stays whole. */
		char words[CTL_BADLINE_TEXT + 1];
		size_t n = end - word_end;

		if (n >= sizeof(words)) {
			*err = CTL_PARSE_EXTRA;
			return CTL_LINE_BAD;
		}
		memcpy(words, word_end, n + 1);
		*err = parse_line_timeout(words, e);
		if (*err)
			return CTL_LINE_BAD;
	}
	*err = parse_entry_text(p, word_end, flags, e, hint);
	if (*err)
		memset(e, 0, sizeof(*e));
	return *err ? CTL_LINE_BAD : CTL_LINE_ADDR;
}

void ctl_input_init(struct ctl_input *in, unsigned int flags)
{
	memset(in, 0, sizeof(*in));
	in->flags = flags;
}

void ctl_input_free(struct ctl_input *in)
{
	free(in->addrs);
	free(in->timeout);
	free(in->timed);
	free(in->lineno);
	free(in->bad);
	free(in->sect);
	ctl_input_init(in, in->flags);
}

static int input_grow_addrs(struct ctl_input *in)
{
	size_t room = in->room ? in->room * 2 : 4096;
	struct cnf_addr *addrs;
	unsigned long *lineno;
	uint32_t *timeout;
	uint8_t *timed;

	addrs = reallocarray(in->addrs, room, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	in->addrs = addrs;
	timeout = reallocarray(in->timeout, room, sizeof(*timeout));
	if (!timeout)
		return -ENOMEM;
	in->timeout = timeout;
	timed = reallocarray(in->timed, room, sizeof(*timed));
	if (!timed)
		return -ENOMEM;
	in->timed = timed;
	lineno = reallocarray(in->lineno, room, sizeof(*lineno));
	if (!lineno)
		return -ENOMEM;
	in->lineno = lineno;
	in->room = room;
	return 0;
}

int ctl_input_add(struct ctl_input *in, const struct ctl_entry *e,
		  unsigned long lineno)
{
	struct cnf_addr split[CTL_RANGE_MAX];
	size_t i, n = ctl_range_split(e, split);

	for (i = 0; i < n; i++) {
		if (in->n == in->room && input_grow_addrs(in))
			return -ENOMEM;
		in->addrs[in->n] = split[i];
		in->timeout[in->n] = e->timed ? e->timeout : 0;
		in->timed[in->n] = e->timed;
		in->lineno[in->n] = lineno;
		in->n++;
	}
	in->ntimed += e->timed;
	return 0;
}

/* Keep the value as it was read, minus any line ending, shortened if long. */
static void copy_bad_text(char *dst, const char *text, size_t len)
{
	size_t i, n = 0;

	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	for (i = 0; i < len && n < CTL_BADLINE_TEXT; i++)
		dst[n++] = isprint((unsigned char)text[i]) ? text[i] : '?';
	if (i < len) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
}

static int input_add_bad(struct ctl_input *in, unsigned long lineno,
			 enum ctl_parse_err err, const struct cnf_addr *hint,
			 const char *value, size_t len)
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
	b->err = err;
	b->hint = *hint;
	copy_bad_text(b->text, value, len);
	return 0;
}

/* A set line of a save: a new section, or a bad line. */
static int input_take_set_line(struct ctl_input *in, const char *line,
			       size_t len, unsigned long lineno)
{
	static const struct cnf_addr no_hint;
	struct ctl_section s = { .first = in->n, .lineno = lineno }, *sect;
	size_t i;

	if (ctl_parse_set_line(line, len, s.name, &s.kind, &s.timeout,
			       &s.log) < 0)
		return input_add_bad(in, lineno, CTL_PARSE_SET_LINE, &no_hint,
				     line, len);
	/* Prefixes before any set line are the default set's. */
	if (!in->nsect && in->n && ctl_set_is_default(s.name))
		return input_add_bad(in, lineno, CTL_PARSE_SET_TWICE,
				     &no_hint, line, len);
	for (i = 0; i < in->nsect; i++)
		if (!strcmp(in->sect[i].name, s.name))
			return input_add_bad(in, lineno, CTL_PARSE_SET_TWICE,
					     &no_hint, line, len);
	sect = reallocarray(in->sect, in->nsect + 1, sizeof(*sect));
	if (!sect)
		return -ENOMEM;
	in->sect = sect;
	in->sect[in->nsect++] = s;
	return 0;
}

static int input_take_line(struct ctl_input *in, char *line, size_t len,
			   unsigned long lineno)
{
	enum ctl_parse_err err;
	struct cnf_addr hint;
	struct ctl_entry e;
	const char *value;
	size_t value_len;

	if ((in->flags & CTL_PARSE_F_SETS) &&
	    !strncmp(line, CTL_SET_LINE, strlen(CTL_SET_LINE)))
		return input_take_set_line(in, line, len, lineno);
	switch (ctl_parse_line(line, len, in->flags, &e, &err, &hint, &value,
			       &value_len)) {
	case CTL_LINE_EMPTY:
		return 0;
	case CTL_LINE_ADDR:
		return ctl_input_add(in, &e, lineno);
	default:
		return input_add_bad(in, lineno, err, &hint, value, value_len);
	}
}

/*
 * Lines of a file, read a block at a time: getline() takes a lock and
 * copies every line, which costs more than parsing its address.  A line is
 * handed out in place, its '\n' replaced by the NUL that ends it.
 */
struct line_reader {
	FILE *f;
	char *buf;
	size_t cap;		/* bytes of @buf, one kept for a last NUL */
	size_t start, end;	/* the bytes read and not handed out yet */
	bool eof;
};

#define CTL_READ_BLOCK	(64 * 1024)

/*
 * Read more after the unread bytes, moved to the front; a line longer
 * than the buffer doubles it.  0 or -errno.
 */
static int reader_fill(struct line_reader *r)
{
	size_t got, cap;
	char *buf;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < CTL_READ_BLOCK + 1) {
		cap = r->cap ? 2 * r->cap : CTL_READ_BLOCK + 1;
		buf = realloc(r->buf, cap);
		if (!buf)
			return -ENOMEM;
		r->buf = buf;
		r->cap = cap;
	}
	errno = 0;
	got = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->f);
	r->end += got;
	if (got)
		return 0;
	if (ferror(r->f))
		return errno ? -errno : -EIO;
	r->eof = true;
	return 0;
}

/* The next line and its length without the '\n', or -1 at the end. */
static ssize_t reader_next(struct line_reader *r, char **line, int *err)
{
	char *nl;
	size_t len;

	for (;;) {
		/* Before the first read there is no buffer to search. */
		nl = r->start < r->end ?
		     memchr(r->buf + r->start, '\n', r->end - r->start) : NULL;
		if (nl || r->eof)
			break;
		*err = reader_fill(r);
		if (*err)
			return -1;
	}
	if (!nl && r->start == r->end)
		return -1;
	*line = r->buf + r->start;
	len = (nl ?: r->buf + r->end) - *line;
	(*line)[len] = '\0';
	r->start += len + !!nl;
	return len;
}

int ctl_input_read(struct ctl_input *in, FILE *f)
{
	static const char bom[] = "\xef\xbb\xbf";
	struct line_reader r = { .f = f };
	unsigned long lineno = 0;
	char *line;
	ssize_t len;
	int err = 0;

	while ((len = reader_next(&r, &line, &err)) >= 0) {
		lineno++;
		/* Files saved by some Windows editors start with a UTF-8 BOM. */
		if (lineno == 1 && len >= 3 && !memcmp(line, bom, 3)) {
			line += 3;
			len -= 3;
		}
		err = input_take_line(in, line, len, lineno);
		if (err)
			break;
	}
	free(r.buf);
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

const char *ctl_iif_pattern_error(const char *pat)
{
	size_t len = strlen(pat), i;

	if (!len)
		return "an empty name";
	if (len >= CNF_IFNAMSIZ)
		return "longer than a device name (15 bytes)";
	if (pat[len - 1] == '+')
		len--;
	if (len == 0)
		return NULL;
	if ((len == 1 && pat[0] == '.') ||
	    (len == 2 && pat[0] == '.' && pat[1] == '.'))
		return "not a device name";
	for (i = 0; i < len; i++)
		if (pat[i] == '/' || pat[i] == ':' || isspace((unsigned char)pat[i]))
			return "not a device name: no '/', ':' or white space";
	return NULL;
}

bool ctl_iif_matches(const char *pat, const char *name)
{
	size_t len = strnlen(pat, CNF_IFNAMSIZ);

	if (len && pat[len - 1] == '+')
		return !strncmp(name, pat, len - 1);
	return !strncmp(name, pat, CNF_IFNAMSIZ);
}

/* One number of a mark: 0 to UINT32_MAX, in C's notation, all of @s. */
static bool mark_number(const char *s, uint32_t *v)
{
	unsigned long long n;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || *end || n > UINT32_MAX)
		return false;
	*v = (uint32_t)n;
	return true;
}

const char *ctl_parse_mark(const char *s, uint32_t *mark, uint32_t *mask)
{
	char value[32];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);

	if (n >= sizeof(value))
		return "not a number up to 0xffffffff";
	memcpy(value, s, n);
	value[n] = '\0';
	if (!mark_number(value, mark))
		return "not a number up to 0xffffffff";
	*mask = UINT32_MAX;
	if (slash && !mark_number(slash + 1, mask))
		return "the mask is not a number up to 0xffffffff";
	if (!*mask)
		return "the mask is 0: no bit to set";
	if (*mark & ~*mask)
		return "the mark has bits outside the mask";
	return NULL;
}
