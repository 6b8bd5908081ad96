// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: `stats --prometheus`, the namespace's figures in Prometheus'
 * text exposition format (version 0.0.4), for node_exporter's textfile
 * collector.
 *
 * Every metric is a family of its own name, cuckoo_nf_*, written whole,
 * HELP and TYPE first, as the format wants; counters end in _total and
 * sizes say their unit.  Labels: family (ipv4, ipv6), path (hook, xdp,
 * tc, rule: -m cuckoo rules, which count checked and matched only), set
 * and kind.  A reading that the loaded module does not have is
 * left out, not written as 0.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctl_format.h"
#include "ctl_prom.h"
#include "ctl_setname.h"

#define ULL(x)	((unsigned long long)(x))

static const char *const family_label[] = { "ipv4", "ipv6" };

/* HELP and TYPE of metric cuckoo_nf_@name. */
static void family(FILE *out, const char *name, const char *type,
		   const char *help)
{
	fprintf(out, "# HELP cuckoo_nf_%s %s\n# TYPE cuckoo_nf_%s %s\n", name,
		help, name, type);
}

/* A sample without labels. */
static void sample(FILE *out, const char *name, unsigned long long v)
{
	fprintf(out, "cuckoo_nf_%s %llu\n", name, v);
}

/*
 * @s as a label value: backslash, double quote and line feed escaped, as
 * the format wants (set names never hold them; the format is kept anyway).
 */
static void label_value(FILE *out, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		if (s[i] == '\\' || s[i] == '"')
			fputc('\\', out);
		if (s[i] == '\n')
			fputs("\\n", out);
		else
			fputc(s[i], out);
	}
}

/* What a path counts of packets, each per family. */
enum { CHECKED, MATCHED, DROPPED, NCOUNTS };

struct path_counts {
	const char *path;
	uint64_t n[NCOUNTS][2];
	const struct cnf_byte_stats *b[2];
	bool no_drops;		/* a path that drops nothing itself */
};

/* @b's counter of @k. */
static uint64_t bytes_of(const struct cnf_byte_stats *b, int k)
{
	return k == CHECKED ? b->checked : k == MATCHED ? b->matched :
	       b->dropped;
}

static void print_packets(FILE *out, const struct cnf_stats *st)
{
	static const struct {
		const char *name, *help;
	} what[NCOUNTS] = {
		[CHECKED] = { "packets_checked_total",
			      "Packets whose source was looked up, by family and path (hook: the netfilter hooks; xdp, tc: BPF programs through the kfuncs; rule: -m cuckoo rules, a packet once per rule, its source or destination)." },
		[MATCHED] = { "packets_matched_total",
			      "Packets looked up whose source a block set covered and no allow set exempted (rule: whose address the rule's set covered)." },
		[DROPPED] = { "packets_dropped_total",
			      "Packets dropped (matched, in drop mode)." },
	}, bwhat[NCOUNTS] = {
		[CHECKED] = { "bytes_checked_total",
			      "Bytes of the packets looked up, by family and path (hook, rule: IP datagrams; xdp, tc: frames)." },
		[MATCHED] = { "bytes_matched_total",
			      "Bytes of the packets matched." },
		[DROPPED] = { "bytes_dropped_total",
			      "Bytes of the packets dropped." },
	};
	const struct path_counts p[] = {
		{ "hook", { { st->v4.checked, st->v6.checked },
			    { st->v4.matched, st->v6.matched },
			    { st->v4.dropped, st->v6.dropped } },
		  { &st->bytes_v4, &st->bytes_v6 }, false },
		{ "xdp", { { st->xdp_v4.checked, st->xdp_v6.checked },
			   { st->xdp_v4.matched, st->xdp_v6.matched },
			   { st->xdp_v4.dropped, st->xdp_v6.dropped } },
		  { &st->xdp_bytes_v4, &st->xdp_bytes_v6 }, false },
		{ "tc", { { st->tc_v4.checked, st->tc_v6.checked },
			  { st->tc_v4.matched, st->tc_v6.matched },
			  { st->tc_v4.dropped, st->tc_v6.dropped } },
		  { &st->tc_bytes_v4, &st->tc_bytes_v6 }, false },
		/* A rule's target decides: no dropped sample. */
		{ "rule", { { st->rule_v4.checked, st->rule_v6.checked },
			    { st->rule_v4.matched, st->rule_v6.matched } },
		  { &st->rule_bytes_v4, &st->rule_bytes_v6 }, true },
	};
	size_t k, i, f;

	for (k = 0; k < NCOUNTS; k++) {
		family(out, what[k].name, "counter", what[k].help);
		for (i = 0; i < ARRAY_SIZE(p); i++)
			for (f = 0; f < 2 && !(k == DROPPED && p[i].no_drops); f++)
				fprintf(out,
					"cuckoo_nf_%s{family=\"%s\",path=\"%s\"} %llu\n",
					what[k].name, family_label[f],
					p[i].path, ULL(p[i].n[k][f]));
	}
	for (k = 0; k < NCOUNTS; k++) {
		family(out, bwhat[k].name, "counter", bwhat[k].help);
		for (i = 0; i < ARRAY_SIZE(p); i++)
			for (f = 0; f < 2 && !(k == DROPPED && p[i].no_drops); f++)
				fprintf(out,
					"cuckoo_nf_%s{family=\"%s\",path=\"%s\"} %llu\n",
					bwhat[k].name, family_label[f],
					p[i].path,
					ULL(bytes_of(p[i].b[f], k)));
	}
	family(out, "packets_marked_total", "counter",
	       "Packets the hooks marked in mark mode, by family.");
	fprintf(out, "cuckoo_nf_packets_marked_total{family=\"ipv4\"} %llu\n",
		ULL(st->marked_v4));
	fprintf(out, "cuckoo_nf_packets_marked_total{family=\"ipv6\"} %llu\n",
		ULL(st->marked_v6));
	family(out, "bytes_marked_total", "counter",
	       "Bytes of the packets the hooks marked, by family.");
	fprintf(out, "cuckoo_nf_bytes_marked_total{family=\"ipv4\"} %llu\n",
		ULL(st->bytes_v4.marked));
	fprintf(out, "cuckoo_nf_bytes_marked_total{family=\"ipv6\"} %llu\n",
		ULL(st->bytes_v6.marked));
}

