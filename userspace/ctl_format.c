// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: output formatting and error texts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl_format.h"
#include "ctl_setname.h"

const char *ctl_format_addr(const struct cnf_addr *a, char *buf, size_t len)
{
	if ((a->family == AF_INET || a->family == AF_INET6) &&
	    inet_ntop(a->family, a->addr, buf, len))
		return buf;
	/* Only a kernel bug could send this; show it rather than hide it. */
	snprintf(buf, len, "?family%u", a->family);
	return buf;
}

const char *ctl_format_prefix(const struct cnf_addr *a, char *buf, size_t len)
{
	unsigned int width = a->family == AF_INET ? 32 : 128;
	size_t n;

	ctl_format_addr(a, buf, len);
	n = strlen(buf);
	if (a->prefixlen != width && n < len)
		snprintf(buf + n, len - n, "/%u", a->prefixlen);
	return buf;
}

const char *ctl_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = bytes;
	unsigned int u = 0;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

const char *ctl_mode_name(uint32_t mode)
{
	switch (mode) {
	case CNF_MODE_DROP:
		return "drop";
	case CNF_MODE_MONITOR:
		return "monitor";
	case CNF_MODE_MARK:
		return "mark";
	}
	return NULL;
}

void ctl_print_mode(FILE *out, const struct cnf_stats *st)
{
	const char *mode = ctl_mode_name(st->mode);

	if (!mode)
		fprintf(out, "unknown (%u)", st->mode);
	else if (st->mode == CNF_MODE_MARK)
		fprintf(out, "mark 0x%x/0x%x", st->mark, st->mark_mask);
	else
		fputs(mode, out);
}

uint32_t ctl_iif_count(const struct cnf_stats *st)
{
	return st->iif_count < CNF_IIF_MAX ? st->iif_count : CNF_IIF_MAX;
}

void ctl_print_hooks(FILE *out, const struct cnf_stats *st)
{
	uint32_t i;

	fputs(ctl_hooks_name(st), out);
	for (i = 0; i < ctl_iif_count(st); i++)
		fprintf(out, " --iif %.*s", CNF_IFNAMSIZ, st->iif[i]);
}

/* Whether the namespace's netfilter hooks are on: "on" or "off". */
const char *ctl_hooks_name(const struct cnf_stats *st)
{
	return st->flags & CNF_STATS_F_HOOKS_OFF ? "off" : "on";
}

int ctl_mode_parse(const char *name)
{
	if (!strcmp(name, "drop"))
		return CNF_MODE_DROP;
	if (!strcmp(name, "monitor"))
		return CNF_MODE_MONITOR;
	if (!strcmp(name, "mark"))
		return CNF_MODE_MARK;
	return -EINVAL;
}

bool ctl_lookup_reported(const struct cnf_family_stats *fs,
			 const struct cnf_lookup_stats *ls)
{
	return fs->entries == 0 || ls->prefixes || ls->keys || ls->lengths ||
	       ls->tables;
}

double ctl_load_factor(const struct cnf_family_stats *fs,
		       const struct cnf_lookup_stats *ls)
{
	uint64_t used = ctl_lookup_reported(fs, ls) ? ls->keys : fs->entries;

	if (!fs->capacity)
		return 0;
	return (double)used / (double)fs->capacity;
}

/* __u64 is unsigned long on some 64-bit ABIs, unsigned long long on others. */
#define ULL(x)	((unsigned long long)(x))

/* A BPF path's counters, "xdp" or "tc", as the hook's line shows its own. */
static void print_path_text(FILE *out, const char *path,
			    const struct cnf_path_stats *ps)
{
	char label[16];

	snprintf(label, sizeof(label), "%s packets:", path);
	fprintf(out, "  %-14schecked %llu matched %llu dropped %llu\n", label,
		ULL(ps->checked), ULL(ps->matched), ULL(ps->dropped));
}

/* The "rule" path's (-m cuckoo rules'): checked and matched, no drops. */
static void print_rule_text(FILE *out, const char *what, uint64_t checked,
			    uint64_t matched)
{
	char label[16];

	snprintf(label, sizeof(label), "rule %s:", what);
	fprintf(out, "  %-14schecked %llu matched %llu\n", label, ULL(checked),
		ULL(matched));
}

/*
 * A path's byte counters, "" (the hooks'), "xdp" or "tc", as its packets'
 * line; the marked bytes with @marked.
 */
