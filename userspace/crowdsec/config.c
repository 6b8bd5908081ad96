// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: the configuration file, in the style of
 * CrowdSec's bouncers (crowdsec-firewall-bouncer.yaml): one "key: value"
 * a line, with the same keys where they mean the same.  Only that subset
 * of YAML is read: blank lines, comments from '#' (at a line's start or
 * after a space), values plain or in single or double quotes (no escapes).
 * Anything else (indentation, lists, a key given twice, a key this bouncer
 * does not know) is an error naming the line and the key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cbn.h"
#include "../ctl_setname.h"

enum key {
	K_API_URL, K_API_KEY, K_UPDATE, K_LOG_LEVEL, K_SET, K_DEVICE,
	K_INSECURE, K_NO_IPV6, K_COUNT,
};

static const char *const keys[K_COUNT] = {
	[K_API_URL] = "api_url",
	[K_API_KEY] = "api_key",
	[K_UPDATE] = "update_frequency",
	[K_LOG_LEVEL] = "log_level",
	[K_SET] = "set",
	[K_DEVICE] = "device",
	[K_INSECURE] = "insecure_skip_verify",
	[K_NO_IPV6] = "disable_ipv6",
};

static int bool_parse(const char *s, bool *b)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	size_t i;

	for (i = 0; i < 3; i++) {
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

static int set_str(char **field, const char *v)
{
	char *p = strdup(v);

	if (!p)
		return -1;
	free(*field);
	*field = p;
	return 0;
}

/* Apply @v to key @k: 0, or -1 with @why filled. */
static int apply(struct cbn_config *c, enum key k, char *v, char *why,
		 size_t len)
{
	char derr[CBN_ERRLEN];
	size_t n;

	switch (k) {
	case K_API_URL:
		if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) {
			snprintf(why, len, "'%s': not an http:// or https:// URL", v);
			return -1;
		}
		n = strlen(v);
		while (n && v[n - 1] == '/')
			v[--n] = '\0';
		break;
	case K_API_KEY:
		if (strpbrk(v, " \t")) {
			snprintf(why, len, "not a key (get one with 'cscli bouncers add NAME')");
			return -1;
		}
		break;
	case K_UPDATE:
		if (cbn_duration_parse(v, &c->update_ns, derr, sizeof(derr))) {
			snprintf(why, len, "%s", derr);
			return -1;
		}
		if (c->update_ns <= 0) {
			snprintf(why, len, "'%s': must be more than 0", v);
			return -1;
		}
		return 0;
	case K_LOG_LEVEL:
		if (cbn_level_parse(v, &c->log_level)) {
			snprintf(why, len,
				 "'%s': not a level (trace, debug, info, warning, error)", v);
			return -1;
		}
		return 0;
	case K_SET:
		if (!ctl_set_name_ok(v)) {
			snprintf(why, len,
				 "'%s': not a set name (1 to %d characters of A-Z a-z 0-9 _ . -)",
				 v, CNF_SET_NAME_LEN - 1);
			return -1;
		}
		if (ctl_set_is_default(v)) {
			snprintf(why, len,
				 "'%s': the default set is cuckooctl's; name a set of the bouncer's own",
				 v);
			return -1;
		}
		memset(c->set, 0, sizeof(c->set));
		memcpy(c->set, v, strlen(v));
		return 0;
	case K_DEVICE:
		if (v[0] != '/') {
			snprintf(why, len, "'%s': not an absolute path", v);
			return -1;
		}
		break;
	case K_INSECURE:
	case K_NO_IPV6:
		if (bool_parse(v, k == K_INSECURE ? &c->insecure_skip_verify :
					  &c->disable_ipv6)) {
			snprintf(why, len, "'%s': not true or false", v);
			return -1;
		}
		return 0;
	case K_COUNT:
		break;
	}
	if (set_str(k == K_API_URL ? &c->api_url : k == K_API_KEY ?
		    &c->api_key : &c->device, v)) {
		snprintf(why, len, "%s", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/*
 * The value of a line, after "key:": unquoted, comment and spaces taken
 * off, in place.  NULL with @why filled when it is not a plain value.
 */
static char *value_of(char *p, char *why, size_t len)
{
	char *end;

	p += strspn(p, " \t");
	if (*p == '"' || *p == '\'') {
		end = strchr(p + 1, *p);
		if (!end) {
			snprintf(why, len, "no closing %c", *p);
			return NULL;
		}
		*end++ = '\0';
		end += strspn(end, " \t");
		if (*end && *end != '#') {
			snprintf(why, len, "text after the quoted value: '%s'", end);
			return NULL;
		}
		return p + 1;
	}
	if (*p == '[' || *p == '{' || *p == '|' || *p == '>' || *p == '&' ||
	    *p == '*' || *p == '!') {
		snprintf(why, len,
			 "'%s': only plain or quoted values are read (this is not a full YAML parser)",
			 p);
		return NULL;
	}
	/* A comment starts at a '#' after a space. */
	for (end = p; *end; end++)
		if (*end == '#' && (end == p || end[-1] == ' ' || end[-1] == '\t')) {
			*end = '\0';
			break;
		}
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return p;
}

static int parse_line(struct cbn_config *c, char *line, bool *seen,
		      const char *name, unsigned int lineno, char *err,
		      size_t len)
{
	char why[CBN_ERRLEN], *colon, *v, *p = line;
	size_t klen;
	int k;

	if (!*p || *p == '#' || strspn(p, " \t") == strlen(p))
		return 0;
	if (p[strspn(p, " \t")] == '#')
		return 0;
	if (!strcmp(p, "---") || !strcmp(p, "..."))
		return 0;
	if (*p == ' ' || *p == '\t' || *p == '-') {
		snprintf(err, len,
			 "%s:%u: '%s': nested values and lists are not read: one 'key: value' a line",
			 name, lineno, p);
		return -1;
	}
	colon = strchr(p, ':');
	if (!colon) {
		snprintf(err, len, "%s:%u: '%s': not 'key: value'", name,
			 lineno, p);
		return -1;
	}
	klen = colon - p;
	for (k = 0; k < K_COUNT; k++)
		if (strlen(keys[k]) == klen && !strncmp(keys[k], p, klen))
			break;
	if (k == K_COUNT) {
		snprintf(err, len,
			 "%s:%u: %.*s: unknown key (api_url, api_key, update_frequency, log_level, set, device, insecure_skip_verify, disable_ipv6)",
			 name, lineno, (int)klen, p);
		return -1;
	}
	if (colon[1] && colon[1] != ' ' && colon[1] != '\t') {
		snprintf(err, len, "%s:%u: %s: a space must follow the ':'",
			 name, lineno, keys[k]);
		return -1;
	}
	if (seen[k]) {
		snprintf(err, len, "%s:%u: %s: given twice", name, lineno,
			 keys[k]);
		return -1;
	}
	seen[k] = true;
	v = value_of(colon + 1, why, sizeof(why));
	if (v && !*v) {
		snprintf(why, sizeof(why), "no value");
		v = NULL;
	}
	if (!v || apply(c, k, v, why, sizeof(why))) {
		snprintf(err, len, "%s:%u: %s: %s", name, lineno, keys[k], why);
		return -1;
	}
	return 0;
}

int cbn_config_parse(const char *text, const char *name, struct cbn_config *c,
		     char *err, size_t len)
{
	bool seen[K_COUNT] = { false };
	char *copy = strdup(text), *line, *next;
	unsigned int lineno = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->update_ns = 10000000000ll;
	c->log_level = CBN_INFO;
	strcpy(c->set, "crowdsec");
	if (!copy || set_str(&c->device, CNF_DEVICE_PATH)) {
		free(copy);
		snprintf(err, len, "%s: %s", name, strerror(ENOMEM));
		return -1;
	}
	for (line = copy; line && !rc; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (*line && line[strlen(line) - 1] == '\r')
			line[strlen(line) - 1] = '\0';
		if (strlen(line) != strcspn(line, "\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f")) {
			snprintf(err, len, "%s:%u: a control character in the line",
				 name, lineno);
			rc = -1;
			break;
		}
		rc = parse_line(c, line, seen, name, lineno, err, len);
	}
	free(copy);
	if (!rc && (!seen[K_API_URL] || !seen[K_API_KEY])) {
		snprintf(err, len, "%s: %s: missing (%s)", name,
			 seen[K_API_URL] ? "api_key" : "api_url",
			 seen[K_API_URL] ?
			 "get one with 'cscli bouncers add cuckoo-bouncer'" :
			 "the Local API's address, such as http://127.0.0.1:8080/");
		rc = -1;
	}
	if (rc)
		cbn_config_free(c);
	return rc;
}

int cbn_config_load(const char *path, struct cbn_config *c, char *err,
		    size_t len)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t n = 0, room = 0, got;
	int rc;

	if (!f) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	do {
		if (room - n < 4096) {
			char *p = realloc(text, room + 65536);

			if (!p) {
				free(text);
				fclose(f);
				snprintf(err, len, "%s: %s", path, strerror(ENOMEM));
				return -1;
			}
			text = p;
			room += 65536;
		}
		got = fread(text + n, 1, room - n - 1, f);
		n += got;
	} while (got);
	if (ferror(f) || memchr(text, '\0', n)) {
		snprintf(err, len, "%s: %s", path,
			 ferror(f) ? strerror(EIO) : "a NUL byte in the file");
		free(text);
		fclose(f);
		return -1;
	}
	fclose(f);
	text[n] = '\0';
	rc = cbn_config_parse(text, path, c, err, len);
	free(text);
	return rc;
}

void cbn_config_free(struct cbn_config *c)
{
	free(c->api_url);
	free(c->api_key);
	free(c->device);
	c->api_url = c->api_key = c->device = NULL;
}
