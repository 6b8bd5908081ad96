// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: the configuration file, crowdsec-firewall-
 * bouncer's (as Debian ships it and as upstream documents it): a key of
 * that file that means the same here works the same, and one that sets up
 * iptables, nftables, ipset or pf is accepted with a warning saying what
 * cuckoo_nf does instead.  A key nobody knows is a warning naming its line
 * and the nearest known key: a misspelling must not stop the bouncer, nor
 * go unsaid.
 *
 * As CrowdSec's Go bouncers do (go-cs-lib's csyaml and csstring): FILE.local,
 * when there is one, is laid over FILE (mappings merged key by key,
 * anything else replaced, a null clears), then "${VAR}" and "$VAR" in a
 * value take the environment's VAR, and a VAR not set is left as written.
 * Here the expansion is done on each value, not on the file's text, so a
 * variable cannot change the file's structure or its line numbers.
 *
 * The YAML is libyaml's: its document, turned into a small tree of our
 * own that keeps each node's file and line for the messages.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "cbn.h"
#include "../ctl_setname.h"

/* Bounds on what aliases can make of a small file ("billion laughs"). */
#define YNODES_MAX	100000
#define YDEPTH_MAX	64

/* A YAML node: a scalar, a sequence, a mapping (keys and values), null. */
struct ynode {
	enum { Y_NULL, Y_STR, Y_SEQ, Y_MAP } kind;
	char *s;			/* Y_STR */
	struct ynode **v;		/* Y_SEQ: items; Y_MAP: key, value... */
	size_t n;			/* entries of @v */
	const char *file;
	unsigned int line;
};

static const char *const kind_names[] = {
	[Y_NULL] = "null", [Y_STR] = "a value", [Y_SEQ] = "a list",
	[Y_MAP] = "a mapping",
};

static void ynode_free(struct ynode *y)
{
	size_t i;

	if (!y)
		return;
	for (i = 0; i < y->n; i++)
		ynode_free(y->v[i]);
	free(y->v);
	free(y->s);
	free(y);
}

/* What one conversion of a libyaml document needs. */
struct conv {
	yaml_document_t *doc;
	const char *file;
	size_t budget;
	char *err;
	size_t len;
};

static struct ynode *convert(struct conv *cv, yaml_node_t *yn, int depth);

static int add_kid(struct ynode *y, struct ynode *kid)
{
	struct ynode **v = realloc(y->v, (y->n + 1) * sizeof(*v));

	if (!v)
		return -1;
	y->v = v;
	y->v[y->n++] = kid;
	return 0;
}

/* A key and its value onto mapping @y, both or neither. */
static int add_pair(struct ynode *y, struct ynode *k, struct ynode *v)
{
	struct ynode **p = realloc(y->v, (y->n + 2) * sizeof(*p));

	if (!p)
		return -1;
	y->v = p;
	y->v[y->n++] = k;
	y->v[y->n++] = v;
	return 0;
}