static void print_bytes_text(FILE *out, const char *path,
			     const struct cnf_byte_stats *b, bool marked)
{
	char label[16];

	snprintf(label, sizeof(label), "%s%sbytes:", path, *path ? " " : "");
	fprintf(out, "  %-14schecked %llu matched %llu dropped %llu", label,
		ULL(b->checked), ULL(b->matched), ULL(b->dropped));
	if (marked)
		fprintf(out, " marked %llu", ULL(b->marked));
	fputc('\n', out);
}

/*
 * @marked: the packets the hooks marked, NULL when not to be shown;
 * @bytes: the hooks', XDP's, tc's and the rules' byte counters of the
 * family; @rule: the rules' packets.
 */
static void print_family_text(FILE *out, const char *name,
			      const struct cnf_family_stats *fs,
			      const struct cnf_lookup_stats *ls,
			      const __u64 *marked,
			      const struct cnf_path_stats *xdp,
			      const struct cnf_path_stats *tc,
			      const struct cnf_path_stats *rule,
			      const struct cnf_byte_stats *bytes[4])
{
	bool lookup = ctl_lookup_reported(fs, ls);
	char human[32];

	fprintf(out, "%s:\n", name);
	fprintf(out, "  prefixes:     %llu\n",
		ULL(lookup ? ls->prefixes : fs->entries));
	if (lookup) {
		fprintf(out, "  lengths:      %u distinct\n", ls->lengths);
		fprintf(out, "  keys:         %llu in the lookup tables\n",
			ULL(ls->keys));
		fprintf(out, "  tables:       %u per packet at most\n", ls->tables);
	} else {
		fprintf(out, "  lookup:       not reported by the loaded module\n");
	}
	fprintf(out, "  capacity:     %llu\n", ULL(fs->capacity));
	fprintf(out, "  load factor:  %.2f%%\n", 100 * ctl_load_factor(fs, ls));
	fprintf(out, "  memory:       %llu bytes (%s)\n", ULL(fs->bytes),
		ctl_format_bytes(fs->bytes, human, sizeof(human)));
	if (fs->entries)
		fprintf(out, "  bytes/prefix: %.2f\n",
			(double)fs->bytes / (double)fs->entries);
	else
		fprintf(out, "  bytes/prefix: -\n");
	fprintf(out, "  grows:        %llu\n", ULL(fs->grows));
	fprintf(out, "  stashed:      %llu\n", ULL(fs->stashed));
	fprintf(out, "  packets:      checked %llu matched %llu dropped %llu\n",
		ULL(fs->checked), ULL(fs->matched), ULL(fs->dropped));
	if (marked)
		fprintf(out, "  marked:       %llu\n", ULL(*marked));
	print_path_text(out, "xdp", xdp);
	print_path_text(out, "tc", tc);
	print_rule_text(out, "packets", rule->checked, rule->matched);
	print_bytes_text(out, "", bytes[0], marked);
	print_bytes_text(out, "xdp", bytes[1], false);
	print_bytes_text(out, "tc", bytes[2], false);
	print_rule_text(out, "bytes", bytes[3]->checked, bytes[3]->matched);
}

void ctl_print_stats_text(FILE *out, const struct cnf_stats *st)
{
	uint64_t used = st->v4.bytes + st->v6.bytes;
	/* Marked packets: in mark mode, or when some were marked before. */
	bool marked = st->mode == CNF_MODE_MARK || st->marked_v4 ||
		      st->marked_v6;
	const struct cnf_byte_stats *b4[4] = {
		&st->bytes_v4, &st->xdp_bytes_v4, &st->tc_bytes_v4,
		&st->rule_bytes_v4
	}, *b6[4] = { &st->bytes_v6, &st->xdp_bytes_v6, &st->tc_bytes_v6,
		      &st->rule_bytes_v6 };
	char h1[32], h2[32];

	fprintf(out, "state:        %s\n",
		st->flags & CNF_STATS_F_INACTIVE ?
		"inactive (not configured since load or reset: no hooks)" :
		"active");
	fputs("mode:         ", out);
	ctl_print_mode(out, st);
	fputs("\nhooks:        ", out);
	ctl_print_hooks(out, st);
	fputc('\n', out);
	fprintf(out, "memory limit: %llu bytes (%s)\n", ULL(st->mem_limit),
		ctl_format_bytes(st->mem_limit, h1, sizeof(h1)));
	fprintf(out, "memory used:  %llu bytes (%s)\n", ULL(used),
		ctl_format_bytes(used, h2, sizeof(h2)));
	print_family_text(out, "ipv4", &st->v4, &st->v4_lookup,
			  marked ? &st->marked_v4 : NULL, &st->xdp_v4,
			  &st->tc_v4, &st->rule_v4, b4);
	print_family_text(out, "ipv6", &st->v6, &st->v6_lookup,
			  marked ? &st->marked_v6 : NULL, &st->xdp_v6,
			  &st->tc_v6, &st->rule_v6, b6);
}

