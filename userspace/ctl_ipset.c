// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: `ipset save` output read as the sets of a save, so that
 * `ipset save | cuckooctl restore --from-ipset -` moves an ipset user's
 * sets over.
 *
 * ipset(8) prints a set as one `create NAME TYPE OPTIONS...` line followed
 * by an `add NAME ENTRY OPTIONS...` line per entry.  The types that hold
 * what a cuckoo_nf set holds (addresses and prefixes of one family) are
 * hash:ip, hash:net and bitmap:ip; the others pair an address with a port,
 * an interface or a MAC, or list other sets, and are refused.  Everything
 * is read before anything is returned, so that a line that cannot be
 * mapped changes nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl_format.h"
#include "ctl_ipset.h"
#include "ctl_setname.h"

/* Words of a line: `create` with every option ipset prints is about 20. */
#define IPSET_WORDS	40

/* Options ignored with a note, each said once. */
enum {
	NOTE_COMMENT = 1 << 0,
	NOTE_COUNTERS = 1 << 1,
	NOTE_SKBINFO = 1 << 2,
	NOTE_FORCEADD = 1 << 3,
	NOTE_NOMATCH = 1 << 4,
};

/* One `create`d set. */
struct ipset_set {
	char name[CNF_SET_NAME_LEN];
	int family;			/* AF_INET or AF_INET6 */
	unsigned int netmask;		/* 0: none */
	uint32_t timeout;		/* the set's default, 0: none */
	unsigned long lineno;		/* of its create line */
	size_t nomatch;			/* entries marked nomatch */
};

/* One `add`ed entry, kept until every line is read. */
struct ipset_entry {
	struct ctl_entry e;
	unsigned long lineno;
	size_t part;			/* 2 * its set, + 1 when nomatch */
};

struct ipset_reader {
	ctl_ipset_say_fn *say;
	void *ctx;
	size_t *bad;
	unsigned long lineno;
	unsigned int noted;		/* NOTE_* said already */
	struct ipset_set *sets;
	size_t nsets;
	struct ipset_entry *ents;
	size_t nents, room;
	unsigned int parse_flags;	/* for the entries' ctl_parse_entry() */
};

/* An error about the current line, counted. */
static void __attribute__((format(printf, 2, 3)))
line_err(struct ipset_reader *r, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	r->say(r->ctx, r->lineno, false, text);
	(*r->bad)++;
}

/* A note, the first time @what is met. */
static void note_once(struct ipset_reader *r, unsigned int what,
		      const char *text)
{
	if (r->noted & what)
		return;
	r->noted |= what;
	r->say(r->ctx, r->lineno, true, text);
}

/*
 * Split @line into *@w, in place: words between whitespace, a word that
 * starts with '"' running to the next '"' (ipset prints comments so).
 * Returns how many, or -1 for an unterminated quote or too many words.
 */
static int split_words(char *line, char **w)
{
	char *p = line;
	int n = 0;

	for (;;) {
		p += strspn(p, " \t\r\n");
		if (!*p || *p == '#')
			return n;
		if (n == IPSET_WORDS)
			return -1;
		if (*p == '"') {
			w[n++] = p++;
			p = strchr(p, '"');
			if (!p)
				return -1;
			p++;
		} else {
			w[n++] = p;
			p += strcspn(p, " \t\r\n");
		}
		if (*p)
			*p++ = '\0';
	}
}

static long find_set(const struct ipset_reader *r, const char *name)
{
	size_t i;

	for (i = r->nsets; i--;)
		if (!strcmp(r->sets[i].name, name))
			return (long)i;
	return -1;
}

/* Whether @w is an option ipset prints that sizes a set, @arg its value. */
static bool sizing_option(const char *w, bool *arg)
{
	static const char *const with_arg[] = {
		"hashsize", "maxelem", "bucketsize", "initval", "range",
	};
	size_t i;

	*arg = true;
	for (i = 0; i < ARRAY_SIZE(with_arg); i++)
		if (!strcmp(w, with_arg[i]))
			return true;
	*arg = false;
	/* ipset restore files may ask for no error on an existing set. */
	return !strcmp(w, "-exist") || !strcmp(w, "-!");
}

