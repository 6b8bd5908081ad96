// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: the Local API's decision stream over libcurl,
 * as CrowdSec's bouncers ask for it: GET API_URL/v1/decisions/stream with
 * the bouncer's key in X-Api-Key, or a TLS client certificate (cert_path,
 * key_path) in its stead.  The filters origins, scopes,
 * scenarios_containing and scenarios_not_containing go as the query's
 * parameters of those names, each a comma-separated list, as go-cs-bouncer
 * sends them: the Local API leaves out what they exclude.  One handle for the process, so the
 * connection is kept between polls.  A transfer gives up when a stopping
 * signal is pending (checked in the progress callback), when no byte came
 * for 30 s, or after 10 s without a connection.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "cbn.h"

#ifndef CBN_VERSION
#error "CBN_VERSION: the package's version"
#endif

static CURL *curl;
static struct curl_slist *headers;
static char *url_startup, *url_update;
static char curl_err[CURL_ERROR_SIZE];
static bool api_key;		/* X-Api-Key sent, not a certificate */

static size_t body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct cbn_body *b = arg;
	size_t n = size * nmemb;

	if (b->room - b->len < n + 1) {
		size_t room = b->room ? b->room : 65536;
		char *p;

		while (room - b->len < n + 1)
			room *= 2;
		p = realloc(b->p, room);
		if (!p)
			return 0;
		b->p = p;
		b->room = room;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* A stopping signal waits (they are blocked): end the transfer. */
static int progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
		    curl_off_t ultotal, curl_off_t ulnow)
{
	sigset_t pending;

	if (sigpending(&pending))
		return 0;
	return sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT);
}

/*
 * The stream's URL: "API_URL/v1/decisions/stream?startup=BOOL" and the
 * filters, each escaped.  NULL out of memory.
 */
static char *stream_url(const struct cbn_config *c, bool startup)
{
	const struct {
		const char *name, *value;
	} q[] = {
		{ "origins", c->origins }, { "scopes", c->scopes },
		{ "scenarios_containing", c->scenarios_containing },
		{ "scenarios_not_containing", c->scenarios_not_containing },
	};
	char *url = NULL, *next, *v;
	size_t i;

	if (asprintf(&url, "%s/v1/decisions/stream?startup=%s", c->api_url,
		     startup ? "true" : "false") < 0)
		return NULL;
	for (i = 0; i < sizeof(q) / sizeof(q[0]) && url; i++) {
		if (!q[i].value)
			continue;
		v = curl_easy_escape(curl, q[i].value, 0);
		if (!v || asprintf(&next, "%s&%s=%s", url, q[i].name, v) < 0)
			next = NULL;
		curl_free(v);
		free(url);
		url = next;
	}
	return url;
}

/*
 * TLS as the upstream bouncer: a client certificate and key, a CA of the
 * Local API's beside the system's.  libcurl's CURLOPT_CAINFO would take
 * the place of the system's bundle: the system's directory is kept.
 */
static void tls_setup(const struct cbn_config *c)
{
	const curl_version_info_data *vi = curl_version_info(CURLVERSION_NOW);

	if (c->cert_path) {
		curl_easy_setopt(curl, CURLOPT_SSLCERT, c->cert_path);
		curl_easy_setopt(curl, CURLOPT_SSLKEY, c->key_path);
	}
	if (c->ca_cert_path) {
		curl_easy_setopt(curl, CURLOPT_CAINFO, c->ca_cert_path);
		curl_easy_setopt(curl, CURLOPT_CAPATH,
				 vi->capath ? vi->capath : "/etc/ssl/certs");
	}
	if (c->insecure_skip_verify) {
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
}

int cbn_lapi_init(const struct cbn_config *c)
{
	char *key = NULL;

	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -1;
	curl = curl_easy_init();
	if (!curl)
		goto fail;
	url_startup = stream_url(c, true);
	url_update = stream_url(c, false);
	if (!url_startup || !url_update)
		goto fail;
	if (c->api_key) {
		if (asprintf(&key, "X-Api-Key: %s", c->api_key) < 0)
			goto fail;
		headers = curl_slist_append(NULL, key);
		free(key);
		if (!headers)
			goto fail;
		curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
		api_key = true;
	}
	curl_easy_setopt(curl, CURLOPT_USERAGENT, CBN_NAME "/v" CBN_VERSION);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress);
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	tls_setup(c);
	return 0;
fail:
	cbn_lapi_cleanup();
	return -1;
}

int cbn_lapi_stream(bool startup, struct cbn_body *body, char *err,
		    size_t len)
{
	const char *url = startup ? url_startup : url_update;
	long status = 0;
	CURLcode rc;

	body->len = 0;
	curl_err[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		snprintf(err, len, "GET %s: %s", url,
			 curl_err[0] ? curl_err : curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200)
		return 0;
	/* The answer's {"message": ...}, at most its first line. */
	if (body->len && body->p[body->len - 1] == '\n')
		body->p[--body->len] = '\0';
	snprintf(err, len, "GET %s: HTTP %ld%s%.*s%s", url, status,
		 body->len ? " (" : "",
		 (int)(body->len ? strcspn(body->p, "\n") > 200 ? 200 :
		       strcspn(body->p, "\n") : 0),
		 body->len ? body->p : "", body->len ? ")" : "");
	if ((status == 401 || status == 403) && api_key)
		snprintf(err + strlen(err), len - strlen(err),
			 ": the Local API refused api_key (make one with 'cscli bouncers add cuckoo-bouncer')");
	else if (status == 401 || status == 403)
		snprintf(err + strlen(err), len - strlen(err),
			 ": the Local API refused the client certificate (is its OU in the Local API's bouncers_allowed_ou?)");
	return -1;
}

void cbn_lapi_cleanup(void)
{
	if (curl)
		curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	free(url_startup);
	free(url_update);
	curl = NULL;
	headers = NULL;
	url_startup = url_update = NULL;
	curl_global_cleanup();
}