void ctl_print_log_text(FILE *out, const struct cnf_stats *st)
{
	if (!st->log_rate)
		return;
	fprintf(out, "log:          %llu %s, %llu suppressed (limit %lu/s, burst %lu)\n",
		ULL(st->logged), st->logged == 1 ? "line" : "lines",
		ULL(st->log_suppressed), (unsigned long)st->log_rate,
		(unsigned long)st->log_burst);
}

/* A BPF path's counters: the hook's names, @path + "_" before each. */
static void print_path_json(FILE *out, const char *path,
			    const struct cnf_path_stats *ps)
{
	fprintf(out, ",\"%s_checked\":%llu,\"%s_matched\":%llu,"
		"\"%s_dropped\":%llu", path, ULL(ps->checked), path,
		ULL(ps->matched), path, ULL(ps->dropped));
}

/*
 * A flat object of numbers (selftests/lib.sh reads it without jq).  The
 * lookup figures of a kernel that does not report them are left out; the
 * XDP and tc paths' are "xdp_" and "tc_" + the hook's names, the rules'
 * "rule_" + checked and matched (0 from a kernel before them).
 */
static void print_family_json(FILE *out, const char *name,
			      const struct cnf_family_stats *fs,
			      const struct cnf_lookup_stats *ls, uint64_t marked,
			      const struct cnf_path_stats *xdp,
			      const struct cnf_path_stats *tc,
			      const struct cnf_path_stats *rule,
			      const struct cnf_byte_stats *bytes[4])
{
	static const char *const paths[3] = { "", "xdp_", "tc_" };
	unsigned int i;

	bool lookup = ctl_lookup_reported(fs, ls);

	fprintf(out, "\"%s\":{\"entries\":%llu,\"capacity\":%llu,"
		"\"load_factor\":%.6f,\"bytes\":%llu,\"grows\":%llu,"
		"\"stashed\":%llu,\"checked\":%llu,\"matched\":%llu,"
		"\"dropped\":%llu,\"prefixes\":%llu",
		name, ULL(fs->entries), ULL(fs->capacity),
		ctl_load_factor(fs, ls), ULL(fs->bytes), ULL(fs->grows),
		ULL(fs->stashed), ULL(fs->checked), ULL(fs->matched),
		ULL(fs->dropped), ULL(lookup ? ls->prefixes : fs->entries));
	if (lookup)
		fprintf(out, ",\"lengths\":%u,\"keys\":%llu,\"tables\":%u",
			ls->lengths, ULL(ls->keys), ls->tables);
	print_path_json(out, "xdp", xdp);
	print_path_json(out, "tc", tc);
	fprintf(out, ",\"rule_checked\":%llu,\"rule_matched\":%llu",
		ULL(rule->checked), ULL(rule->matched));
	fprintf(out, ",\"marked\":%llu", ULL(marked));
	/* Each path's bytes, 0 from a kernel before byte counters. */
	for (i = 0; i < 3; i++)
		fprintf(out, ",\"%schecked_bytes\":%llu,\"%smatched_bytes\":%llu,"
			"\"%sdropped_bytes\":%llu", paths[i],
			ULL(bytes[i]->checked), paths[i], ULL(bytes[i]->matched),
			paths[i], ULL(bytes[i]->dropped));
	fprintf(out, ",\"rule_checked_bytes\":%llu,\"rule_matched_bytes\":%llu",
		ULL(bytes[3]->checked), ULL(bytes[3]->matched));
	fprintf(out, ",\"marked_bytes\":%llu}", ULL(bytes[0]->marked));
}

/* A device name as a JSON string: '"', '\\' and control bytes escaped. */
static void print_json_name(FILE *out, const char *name, size_t len)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < len && name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* The mark and the hooks' scope: "mark", "mark_mask", "iif", then ','. */
static void print_scope_json(FILE *out, const struct cnf_stats *st)
{
	uint32_t i;

	fprintf(out, "\"mark\":%u,\"mark_mask\":%u,\"iif\":[", st->mark,
		st->mark_mask);
	for (i = 0; i < ctl_iif_count(st); i++) {
		if (i)
			fputc(',', out);
		print_json_name(out, st->iif[i], CNF_IFNAMSIZ);
	}
	fputs("],", out);
}

double ctl_bytes_per_timed(const struct cnf_expiry_stats *ex)
{
	return ex->entries ? (double)ex->bytes / (double)ex->entries : 0;
}

