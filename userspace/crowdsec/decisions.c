// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: the answer of the Local API's decision stream,
 * GET /v1/decisions/stream:
 *
 *   {"deleted": [DECISION...] or null, "new": [DECISION...] or null}
 *   DECISION: {"id": 4, "scope": "Ip", "type": "ban", "value": "192.0.2.7",
 *              "duration": "3h59m58.5s", "origin": ..., "scenario": ...}
 *
 * "duration" is the time the decision has left when the answer was made
 * (negative for one that ended).  Only bans of scope Ip or Range are kept;
 * scopes and types compare without case, as CrowdSec's bouncers do.
 *
 * ipv6_ban_prefix widens an IPv6 Ip decision to its /N: operators ban a
 * host's /64 (or /48), since a host picks its address from it at will.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <json-c/json.h>

#include "cbn.h"
#include "../ctl_parse.h"
#include "../ctl_format.h"

/* The scopes and types already reported, once each per process. */
#define SEEN_MAX	64
static char *seen[SEEN_MAX];
static size_t nseen;

static void report_once(const char *what, const char *name)
{
	char key[160];
	size_t i;

	snprintf(key, sizeof(key), "%s\n%s", what, name);
	for (i = 0; i < nseen; i++)
		if (!strcmp(seen[i], key))
			return;
	if (nseen < SEEN_MAX)
		seen[nseen++] = strdup(key);
	if (!strcmp(what, "scope"))
		cbn_log(CBN_WARNING,
			"decisions of scope '%s' are not applied (only Ip and Range): skipped",
			name);
	else
		cbn_log(CBN_WARNING,
			"decisions of type '%s' are not applied (only ban): skipped",
			name);
}