/* A plain scalar that YAML reads as null: "", "~", "null". */
static bool yaml_null(const yaml_node_t *yn)
{
	const char *s = (const char *)yn->data.scalar.value;

	if (yn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*s || !strcmp(s, "~") || !strcasecmp(s, "null");
}

static int convert_kids(struct conv *cv, yaml_node_t *yn, struct ynode *y,
			int depth)
{
	yaml_node_item_t *it;
	yaml_node_pair_t *pr;
	struct ynode *k, *v;
	size_t i;

	if (yn->type == YAML_SEQUENCE_NODE) {
		for (it = yn->data.sequence.items.start;
		     it < yn->data.sequence.items.top; it++) {
			k = convert(cv, yaml_document_get_node(cv->doc, *it), depth + 1);
			if (!k || add_kid(y, k)) {
				ynode_free(k);
				return -1;
			}
		}
		return 0;
	}
	for (pr = yn->data.mapping.pairs.start; pr < yn->data.mapping.pairs.top;
	     pr++) {
		k = convert(cv, yaml_document_get_node(cv->doc, pr->key), depth + 1);
		if (!k)
			return -1;
		if (k->kind != Y_STR) {
			snprintf(cv->err, cv->len, "%s:%u: a key that is %s, not a name",
				 cv->file, k->line, kind_names[k->kind]);
			ynode_free(k);
			return -1;
		}
		for (i = 0; i < y->n; i += 2)
			if (!strcmp(y->v[i]->s, k->s)) {
				snprintf(cv->err, cv->len,
					 "%s:%u: %s: given twice (first on line %u)",
					 cv->file, k->line, k->s, y->v[i]->line);
				ynode_free(k);
				return -1;
			}
		v = convert(cv, yaml_document_get_node(cv->doc, pr->value), depth + 1);
		if (!v || add_pair(y, k, v)) {
			ynode_free(k);
			ynode_free(v);
			return -1;
		}
	}
	return 0;
}

/* libyaml's node @yn as ours: NULL with cv->err filled when it fails. */
static struct ynode *convert(struct conv *cv, yaml_node_t *yn, int depth)
{
	struct ynode *y;

	if (!yn || depth > YDEPTH_MAX || !cv->budget) {
		snprintf(cv->err, cv->len, "%s:%lu: nested too deep or too large (aliases?)",
			 cv->file, yn ? (unsigned long)yn->start_mark.line + 1 : 0ul);
		return NULL;
	}
	cv->budget--;
	y = calloc(1, sizeof(*y));
	if (!y)
		goto nomem;
	y->file = cv->file;
	y->line = yn->start_mark.line + 1;
	switch (yn->type) {
	case YAML_SCALAR_NODE:
		if (yaml_null(yn)) {
			y->kind = Y_NULL;
			return y;
		}
		y->kind = Y_STR;
		y->s = strdup((const char *)yn->data.scalar.value);
		if (!y->s)
			goto nomem;
		if (strlen(y->s) != yn->data.scalar.length) {
			snprintf(cv->err, cv->len, "%s:%u: a NUL character in a value",
				 cv->file, y->line);
			ynode_free(y);
			return NULL;
		}
		return y;
	case YAML_SEQUENCE_NODE:
	case YAML_MAPPING_NODE:
		y->kind = yn->type == YAML_SEQUENCE_NODE ? Y_SEQ : Y_MAP;
		if (!convert_kids(cv, yn, y, depth)) {
			return y;
		}
		ynode_free(y);
		/* Out of memory, unless a deeper node said what is wrong. */
		if (!cv->err[0])
			snprintf(cv->err, cv->len, "%s: %s", cv->file, strerror(ENOMEM));
		return NULL;
	default:
		snprintf(cv->err, cv->len, "%s:%u: an empty YAML node", cv->file,
			 y->line);
		ynode_free(y);
		return NULL;
	}
nomem:
	ynode_free(y);
	snprintf(cv->err, cv->len, "%s: %s", cv->file, strerror(ENOMEM));
	return NULL;
}

/*
 * The line of libyaml's error: a scanner's is at the token it began (the
 * opening quote, the key without its ':'), where it found out is often
 * the end of the file; a reader's (a control character) has only an
 * offset.
 */
static unsigned int error_line(const yaml_parser_t *parser, const char *text)
{
	unsigned int line = 1;
	size_t i;

	if (parser->error == YAML_READER_ERROR) {
		for (i = 0; i < parser->problem_offset && text[i]; i++)
			line += text[i] == '\n';
		return line;
	}
	if (parser->error == YAML_SCANNER_ERROR && parser->context)
		return parser->context_mark.line + 1;
	return parser->problem_mark.line + 1;
}

/*
 * @text's first YAML document (the one Go's yaml.Unmarshal reads) as a
 * tree: NULL with @err filled.  An empty document is a null node.
 */
static struct ynode *yaml_read(const char *text, const char *file, char *err,
			       size_t len)
{
	struct conv cv = { .file = file, .budget = YNODES_MAX, .err = err,
			   .len = len };
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ynode *y = NULL;
	yaml_node_t *root;

	err[0] = '\0';
	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, len, "%s: %s", file, strerror(ENOMEM));
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text,
				     strlen(text));
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, len, "%s:%u: not YAML: %s%s%s", file,
			 error_line(&parser, text),
			 parser.problem ? parser.problem : "a syntax error",
			 parser.context ? " " : "",
			 parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return NULL;
	}
	cv.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		y = calloc(1, sizeof(*y));
		if (y) {
			y->file = file;
			y->line = 1;
		} else {
			snprintf(err, len, "%s: %s", file, strerror(ENOMEM));
		}
	} else {
		y = convert(&cv, root, 0);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return y;
}

/*
 * Lay @from over @into (consumed): mappings merged key by key, anything
 * else replaced, a null replaces; a mapping against something else is an
 * error, as in go-cs-lib's csyaml.Merge.  @key names the place in messages.
 */