void ctl_print_expiry_text(FILE *out, const struct cnf_expiry_stats *ex)
{
	char human[32];

	if (!ex) {
		fprintf(out, "expiry:       timeouts not supported by the loaded module\n");
		return;
	}
	fprintf(out, "expiry:\n");
	fprintf(out, "  timed:        %llu %s\n", ULL(ex->entries),
		ex->entries == 1 ? "entry" : "entries");
	fprintf(out, "  memory:       %llu bytes (%s)\n", ULL(ex->bytes),
		ctl_format_bytes(ex->bytes, human, sizeof(human)));
	if (ex->entries)
		fprintf(out, "  bytes/entry:  %.2f\n", ctl_bytes_per_timed(ex));
	else
		fprintf(out, "  bytes/entry:  -\n");
	fprintf(out, "  expired:      %llu\n", ULL(ex->expired));
	fprintf(out, "  late:         %llu (removed over a second late), at most %u ms\n",
		ULL(ex->late), ex->max_late_ms);
}

void ctl_print_stats_json(FILE *out, const struct cnf_stats *st,
			  const struct cnf_expiry_stats *ex,
			  const struct cnf_set_info *sets, size_t nsets)
{
	const char *mode = ctl_mode_name(st->mode);
	const struct cnf_byte_stats *b4[4] = {
		&st->bytes_v4, &st->xdp_bytes_v4, &st->tc_bytes_v4,
		&st->rule_bytes_v4
	}, *b6[4] = { &st->bytes_v6, &st->xdp_bytes_v6, &st->tc_bytes_v6,
		      &st->rule_bytes_v6 };

	fprintf(out, "{\"mode\":\"%s\",\"hooks\":\"%s\",\"mem_limit\":%llu,"
		"\"active\":%s,", mode ? mode : "unknown", ctl_hooks_name(st),
		ULL(st->mem_limit),
		st->flags & CNF_STATS_F_INACTIVE ? "false" : "true");
	print_scope_json(out, st);
	print_family_json(out, "ipv4", &st->v4, &st->v4_lookup, st->marked_v4,
			  &st->xdp_v4, &st->tc_v4, &st->rule_v4, b4);
	fputc(',', out);
	print_family_json(out, "ipv6", &st->v6, &st->v6_lookup, st->marked_v6,
			  &st->xdp_v6, &st->tc_v6, &st->rule_v6, b6);
	/* A module without logging reports no rate: no "log". */
	if (st->log_rate)
		fprintf(out, ",\"log\":{\"lines\":%llu,\"suppressed\":%llu,"
			"\"rate\":%lu,\"burst\":%lu}", ULL(st->logged),
			ULL(st->log_suppressed), (unsigned long)st->log_rate,
			(unsigned long)st->log_burst);
	if (ex)
		fprintf(out, ",\"expiry\":{\"entries\":%llu,\"bytes\":%llu,"
			"\"bytes_per_entry\":%.2f,\"expired\":%llu,"
			"\"late\":%llu,\"max_late_ms\":%u}",
			ULL(ex->entries), ULL(ex->bytes),
			ctl_bytes_per_timed(ex), ULL(ex->expired),
			ULL(ex->late), ex->max_late_ms);
	if (sets) {
		fputs(",\"sets\":", out);
		ctl_print_sets_json(out, sets, nsets);
	}
	fputs("}\n", out);
}

static size_t name_width(const struct cnf_set_info *s, size_t n)
{
	size_t i, w = strlen("name");

	for (i = 0; i < n; i++)
		if (strnlen(s[i].name, sizeof(s[i].name)) > w)
			w = strnlen(s[i].name, sizeof(s[i].name));
	return w;
}

static const char *kind_text(uint32_t kind)
{
	const char *k = ctl_set_kind_name(kind);

	return k ? k : "unknown";
}

void ctl_print_sets_text(FILE *out, const struct cnf_set_info *s, size_t n)
{
	int w = (int)name_width(s, n);
	char timeout[16], log[CTL_LOGSTRLEN];
	struct ctl_log l;
	size_t i;

	fprintf(out, "%-*s  kind    %12s %12s %12s %10s %12s %6s %-11s %s\n", w,
		"name", "entries", "bytes", "matched", "timeout", "timed",
		"rules", "log", "flags");
	for (i = 0; i < n; i++) {
		l = ctl_set_log_of(&s[i]);
		if (s[i].timeout)
			snprintf(timeout, sizeof(timeout), "%lu",
				 (unsigned long)s[i].timeout);
		else
			strcpy(timeout, "-");
		fprintf(out, "%-*.*s  %-7s %12llu %12llu %12llu %10s %12llu %6lu %-11s %s\n",
			w, (int)sizeof(s[i].name), s[i].name,
			kind_text(s[i].kind),
			ULL(s[i].v4_entries + s[i].v6_entries),
			ULL(s[i].bytes), ULL(s[i].matched), timeout,
			ULL(s[i].timed), (unsigned long)s[i].rules,
			ctl_format_log(&l, log, sizeof(log)),
			s[i].flags & CNF_SET_F_RULES_ONLY ?
			CTL_RULES_ONLY_WORD : "-");
	}
}

