// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: /metrics, crowdsec-firewall-bouncer's metrics
 * under its names and labels, served by libmicrohttpd (prometheus:
 * enabled, listen_addr, listen_port).
 *
 *   fw_bouncer_banned_ips{origin,ip_type}       prefixes in the origin's set
 *   fw_bouncer_dropped_packets{origin,ip_type}  packets the set covered
 *   fw_bouncer_dropped_bytes{origin,ip_type}    their bytes
 *   fw_bouncer_processed_packets{ip_type}       packets looked up
 *   fw_bouncer_processed_bytes{ip_type}         their bytes
 *
 * Gauges, as upstream's are (its counters come and go with its rules).
 * The origins are those of the decisions applied since the bouncer
 * started; each has a set per family (origin.c), and the module counts
 * the packets each set covers (struct cnf_set_info.matched) on every path,
 * so the drops of each origin are the module's own figures, read at each
 * scrape as upstream reads its firewall's counters.
 *
 * The scrape runs in libmicrohttpd's thread; the daemon's thread hands it
 * the origins and their prefixes after each poll (cbn_metrics_update()),
 * under @lock.  Nothing else is shared: the scrape opens the device for
 * itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "cbn.h"
#include "../ctl.h"

static const char *const ip_type[2] = { "ipv4", "ipv6" };

static struct {
	struct MHD_Daemon *daemon;
	char *device;
	/* Guards what follows: written by the daemon's thread, read by scrapes. */
	pthread_mutex_t lock;
	struct cbn_metrics_origin *o;
	char (*set)[2][CNF_SET_NAME_LEN];	/* each origin's sets */
	size_t n;
} srv = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A label's value as the exposition format quotes it. */
static void label(FILE *out, const char *s)
{
	for (; *s; s++)
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
}

/* One family of per-origin gauges: @what 0 banned, 1 packets, 2 bytes. */
static void per_origin(const struct cbn_metrics *m, FILE *out,
		       const char *name, const char *help, int what)
{
	const struct cbn_metrics_origin *o;
	size_t i;
	int f;

	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < m->n; i++)
		for (f = 0; f < 2; f++) {
			o = &m->o[i];
			fprintf(out, "%s{origin=\"", name);
			label(out, o->name);
			fprintf(out, "\",ip_type=\"%s\"} %llu\n", ip_type[f],
				(unsigned long long)(what == 0 ? o->banned[f] :
						     what == 1 ? o->packets[f] :
						     o->bytes[f]));
		}
}

int cbn_metrics_text(const struct cbn_metrics *m, FILE *out)
{
	int f;

	per_origin(m, out, "fw_bouncer_banned_ips",
		   "Prefixes banned now, per origin of their decisions", 0);
	per_origin(m, out, "fw_bouncer_dropped_packets",
		   "Packets whose source the sets of the origin's bans covered (dropped in drop mode but for those an allow set covers)",
		   1);
	per_origin(m, out, "fw_bouncer_dropped_bytes",
		   "Bytes of those packets", 2);
	fputs("# HELP fw_bouncer_processed_packets Packets cuckoo_nf looked up (netfilter hooks, XDP and tc programs)\n"
	      "# TYPE fw_bouncer_processed_packets gauge\n", out);
	for (f = 0; f < 2; f++)
		fprintf(out, "fw_bouncer_processed_packets{ip_type=\"%s\"} %llu\n",
			ip_type[f], (unsigned long long)m->packets[f]);
	fputs("# HELP fw_bouncer_processed_bytes Bytes of those packets\n"
	      "# TYPE fw_bouncer_processed_bytes gauge\n", out);
	for (f = 0; f < 2; f++)
		fprintf(out, "fw_bouncer_processed_bytes{ip_type=\"%s\"} %llu\n",
			ip_type[f], (unsigned long long)m->bytes[f]);
	return fflush(out) || ferror(out) ? -1 : 0;
}

void cbn_metrics_update(const struct cbn_origins *o,
			const struct cbn_table *t, int64_t now)
{
	struct cbn_metrics_origin *mo;
	const struct cbn_entry *e;
	size_t i;

	pthread_mutex_lock(&srv.lock);
	if (o->n != srv.n) {
		void *p = realloc(srv.o, o->n * sizeof(*srv.o));
		void *q = realloc(srv.set, o->n * sizeof(*srv.set));

		if (p)
			srv.o = p;
		if (q)
			srv.set = q;
		/* Out of memory: the scrapes keep the origins they had. */
		if (!p || !q) {
			pthread_mutex_unlock(&srv.lock);
			return;
		}
		srv.n = o->n;
	}
	for (i = 0; i < srv.n; i++) {
		mo = &srv.o[i];
		memset(mo, 0, sizeof(*mo));
		memcpy(mo->name, o->v[i].name, sizeof(mo->name));
		memcpy(srv.set[i], o->v[i].set, sizeof(srv.set[i]));
	}
	for (i = 0; i < t->nbuckets; i++)
		for (e = t->b[i]; e; e = e->next)
			if (e->until > now && e->origin < srv.n)
				srv.o[e->origin].banned[e->addr.family != AF_INET]++;
	pthread_mutex_unlock(&srv.lock);
}

/*
 * The module's counters into @m: each origin's sets', and the packets
 * looked up.  0, or an errno (logged).
 */