static struct ynode *merge(struct ynode *into, struct ynode *from,
			   const char *key, char *err, size_t len)
{
	size_t i, j;

	if (into->kind == Y_NULL || from->kind == Y_NULL ||
	    (into->kind == from->kind && into->kind != Y_MAP)) {
		ynode_free(into);
		return from;
	}
	if (into->kind != from->kind) {
		snprintf(err, len, "%s:%u: %s: %s cannot replace %s (%s:%u)",
			 from->file, from->line, key, kind_names[from->kind],
			 kind_names[into->kind], into->file, into->line);
		ynode_free(into);
		ynode_free(from);
		return NULL;
	}
	for (j = 0; j < from->n; j += 2) {
		for (i = 0; i < into->n; i += 2)
			if (!strcmp(into->v[i]->s, from->v[j]->s))
				break;
		if (i < into->n) {
			into->v[i + 1] = merge(into->v[i + 1], from->v[j + 1],
					       from->v[j]->s, err, len);
			from->v[j + 1] = NULL;
			if (!into->v[i + 1])
				goto fail;
			/* A value replaced: the messages name its place. */
			if (into->v[i + 1]->kind != Y_MAP) {
				ynode_free(into->v[i]);
				into->v[i] = from->v[j];
				from->v[j] = NULL;
			}
			continue;
		}
		if (add_pair(into, from->v[j], from->v[j + 1])) {
			snprintf(err, len, "%s: %s", from->file, strerror(ENOMEM));
			goto fail;
		}
		from->v[j] = from->v[j + 1] = NULL;
	}
	ynode_free(from);
	return into;
fail:
	/* A failed merge left a NULL in @into: ynode_free() passes over it. */
	ynode_free(into);
	ynode_free(from);
	return NULL;
}

/* Keys, and what the bouncer does with each. */
enum key {
	/* The bouncer's own. */
	K_API_URL, K_API_KEY, K_UPDATE, K_LOG_LEVEL, K_SET, K_DEVICE,
	K_INSECURE, K_NO_IPV6, K_NO_IPV4, K_CERT, K_KEY, K_CA,
	K_ORIGINS, K_SCOPES, K_SCEN_IN, K_SCEN_OUT, K_TYPES, K_V6_PREFIX,
	K_SET4, K_SET6, K_RETRY,
	K_LOG_MODE, K_LOG_DIR, K_LOG_SIZE, K_LOG_FILES, K_LOG_AGE,
	K_LOG_COMPRESS,
	/* Accepted, with a warning when set to something that does not apply. */
	K_DENY_ACTION, K_DENY_LOG, K_DENY_LOG_PREFIX, K_PROMETHEUS,
	K_DAEMONIZE, K_PID_DIR,
	/* A firewall's: one warning saying what cuckoo_nf does instead. */
	K_FIREWALL,
};

static const struct {
	const char *name;
	enum key k;
} keys[] = {
	{ "api_url", K_API_URL }, { "api_key", K_API_KEY },
	{ "update_frequency", K_UPDATE }, { "log_level", K_LOG_LEVEL },
	{ "set", K_SET }, { "device", K_DEVICE },
	{ "insecure_skip_verify", K_INSECURE }, { "disable_ipv6", K_NO_IPV6 },
	{ "disable_ipv4", K_NO_IPV4 }, { "cert_path", K_CERT },
	{ "key_path", K_KEY }, { "ca_cert_path", K_CA },
	{ "origins", K_ORIGINS }, { "scopes", K_SCOPES },
	{ "scenarios_containing", K_SCEN_IN },
	{ "scenarios_not_containing", K_SCEN_OUT },
	{ "supported_decisions_types", K_TYPES },
	{ "ipv6_ban_prefix", K_V6_PREFIX },
	{ "blacklists_ipv4", K_SET4 }, { "blacklists_ipv6", K_SET6 },
	{ "retry_initial_connect", K_RETRY },
	{ "log_mode", K_LOG_MODE }, { "log_dir", K_LOG_DIR },
	{ "log_max_size", K_LOG_SIZE }, { "log_max_files", K_LOG_FILES },
	{ "log_max_age", K_LOG_AGE }, { "compress_logs", K_LOG_COMPRESS },
	/* The names of crowdsec-firewall-bouncer 0.0.25 (Debian 12). */
	{ "log_max_backups", K_LOG_FILES },
	{ "log_compression", K_LOG_COMPRESS },
	{ "deny_action", K_DENY_ACTION }, { "deny_log", K_DENY_LOG },
	{ "deny_log_prefix", K_DENY_LOG_PREFIX },
	{ "prometheus", K_PROMETHEUS }, { "daemonize", K_DAEMONIZE },
	{ "pid_dir", K_PID_DIR },
	{ "mode", K_FIREWALL }, { "iptables_chains", K_FIREWALL },
	{ "iptables_v4_chains", K_FIREWALL }, { "iptables_v6_chains", K_FIREWALL },
	{ "iptables_add_rule_comments", K_FIREWALL },
	{ "ipset_type", K_FIREWALL }, { "ipset_size", K_FIREWALL },
	{ "ipset_disable_timeouts", K_FIREWALL }, { "nftables", K_FIREWALL },
	{ "nftables_hooks", K_FIREWALL }, { "pf", K_FIREWALL },
};

#define NKEYS	(sizeof(keys) / sizeof(keys[0]))

/* Where a value is, for messages. */
struct at {
	const char *file;
	unsigned int line;
	const char *key;
};

/* What one parse carries. */
struct pctx {
	struct cbn_config *c;
	char *err;
	size_t len;
	int rc;
};

