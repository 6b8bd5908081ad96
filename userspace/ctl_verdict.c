// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl test without -s: what the namespace does with a packet from an
 * address, and why.
 *
 * "Is this address dropped here, and by what?" is the first question an
 * operator gets, and asking one set at a time does not answer it: a
 * fail2ban jail's set, a feed's set and an office's allow set all have a
 * say.  The verdict is the packet path's own (verdict.h in the module): a
 * source is listed when some block set covers it and no allow set does,
 * and dropped when listed, in drop mode, by the hooks or - with the hooks
 * off - by the namespace's XDP and tc programs; marked, for nft rules to
 * decide, in mark mode.  A packet that arrives on a device outside the
 * hooks' scope (by default, a loopback device) is not judged by them.  Each covering prefix is named with
 * its set, as the sets' own CNF_IOC_MATCH answers: one call per set and
 * address, none of which changes anything.  A rules-only set has no say:
 * only iptables rules (-m cuckoo) ask it; those that cover the address
 * are named apart, so that "passes" does not hide an entry.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl.h"

/* A set that covers the address: its longest covering prefix, if known. */
struct hit {
	const char *set;
	struct cnf_addr prefix;
	uint32_t left;		/* seconds, 0: no timeout */
	bool named;		/* @prefix known: a module with MATCH */
};

/* What the namespace is, asked once for every address. */
struct ns_view {
	int fd;
	struct cnf_set_info *sets;	/* NULL: a module without sets */
	size_t nsets;
	struct cnf_stats st;
	bool loopback;			/* --iif names a loopback device */
	bool outside;			/* --iif names one outside the scope */
	const char *iif;
	bool no_match;			/* a module without MATCH */
};

enum reason { R_LISTED, R_HOOKS_OFF, R_MONITOR, R_ALLOWED, R_NO_SET,
	      R_LOOPBACK, R_MARKED, R_MARK_OFF, R_OUTSIDE };

static const char *const reason_json[] = {
	[R_LISTED] = "listed", [R_HOOKS_OFF] = "hooks off",
	[R_MONITOR] = "monitor mode", [R_ALLOWED] = "allowed",
	[R_NO_SET] = "in no set", [R_LOOPBACK] = "loopback",
	[R_MARKED] = "mark mode", [R_MARK_OFF] = "mark mode, hooks off",
	[R_OUTSIDE] = "outside the hooks' scope",
};

/* Whether the hooks judge packets of device @name: the scope covers it. */
static bool in_scope(const struct cnf_stats *st, const char *name)
{
	uint32_t i;

	for (i = 0; i < ctl_iif_count(st); i++)
		if (ctl_iif_matches(st->iif[i], name))
			return true;
	return false;
}

/* "eth0 veth+": the scope's names, for a verdict's text. */
static void print_scope(const struct cnf_stats *st)
{
	uint32_t i;

	for (i = 0; i < ctl_iif_count(st); i++)
		printf("%s%.*s", i ? " " : "", CNF_IFNAMSIZ, st->iif[i]);
}

/* A failure's exit code: 2 or more, as 1 is an answer ("passes"). */
static int no_answer(int err)
{
	int rc = ctl_exit_code(err);

	return rc == CTL_EXIT_FAIL ? CTL_EXIT_ERROR : rc;
}

/* Whether device @name of this namespace is a loopback one: 0 or errno. */
static int iif_is_loopback(const char *name, bool *loopback)
{
	struct ifreq ifr;
	int s, err = 0;

	if (strlen(name) >= IFNAMSIZ || !if_nametoindex(name))
		return ENODEV;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		err = errno;
	else
		*loopback = ifr.ifr_flags & IFF_LOOPBACK;
	close(s);
	return err;
}

/*
 * Whether set @set covers @a, into *@h: 0 (covered), ENOENT, or the errno
 * of the call.  A module without MATCH answers present or absent alone.
 */
static int set_covers(struct ns_view *v, const char *set,
		      const struct cnf_addr *a, struct hit *h)
{
	int err = ENOTTY;

	memset(h, 0, sizeof(*h));
	h->set = set;
	h->prefix = *a;
	if (!v->no_match) {
		err = ctl_entry_call(v->fd, CTL_MATCH, set, &h->prefix, 0,
				     &h->left);
		h->named = !err;
		v->no_match = err == ENOTTY;
	}
	if (v->no_match) {
		h->prefix = *a;
		err = ctl_entry_call(v->fd, CTL_TEST, set, &h->prefix, 0,
				     NULL);
	}
	return err;
}

/*
 * The sets of @kind covering @a into @hits (room for every set); with
 * CTL_KIND_RULES_ONLY in @kind, the rules-only sets of any kind instead.
 */
