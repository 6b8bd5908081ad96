// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: follow CrowdSec's Local API decision stream and
 * keep a cuckoo_nf block set in step with its bans.
 *
 * On start, and whenever it must resynchronize (the device was missing,
 * the set was destroyed, an answer was lost or unreadable, SIGHUP), it
 * asks for every active decision (startup=true) and replaces the set's
 * contents with them in one step (CNF_BATCH_F_REPLACE): a source banned
 * before and after is matched throughout.  Then every update_frequency it
 * asks for what changed (startup=false) and applies it entry by entry.
 * Each entry carries the time its decision has left as its timeout, so the
 * kernel removes it when the decision ends, also while the bouncer is
 * stopped.
 *
 * IPv4 bans go to one set, IPv6 bans to another (set, or blacklists_ipv4
 * and blacklists_ipv6: one set for both unless they differ).  With
 * prometheus enabled, each origin's bans go to sets of their own instead
 * (origin.c), made when its first ban comes, so that /metrics can say
 * what each origin's bans dropped (metrics.c).  A prefix banned by two
 * origins is then in the sets of both; a deleted decision removes it from
 * every origin's.  A resynchronization adds every ban to its origin's set
 * first and only then replaces each set's contents: a source whose ban
 * moved from one origin to another is matched throughout.  The sets of
 * the other layout (the base sets, or the origins' sets of an earlier
 * run no longer banning anything) are emptied then.
 *
 * Two decisions for one prefix: the entry keeps the end of the longer.
 * A deleted decision removes its prefix: the Local API sends one only when
 * no other decision for the value is active (1.4 does so), and then the
 * prefix must go whatever else the bouncer saw.  With ipv6_ban_prefix the
 * set's prefix (a /64) stands for every banned address in it: each
 * address's decisions are kept apart in the entry, which goes when the
 * last address's do (its timeout shortened to those left before).  When the longer of two
 * decisions is deleted the Local API says nothing, and the entry keeps the
 * longer timeout until the next resynchronization.  The Local API also
 * repeats a deleted decision in the answer after the one that brought it
 * (its query starts 2 s before the last poll): a decision id seen deleted
 * lately is passed over, so that a repeat does not remove an address
 * banned anew in between.
 *
 * Failures (API unreachable, HTTP errors, bad answers, no device) are
 * logged and retried after 1, 2, 4... up to 60 s; the set keeps what it
 * holds meanwhile.  SIGTERM and SIGINT stop the bouncer and leave the set
 * as it is: its entries end with their decisions, and the next start
 * replaces them without a window.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "cbn.h"
#include "../ctl.h"
#include "../ctl_format.h"

#define BACKOFF_MAX_NS	60000000000ll

static struct {
	struct cbn_config cfg;
	struct cbn_table table;
	struct cbn_stream stream;
	struct cbn_body body;
	struct cbn_ids deleted;
	struct cbn_filter filter;
	struct cbn_origins origins;
	bool need_startup;
} b;

/* The set an entry's prefix goes to. */
static const char *set_of(const struct cbn_entry *e)
{
	if (b.cfg.metrics)
		return b.origins.v[e->origin].set[e->addr.family != AF_INET];
	return e->addr.family == AF_INET ? b.cfg.set4 : b.cfg.set6;
}

/* With a set per origin: is @e's set made?  Else always. */
static bool set_made(const struct cbn_entry *e)
{
	return !b.cfg.metrics ||
	       b.origins.v[e->origin].made[e->addr.family != AF_INET];
}

/* @e's origin's set for its family, created when missing: 0, or an errno. */
static int ensure_origin_set(int fd, const struct cbn_entry *e)
{
	int err;

	if (set_made(e))
		return 0;
	err = cbn_dev_ensure_set_log(fd, set_of(e), b.cfg.deny_log);
	if (!err)
		b.origins.v[e->origin].made[e->addr.family != AF_INET] = true;
	return err;
}

/* One set for both families, or two. */
static bool one_set(void)
{
	return !strcmp(b.cfg.set4, b.cfg.set6);
}

static void log_skips(const struct cbn_skips *k)
{
	if (k->scope + k->type + k->value + k->expired + k->ipv6 + k->ipv4 +
	    k->malformed)
		cbn_log(CBN_DEBUG,
			"skipped decisions: %llu of other scopes, %llu of other types, %llu bad values, %llu ended, %llu IPv6 (disable_ipv6), %llu IPv4 (disable_ipv4), %llu malformed",
			(unsigned long long)k->scope, (unsigned long long)k->type,
			(unsigned long long)k->value,
			(unsigned long long)k->expired,
			(unsigned long long)k->ipv6,
			(unsigned long long)k->ipv4,
			(unsigned long long)k->malformed);
}