static void warn(struct pctx *p, const struct at *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct pctx *p, const struct at *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warn(struct pctx *p, const struct at *at, const char *fmt, ...)
{
	char msg[CBN_ERRLEN], *line = NULL, **w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (asprintf(&line, "%s:%u: %s: %s", at->file, at->line, at->key, msg) < 0)
		return;
	w = realloc(p->c->warnings, (p->c->nwarnings + 1) * sizeof(*w));
	if (!w) {
		free(line);
		return;
	}
	p->c->warnings = w;
	w[p->c->nwarnings++] = line;
}

/* The first error is the one said. */
static void fail(struct pctx *p, const struct at *at, const char *fmt, ...)
{
	char msg[CBN_ERRLEN];
	va_list ap;

	if (p->rc)
		return;
	p->rc = -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->len, "%s:%u: %s: %s", at->file, at->line, at->key,
		 msg);
}

/*
 * "${VAR}" and "$VAR" from the environment, as go-cs-lib's StrictExpand:
 * one not set is left as written (and said).  A new string, or NULL.
 */
static char *expand(struct pctx *p, const struct at *at, const char *s)
{
	size_t n = strlen(s) + 1, room = n, o = 0;
	char *out = malloc(room), name[128];
	const char *q, *v;

	while (out && *s) {
		size_t nl = 0, skip = 0;

		if (s[0] == '$' && s[1] == '{' && (q = strchr(s + 2, '}'))) {
			nl = q - (s + 2);
			skip = nl + 3;
			if (nl < sizeof(name))
				memcpy(name, s + 2, nl);
		} else if (s[0] == '$') {
			nl = strspn(s + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
			skip = nl + 1;
			if (nl < sizeof(name))
				memcpy(name, s + 1, nl);
		}
		if (!nl || nl >= sizeof(name)) {
			out[o++] = *s++;
			continue;
		}
		name[nl] = '\0';
		v = getenv(name);
		if (!v) {
			warn(p, at, "$%s is not set in the environment: '%.*s' is kept as written",
			     name, (int)skip, s);
			memcpy(out + o, s, skip);
			o += skip;
			s += skip;
			continue;
		}
		if (room < o + strlen(v) + strlen(s + skip) + 1) {
			char *r;

			room = o + strlen(v) + strlen(s + skip) + 1;
			r = realloc(out, room);
			if (!r) {
				free(out);
				return NULL;
			}
			out = r;
		}
		memcpy(out + o, v, strlen(v));
		o += strlen(v);
		s += skip;
	}
	if (out)
		out[o] = '\0';
	return out;
}

/*
 * The value @y of a key that takes one word or number, expanded: NULL
 * (after saying why, with p->rc set) when it is of another kind or empty.
 */
static char *scalar(struct pctx *p, const struct at *at, const struct ynode *y)
{
	char *s;

	if (y->kind != Y_STR) {
		fail(p, at, "%s, where one value is wanted", y->kind == Y_NULL ?
		     "no value" : kind_names[y->kind]);
		return NULL;
	}
	s = expand(p, at, y->s);
	if (!s) {
		fail(p, at, "%s", strerror(ENOMEM));
		return NULL;
	}
	if (!*s) {
		fail(p, at, "no value");
		free(s);
		return NULL;
	}
	return s;
}

/* YAML 1.1's booleans, as Go's yaml.v2 reads them. */
static int bool_parse(const char *s, bool *b)
{
	static const char *const yes[] = { "true", "yes", "on", "y" };
	static const char *const no[] = { "false", "no", "off", "n" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = false;
			return 0;
		}
	}
	return -1;
}

static void set_bool(struct pctx *p, const struct at *at,
		     const struct ynode *y, bool *b)
{
	char *s = scalar(p, at, y);

	if (s && bool_parse(s, b))
		fail(p, at, "'%s': not true or false", s);
	free(s);
}

static void set_str(struct pctx *p, const struct at *at, const struct ynode *y,
		    char **field)
{
	char *s = scalar(p, at, y);

	if (!s)
		return;
	free(*field);
	*field = s;
}

static void set_name(struct pctx *p, const struct at *at,
		     const struct ynode *y, bool v4, bool v6)
{
	char *s = scalar(p, at, y);

	if (!s)
		return;
	if (!ctl_set_name_ok(s)) {
		fail(p, at, "'%s': not a set name (1 to %d characters of A-Z a-z 0-9 _ . -)",
		     s, CNF_SET_NAME_LEN - 1);
	} else if (ctl_set_is_default(s)) {
		fail(p, at, "'%s': the default set is cuckooctl's; name a set of the bouncer's own",
		     s);
	} else {
		if (v4) {
			memset(p->c->set4, 0, sizeof(p->c->set4));
			memcpy(p->c->set4, s, strlen(s));
		}
		if (v6) {
			memset(p->c->set6, 0, sizeof(p->c->set6));
			memcpy(p->c->set6, s, strlen(s));
		}
	}
	free(s);
}

