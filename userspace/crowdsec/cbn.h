/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckoo-crowdsec-bouncer: CrowdSec's Local API decisions into a cuckoo_nf
 * block set.  What the parts share; the parsing parts (config, duration,
 * decisions) touch neither network nor device and are unit-tested on the
 * host (tests/).
 */
#ifndef _CBN_H
#define _CBN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>

#include "../ctl_report.h"

#define CBN_NAME	"cuckoo-crowdsec-bouncer"
#define CBN_CONFIG	"/etc/crowdsec/bouncers/" CBN_NAME ".yaml"
#define CBN_ERRLEN	256
/* prometheus' listen_addr and listen_port, as upstream's. */
#define CBN_METRICS_ADDR "127.0.0.1"
#define CBN_METRICS_PORT 60601

/*
 * Logging (log.c): a line on stderr, its level first; or, once
 * cbn_log_to_file() succeeded, a line of the log file.
 */
enum cbn_level {
	CBN_ERROR, CBN_WARNING, CBN_INFO, CBN_DEBUG, CBN_TRACE,
};
extern enum cbn_level cbn_log_level;
void cbn_log(enum cbn_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "trace", "debug", "info", "warning" ("warn"), "error" ("fatal", "panic"). */
int cbn_level_parse(const char *s, enum cbn_level *level);
/* libcnfctl's reporter (ctl_set_reporter()): its reports as error lines. */
void cbn_ctl_report(enum ctl_report_kind kind, const char *cmd,
		    const char *msg);

/*
 * log_mode: file, as crowdsec-firewall-bouncer's: the log is
 * DIR/cuckoo-crowdsec-bouncer.log; when a line takes it past max_size
 * bytes it becomes the backup .1 (the older ones .2, .3...: logrotate's
 * names), gzipped to .1.gz with compress; at most max_files backups are
 * kept (0: all), none older than max_age days (0: any age).
 */
#define CBN_LOG_FILE	CBN_NAME ".log"
#define CBN_LOG_DIR	"/var/log"
#define CBN_LOG_MAX_SIZE_MB 100
struct cbn_log_file {
	char *dir;			/* log_dir, default /var/log/ */
	uint64_t max_size;		/* log_max_size MB, in bytes */
	unsigned int max_files;		/* log_max_files, log_max_backups */
	unsigned int max_age;		/* log_max_age, in days */
	bool compress;			/* compress_logs, log_compression */
};

/* Log into @f's file from now on: 0, or -1 with @err saying why. */
int cbn_log_to_file(const struct cbn_log_file *f, char *err, size_t len);

/*
 * Go duration strings (time.ParseDuration: "3h59m58.123s", "-1.5s", "300ms",
 * "0"), in nanoseconds (duration.c).  0, or -1 with @err filled.
 */
int cbn_duration_parse(const char *s, int64_t *ns, char *err, size_t len);
/* @ns in whole seconds, rounded up; 0 for a non-positive one. */
uint64_t cbn_duration_secs(int64_t ns);

/*
 * The configuration file (config.c): crowdsec-firewall-bouncer's keys where
 * they mean the same, YAML read with libyaml.
 */
struct cbn_config {
	char *api_url;			/* without its trailing '/' */
	char *api_key;			/* NULL with a client certificate */
	char *cert_path, *key_path;	/* TLS client certificate and key */
	char *ca_cert_path;		/* a CA beside the system's */
	int64_t update_ns;		/* update_frequency, > 0 */
	enum cbn_level log_level;
	bool log_to_file;		/* log_mode: file (else stdout) */
	struct cbn_log_file log_file;	/* its file and rotation */
	char set4[CNF_SET_NAME_LEN];	/* IPv4 bans: set, blacklists_ipv4 */
	char set6[CNF_SET_NAME_LEN];	/* IPv6 bans: set, blacklists_ipv6 */
	char *device;			/* /dev/cuckoo_nf */
	bool insecure_skip_verify;	/* TLS: no check of the LAPI's certificate */
	bool disable_ipv6;		/* IPv6 decisions are not applied */
	bool disable_ipv4;		/* IPv4 decisions are not applied */
	bool ban;			/* supported_decisions_types has ban */
	bool deny_log;			/* the sets log their drops */
	unsigned int ipv6_prefix;	/* ipv6_ban_prefix: 0, or 1 to 128 */
	/* prometheus: serve /metrics (metrics.c), a set per origin. */
	bool metrics;
	char *metrics_addr;		/* listen_addr */
	unsigned int metrics_port;	/* listen_port */
	/* The stream's filters, comma-separated as the query wants; or NULL. */
	char *origins, *scopes, *scenarios_containing, *scenarios_not_containing;
	/* What was accepted but does not apply: "FILE:LINE: KEY: text". */
	char **warnings;
	size_t nwarnings;
};

/*
 * Read @path, then @path.local over it when there is one (maps merged key
 * by key, other values replaced), into @c (defaults first): 0, or -1 with
 * @err saying which file, line and key is wrong ("FILE:LINE: KEY:
 * reason").  ${VAR} and $VAR in values come from the environment.
 */
int cbn_config_load(const char *path, struct cbn_config *c, char *err,
		    size_t len);
/* The same from @n texts, each over the ones before (tests). */
int cbn_config_parse_texts(const char *const *texts, const char *const *names,
			   size_t n, struct cbn_config *c, char *err,
			   size_t len);
/* One text, @name in messages. */
int cbn_config_parse(const char *text, const char *name, struct cbn_config *c,
		     char *err, size_t len);
void cbn_config_free(struct cbn_config *c);

/*
 * The origins of the decisions applied (origin.c), when the bouncer keeps
 * a set per origin (prometheus enabled): each origin's bans go to sets of
 * their own, so that the module's per-set counters count the packets each
 * origin's bans dropped.  An origin is the decision's "origin", and for
 * "lists" its "scenario" too ("lists:firehol_greensnow"), as
 * crowdsec-firewall-bouncer labels them; its sets are SET4-NAME and
 * SET6-NAME (SET6 is SET4 followed by 6 when both are one name), NAME
 * the origin with what a set name cannot hold replaced by '_', cut to fit
 * and then followed by a hash of the origin, so that two origins never
 * share a set.
 */
#define CBN_ORIGINS_MAX	64
#define CBN_ORIGIN_LEN	128
struct cbn_origin {
	char name[CBN_ORIGIN_LEN];	/* the label */
	char set[2][CNF_SET_NAME_LEN];	/* IPv4's, IPv6's */
	bool made[2];			/* known to exist in the module */
};

struct cbn_origins {
	struct cbn_origin v[CBN_ORIGINS_MAX];
	size_t n;
	char base[2][CNF_SET_NAME_LEN];	/* set4, and set6 (or set4 "6") */
};

/* Start @o with the configured sets: 0, or -1 with @err saying why. */
int cbn_origins_init(struct cbn_origins *o, const char *set4,
		     const char *set6, char *err, size_t len);
/*
 * The index of the origin of a decision of @origin (and @scenario, for
 * "lists"), added when new: -1 when CBN_ORIGINS_MAX are known already
 * (logged once).
 */
int cbn_origin_id(struct cbn_origins *o, const char *origin,
		  const char *scenario);
/* Is @set one of the names the origins' sets could have (SET4-..., SET6-...)? */
bool cbn_origins_own(const struct cbn_origins *o, const char *set);

/* One decision of a stream answer (decisions.c). */
struct cbn_decision {
	struct cnf_addr addr;	/* the set's prefix, ready for the device */
	struct cnf_addr src;	/* the decision's own: @addr before widening */
	unsigned int origin;	/* index in the filter's origins; else 0 */
	int64_t id;
	int64_t ns;		/* duration left (new decisions only) */
	bool deleted;
};

/* Why decisions of an answer were passed over. */
struct cbn_skips {
	uint64_t scope;		/* a scope other than Ip and Range */
	uint64_t type;		/* a type other than ban */
	uint64_t value;		/* a value that is no prefix */
	uint64_t expired;	/* a new decision with a duration <= 0 */
	uint64_t ipv6;		/* IPv6, and disable_ipv6 */
	uint64_t ipv4;		/* IPv4, and disable_ipv4 */
	uint64_t malformed;	/* fields missing or of the wrong type */
	uint64_t origins;	/* past CBN_ORIGINS_MAX origins */
};

struct cbn_stream {
	struct cbn_decision *d;
	size_t n, room;
	struct cbn_skips skips;
};

/* Which decisions are applied, and how (from the configuration). */
struct cbn_filter {
	bool no_ipv4, no_ipv6;	/* disable_ipv4, disable_ipv6 */
	bool ban;		/* supported_decisions_types has ban */
	/* ipv6_ban_prefix: an IPv6 Ip decision bans its /N; 0, 128: off. */
	unsigned int ipv6_prefix;
	/* A set per origin: each decision's origin noted; NULL: none. */
	struct cbn_origins *origins;
};

/*
 * Parse a /v1/decisions/stream answer of @len bytes into @s (emptied
 * first): the deleted decisions, then the new ones.  Decisions the bouncer
 * does not apply (@f) are counted in @s->skips, and each scope or type it
 * does not know is logged once per process.  0, or -1 with @err saying why
 * the whole answer is unusable (not JSON, not the stream's shape).
 */
int cbn_stream_parse(const char *json, size_t len, const struct cbn_filter *f,
		     struct cbn_stream *s, char *err, size_t errlen);
/*
 * The prefix of a decision's @value in scope Range (@range) or Ip, as the
 * device takes it: 0, or -1 with @why (@len bytes) saying why it is none.
 * A range with host bits set stands for its network, an IPv4-mapped IPv6
 * address for the IPv4 one (the filter matches IPv4 packets with IPv4
 * entries); a /0 is refused.
 */
int cbn_decision_value(const char *value, bool range, struct cnf_addr *a,
		       char *why, size_t len);
void cbn_stream_free(struct cbn_stream *s);

/*
 * The prefixes the set holds, each with the end of its longest decision
 * (state.c).  Keyed by prefix; stable pointers.
 */
struct cbn_entry {
	struct cnf_addr addr;
	unsigned int origin;	/* part of the key: its sets' (else 0) */
	int64_t until;		/* CLOCK_MONOTONIC ns; 0: not in the set */
	bool listed;		/* on the touched list */
	bool deleted;		/* its last decision was deleted */
	bool longer;		/* @until changed: the device's timeout too */
	struct cbn_entry *next, *next_touched;
	/*
	 * The decisions' own prefixes in it, each with the end of its
	 * longest: one, the entry's own, unless ipv6_ban_prefix widened
	 * addresses into it.  The entry goes when the last one does.
	 */
	struct cbn_src {
		struct cnf_addr addr;
		int64_t until;
	} *src;
	size_t nsrc;
};

struct cbn_table {
	struct cbn_entry **b;
	size_t nbuckets, n;
	struct cbn_entry *touched;
};

struct cbn_entry *cbn_table_get(struct cbn_table *t, const struct cnf_addr *a,
				bool create);
/* The entry of @a in the sets of origin @origin (cbn_table_get(): 0). */
struct cbn_entry *cbn_table_get_origin(struct cbn_table *t,
				       const struct cnf_addr *a,
				       unsigned int origin, bool create);
void cbn_table_remove(struct cbn_table *t, struct cbn_entry *e);
/*
 * Note that a decision for @src (in @e) lasts until @until: 0, or -1 out
 * of memory.  @e->until becomes the latest end of its sources.
 */
int cbn_entry_src_add(struct cbn_entry *e, const struct cnf_addr *src,
		      int64_t until);
/*
 * The decisions for @src ended (deleted, or @src NULL: none) and those of
 * the others in @e that ended by @now: @e->until becomes the latest end
 * of those left, 0 when none is.
 */
void cbn_entry_src_del(struct cbn_entry *e, const struct cnf_addr *src,
		       int64_t now);
/* Drop the entries that ended at or before @now (the kernel dropped them). */
void cbn_table_prune(struct cbn_table *t, int64_t now);
void cbn_table_clear(struct cbn_table *t);

/*
 * The ids of deleted decisions seen lately (state.c).  The Local API sends
 * a deleted decision again in the answers of the next seconds (its window
 * starts 2 s before the last poll); a repeat must not remove an address
 * banned anew meanwhile.
 */
struct cbn_ids {
	struct cbn_id {
		int64_t id, seen;
	} *v;
	size_t n, room;
};

bool cbn_ids_seen(const struct cbn_ids *s, int64_t id);
/*
 * Note the deleted decisions of @st as seen at @now, and forget those seen
 * before @now - @keep: 0, or -1 out of memory.
 */
int cbn_ids_note(struct cbn_ids *s, const struct cbn_stream *st, int64_t now,
		 int64_t keep);
void cbn_ids_free(struct cbn_ids *s);

/* Seconds to give the device for an entry ending at @until: at least 1. */
uint32_t cbn_timeout_at(int64_t until, int64_t now);

/* The device (dev.c): 0 or a positive errno, logged. */
int cbn_dev_open(const char *path);
int cbn_dev_ensure_set(int fd, const char *set);
/* The same, and with @log (deny_log) the set's drops logged. */
int cbn_dev_ensure_set_log(int fd, const char *set, bool log);
int cbn_dev_add(int fd, const char *set, const struct cnf_addr *a,
		uint32_t timeout);
int cbn_dev_del(int fd, const char *set, const struct cnf_addr *a);
int cbn_dev_replace(int fd, const char *set, const struct cnf_addr *addrs,
		    const uint32_t *timeouts, size_t n);
/*
 * Add @n prefixes to @set, those there already retimed (no replace): 0 or
 * an errno, logged.
 */
int cbn_dev_add_all(int fd, const char *set, const struct cnf_addr *addrs,
		    const uint32_t *timeouts, size_t n);
/* Does @err mean the set or the device must be set up again? */
bool cbn_dev_lost(int err);

/* The Local API (lapi.c). */
struct cbn_body {
	char *p;
	size_t len, room;
};
int cbn_lapi_init(const struct cbn_config *c);
/*
 * GET /v1/decisions/stream?startup=@startup into @body: 0, or -1 with
 * @err filled (unreachable, HTTP status, aborted by a signal).
 */
int cbn_lapi_stream(bool startup, struct cbn_body *body, char *err,
		    size_t len);
void cbn_lapi_cleanup(void);

int64_t cbn_now(void);

/*
 * /metrics (metrics.c): crowdsec-firewall-bouncer's metrics, as the
 * Prometheus text exposition format.  What one scrape shows: per origin
 * and family, the prefixes its sets hold and what the module counted for
 * those sets; per family, the packets the module looked up.
 */
struct cbn_metrics_origin {
	char name[CBN_ORIGIN_LEN];
	uint64_t banned[2];		/* IPv4, IPv6: prefixes in its sets */
	uint64_t packets[2], bytes[2];	/* its sets' matched, matched_bytes */
};

struct cbn_metrics {
	struct cbn_metrics_origin *o;
	size_t n;
	uint64_t packets[2], bytes[2];	/* looked up, every path */
};

/* @m as exposition text into @out: 0, or -1 when @out failed. */
int cbn_metrics_text(const struct cbn_metrics *m, FILE *out);
/*
 * Serve /metrics on @c's listen_addr and listen_port, from a thread of
 * libmicrohttpd's: 0, or -1 with @err saying why not.
 */
int cbn_metrics_start(const struct cbn_config *c, char *err, size_t len);
/*
 * The origins and how many prefixes each has in its sets now, for the
 * next scrapes; the module's counters are read at each scrape.
 */
void cbn_metrics_update(const struct cbn_origins *o,
			const struct cbn_table *t, int64_t now);
void cbn_metrics_stop(void);

#endif /* _CBN_H */