/*
 * Note the answer's deleted decisions: a repeat of one in the next answers
 * is passed over.  Kept for three polls and 10 s: the Local API repeats
 * those of the 2 s before a poll in the next answer.
 */
static int note_deleted(int64_t now)
{
	if (!cbn_ids_note(&b.deleted, &b.stream, now,
			  3 * b.cfg.update_ns + 10000000000ll))
		return 0;
	cbn_log(CBN_ERROR, "out of memory");
	return ENOMEM;
}

/* The prefixes one set gets, and their timeouts. */
struct contents {
	struct cnf_addr *addrs;
	uint32_t *timeouts;
	size_t n;
};

/*
 * The table's prefixes of @family (0: all) and origin @origin (-1: all)
 * into @c: 0, or ENOMEM.
 */
static int collect(struct contents *c, int family, int origin, int64_t now)
{
	struct cbn_entry *e;
	size_t i;

	c->n = 0;
	c->addrs = calloc(b.table.n ? b.table.n : 1, sizeof(*c->addrs));
	c->timeouts = calloc(b.table.n ? b.table.n : 1, sizeof(*c->timeouts));
	if (!c->addrs || !c->timeouts) {
		free(c->addrs);
		free(c->timeouts);
		cbn_log(CBN_ERROR, "out of memory");
		return ENOMEM;
	}
	for (i = 0; i < b.table.nbuckets; i++)
		for (e = b.table.b[i]; e; e = e->next) {
			if ((family && e->addr.family != family) ||
			    (origin >= 0 && e->origin != (unsigned int)origin))
				continue;
			c->addrs[c->n] = e->addr;
			c->timeouts[c->n++] = cbn_timeout_at(e->until, now);
		}
	return 0;
}

static void contents_free(struct contents *c)
{
	free(c->addrs);
	free(c->timeouts);
}

/*
 * The table's prefixes of @family (0: all) as the contents of @set, in
 * one step: 0, or an errno.
 */
static int replace_set(int fd, const char *set, int family, int64_t now)
{
	struct contents c;
	int err;

	err = collect(&c, family, -1, now);
	if (err)
		return err;
	err = cbn_dev_replace(fd, set, c.addrs, c.timeouts, c.n);
	contents_free(&c);
	if (!err)
		cbn_log(CBN_INFO, "set %s replaced: %zu prefixes", set, c.n);
	return err;
}

/*
 * With a set per origin, the whole table into the origins' sets: each ban
 * added to its set, then each set's contents replaced, then the sets of
 * the other layout emptied (main.c's head).  0, or an errno.
 */
static int replace_origins(int fd, int64_t now)
{
	static const int family[2] = { AF_INET, AF_INET6 };
	struct cnf_set_info *sets = NULL;
	bool used[CBN_ORIGINS_MAX][2] = { { false } };
	struct contents c;
	size_t i, n, o;
	int f, pass, err;

	for (o = 0; o < b.origins.n; o++)
		b.origins.v[o].made[0] = b.origins.v[o].made[1] = false;
	for (pass = 0; pass < 2; pass++)
		for (o = 0; o < b.origins.n; o++)
			for (f = 0; f < 2; f++) {
				const char *set = b.origins.v[o].set[f];

				err = collect(&c, family[f], (int)o, now);
				if (err)
					return err;
				used[o][f] = c.n;
				if (!c.n)
					err = 0;
				else if (!pass)
					err = cbn_dev_ensure_set_log(fd, set,
								     b.cfg.deny_log) ?:
					      cbn_dev_add_all(fd, set, c.addrs,
							      c.timeouts, c.n);
				else
					err = cbn_dev_replace(fd, set, c.addrs,
							      c.timeouts, c.n);
				contents_free(&c);
				if (err)
					return err;
				b.origins.v[o].made[f] = c.n;
				if (pass && c.n)
					cbn_log(CBN_INFO, "set %s replaced: %zu prefixes",
						set, c.n);
			}
	err = ctl_set_list(fd, &sets, &n);
	if (err) {
		cbn_log(CBN_ERROR, "list of sets: %s", ctl_strerror(err));
		return err;
	}
	for (i = 0; i < n && !err; i++) {
		const char *name = sets[i].name;
		bool ours = false;

		if (sets[i].kind != CNF_SET_BLOCK ||
		    !(cbn_origins_own(&b.origins, name) ||
		      !strcmp(name, b.cfg.set4) || !strcmp(name, b.cfg.set6)))
			continue;
		for (o = 0; o < b.origins.n && !ours; o++)
			for (f = 0; f < 2; f++)
				if (!strcmp(name, b.origins.v[o].set[f])) {
					ours = used[o][f];
					b.origins.v[o].made[f] = true;
				}
		if (ours || !(sets[i].v4_entries + sets[i].v6_entries))
			continue;
		err = cbn_dev_replace(fd, name, NULL, NULL, 0);
		if (!err)
			cbn_log(CBN_INFO, "set %s emptied: no ban of its origin",
				name);
	}
	free(sets);
	return err;
}