/* A Go duration, more than 0. */
static void set_update(struct pctx *p, const struct at *at,
		       const struct ynode *y)
{
	char derr[CBN_ERRLEN], *s = scalar(p, at, y);

	if (!s)
		return;
	if (cbn_duration_parse(s, &p->c->update_ns, derr, sizeof(derr)))
		fail(p, at, "%s", derr);
	else if (p->c->update_ns <= 0)
		fail(p, at, "'%s': must be more than 0", s);
	free(s);
}

static void set_url(struct pctx *p, const struct at *at, const struct ynode *y)
{
	char *s = scalar(p, at, y);
	size_t n;

	if (!s)
		return;
	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8)) {
		fail(p, at, "'%s': not an http:// or https:// URL", s);
		free(s);
		return;
	}
	n = strlen(s);
	while (n && s[n - 1] == '/')
		s[--n] = '\0';
	free(p->c->api_url);
	p->c->api_url = s;
}

/*
 * A list of names (a YAML list, or one value with commas) as the comma-
 * separated text the Local API's query takes.  An empty list is no filter.
 */
static void set_list(struct pctx *p, const struct at *at,
		     const struct ynode *y, char **field)
{
	size_t i, n = y->kind == Y_SEQ ? y->n : 1, o = 0;
	char *out = NULL, *s;

	if (y->kind == Y_NULL || (y->kind == Y_SEQ && !y->n))
		return;
	if (y->kind == Y_MAP) {
		fail(p, at, "a mapping, where a list of names is wanted");
		return;
	}
	for (i = 0; i < n && !p->rc; i++) {
		const struct ynode *item = y->kind == Y_SEQ ? y->v[i] : y;
		char *r;

		s = scalar(p, at, item);
		if (!s)
			break;
		if (strpbrk(s, " \t\r\n")) {
			fail(p, at, "'%s': a name with a space", s);
			free(s);
			break;
		}
		r = realloc(out, o + strlen(s) + 2);
		if (!r) {
			fail(p, at, "%s", strerror(ENOMEM));
			free(s);
			break;
		}
		out = r;
		o += sprintf(out + o, "%s%s", o ? "," : "", s);
		free(s);
	}
	if (p->rc) {
		free(out);
		return;
	}
	free(*field);
	*field = out;
}

/* Bans are what cuckoo_nf does: other types are said once, at start. */
static void set_types(struct pctx *p, const struct at *at,
		      const struct ynode *y)
{
	char *list = NULL, *t, *save = NULL;

	set_list(p, at, y, &list);
	if (p->rc || !list)
		return;
	p->c->ban = false;
	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(t, "ban"))
			p->c->ban = true;
		else
			warn(p, at, "'%s': cuckoo_nf only drops (ban): decisions of type %s are skipped",
			     t, t);
	}
	if (!p->c->ban)
		warn(p, at, "no 'ban' in the list: no decision is applied");
	free(list);
}

static void set_v6_prefix(struct pctx *p, const struct at *at,
			  const struct ynode *y)
{
	char *s = scalar(p, at, y), *end;
	long v;

	if (!s)
		return;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > 128)
		fail(p, at, "'%s': not a prefix length from 0 (off) to 128", s);
	else
		p->c->ipv6_prefix = v;
	free(s);
}

/* Is @y, expanded, a true boolean?  A value that is none says so. */
static bool is_true(struct pctx *p, const struct at *at, const struct ynode *y)
{
	bool b = false;

	if (y && y->kind != Y_NULL)
		set_bool(p, at, y, &b);
	return b;
}

/* @y, a whole number from 0 to @max, into @v. */
static void set_uint(struct pctx *p, const struct at *at,
		     const struct ynode *y, unsigned long max,
		     unsigned long *v)
{
	char *s = scalar(p, at, y), *end;
	unsigned long n;

	if (!s)
		return;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || end == s || s[0] == '-' || n > max)
		fail(p, at, "'%s': not a whole number from 0 to %lu", s, max);
	else
		*v = n;
	free(s);
}

/*
 * The keys that tell how to log: log_mode "stdout" (standard error, the
 * journal under systemd) or "file", and the file's.
 */
static void log_keys(struct pctx *p, const struct at *at,
		     const struct ynode *y, enum key k)
{
	struct cbn_log_file *f = &p->c->log_file;
	unsigned long v;
	char *s;

	switch (k) {
	case K_LOG_MODE:
		s = scalar(p, at, y);
		if (s && !strcmp(s, "file"))
			p->c->log_to_file = true;
		else if (s && !strcmp(s, "stdout"))
			p->c->log_to_file = false;
		else if (s)
			fail(p, at, "'%s': not a log mode (file, stdout)", s);
		free(s);
		break;
	case K_LOG_DIR:
		set_str(p, at, y, &f->dir);
		if (f->dir && !f->dir[0])
			fail(p, at, "an empty directory");
		break;
	case K_LOG_SIZE:
		/* In MB, as upstream's; 0 is its default, 100. */
		v = f->max_size >> 20;
		set_uint(p, at, y, 1ul << 20, &v);
		f->max_size = (uint64_t)(v ? v : CBN_LOG_MAX_SIZE_MB) << 20;
		break;
	case K_LOG_FILES:
		v = f->max_files;
		set_uint(p, at, y, 1000, &v);
		f->max_files = v;
		break;
	case K_LOG_AGE:
		v = f->max_age;
		set_uint(p, at, y, 36500, &v);
		f->max_age = v;
		break;
	default:
		set_bool(p, at, y, &f->compress);
		break;
	}
}