static const char *str_field(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int push(struct cbn_stream *s, const struct cbn_decision *d)
{
	if (s->n == s->room) {
		size_t room = s->room ? 2 * s->room : 64;
		struct cbn_decision *p = realloc(s->d, room * sizeof(*p));

		if (!p)
			return -1;
		s->d = p;
		s->room = room;
	}
	s->d[s->n++] = *d;
	return 0;
}

int cbn_decision_value(const char *value, bool range, struct cnf_addr *a,
		       char *why, size_t len)
{
	struct cnf_addr hint;
	enum ctl_parse_err e;

	e = ctl_parse_prefix(value, 0, a, &hint);
	if ((e == CTL_PARSE_HOST_BITS && range) || e == CTL_PARSE_V4MAPPED) {
		*a = hint;
		return 0;
	}
	if (e == CTL_PARSE_ALL) {
		snprintf(why, len, "/0 would block every %s address",
			 hint.family == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	if (e != CTL_PARSE_OK) {
		ctl_parse_reason(e, &hint, why, len);
		return -1;
	}
	if (!range && a->prefixlen != (a->family == AF_INET ? 32 : 128)) {
		snprintf(why, len, "a prefix, where an Ip decision names one address");
		return -1;
	}
	return 0;
}

/* @a with the bits past @len cleared. */
static void widen(struct cnf_addr *a, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < sizeof(a->addr); i++)
		if (i * 8 >= len)
			a->addr[i] = 0;
		else if (i * 8 + 8 > len)
			a->addr[i] &= 0xff << (8 - (len - i * 8));
	a->prefixlen = len;
}

/*
 * The origin of decision @o into @d: nonzero when it is one too many
 * (counted, and said once per process).  A decision without one is of
 * origin "unknown".
 */
static int note_origin(struct json_object *o, struct cbn_origins *origins,
		       struct cbn_decision *d, struct cbn_skips *k)
{
	const char *origin = str_field(o, "origin");
	static bool said;
	int id;

	id = cbn_origin_id(origins, origin ? origin : "unknown",
			   str_field(o, "scenario"));
	if (id >= 0) {
		d->origin = id;
		return 0;
	}
	k->origins++;
	if (!said)
		cbn_log(CBN_WARNING, "decision %lld: origin '%s': past %d origins, each with sets of its own: skipped (and the decisions of any further origin)",
			(long long)d->id, origin ? origin : "unknown",
			CBN_ORIGINS_MAX);
	said = true;
	return -1;
}

/* One decision of list @deleted: kept in @s, or counted as skipped. */
static int one(struct json_object *o, bool deleted, const struct cbn_filter *f,
	       struct cbn_stream *s)
{
	const char *scope, *type, *value, *duration;
	struct cbn_decision d = { .deleted = deleted };
	struct json_object *id;
	char err[CBN_ERRLEN];
	bool range;

	scope = str_field(o, "scope");
	type = str_field(o, "type");
	value = str_field(o, "value");
	duration = str_field(o, "duration");
	if (!json_object_is_type(o, json_type_object) || !scope || !type ||
	    !value || (!deleted && !duration) ||
	    !json_object_object_get_ex(o, "id", &id) ||
	    !json_object_is_type(id, json_type_int)) {
		s->skips.malformed++;
		cbn_log(CBN_WARNING, "a decision without id, scope, type, value or duration: skipped: %.200s",
			json_object_to_json_string(o));
		return 0;
	}
	d.id = json_object_get_int64(id);
	if (strcasecmp(scope, "ip") && strcasecmp(scope, "range")) {
		s->skips.scope++;
		report_once("scope", scope);
		return 0;
	}
	if (strcasecmp(type, "ban")) {
		s->skips.type++;
		report_once("type", type);
		return 0;
	}
	/* Bans left out of supported_decisions_types: said at start. */
	if (!f->ban) {
		s->skips.type++;
		return 0;
	}
	range = !strcasecmp(scope, "range");
	if (cbn_decision_value(value, range, &d.addr, err, sizeof(err))) {
		s->skips.value++;
		cbn_log(CBN_WARNING, "decision %lld: %s '%s': %s: skipped",
			(long long)d.id, scope, value, err);
		return 0;
	}
	if (f->no_ipv6 && d.addr.family != AF_INET) {
		s->skips.ipv6++;
		return 0;
	}
	if (f->no_ipv4 && d.addr.family == AF_INET) {
		s->skips.ipv4++;
		return 0;
	}
	d.src = d.addr;
	if (!range && d.addr.family == AF_INET6 && f->ipv6_prefix &&
	    f->ipv6_prefix < d.addr.prefixlen)
		widen(&d.addr, f->ipv6_prefix);
	if (!deleted) {
		if (cbn_duration_parse(duration, &d.ns, err, sizeof(err))) {
			s->skips.malformed++;
			cbn_log(CBN_WARNING, "decision %lld: duration %s: skipped",
				(long long)d.id, err);
			return 0;
		}
		if (d.ns <= 0) {
			s->skips.expired++;
			return 0;
		}
	}
	if (f->origins && note_origin(o, f->origins, &d, &s->skips))
		return 0;
	return push(s, &d);
}

static int list(struct json_object *root, const char *key,
		const struct cbn_filter *f,
		struct cbn_stream *s, char *err, size_t errlen)
{
	struct json_object *l;
	size_t i, n;

	if (!json_object_object_get_ex(root, key, &l) || !l)
		return 0;
	if (!json_object_is_type(l, json_type_array)) {
		snprintf(err, errlen, "\"%s\": not a list of decisions but %s",
			 key, json_type_to_name(json_object_get_type(l)));
		return -1;
	}
	n = json_object_array_length(l);
	for (i = 0; i < n; i++)
		if (one(json_object_array_get_idx(l, i), !strcmp(key, "deleted"),
			f, s)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	return 0;
}

static bool blank(const char *p, size_t n)
{
	while (n--)
		if (!strchr(" \t\r\n", *p++))
			return false;
	return true;
}

int cbn_stream_parse(const char *json, size_t len, const struct cbn_filter *f,
		     struct cbn_stream *s, char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	enum json_tokener_error je;
	int rc = -1;

	s->n = 0;
	memset(&s->skips, 0, sizeof(s->skips));
	/* An empty body has no buffer. */
	if (!json)
		json = "";
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	root = json_tokener_parse_ex(tok, json, (int)len);
	je = json_tokener_get_error(tok);
	if (!root || je != json_tokener_success) {
		snprintf(err, errlen, "not JSON: %s at byte %zu",
			 je == json_tokener_continue ? "it ends early" :
			 json_tokener_error_desc(je),
			 (size_t)json_tokener_get_parse_end(tok));
	} else if (!blank(json + json_tokener_get_parse_end(tok),
			  len - json_tokener_get_parse_end(tok))) {
		snprintf(err, errlen, "text after the JSON value, at byte %zu",
			 (size_t)json_tokener_get_parse_end(tok));
	} else if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen,
			 "not the decision stream's {\"new\": [...], \"deleted\": [...]} but %s",
			 json_type_to_name(json_object_get_type(root)));
	} else if (!list(root, "deleted", f, s, err, errlen) &&
		   !list(root, "new", f, s, err, errlen)) {
		rc = 0;
	}
	json_object_put(root);
	json_tokener_free(tok);
	if (rc)
		s->n = 0;
	return rc;
}

void cbn_stream_free(struct cbn_stream *s)
{
	free(s->d);
	memset(s, 0, sizeof(*s));
}