/* The whole answer as the sets' new contents, each in one step. */
static int resync(int fd)
{
	int64_t now = cbn_now();
	struct cbn_entry *e;
	size_t i, nd = 0;
	int err = 0;

	cbn_table_clear(&b.table);
	for (i = 0; i < b.stream.n; i++) {
		const struct cbn_decision *d = &b.stream.d[i];

		/* Deleted decisions: whatever is not in "new" goes. */
		if (d->deleted)
			continue;
		nd++;
		e = cbn_table_get(&b.table, &d->addr, true);
		if (!e || cbn_entry_src_add(e, &d->src, now + d->ns)) {
			cbn_log(CBN_ERROR, "out of memory");
			return ENOMEM;
		}
	}
	if (b.cfg.metrics)
		err = replace_origins(fd, now);
	else if (one_set())
		err = replace_set(fd, b.cfg.set4, 0, now);
	else {
		if (!b.cfg.disable_ipv4)
			err = replace_set(fd, b.cfg.set4, AF_INET, now);
		if (!err && !b.cfg.disable_ipv6)
			err = replace_set(fd, b.cfg.set6, AF_INET6, now);
	}
	if (err) {
		cbn_table_clear(&b.table);
		return err;
	}
	err = note_deleted(now);
	if (err)
		return err;
	cbn_log(CBN_INFO, "%zu prefixes from %zu active bans", b.table.n, nd);
	return 0;
}

/* Onto the list's end: the device calls go in the answer's order. */
static void touch(struct cbn_entry *e, struct cbn_entry ***tail)
{
	if (e->listed)
		return;
	e->listed = true;
	e->next_touched = NULL;
	**tail = e;
	*tail = &e->next_touched;
}

/*
 * Deleted decision @d: its prefix goes from every origin's set (from the
 * set, without a set per origin), its last decision gone.  0, or ENOMEM.
 */
static int apply_deleted(const struct cbn_decision *d,
			 struct cbn_entry ***tail, int64_t now)
{
	size_t o, n = b.cfg.metrics ? b.origins.n : 1;
	struct cbn_entry *e;
	int64_t was;

	for (o = 0; o < n; o++) {
		/* Its own origin's entry made, so the module is told. */
		e = cbn_table_get_origin(&b.table, &d->addr, o, o == d->origin);
		if (!e && o == d->origin) {
			cbn_log(CBN_ERROR, "out of memory");
			return ENOMEM;
		}
		if (!e)
			continue;
		touch(e, tail);
		was = e->until;
		/* What is left: other addresses' bans in the prefix. */
		cbn_entry_src_del(e, &d->src, now);
		e->deleted = !e->nsrc;
		e->longer = e->nsrc && e->until < was;
	}
	return 0;
}