/*
 * prometheus: enabled, listen_addr, listen_port, as upstream's; another
 * key in it is said and passed over.
 */
static void prometheus(struct pctx *p, const struct at *at,
		       const struct ynode *y)
{
	struct at in = *at;
	unsigned long port;
	size_t i;

	if (y->kind != Y_MAP && y->kind != Y_NULL) {
		fail(p, at, "%s, where a mapping (enabled: ...) is wanted",
		     kind_names[y->kind]);
		return;
	}
	for (i = 0; i < y->n && !p->rc; i += 2) {
		const struct ynode *v = y->v[i + 1];
		const char *key = y->v[i]->s;
		char name[64];

		snprintf(name, sizeof(name), "prometheus.%s", key);
		in.key = name;
		in.file = y->v[i]->file;
		in.line = y->v[i]->line;
		if (v->kind == Y_NULL)
			continue;
		if (!strcmp(key, "enabled")) {
			set_bool(p, &in, v, &p->c->metrics);
		} else if (!strcmp(key, "listen_addr")) {
			set_str(p, &in, v, &p->c->metrics_addr);
		} else if (!strcmp(key, "listen_port")) {
			port = p->c->metrics_port;
			set_uint(p, &in, v, 65535, &port);
			if (!port && !p->rc)
				fail(p, &in, "'0': not a port (1 to 65535)");
			p->c->metrics_port = port;
		} else {
			warn(p, &in, "unknown key, ignored (prometheus takes enabled, listen_addr and listen_port)");
		}
	}
}

/* The keys of crowdsec-firewall-bouncer's that do not apply as they are. */
static void other_keys(struct pctx *p, const struct at *at,
		       const struct ynode *y, enum key k)
{
	char *s;

	switch (k) {
	case K_DENY_ACTION:
		s = scalar(p, at, y);
		if (s && strcasecmp(s, "drop"))
			warn(p, at, "'%s': cuckoo_nf drops the packets of a banned source (DROP); nothing else is done",
			     s);
		free(s);
		break;
	case K_DENY_LOG:
		set_bool(p, at, y, &p->c->deny_log);
		break;
	case K_DENY_LOG_PREFIX:
		warn(p, at, "not used: cuckoo_nf's lines start 'cuckoo_nf SET: ', SET the set that dropped the packet (deny_log)");
		break;
	case K_PROMETHEUS:
		prometheus(p, at, y);
		break;
	case K_DAEMONIZE:
		if (is_true(p, at, y))
			warn(p, at, "not used: the bouncer runs in the foreground (systemd starts it)");
		break;
	case K_PID_DIR:
		warn(p, at, "not used: the bouncer writes no pid file (systemd knows its pid)");
		break;
	case K_FIREWALL:
		warn(p, at, "a firewall's setting: not used; cuckoo_nf drops banned sources in its own netfilter hook (and in XDP or tc programs), into the sets set or blacklists_ipv4 and blacklists_ipv6 name");
		break;
	default:
		break;
	}
}