static int covering(struct ns_view *v, uint32_t kind, const struct cnf_addr *a,
		    struct hit *hits, size_t *n)
{
	uint32_t k;
	size_t i;
	int err;

	*n = 0;
	if (!v->sets) {
		/* A module without sets: the default set, a block set. */
		if (kind != CNF_SET_BLOCK)
			return 0;
		err = set_covers(v, NULL, a, &hits[0]);
		*n = !err;
		return err == ENOENT ? 0 : err;
	}
	for (i = 0; i < v->nsets; i++) {
		k = ctl_set_kind_of(&v->sets[i]);
		if (kind & CTL_KIND_RULES_ONLY ? !(k & CTL_KIND_RULES_ONLY) :
		    k != kind)
			continue;
		err = set_covers(v, v->sets[i].name, a, &hits[*n]);
		if (!err)
			(*n)++;
		else if (err != ENOENT)
			return err;
	}
	return 0;
}

static void print_hits(const struct hit *h, size_t n)
{
	char text[CTL_PREFIXSTRLEN];
	size_t i;

	for (i = 0; i < n; i++) {
		printf("%s%s", i ? ", " : "", h[i].set ? h[i].set :
		       CNF_SET_DEFAULT);
		if (!h[i].named)
			continue;
		printf(" (%s", ctl_format_prefix(&h[i].prefix, text,
						 sizeof(text)));
		if (h[i].left)
			printf(" " CTL_TIMEOUT_WORD " %lu",
			       (unsigned long)h[i].left);
		putchar(')');
	}
}

static void print_text(const char *arg, enum reason r, const struct hit *b,
		       size_t nb, const struct hit *al, size_t na,
		       const struct hit *ro, size_t nr,
		       const struct ns_view *v)
{
	const char *iif = v->iif;

	switch (r) {
	case R_LISTED:
		printf("%s: dropped: ", arg);
		print_hits(b, nb);
		break;
	case R_MARKED:
		printf("%s: marked 0x%x/0x%x, nft decides: listed by ", arg,
		       v->st.mark, v->st.mark_mask);
		print_hits(b, nb);
		break;
	case R_MARK_OFF:
		printf("%s: passes: mark mode with the hooks off marks nothing, listed by ",
		       arg);
		print_hits(b, nb);
		break;
	case R_OUTSIDE:
		printf("%s: passes: not judged on %s: outside the hooks' scope (",
		       arg, iif);
		print_scope(&v->st);
		putchar(')');
		break;
	case R_HOOKS_OFF:
		printf("%s: dropped by XDP and tc programs only (hooks off): ",
		       arg);
		print_hits(b, nb);
		break;
	case R_MONITOR:
		printf("%s: passes: monitor mode, listed by ", arg);
		print_hits(b, nb);
		break;
	case R_ALLOWED:
		printf("%s: passes: ", arg);
		print_hits(b, nb);
		printf(" allowed by ");
		print_hits(al, na);
		break;
	case R_NO_SET:
		printf("%s: passes: in no %sset", arg, na ? "block " : "");
		break;
	case R_LOOPBACK:
		printf("%s: passes: arrives on %s, a loopback device, never judged",
		       arg, iif);
		break;
	}
	/* Without --iif: the hooks judge it only where their scope says. */
	if (!iif && ctl_iif_count(&v->st) &&
	    (r == R_LISTED || r == R_MARKED)) {
		printf(" (on ");
		print_scope(&v->st);
		printf(" only: the hooks' scope)");
	}
	if (nr) {
		printf("; in " CTL_RULES_ONLY_WORD " %s, which only iptables rules consult: ",
		       ctl_plural(nr, "set", "sets"));
		print_hits(ro, nr);
	}
	putchar('\n');
}

static void print_json_hits(const char *key, const struct hit *h, size_t n)
{
	char text[CTL_PREFIXSTRLEN];
	size_t i;

	printf(",\"%s\":[", key);
	for (i = 0; i < n; i++) {
		printf("%s{\"set\":\"%s\"", i ? "," : "",
		       h[i].set ? h[i].set : CNF_SET_DEFAULT);
		if (h[i].named)
			printf(",\"prefix\":\"%s\",\"timeout\":%lu",
			       ctl_format_prefix(&h[i].prefix, text,
						 sizeof(text)),
			       (unsigned long)h[i].left);
		putchar('}');
	}
	putchar(']');
}

/*
 * One address: CTL_EXIT_OK (dropped), CTL_EXIT_FAIL (passes), or minus the
 * exit code of a call that failed.  @first: the first JSON object.
 */