/* What changed since the last answer, entry by entry. */
static int apply_changes(int fd)
{
	struct cbn_entry *list = NULL, **tail = &list, *e, *next;
	char text[CTL_PREFIXSTRLEN];
	unsigned long added = 0, deleted = 0;
	int64_t now = cbn_now(), was;
	int err = 0;
	size_t i;

	cbn_table_prune(&b.table, now);
	/* The deleted decisions come first in the answer. */
	for (i = 0; i < b.stream.n; i++) {
		const struct cbn_decision *d = &b.stream.d[i];

		/* A repeat: its address may have been banned anew since. */
		if (d->deleted && cbn_ids_seen(&b.deleted, d->id)) {
			cbn_log(CBN_TRACE, "decision %lld: deleted, seen before",
				(long long)d->id);
			continue;
		}
		if (d->deleted) {
			err = apply_deleted(d, &tail, now);
			if (err)
				break;
			continue;
		}
		e = cbn_table_get_origin(&b.table, &d->addr, d->origin, true);
		if (!e) {
			cbn_log(CBN_ERROR, "out of memory");
			err = ENOMEM;
			break;
		}
		touch(e, &tail);
		was = e->until;
		if (cbn_entry_src_add(e, &d->src, now + d->ns)) {
			cbn_log(CBN_ERROR, "out of memory");
			err = ENOMEM;
			break;
		} else if (e->until > was) {
			e->longer = true;
			e->deleted = false;
		}
	}
	for (e = list; e; e = next) {
		next = e->next_touched;
		e->listed = false;
		if (err) {
			/* The next answer is a resynchronization. */
			e->longer = e->deleted = false;
			continue;
		}
		if (e->longer) {
			uint32_t t = cbn_timeout_at(e->until, now);

			e->longer = e->deleted = false;
			cbn_log(CBN_DEBUG, "ban %s for %us",
				ctl_format_prefix(&e->addr, text, sizeof(text)), t);
			err = ensure_origin_set(fd, e) ?:
			      cbn_dev_add(fd, set_of(e), &e->addr, t);
			if (err) {
				/* Not in the set as the table says. */
				e->until = 0;
				if (!cbn_dev_lost(err))
					err = 0;
			} else {
				added++;
			}
		} else if (e->deleted) {
			cbn_log(CBN_DEBUG, "unban %s",
				ctl_format_prefix(&e->addr, text, sizeof(text)));
			/* A set never made holds nothing. */
			err = set_made(e) ?
			      cbn_dev_del(fd, set_of(e), &e->addr) : 0;
			if (!err || !cbn_dev_lost(err)) {
				err = 0;
				deleted++;
			}
			cbn_table_remove(&b.table, e);
		}
	}
	if (added || deleted)
		cbn_log(CBN_INFO, "%lu prefixes added or retimed, %lu deleted",
			added, deleted);
	return err ? err : note_deleted(now);
}

/* The sets of the families applied, created when missing. */
static int ensure_sets(int fd)
{
	/* A set per origin: made when its first ban comes. */
	if (b.cfg.metrics)
		return 0;
	if (!b.cfg.disable_ipv4 &&
	    cbn_dev_ensure_set_log(fd, b.cfg.set4, b.cfg.deny_log))
		return -1;
	if (!b.cfg.disable_ipv6 && (b.cfg.disable_ipv4 || !one_set()) &&
	    cbn_dev_ensure_set_log(fd, b.cfg.set6, b.cfg.deny_log))
		return -1;
	return 0;
}