/* A create line's options after its type, into @s: 0, or -1 (said). */
static int create_options(struct ipset_reader *r, struct ipset_set *s,
			  bool bitmap, char **w, int n)
{
	enum ctl_parse_err err;
	bool arg;
	int i;

	for (i = 0; i < n; i++) {
		if (sizing_option(w[i], &arg)) {
			i += arg;
		} else if (!strcmp(w[i], "family") && i + 1 < n && !bitmap &&
			   (!strcmp(w[i + 1], "inet") ||
			    !strcmp(w[i + 1], "inet6"))) {
			s->family = strcmp(w[++i], "inet") ? AF_INET6 : AF_INET;
		} else if (!strcmp(w[i], "timeout") && i + 1 < n) {
			err = ctl_parse_timeout(w[++i], &s->timeout);
			if (err) {
				line_err(r, "timeout %s: not a number of seconds",
					 w[i]);
				return -1;
			}
		} else if (!strcmp(w[i], "netmask") && i + 1 < n) {
			char *end;
			unsigned long len = strtoul(w[++i], &end, 10);

			if (*end || !len || len > 128) {
				line_err(r, "netmask %s: not a prefix length",
					 w[i]);
				return -1;
			}
			s->netmask = (unsigned int)len;
		} else if (!strcmp(w[i], "comment")) {
			note_once(r, NOTE_COMMENT,
				  "comments are not kept: cuckoo_nf stores prefixes only");
		} else if (!strcmp(w[i], "counters")) {
			note_once(r, NOTE_COUNTERS,
				  "counters are not kept per entry: 'cuckooctl sets' counts the packets each set matched");
		} else if (!strcmp(w[i], "skbinfo")) {
			note_once(r, NOTE_SKBINFO,
				  "skbinfo is not kept: cuckoo_nf sets no mark, priority or queue");
		} else if (!strcmp(w[i], "forceadd")) {
			note_once(r, NOTE_FORCEADD,
				  "forceadd is not kept: cuckoo_nf never evicts an entry, its limit is the namespace's memory limit");
		} else {
			line_err(r, "%s: an option of create that cuckooctl does not know",
				 w[i]);
			return -1;
		}
	}
	return 0;
}