/* Apply @y, the value of key number @i, to p->c. */
static void apply_key(struct pctx *p, size_t i, const struct at *at,
		      const struct ynode *y)
{
	struct cbn_config *c = p->c;
	char *s;

	switch (keys[i].k) {
	case K_API_URL:
		set_url(p, at, y);
		break;
	case K_API_KEY:
		set_str(p, at, y, &c->api_key);
		if (c->api_key && strpbrk(c->api_key, " \t"))
			fail(p, at, "not a key (get one with 'cscli bouncers add NAME')");
		break;
	case K_UPDATE:
		set_update(p, at, y);
		break;
	case K_LOG_LEVEL:
		s = scalar(p, at, y);
		if (s && cbn_level_parse(s, &c->log_level))
			fail(p, at, "'%s': not a level (trace, debug, info, warning, error)",
			     s);
		free(s);
		break;
	case K_SET:
		set_name(p, at, y, true, true);
		break;
	case K_SET4:
	case K_SET6:
		set_name(p, at, y, keys[i].k == K_SET4, keys[i].k == K_SET6);
		break;
	case K_DEVICE:
		set_str(p, at, y, &c->device);
		if (c->device && c->device[0] != '/')
			fail(p, at, "'%s': not an absolute path", c->device);
		break;
	case K_CERT:
	case K_KEY:
	case K_CA:
		set_str(p, at, y, keys[i].k == K_CERT ? &c->cert_path :
			keys[i].k == K_KEY ? &c->key_path : &c->ca_cert_path);
		break;
	case K_INSECURE:
		set_bool(p, at, y, &c->insecure_skip_verify);
		break;
	case K_NO_IPV6:
		set_bool(p, at, y, &c->disable_ipv6);
		break;
	case K_NO_IPV4:
		set_bool(p, at, y, &c->disable_ipv4);
		break;
	case K_RETRY:
		/* The bouncer always retries: true or false, it goes on. */
		if (y->kind != Y_NULL)
			set_bool(p, at, y, &(bool){ false });
		break;
	case K_ORIGINS:
		set_list(p, at, y, &c->origins);
		break;
	case K_SCOPES:
		set_list(p, at, y, &c->scopes);
		break;
	case K_SCEN_IN:
		set_list(p, at, y, &c->scenarios_containing);
		break;
	case K_SCEN_OUT:
		set_list(p, at, y, &c->scenarios_not_containing);
		break;
	case K_TYPES:
		set_types(p, at, y);
		break;
	case K_V6_PREFIX:
		set_v6_prefix(p, at, y);
		break;
	case K_LOG_MODE:
	case K_LOG_DIR:
	case K_LOG_SIZE:
	case K_LOG_FILES:
	case K_LOG_AGE:
	case K_LOG_COMPRESS:
		log_keys(p, at, y, keys[i].k);
		break;
	default:
		other_keys(p, at, y, keys[i].k);
		break;
	}
}

/* Levenshtein's distance, for the nearest key to a misspelt one. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64], prev, cur;

	if (lb >= sizeof(row) / sizeof(row[0]))
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j] > row[j - 1] + 1)
				row[j] = row[j - 1] + 1;
			if (row[j] > cur + 1)
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[lb];
}

static const char *nearest(const char *name)
{
	size_t i, best = 0, d, bd = (size_t)-1;

	for (i = 0; i < NKEYS; i++) {
		d = distance(name, keys[i].name);
		if (d < bd) {
			bd = d;
			best = i;
		}
	}
	return keys[best].name;
}

static void defaults(struct cbn_config *c)
{
	memset(c, 0, sizeof(*c));
	c->update_ns = 10000000000ll;
	c->log_level = CBN_INFO;
	/* The log file's, as crowdsec-firewall-bouncer's example file. */
	c->log_file.max_size = (uint64_t)CBN_LOG_MAX_SIZE_MB << 20;
	c->log_file.max_files = 3;
	c->log_file.max_age = 30;
	c->log_file.compress = true;
	c->ban = true;
	c->metrics_port = CBN_METRICS_PORT;
	strcpy(c->set4, "crowdsec");
	strcpy(c->set6, "crowdsec");
}

/* A TLS file that cannot be read is said now, not at each poll. */
static bool unreadable(struct pctx *p, const char *key, const char *path)
{
	if (!path || !access(path, R_OK))
		return false;
	snprintf(p->err, p->len, "%s: '%s': %s", key, path, strerror(errno));
	return true;
}

/* The merged tree's keys into p->c; then what must be there. */
static void walk(struct pctx *p, const struct ynode *root, const char *name)
{
	struct at at = { .file = name, .line = 1, .key = "api_url" };
	size_t i, k;

	if (root->kind != Y_MAP && root->kind != Y_NULL) {
		snprintf(p->err, p->len, "%s:%u: %s, where 'key: value' lines are wanted",
			 root->file, root->line, kind_names[root->kind]);
		p->rc = -1;
		return;
	}
	for (i = 0; i < root->n && !p->rc; i += 2) {
		at.file = root->v[i]->file;
		at.line = root->v[i]->line;
		at.key = root->v[i]->s;
		for (k = 0; k < NKEYS; k++)
			if (!strcmp(keys[k].name, at.key))
				break;
		if (k == NKEYS)
			warn(p, &at, "unknown key, ignored (the nearest known key is %s)",
			     nearest(at.key));
		/*
		 * Empty is the default, as Go leaves a field of a null: how
		 * a .local takes back a value (api_key, for a certificate).
		 */
		else if (root->v[i + 1]->kind != Y_NULL)
			apply_key(p, k, &at, root->v[i + 1]);
	}
	if (p->rc)
		return;
	if (!p->c->api_url) {
		snprintf(p->err, p->len,
			 "%s: api_url: missing (the Local API's address, such as http://127.0.0.1:8080/)",
			 name);
		p->rc = -1;
	} else if (!p->c->api_key && !p->c->cert_path) {
		snprintf(p->err, p->len,
			 "%s: api_key: missing (get one with 'cscli bouncers add cuckoo-bouncer', or give cert_path and key_path)",
			 name);
		p->rc = -1;
	} else if (p->c->api_key && p->c->cert_path) {
		snprintf(p->err, p->len, "%s: api_key and cert_path: both given: the Local API takes a key or a client certificate, not both",
			 name);
		p->rc = -1;
	} else if (!p->c->cert_path != !p->c->key_path) {
		snprintf(p->err, p->len, "%s: %s: missing (a client certificate needs both cert_path and key_path)",
			 name, p->c->cert_path ? "key_path" : "cert_path");
		p->rc = -1;
	} else if (p->c->disable_ipv4 && p->c->disable_ipv6) {
		snprintf(p->err, p->len, "%s: disable_ipv4 and disable_ipv6: both true: no decision would be applied",
			 name);
		p->rc = -1;
	} else if (unreadable(p, "cert_path", p->c->cert_path) ||
		   unreadable(p, "key_path", p->c->key_path) ||
		   unreadable(p, "ca_cert_path", p->c->ca_cert_path)) {
		p->rc = -1;
	} else if (!p->c->device && !(p->c->device = strdup(CNF_DEVICE_PATH))) {
		snprintf(p->err, p->len, "%s: %s", name, strerror(ENOMEM));
		p->rc = -1;
	} else if (!p->c->metrics_addr &&
		   !(p->c->metrics_addr = strdup(CBN_METRICS_ADDR))) {
		snprintf(p->err, p->len, "%s: %s", name, strerror(ENOMEM));
		p->rc = -1;
	}
}