/* One poll: 0, or -1 after saying what failed. */
static int cycle(void)
{
	bool startup = b.need_startup;
	char err[CBN_ERRLEN];
	int fd, rc;

	/* Without the device, leave the stream where it is. */
	fd = cbn_dev_open(b.cfg.device);
	if (fd < 0) {
		b.need_startup = true;
		return -1;
	}
	if (startup && ensure_sets(fd)) {
		close(fd);
		return -1;
	}
	/* Anything lost from here on is asked for again in full. */
	b.need_startup = true;
	if (cbn_lapi_stream(startup, &b.body, err, sizeof(err))) {
		cbn_log(CBN_ERROR, "%s; the set keeps its entries", err);
		close(fd);
		return -1;
	}
	if (cbn_stream_parse(b.body.p, b.body.len, &b.filter,
			     &b.stream, err, sizeof(err))) {
		cbn_log(CBN_ERROR, "decision stream answer: %s; the set keeps its entries",
			err);
		close(fd);
		return -1;
	}
	cbn_log(CBN_TRACE, "answer: %zu bytes, %zu decisions", b.body.len,
		b.stream.n);
	log_skips(&b.stream.skips);
	rc = startup ? resync(fd) : apply_changes(fd);
	close(fd);
	if (rc)
		return -1;
	b.need_startup = false;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " CBN_NAME " [-c FILE] [-t]\n"
		"Apply CrowdSec's ban decisions to a cuckoo_nf block set.\n\n"
		"  -c, --config FILE  the configuration (default " CBN_CONFIG ")\n"
		"  -t, --test         check the configuration and exit\n"
		"  -V, --version      print the version\n"
		"  -h, --help         this help\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "test", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = CBN_CONFIG;
	int64_t delay, backoff = 0;
	char err[CBN_ERRLEN];
	struct timespec ts;
	bool test = false;
	sigset_t sigs;
	int opt, sig;
	size_t i;

	ctl_set_reporter(cbn_ctl_report);
	while ((opt = getopt_long(argc, argv, "c:tVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			path = optarg;
			break;
		case 't':
			test = true;
			break;
		case 'V':
			printf(CBN_NAME " %s\n", CBN_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, CBN_NAME ": %s: unexpected argument\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (cbn_config_load(path, &b.cfg, err, sizeof(err))) {
		cbn_log(CBN_ERROR, "%s", err);
		return 1;
	}
	cbn_log_level = b.cfg.log_level;
	/* -t writes nothing: its warnings go to stderr. */
	if (!test && b.cfg.log_to_file &&
	    cbn_log_to_file(&b.cfg.log_file, err, sizeof(err))) {
		cbn_log(CBN_ERROR, "%s", err);
		return 1;
	}
	for (i = 0; i < b.cfg.nwarnings; i++)
		cbn_log(CBN_WARNING, "%s", b.cfg.warnings[i]);
	if (test) {
		printf("%s: configuration OK\n", path);
		cbn_config_free(&b.cfg);
		return 0;
	}
	b.filter.no_ipv4 = b.cfg.disable_ipv4;
	b.filter.no_ipv6 = b.cfg.disable_ipv6;
	b.filter.ban = b.cfg.ban;
	b.filter.ipv6_prefix = b.cfg.ipv6_prefix;
	if (cbn_origins_init(&b.origins, b.cfg.set4, b.cfg.set6, err,
			     sizeof(err))) {
		cbn_log(CBN_ERROR, "%s", err);
		return 1;
	}
	if (b.cfg.metrics)
		b.filter.origins = &b.origins;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (cbn_lapi_init(&b.cfg)) {
		cbn_log(CBN_ERROR, "libcurl: cannot set up a transfer");
		return 1;
	}
	/* After the mask: its thread takes the signals blocked too. */
	if (b.cfg.metrics) {
		if (cbn_metrics_start(&b.cfg, err, sizeof(err))) {
			cbn_log(CBN_ERROR, "%s", err);
			cbn_lapi_cleanup();
			return 1;
		}
		cbn_log(CBN_INFO, "metrics at http://%s%s%s:%u/metrics; a set per origin, %s-ORIGIN and %s-ORIGIN",
			strchr(b.cfg.metrics_addr, ':') ? "[" : "",
			b.cfg.metrics_addr,
			strchr(b.cfg.metrics_addr, ':') ? "]" : "",
			b.cfg.metrics_port, b.origins.base[0],
			b.origins.base[1]);
	}
	cbn_log(CBN_INFO, CBN_NAME " %s: %s every %.3gs into sets %s (IPv4) and %s (IPv6) of %s",
		CBN_VERSION, b.cfg.api_url, b.cfg.update_ns / 1e9, b.cfg.set4,
		b.cfg.set6, b.cfg.device);
	if (b.cfg.ipv6_prefix && b.cfg.ipv6_prefix < 128)
		cbn_log(CBN_INFO, "an IPv6 address banned bans its /%u",
			b.cfg.ipv6_prefix);
	b.need_startup = true;
	for (;;) {
		if (cycle()) {
			backoff = backoff ? 2 * backoff : 1000000000ll;
			if (backoff > BACKOFF_MAX_NS)
				backoff = BACKOFF_MAX_NS;
			delay = backoff;
			cbn_log(CBN_INFO, "retrying in %llds",
				(long long)(delay / 1000000000));
		} else {
			if (backoff)
				cbn_log(CBN_INFO, "in step with the Local API again");
			backoff = 0;
			delay = b.cfg.update_ns;
		}
		if (b.cfg.metrics)
			cbn_metrics_update(&b.origins, &b.table, cbn_now());
		ts.tv_sec = delay / 1000000000;
		ts.tv_nsec = delay % 1000000000;
		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGHUP) {
			cbn_log(CBN_INFO, "SIGHUP: resynchronizing");
			b.need_startup = true;
		} else if (sig == SIGTERM || sig == SIGINT) {
			break;
		}
	}
	cbn_log(CBN_INFO, "stopping on %s: the sets keep their %zu prefixes, each until its decision ends",
		strsignal(sig), b.table.n);
	cbn_metrics_stop();
	cbn_lapi_cleanup();
	cbn_table_clear(&b.table);
	cbn_stream_free(&b.stream);
	cbn_ids_free(&b.deleted);
	free(b.body.p);
	cbn_config_free(&b.cfg);
	return 0;
}