static int verdict_one(struct ns_view *v, const struct ctl_opts *o,
		       const char *arg, const struct cnf_addr *a, bool first)
{
	char why[CTL_SET_ERRLEN];
	size_t room = v->sets ? v->nsets : 1, nb = 0, na = 0, nr = 0;
	struct hit *b = calloc(room, sizeof(*b));
	struct hit *al = calloc(room, sizeof(*al));
	struct hit *ro = calloc(room, sizeof(*ro));
	enum reason r;
	int err = b && al && ro ? 0 : ENOMEM;

	if (!err)
		err = covering(v, CNF_SET_BLOCK, a, b, &nb);
	if (!err)
		err = covering(v, CNF_SET_ALLOW, a, al, &na);
	if (!err)
		err = covering(v, CTL_KIND_RULES_ONLY, a, ro, &nr);
	if (err) {
		free(b);
		free(al);
		free(ro);
		ctl_err("test %s: %s", arg,
			ctl_strerror_entry(err, a, NULL, why, sizeof(why)));
		return -no_answer(err);
	}
	if (v->outside)
		r = R_OUTSIDE;
	else if (v->loopback)
		r = R_LOOPBACK;
	else if (!nb)
		r = R_NO_SET;
	else if (na)
		r = R_ALLOWED;
	else if (v->st.mode == CNF_MODE_MONITOR)
		r = R_MONITOR;
	else if (v->st.mode == CNF_MODE_MARK)
		r = v->st.flags & CNF_STATS_F_HOOKS_OFF ? R_MARK_OFF : R_MARKED;
	else if (v->st.flags & CNF_STATS_F_HOOKS_OFF)
		r = R_HOOKS_OFF;
	else
		r = R_LISTED;
	if (o->json) {
		printf("%s{\"address\":\"%s\",\"verdict\":\"%s\",\"reason\":\"%s\"",
		       first ? "" : ",", arg,
		       r == R_LISTED || r == R_HOOKS_OFF ? "dropped" :
		       r == R_MARKED ? "marked" : "passes", reason_json[r]);
		print_json_hits("block", b, nb);
		print_json_hits("allow", al, na);
		print_json_hits("rules_only", ro, nr);
		putchar('}');
	} else if (!o->quiet) {
		print_text(arg, r, b, nb, al, na, ro, nr, v);
	}
	free(b);
	free(al);
	free(ro);
	return r == R_LISTED || r == R_HOOKS_OFF ? CTL_EXIT_OK : CTL_EXIT_FAIL;
}

/* The namespace's sets, mode and hooks, and what --iif names: exit code. */
static int view_open(struct ns_view *v, const struct ctl_opts *o, int fd)
{
	int err;

	memset(v, 0, sizeof(*v));
	v->fd = fd;
	v->iif = o->iif;
	if (o->niif > 1)
		return ctl_usage_error("test", "--iif", "one device only");
	if (o->iif) {
		err = iif_is_loopback(o->iif, &v->loopback);
		if (err == ENODEV) {
			ctl_err("test --iif %s: no such device here", o->iif);
			return CTL_EXIT_BADINPUT;
		}
		if (err) {
			ctl_err("test --iif %s: %s", o->iif, strerror(err));
			return CTL_EXIT_ERROR;
		}
	}
	if (ioctl(fd, CNF_IOC_STATS, &v->st)) {
		ctl_err("test: stats: %s", ctl_strerror(errno));
		return no_answer(errno);
	}
	/* A scope names the devices judged, loopback ones too when named. */
	if (o->iif && ctl_iif_count(&v->st) &&
	    !(v->st.flags & CNF_STATS_F_HOOKS_OFF)) {
		v->outside = !in_scope(&v->st, o->iif);
		v->loopback = false;
	}
	err = ctl_set_list(fd, &v->sets, &v->nsets);
	if (err == CTL_ENOSETS)
		v->sets = NULL;
	else if (err) {
		ctl_err("test: sets: %s", ctl_strerror(err));
		return no_answer(err);
	}
	return CTL_EXIT_OK;
}

int ctl_test_verdicts(const struct ctl_opts *o, int fd,
		      const struct ctl_entry *e, size_t n, char **argv)
{
	struct ns_view v;
	int rc, r;
	size_t i;

	rc = view_open(&v, o, fd);
	if (rc)
		return rc;
	if (o->json)
		putchar('[');
	for (i = 0; i < n; i++) {
		r = verdict_one(&v, o, argv[e[i].arg], &e[i].a, !i);
		if (r < 0) {
			rc = -r;
			break;
		}
		rc |= r;
	}
	if (o->json)
		puts("]");
	free(v.sets);
	return rc;
}