/* `create NAME TYPE [OPTION...]`, @w[0] being "create". */
static int take_create(struct ipset_reader *r, char **w, int n)
{
	struct ipset_set s = { .family = AF_INET, .lineno = r->lineno };
	struct ipset_set *sets;
	bool bitmap;

	if (n < 3) {
		line_err(r, "create needs a set name and a type");
		return 0;
	}
	if (!ctl_set_name_ok(w[1])) {
		line_err(r, "%s: " CTL_SET_NAME_RULE, w[1]);
		return 0;
	}
	if (find_set(r, w[1]) >= 0) {
		line_err(r, "%s: created a second time", w[1]);
		return 0;
	}
	bitmap = !strcmp(w[2], "bitmap:ip");
	if (!bitmap && strcmp(w[2], "hash:ip") && strcmp(w[2], "hash:net")) {
		line_err(r, "%s: type %s holds more than addresses and prefixes; cuckoo_nf takes hash:ip, hash:net and bitmap:ip sets",
			 w[1], w[2]);
		return 0;
	}
	snprintf(s.name, sizeof(s.name), "%s", w[1]);
	if (create_options(r, &s, bitmap, w + 3, n - 3))
		return 0;
	if (s.netmask > (s.family == AF_INET ? 32u : 128u)) {
		line_err(r, "netmask %u: longer than an address of the set's family",
			 s.netmask);
		return 0;
	}
	sets = reallocarray(r->sets, r->nsets + 1, sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	r->sets = sets;
	r->sets[r->nsets++] = s;
	return 0;
}

/*
 * An add line's options after its entry, into @e and *@nomatch: 0, or
 * -1 (said).
 */
static int add_options(struct ipset_reader *r, struct ipset_entry *ie,
		       bool *nomatch, char **w, int n)
{
	static const char *const counters[] = { "packets", "bytes" };
	static const char *const skbinfo[] = {
		"skbmark", "skbprio", "skbqueue",
	};
	enum ctl_parse_err err;
	bool arg;
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(w[i], "timeout") && i + 1 < n) {
			err = ctl_parse_timeout(w[++i], &ie->e.timeout);
			if (err) {
				line_err(r, "timeout %s: not a number of seconds",
					 w[i]);
				return -1;
			}
			ie->e.timed = true;
		} else if (!strcmp(w[i], "nomatch")) {
			*nomatch = true;
		} else if (!strcmp(w[i], "comment") && i + 1 < n) {
			i++;
			note_once(r, NOTE_COMMENT,
				  "comments are not kept: cuckoo_nf stores prefixes only");
		} else if (i + 1 < n &&
			   (!strcmp(w[i], counters[0]) ||
			    !strcmp(w[i], counters[1]))) {
			i++;
			note_once(r, NOTE_COUNTERS,
				  "counters are not kept per entry: 'cuckooctl sets' counts the packets each set matched");
		} else if (i + 1 < n &&
			   (!strcmp(w[i], skbinfo[0]) ||
			    !strcmp(w[i], skbinfo[1]) ||
			    !strcmp(w[i], skbinfo[2]))) {
			i++;
			note_once(r, NOTE_SKBINFO,
				  "skbinfo is not kept: cuckoo_nf sets no mark, priority or queue");
		} else if (!sizing_option(w[i], &arg) || arg) {
			line_err(r, "%s: an option of add that cuckooctl does not know",
				 w[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * @ie's entry in set @s: of its family, and a single address of a set
 * with a netmask the prefix of that length.  0, or -1 (said).
 */
static int fit_entry(struct ipset_reader *r, const struct ipset_set *s,
		     struct ipset_entry *ie, const char *text)
{
	unsigned int width = s->family == AF_INET ? 32 : 128;
	char addr[CTL_PREFIXSTRLEN], buf[CTL_PREFIXSTRLEN + 4];
	struct cnf_addr hint;

	if (ie->e.a.family != s->family) {
		line_err(r, "%s: an %s entry in set %s of family %s", text,
			 ie->e.a.family == AF_INET ? "IPv4" : "IPv6", s->name,
			 s->family == AF_INET ? "inet" : "inet6");
		return -1;
	}
	if (!s->netmask || ie->e.range || ie->e.a.prefixlen != width)
		return 0;
	/* ipset stores the network of an address of such a set. */
	snprintf(buf, sizeof(buf), "%s/%u",
		 ctl_format_prefix(&ie->e.a, addr, sizeof(addr)), s->netmask);
	if (ctl_parse_prefix(buf, r->parse_flags, &ie->e.a, &hint)) {
		line_err(r, "%s: not the network of a /%u, as set %s's netmask says",
			 text, s->netmask, s->name);
		return -1;
	}
	return 0;
}

static int push_entry(struct ipset_reader *r, const struct ipset_entry *ie)
{
	struct ipset_entry *ents;
	size_t room;

	if (r->nents == r->room) {
		room = r->room ? 2 * r->room : 1024;
		ents = reallocarray(r->ents, room, sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		r->ents = ents;
		r->room = room;
	}
	r->ents[r->nents++] = *ie;
	return 0;
}

/* `add NAME ENTRY [OPTION...]`, @w[0] being "add". */
static int take_add(struct ipset_reader *r, char **w, int n)
{
	struct ipset_entry ie = { .lineno = r->lineno };
	char reason[CTL_REASONLEN];
	enum ctl_parse_err err;
	struct cnf_addr hint;
	bool nomatch = false;
	long set;

	if (n < 3) {
		line_err(r, "add needs a set name and an entry");
		return 0;
	}
	set = find_set(r, w[1]);
	if (set < 0) {
		line_err(r, "%s: no create line for this set before it", w[1]);
		return 0;
	}
	err = ctl_parse_entry(w[2], r->parse_flags, &ie.e, &hint);
	if (err) {
		line_err(r, "%s: %s", w[2],
			 ctl_parse_reason(err, &hint, reason, sizeof(reason)));
		return 0;
	}
	if (add_options(r, &ie, &nomatch, w + 3, n - 3) ||
	    fit_entry(r, &r->sets[set], &ie, w[2]))
		return 0;
	r->sets[set].nomatch += nomatch;
	ie.part = 2 * (size_t)set + nomatch;
	return push_entry(r, &ie);
}

static int take_line(struct ipset_reader *r, char *line)
{
	char *w[IPSET_WORDS];
	int n = split_words(line, w);

	if (n < 0) {
		line_err(r, "a quote without its end, or more than %d words",
			 IPSET_WORDS);
		return 0;
	}
	if (!n)
		return 0;
	if (!strcmp(w[0], "create"))
		return take_create(r, w, n);
	if (!strcmp(w[0], "add"))
		return take_add(r, w, n);
	line_err(r, "%s: only the create and add lines of 'ipset save' are taken",
		 w[0]);
	return 0;
}

/* A section for set @name into @in, its entries to follow. */
static int add_section(struct ctl_input *in, const char *name, uint32_t kind,
		       uint32_t timeout, unsigned long lineno)
{
	struct ctl_section *sect;

	sect = reallocarray(in->sect, in->nsect + 1, sizeof(*sect));
	if (!sect)
		return -ENOMEM;
	in->sect = sect;
	sect = &in->sect[in->nsect++];
	memset(sect, 0, sizeof(*sect));
	snprintf(sect->name, sizeof(sect->name), "%s", name);
	sect->kind = kind;
	sect->timeout = timeout;
	sect->first = in->n;
	sect->lineno = lineno;
	return 0;
}

/*
 * The entries of each part, in the order read, after @in's: @order lists
 * the entries by part, those of part p from @start[p] to @start[p + 1].
 */
static int add_part(const struct ipset_reader *r, struct ctl_input *in,
		    const size_t *order, const size_t *start, size_t part)
{
	const struct ipset_entry *ie;
	size_t i;
	int err;

	for (i = start[part]; i < start[part + 1]; i++) {
		ie = &r->ents[order[i]];
		err = ctl_input_add(in, &ie->e, ie->lineno);
		if (err)
			return err;
	}
	return 0;
}

/* @order and @start for add_part(), by a counting sort on the parts. */
static int sort_parts(const struct ipset_reader *r, size_t **order,
		      size_t **start)
{
	size_t nparts = 2 * r->nsets, i, *at;

	*start = calloc(nparts + 1, sizeof(**start));
	*order = calloc(r->nents + 1, sizeof(**order));
	at = calloc(nparts + 1, sizeof(*at));
	if (!*start || !*order || !at) {
		free(at);
		return -ENOMEM;
	}
	for (i = 0; i < r->nents; i++)
		(*start)[r->ents[i].part + 1]++;
	for (i = 0; i < nparts; i++)
		(*start)[i + 1] += (*start)[i];
	memcpy(at, *start, (nparts + 1) * sizeof(*at));
	for (i = 0; i < r->nents; i++)
		(*order)[at[r->ents[i].part]++] = i;
	free(at);
	return 0;
}

/*
 * The allow set of @s's nomatch entries: NAME-nomatch, which must be a
 * name of its own.  0, or -1 (said).
 */
static int nomatch_name(struct ipset_reader *r, const struct ipset_set *s,
			char *name)
{
	r->lineno = s->lineno;
	if (strlen(s->name) + strlen(CTL_IPSET_NOMATCH) >= CNF_SET_NAME_LEN) {
		line_err(r, "%s: nomatch entries go to an allow set %s" CTL_IPSET_NOMATCH ", a name longer than 31 characters",
			 s->name, s->name);
		return -1;
	}
	snprintf(name, CNF_SET_NAME_LEN, "%s" CTL_IPSET_NOMATCH, s->name);
	if (find_set(r, name) >= 0) {
		line_err(r, "%s: nomatch entries go to an allow set %s, the name of another set",
			 s->name, name);
		return -1;
	}
	return 0;
}

/* Every set with nomatch entries has a name for their allow set. */
static void check_nomatch_names(struct ipset_reader *r)
{
	char name[CNF_SET_NAME_LEN];
	size_t i;

	for (i = 0; i < r->nsets; i++)
		if (r->sets[i].nomatch)
			nomatch_name(r, &r->sets[i], name);
}

/* The sets read, in the order created, into @in. */
static int assemble(struct ipset_reader *r, struct ctl_input *in)
{
	char name[CNF_SET_NAME_LEN];
	size_t *order, *start, i;
	const struct ipset_set *s;
	int err = sort_parts(r, &order, &start);

	for (i = 0; !err && i < r->nsets; i++) {
		s = &r->sets[i];
		err = add_section(in, s->name, CNF_SET_BLOCK, s->timeout,
				  s->lineno);
		if (!err)
			err = add_part(r, in, order, start, 2 * i);
		if (err || !s->nomatch)
			continue;
		/* check_nomatch_names() found it good. */
		nomatch_name(r, s, name);
		note_once(r, NOTE_NOMATCH,
			  "nomatch entries go to an allow set NAME" CTL_IPSET_NOMATCH ", which exempts them from every block set of the namespace");
		err = add_section(in, name, CNF_SET_ALLOW, s->timeout,
				  s->lineno);
		if (!err)
			err = add_part(r, in, order, start, 2 * i + 1);
	}
	free(order);
	free(start);
	return err;
}

int ctl_ipset_read(struct ctl_input *in, FILE *f, ctl_ipset_say_fn *say,
		   void *ctx, size_t *bad)
{
	struct ipset_reader r = {
		.say = say, .ctx = ctx, .bad = bad,
		.parse_flags = CTL_PARSE_F_RANGE | (in->flags & CTL_PARSE_F_ALL),
	};
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	*bad = 0;
	errno = 0;
	while (!err && getline(&line, &cap, f) >= 0) {
		r.lineno++;
		err = take_line(&r, line);
	}
	if (!err && ferror(f))
		err = errno ? -errno : -EIO;
	if (!err)
		check_nomatch_names(&r);
	if (!err && !*bad)
		err = assemble(&r, in);
	free(line);
	free(r.sets);
	free(r.ents);
	return err;
}