void ctl_print_sets_json(FILE *out, const struct cnf_set_info *s, size_t n)
{
	struct ctl_log l;
	size_t i;

	fputc('[', out);
	for (i = 0; i < n; i++) {
		l = ctl_set_log_of(&s[i]);
		fprintf(out, "%s{\"name\":\"%.*s\",\"kind\":\"%s\",\"entries\":%llu,"
			"\"v4_entries\":%llu,\"v6_entries\":%llu,\"bytes\":%llu,"
			"\"matched\":%llu,\"timeout\":%lu,\"timed\":%llu,"
			"\"rules_only\":%s,\"rules\":%lu,\"log\":\"%s\","
			"\"log_group\":%lu,\"matched_bytes\":%llu}",
			i ? "," : "",
			(int)sizeof(s[i].name), s[i].name, kind_text(s[i].kind),
			ULL(s[i].v4_entries + s[i].v6_entries),
			ULL(s[i].v4_entries), ULL(s[i].v6_entries),
			ULL(s[i].bytes), ULL(s[i].matched),
			(unsigned long)s[i].timeout, ULL(s[i].timed),
			s[i].flags & CNF_SET_F_RULES_ONLY ? "true" : "false",
			(unsigned long)s[i].rules,
			l.flags & CNF_SET_F_NFLOG ? "nflog" :
			l.flags ? "on" : "off", (unsigned long)l.group,
			ULL(s[i].matched_bytes));
	}
	fputc(']', out);
}

const char *ctl_strerror(int err)
{
	switch (err) {
	case CTL_ENOSETS:
		return "the loaded module has no named sets";
	case CTL_ENOREPLACE:
		return "the loaded module has no atomic replace (a version without sets)";
	case CTL_ENOTIMEOUT:
		return "the loaded module does not support timeouts (a version without them)";
	case CTL_ENOLOG:
		return "the loaded module does not log drops (a version without logging)";
	case CTL_ENOLOGGER:
		return "the kernel has no packet logger of that type (nf_log_syslog for 'on', nfnetlink_log for 'nflog')";
	case ENXIO:
		return "no such set";
	case EEXIST:
		return "already present";
	case ENOENT:
		return "not present";
	case ENOSPC:
		return "memory limit reached";
	case EPERM:
	case EACCES:
		return "permission denied (need CAP_NET_ADMIN)";
	case ENOMEM:
		return "out of memory";
	case ENOTTY:
		return "not supported by the loaded module (version mismatch?)";
	}
	return strerror(err);
}

const char *ctl_strerror_addr(int err, const struct cnf_addr *a)
{
	unsigned int width = a->family == AF_INET ? 32 : 128;

	if (err == EINVAL && a->prefixlen < width)
		return "prefix refused by the loaded module (a version without prefixes?)";
	return ctl_strerror(err);
}

static const char *set_name(const char *set)
{
	return set ? set : CNF_SET_DEFAULT;
}

const char *ctl_strerror_entry(int err, const struct cnf_addr *a,
			       const char *set, char *buf, size_t len)
{
	if (err != ENXIO)
		return a ? ctl_strerror_addr(err, a) : ctl_strerror(err);
	snprintf(buf, len, "no set named %s", set_name(set));
	return buf;
}

const char *ctl_strerror_set(int err, const char *set, char *buf, size_t len)
{
	switch (err) {
	case ENXIO:
	case ENOENT:
		snprintf(buf, len, "no set named %s", set_name(set));
		return buf;
	case EEXIST:
		snprintf(buf, len, "a set named %s exists already", set_name(set));
		return buf;
	case EBUSY:
		return "the default set cannot be destroyed";
	case ENOSPC:
		return "no room for another set (at most 256 a namespace, within its memory limit)";
	case EINVAL:
		return CTL_SET_NAME_RULE;
	}
	return ctl_strerror(err);
}

int ctl_exit_code(int err)
{
	if (err == EPERM || err == EACCES)
		return CTL_EXIT_PERM;
	return CTL_EXIT_FAIL;
}