/* The drop log's figures, from a module that logs (a rate set). */
static void print_log(FILE *out, const struct cnf_stats *st)
{
	if (!st->log_rate)
		return;
	family(out, "log_lines_total", "counter",
	       "Drops of logging sets given to the kernel's packet logger.");
	sample(out, "log_lines_total", st->logged);
	family(out, "log_suppressed_total", "counter",
	       "Drops of logging sets past the rate limit, not logged.");
	sample(out, "log_suppressed_total", st->log_suppressed);
	family(out, "log_rate_limit", "gauge",
	       "The drop log's lines a second at most.");
	sample(out, "log_rate_limit", st->log_rate);
	family(out, "log_burst_limit", "gauge",
	       "The drop log's lines at once at most.");
	sample(out, "log_burst_limit", st->log_burst);
}

/* The hooks' scope: a sample per device name or pattern it has. */
static void print_scope(FILE *out, const struct cnf_stats *st)
{
	uint32_t i;

	family(out, "hooks_scope_names", "gauge",
	       "Device names or patterns the hooks judge the packets of; 0: every device but loopback ones.");
	sample(out, "hooks_scope_names", ctl_iif_count(st));
	family(out, "hooks_scope", "gauge",
	       "1 for each device name or pattern (a trailing + a prefix) of the hooks' scope.");
	for (i = 0; i < ctl_iif_count(st); i++) {
		fputs("cuckoo_nf_hooks_scope{iif=\"", out);
		label_value(out, st->iif[i], CNF_IFNAMSIZ);
		fputs("\"} 1\n", out);
	}
}

static void print_state(FILE *out, const struct cnf_stats *st)
{
	uint32_t m;

	family(out, "active", "gauge",
	       "1 when cuckoo_nf is configured in the namespace, 0 when it never was since load or reset.");
	sample(out, "active", !(st->flags & CNF_STATS_F_INACTIVE));
	family(out, "hooks_on", "gauge",
	       "1 when the netfilter hooks look packets up, 0 when they are off.");
	sample(out, "hooks_on", !(st->flags & CNF_STATS_F_HOOKS_OFF));
	family(out, "mode", "gauge",
	       "1 for the mode matching packets get (drop, monitor), 0 for the others.");
	for (m = 0; ctl_mode_name(m); m++)
		fprintf(out, "cuckoo_nf_mode{mode=\"%s\"} %d\n",
			ctl_mode_name(m), st->mode == m);
	family(out, "memory_limit_bytes", "gauge",
	       "The namespace's memory limit.");
	sample(out, "memory_limit_bytes", st->mem_limit);
	family(out, "memory_bytes", "gauge",
	       "Memory the filter's tables use, by family.");
	fprintf(out, "cuckoo_nf_memory_bytes{family=\"ipv4\"} %llu\n",
		ULL(st->v4.bytes));
	fprintf(out, "cuckoo_nf_memory_bytes{family=\"ipv6\"} %llu\n",
		ULL(st->v6.bytes));
	family(out, "entries", "gauge",
	       "Prefixes stored, all sets together, by family.");
	fprintf(out, "cuckoo_nf_entries{family=\"ipv4\"} %llu\n",
		ULL(st->v4.entries));
	fprintf(out, "cuckoo_nf_entries{family=\"ipv6\"} %llu\n",
		ULL(st->v6.entries));
}