static int collect(struct cbn_metrics *m, char (*sets)[2][CNF_SET_NAME_LEN])
{
	const struct cnf_family_stats *fs[2];
	const struct cnf_byte_stats *bs[2];
	struct cnf_set_info *info;
	struct cnf_stats st;
	size_t n, i;
	long k;
	int fd, err, f;

	fd = open(srv.device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		cbn_log(CBN_ERROR, "/metrics: %s: %s", srv.device, strerror(err));
		return err;
	}
	memset(&st, 0, sizeof(st));
	err = ioctl(fd, CNF_IOC_STATS, &st) ? errno : ctl_set_list(fd, &info, &n);
	close(fd);
	if (err) {
		cbn_log(CBN_ERROR, "/metrics: %s: %s", srv.device, ctl_strerror(err));
		return err;
	}
	for (i = 0; i < m->n; i++)
		for (f = 0; f < 2; f++) {
			k = ctl_find_set(info, n, sets[i][f]);
			if (k < 0)
				continue;
			m->o[i].packets[f] = info[k].matched;
			m->o[i].bytes[f] = info[k].matched_bytes;
		}
	free(info);
	fs[0] = &st.v4;
	fs[1] = &st.v6;
	bs[0] = &st.bytes_v4;
	bs[1] = &st.bytes_v6;
	m->packets[0] = st.xdp_v4.checked + st.tc_v4.checked;
	m->packets[1] = st.xdp_v6.checked + st.tc_v6.checked;
	m->bytes[0] = st.xdp_bytes_v4.checked + st.tc_bytes_v4.checked;
	m->bytes[1] = st.xdp_bytes_v6.checked + st.tc_bytes_v6.checked;
	for (f = 0; f < 2; f++) {
		m->packets[f] += fs[f]->checked;
		m->bytes[f] += bs[f]->checked;
	}
	return 0;
}

/* The text of a scrape, or NULL (out of memory, or the device failed). */
static char *scrape(size_t *len, int *status)
{
	char (*sets)[2][CNF_SET_NAME_LEN] = NULL;
	struct cbn_metrics m = { 0 };
	char *text = NULL;
	FILE *out;

	*status = MHD_HTTP_INTERNAL_SERVER_ERROR;
	pthread_mutex_lock(&srv.lock);
	m.n = srv.n;
	m.o = calloc(m.n ? m.n : 1, sizeof(*m.o));
	sets = calloc(m.n ? m.n : 1, sizeof(*sets));
	if (m.o && sets) {
		memcpy(m.o, srv.o, m.n * sizeof(*m.o));
		memcpy(sets, srv.set, m.n * sizeof(*sets));
	}
	pthread_mutex_unlock(&srv.lock);
	if (!m.o || !sets)
		goto out;
	if (collect(&m, sets)) {
		*status = MHD_HTTP_SERVICE_UNAVAILABLE;
		goto out;
	}
	out = open_memstream(&text, len);
	if (!out)
		goto out;
	if (cbn_metrics_text(&m, out)) {
		fclose(out);
		free(text);
		text = NULL;
		goto out;
	}
	fclose(out);
	*status = MHD_HTTP_OK;
out:
	free(m.o);
	free(sets);
	return text;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	static const char fail[] = "cuckoo_nf: no figures (see the bouncer's log)\n";
	static const char none[] = "not found: the metrics are at /metrics\n";
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len = 0;
	char *text;
	int status;

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		ret = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		r = MHD_create_response_from_buffer(sizeof(none) - 1, (void *)none,
						    MHD_RESPMEM_PERSISTENT);
	} else {
		text = scrape(&len, &status);
		if (text)
			r = MHD_create_response_from_buffer(len, text,
							    MHD_RESPMEM_MUST_FREE);
		else
			r = MHD_create_response_from_buffer(sizeof(fail) - 1,
							    (void *)fail,
							    MHD_RESPMEM_PERSISTENT);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ?
				"text/plain; version=0.0.4; charset=utf-8" :
				"text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

int cbn_metrics_start(const struct cbn_config *c, char *err, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char port[16];
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	int rc;

	snprintf(port, sizeof(port), "%u", c->metrics_port);
	rc = getaddrinfo(c->metrics_addr, port, &hints, &ai);
	if (rc) {
		snprintf(err, len, "prometheus: listen_addr '%s': %s",
			 c->metrics_addr, gai_strerror(rc));
		return -1;
	}
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv.device = c->device;
	srv.daemon = MHD_start_daemon(flags, 0, NULL, NULL, answer, NULL,
				      MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				      MHD_OPTION_CONNECTION_LIMIT, 16u,
				      MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				      MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!srv.daemon) {
		snprintf(err, len, "prometheus: cannot serve on %s port %s (in use, or not an address of this host)",
			 c->metrics_addr, port);
		return -1;
	}
	return 0;
}

void cbn_metrics_stop(void)
{
	if (srv.daemon)
		MHD_stop_daemon(srv.daemon);
	srv.daemon = NULL;
	pthread_mutex_lock(&srv.lock);
	free(srv.o);
	free(srv.set);
	srv.o = NULL;
	srv.set = NULL;
	srv.n = 0;
	pthread_mutex_unlock(&srv.lock);
}