int cbn_config_parse_texts(const char *const *texts, const char *const *names,
			   size_t n, struct cbn_config *c, char *err, size_t len)
{
	struct pctx p = { .c = c, .err = err, .len = len };
	struct ynode *root = NULL, *y;
	size_t i;

	defaults(c);
	for (i = 0; i < n; i++) {
		y = yaml_read(texts[i], names[i], err, len);
		if (!y) {
			ynode_free(root);
			return -1;
		}
		/* An empty overlay (comments only) changes nothing. */
		if (root && y->kind == Y_NULL) {
			ynode_free(y);
			continue;
		}
		root = root ? merge(root, y, names[i], err, len) : y;
		if (!root)
			return -1;
	}
	walk(&p, root, names[0]);
	ynode_free(root);
	if (p.rc)
		cbn_config_free(c);
	return p.rc;
}

int cbn_config_parse(const char *text, const char *name, struct cbn_config *c,
		     char *err, size_t len)
{
	return cbn_config_parse_texts(&text, &name, 1, c, err, len);
}

/* @path's text: 0, 1 when there is no such file and @optional, or -1. */
static int slurp(const char *path, bool optional, char **text, char *err,
		 size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n = 0, room = 0, got;
	char *p;

	*text = NULL;
	if (!f) {
		if (optional && errno == ENOENT)
			return 1;
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	do {
		if (room - n < 4096) {
			p = realloc(*text, room + 65536);
			if (!p) {
				snprintf(err, len, "%s: %s", path, strerror(ENOMEM));
				goto fail;
			}
			*text = p;
			room += 65536;
		}
		got = fread(*text + n, 1, room - n - 1, f);
		n += got;
	} while (got);
	if (ferror(f) || memchr(*text, '\0', n)) {
		snprintf(err, len, "%s: %s", path,
			 ferror(f) ? strerror(EIO) : "a NUL byte in the file");
		goto fail;
	}
	fclose(f);
	(*text)[n] = '\0';
	return 0;
fail:
	free(*text);
	*text = NULL;
	fclose(f);
	return -1;
}

int cbn_config_load(const char *path, struct cbn_config *c, char *err,
		    size_t len)
{
	const char *names[2] = { path, NULL };
	char *texts[2] = { NULL, NULL }, *local = NULL;
	int rc, got;

	defaults(c);
	if (asprintf(&local, "%s.local", path) < 0) {
		snprintf(err, len, "%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	names[1] = local;
	rc = slurp(path, false, &texts[0], err, len);
	got = rc ? 1 : slurp(local, true, &texts[1], err, len);
	if (!rc && got < 0)
		rc = -1;
	if (!rc)
		rc = cbn_config_parse_texts((const char *const *)texts, names,
					    got ? 1 : 2, c, err, len);
	free(texts[0]);
	free(texts[1]);
	free(local);
	return rc;
}

void cbn_config_free(struct cbn_config *c)
{
	size_t i;

	free(c->api_url);
	free(c->api_key);
	free(c->cert_path);
	free(c->key_path);
	free(c->ca_cert_path);
	free(c->device);
	free(c->metrics_addr);
	free(c->log_file.dir);
	free(c->origins);
	free(c->scopes);
	free(c->scenarios_containing);
	free(c->scenarios_not_containing);
	for (i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	memset(c, 0, sizeof(*c));
}