static void print_expiry(FILE *out, const struct cnf_expiry_stats *ex)
{
	family(out, "timed_entries", "gauge", "Entries that have a timeout.");
	sample(out, "timed_entries", ex->entries);
	family(out, "timeouts_memory_bytes", "gauge",
	       "Memory that keeping the timeouts uses.");
	sample(out, "timeouts_memory_bytes", ex->bytes);
	family(out, "expired_total", "counter",
	       "Entries removed because their timeout ran out.");
	sample(out, "expired_total", ex->expired);
	family(out, "expired_late_total", "counter",
	       "Of those, the entries removed more than a second after their timeout.");
	sample(out, "expired_late_total", ex->late);
	family(out, "expiry_max_late_seconds", "gauge",
	       "The longest any entry was removed after its timeout ran out.");
	fprintf(out, "cuckoo_nf_expiry_max_late_seconds %u.%03u\n",
		ex->max_late_ms / 1000, ex->max_late_ms % 1000);
}

/* cuckoo_nf_@name{set="...",kind="..."[,family="@fam"]} */
static void set_labels(FILE *out, const char *name,
		       const struct cnf_set_info *s, const char *fam)
{
	const char *kind = ctl_set_kind_name(s->kind);

	fprintf(out, "cuckoo_nf_%s{set=\"", name);
	label_value(out, s->name, sizeof(s->name));
	fprintf(out, "\",kind=\"%s\"", kind ? kind : "unknown");
	if (fam)
		fprintf(out, ",family=\"%s\"", fam);
	fputs("} ", out);
}

/* A per-set figure of struct cnf_set_info, one metric family each. */
enum set_figure { SET_MEMORY, SET_MATCHED, SET_MATCHED_BYTES, SET_TIMED,
		  SET_TIMEOUT };

static unsigned long long set_figure(const struct cnf_set_info *s,
				     enum set_figure f)
{
	switch (f) {
	case SET_MEMORY:
		return s->bytes;
	case SET_MATCHED:
		return s->matched;
	case SET_MATCHED_BYTES:
		return s->matched_bytes;
	case SET_TIMED:
		return s->timed;
	default:
		return s->timeout;
	}
}

static void print_sets(FILE *out, const struct cnf_set_info *s, size_t n)
{
	static const struct {
		const char *name, *type, *help;
	} fig[] = {
		[SET_MEMORY] = { "set_memory_bytes", "gauge",
				 "Memory a set's own tables use." },
		[SET_MATCHED] = { "set_packets_matched_total", "counter",
				  "Packets whose source the set covered (a block set), or that it let through when a block set covered them (an allow set)." },
		[SET_MATCHED_BYTES] = { "set_bytes_matched_total", "counter",
					"Bytes of the packets a set matched." },
		[SET_TIMED] = { "set_timed_entries", "gauge",
				"A set's entries that have a timeout." },
		[SET_TIMEOUT] = { "set_default_timeout_seconds", "gauge",
				  "The timeout of entries added to a set without one, 0 for none." },
	};
	size_t i, f;

	family(out, "set_entries", "gauge", "Prefixes a set holds, by family.");
	for (i = 0; i < n; i++) {
		set_labels(out, "set_entries", &s[i], "ipv4");
		fprintf(out, "%llu\n", ULL(s[i].v4_entries));
		set_labels(out, "set_entries", &s[i], "ipv6");
		fprintf(out, "%llu\n", ULL(s[i].v6_entries));
	}
	for (f = 0; f < ARRAY_SIZE(fig); f++) {
		family(out, fig[f].name, fig[f].type, fig[f].help);
		for (i = 0; i < n; i++) {
			set_labels(out, fig[f].name, &s[i], NULL);
			fprintf(out, "%llu\n", set_figure(&s[i], f));
		}
	}
}

void ctl_print_stats_prometheus(FILE *out, const struct cnf_stats *st,
				const struct cnf_expiry_stats *ex,
				const struct cnf_set_info *sets, size_t nsets)
{
	print_state(out, st);
	print_scope(out, st);
	print_packets(out, st);
	print_log(out, st);
	if (ex)
		print_expiry(out, ex);
	if (sets)
		print_sets(out, sets, nsets);
}
