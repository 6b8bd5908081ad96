// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: replace and restore - a set's contents exchanged for those
 * of a file.
 *
 * The whole input is read and parsed first: a bad line changes nothing.
 * A module with sets then replaces each set in one call
 * (CNF_BATCH_F_REPLACE): the set serves its old contents until the new
 * ones take their place, and keeps them when anything fails.  A module
 * without sets has the default set only and no such call: restore flushes
 * it, then loads the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_ipset.h"
#include "ctl_local.h"

#define KEPT	"the old contents still serve"

/* One set of the input: its prefixes in->addrs[first..end). */
struct part {
	const char *set;	/* NULL: the default set */
	uint32_t kind;
	size_t first, end;
	bool create;		/* a save's set: made with its kind if missing */
	uint32_t timeout;	/* a save's set: its default timeout */
	const struct ctl_log *log; /* a save's set line: its logging */
};

static const char *set_name(const char *set)
{
	return set ? set : CNF_SET_DEFAULT;
}

static void print_replaced(const char *set, uint64_t now, uint64_t before,
			   uint64_t skipped)
{
	if (ctl_set_is_default(set))
		printf("replaced the set: ");
	else
		printf("replaced set %s: ", set);
	printf("%llu %s (was %llu)", (unsigned long long)now,
	       ctl_plural(now, "entry", "entries"),
	       (unsigned long long)before);
	if (skipped)
		printf(", %llu duplicate %s skipped",
		       (unsigned long long)skipped,
		       ctl_plural(skipped, "line", "lines"));
	putchar('\n');
}

/* A module without sets: flush the default set, then load. */
static int replace_by_flush(const char *cmd, int fd, const struct ctl_input *in,
			    const struct part *p, bool quiet)
{
	struct ctl_batch_result res;
	struct cnf_stats st;
	int rc;

	memset(&st, 0, sizeof(st));
	if (ioctl(fd, CNF_IOC_STATS, &st) < 0)
		return ctl_fail(cmd, errno);
	if (ioctl(fd, CNF_IOC_FLUSH) < 0) {
		ctl_err("%s: flush: %s", cmd, ctl_strerror(errno));
		return ctl_exit_code(errno);
	}
	rc = ctl_add_batches(cmd, fd, NULL, in, p->first, p->end, &res);
	if (rc) {
		ctl_err("%s: the set was flushed and is now incomplete", cmd);
		return rc;
	}
	if (!quiet)
		print_replaced(NULL, res.applied, st.v4.entries + st.v6.entries,
			       res.skipped);
	return CTL_EXIT_OK;
}

/*
 * The set's contents become @p's prefixes, in one call; those without a
 * timeout get @deflt, the set's default, when others have one.
 */
static int replace_in_one_step(const char *cmd, int fd,
			       const struct ctl_input *in, const struct part *p,
			       uint64_t before, uint32_t deflt, bool quiet)
{
	char text[CTL_PREFIXSTRLEN], why[CTL_SET_ERRLEN];
	size_t n = p->end - p->first, at;
	uint32_t *timeouts;
	struct cnf_batch b;
	int err;

	if (n > CNF_BATCH_MAX) {
		ctl_err("%s %s: %zu prefixes, more than one step takes (%u); " KEPT,
			cmd, set_name(p->set), n, (unsigned int)CNF_BATCH_MAX);
		return CTL_EXIT_BADINPUT;
	}
	if (ctl_batch_timeouts(in, p->first, p->end, deflt, &timeouts))
		return ctl_fail(cmd, ENOMEM);
	memset(&b, 0, sizeof(b));
	b.addrs = (uintptr_t)&in->addrs[p->first];
	b.timeouts = (uintptr_t)timeouts;
	b.count = n;
	b.flags = CNF_BATCH_F_EXIST_OK | CNF_BATCH_F_REPLACE;
	err = ctl_batch_call(fd, false, p->set, &b);
	free(timeouts);
	if (!err) {
		if (!quiet)
			print_replaced(p->set, b.applied, before, b.skipped);
		return CTL_EXIT_OK;
	}
	if (b.error && b.done < n) {
		at = p->first + b.done;
		ctl_err("%s %s: line %lu (%s): %s; " KEPT, cmd, set_name(p->set),
			in->lineno[at],
			ctl_format_prefix(&in->addrs[at], text, sizeof(text)),
			ctl_strerror_entry(-b.error, &in->addrs[at], p->set,
					   why, sizeof(why)));
		return ctl_exit_code(-b.error);
	}
	ctl_err("%s %s: %s; " KEPT, cmd, set_name(p->set),
		ctl_strerror_entry(err, NULL, p->set, why, sizeof(why)));
	return ctl_exit_code(err);
}

/*
 * The logging of @p's set line, for set @s (NULL: made just now, without
 * logging) when it has another.  A set line with none means a set that
 * does not log.  Exit code.
 */
static int restore_log(const char *cmd, int fd, const struct part *p,
		       const struct cnf_set_info *s)
{
	struct ctl_log have = { 0, 0 };
	char why[CTL_SET_ERRLEN];
	int err;

	if (s)
		have = ctl_set_log_of(s);
	if (!p->log || (have.flags == p->log->flags &&
			have.group == p->log->group))
		return CTL_EXIT_OK;
	err = ctl_set_log_call(fd, CNF_IOC_SET_CHANGE, set_name(p->set), 0, 0,
			       p->log);
	if (!err)
		return CTL_EXIT_OK;
	ctl_err("%s %s: log: %s", cmd, set_name(p->set),
		ctl_strerror_set(err, p->set, why, sizeof(why)));
	return ctl_exit_code(err);
}

/*
 * Replace @p's set, creating it with @p's kind when missing; @sets is the
 * module's list (NULL: a module without sets).
 */
static int replace_part(const char *cmd, int fd, const struct ctl_input *in,
			const struct part *p, const struct cnf_set_info *sets,
			size_t nsets, bool quiet)
{
	char why[CTL_SET_ERRLEN];
	long i;
	int err, rc;

	if (!sets) {
		/* restore of the default set only; replace never flushes. */
		err = !ctl_set_is_default(p->set) ? CTL_ENOSETS :
		      !p->create ? CTL_ENOREPLACE : 0;
		if (!err) {
			ctl_local_warn_all(cmd, fd, p->set, quiet,
					   &in->addrs[p->first],
					   p->end - p->first);
			return replace_by_flush(cmd, fd, in, p, quiet);
		}
		ctl_err("%s %s: %s; " KEPT, cmd, set_name(p->set),
			ctl_strerror(err));
		return CTL_EXIT_FAIL;
	}
	i = ctl_find_set(sets, nsets, p->set);
	if (i >= 0 && p->create && ctl_set_kind_of(&sets[i]) != p->kind) {
		ctl_err("%s %s: kind %s%s in the input, %s%s in the module; " KEPT,
			cmd, set_name(p->set), ctl_set_kind_name(p->kind),
			p->kind & CTL_KIND_RULES_ONLY ? " " CTL_RULES_ONLY_WORD : "",
			ctl_set_kind_name(sets[i].kind),
			sets[i].flags & CNF_SET_F_RULES_ONLY ?
			" " CTL_RULES_ONLY_WORD : "");
		return CTL_EXIT_FAIL;
	}
	/* A set keeps the default timeout it was created with. */
	if (i >= 0 && p->create && sets[i].timeout != p->timeout) {
		ctl_err("%s %s: default timeout %lu in the input, %lu in the module (destroy the set to restore it); " KEPT,
			cmd, set_name(p->set), (unsigned long)p->timeout,
			(unsigned long)sets[i].timeout);
		return CTL_EXIT_FAIL;
	}
	if (i < 0 && !p->create) {
		ctl_err("%s %s: %s", cmd, set_name(p->set),
			ctl_strerror_set(ENXIO, p->set, why, sizeof(why)));
		return CTL_EXIT_FAIL;
	}
	if (i < 0) {
		err = ctl_set_call(fd, CNF_IOC_SET_CREATE, p->set, p->kind,
				   p->timeout);
		if (err) {
			ctl_err("%s %s: %s", cmd, p->set,
				ctl_strerror_set(err, p->set, why, sizeof(why)));
			return ctl_exit_code(err);
		}
	}
	ctl_local_warn_all(cmd, fd, p->set, quiet, &in->addrs[p->first],
			   p->end - p->first);
	rc = replace_in_one_step(cmd, fd, in, p, i < 0 ? 0 :
				 sets[i].v4_entries + sets[i].v6_entries,
				 i < 0 ? p->timeout : sets[i].timeout, quiet);
	return rc ?: restore_log(cmd, fd, p, i < 0 ? NULL : &sets[i]);
}

/* Read and parse all of @path; a bad line is reported and ends it. */
static int read_all(const char *cmd, const char *path, struct ctl_input *in)
{
	int rc = ctl_read_input(cmd, path, in);

	if (rc || !in->nbad)
		return rc;
	ctl_report_bad_lines(cmd, path, in);
	ctl_err("%s: %zu bad %s, nothing changed", cmd, in->nbad,
		ctl_plural(in->nbad, "line", "lines"));
	return CTL_EXIT_BADINPUT;
}

/* Whether @in or @parts hold a timeout, which the module must take. */
static bool has_timeouts(const struct ctl_input *in, const struct part *parts,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (parts[i].timeout)
			return true;
	return in->ntimed != 0;
}

/* The parts @parts are replaced in order, on one open device. */
static int replace_parts(const char *cmd, const struct ctl_input *in,
			 const struct part *parts, size_t n, bool quiet)
{
	struct cnf_set_info *sets = NULL;
	size_t nsets = 0, i;
	int fd, err, rc = CTL_EXIT_OK;

	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	/* Before any set changes: all of the input goes in, or none. */
	if (has_timeouts(in, parts, n) && !ctl_has_timeouts(fd)) {
		ctl_err("%s: %s; nothing changed", cmd,
			ctl_strerror(CTL_ENOTIMEOUT));
		close(fd);
		return CTL_EXIT_FAIL;
	}
	err = ctl_set_list(fd, &sets, &nsets);
	if (err && err != CTL_ENOSETS) {
		rc = ctl_fail(cmd, err);
		goto out;
	}
	for (i = 0; i < n && !rc; i++)
		rc = replace_part(cmd, fd, in, &parts[i], sets, nsets, quiet);
out:
	free(sets);
	close(fd);
	return rc;
}

int ctl_replace(const struct ctl_opts *o, const char *path)
{
	struct part p = { .set = o->set };
	struct ctl_input in;
	int rc;

	ctl_input_init(&in, o->flags | CTL_PARSE_F_RANGE);
	rc = read_all("replace", path, &in);
	if (rc) {
		ctl_err("replace %s: nothing sent; " KEPT, set_name(o->set));
		goto out;
	}
	if (!in.n && !o->allow_empty) {
		ctl_err("replace %s: no prefix in the input, refused (--allow-empty empties the set); " KEPT,
			set_name(o->set));
		rc = CTL_EXIT_BADINPUT;
		goto out;
	}
	p.end = in.n;
	rc = replace_parts("replace", &in, &p, 1, o->quiet);
out:
	ctl_input_free(&in);
	return rc;
}

/*
 * The sets of a save: the default set's prefixes before any set line (all
 * of them with none), then a part per set line; with --set, the one set
 * the file holds, into that set.
 */
static int split_parts(const struct ctl_opts *o, const struct ctl_input *in,
		       struct part **parts, size_t *n)
{
	size_t i, k = 0;

	*parts = calloc(in->nsect + 1, sizeof(**parts));
	if (!*parts)
		return ctl_fail("restore", ENOMEM);
	if (!in->nsect || in->sect[0].first)
		(*parts)[k++] = (struct part){ NULL, CNF_SET_BLOCK, 0,
			in->nsect ? in->sect[0].first : in->n, true, 0, NULL };
	for (i = 0; i < in->nsect; i++)
		(*parts)[k++] = (struct part){
			in->sect[i].name, in->sect[i].kind, in->sect[i].first,
			i + 1 < in->nsect ? in->sect[i + 1].first : in->n, true,
			in->sect[i].timeout, &in->sect[i].log };
	*n = k;
	if (!o->set)
		return CTL_EXIT_OK;
	if (k != 1) {
		ctl_err("restore %s: the input holds %zu sets; restore it without --set",
			o->set, k);
		return CTL_EXIT_BADINPUT;
	}
	(*parts)[0].set = o->set;
	return CTL_EXIT_OK;
}

/* "cuckooctl: restore FILE:LINE: text" for ctl_ipset_read(). */
struct ipset_where {
	const char *path;
	bool quiet;
};

static void say_ipset(void *ctx, unsigned long lineno, bool note,
		      const char *text)
{
	const struct ipset_where *w = ctx;

	if (!note)
		ctl_err("restore %s:%lu: %s", w->path, lineno, text);
	else if (!w->quiet)
		ctl_err("restore %s:%lu: note: %s", w->path, lineno, text);
}

/* An ipset save, read whole; a line it cannot map changes nothing. */
static int read_ipset(const struct ctl_opts *o, const char *path,
		      struct ctl_input *in)
{
	bool use_stdin = !strcmp(path, "-");
	struct ipset_where w = { use_stdin ? "stdin" : path, o->quiet };
	FILE *f = use_stdin ? stdin : fopen(path, "re");
	size_t bad;
	int err;

	if (!f) {
		ctl_err("restore %s: %s", path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	err = ctl_ipset_read(in, f, say_ipset, &w, &bad);
	if (!use_stdin)
		fclose(f);
	if (err)
		return ctl_fail("restore", -err);
	/* No set at all would otherwise replace the default set's contents. */
	if (!bad && !in->nsect) {
		ctl_err("restore %s: no create line of a set, nothing changed",
			w.path);
		return CTL_EXIT_BADINPUT;
	}
	if (!bad)
		return CTL_EXIT_OK;
	ctl_err("restore: %zu %s that cuckoo_nf cannot take, nothing changed",
		bad, ctl_plural(bad, "line", "lines"));
	return CTL_EXIT_BADINPUT;
}

int ctl_restore(const struct ctl_opts *o, const char *path)
{
	struct part *parts = NULL;
	struct ctl_input in;
	size_t n = 0;
	int rc;

	ctl_input_init(&in, o->flags | CTL_PARSE_F_SETS);
	if (o->from_ipset)
		rc = read_ipset(o, path, &in);
	else
		rc = read_all("restore", path, &in);
	if (!rc)
		rc = split_parts(o, &in, &parts, &n);
	if (!rc)
		rc = replace_parts("restore", &in, parts, n, o->quiet);
	free(parts);
	ctl_input_free(&in);
	return rc;
}

int ctl_replace_set(const char *cmd, int fd, const char *set, uint32_t kind,
		    uint32_t timeout, const struct ctl_log *log,
		    const struct ctl_input *in, size_t first, size_t end)
{
	struct part p = { set, kind, first, end, true, timeout, log };
	struct cnf_set_info *sets = NULL;
	size_t nsets = 0;
	int err, rc;

	if ((timeout || in->ntimed) && !ctl_has_timeouts(fd)) {
		ctl_err("%s %s: %s; " KEPT, cmd, set_name(set),
			ctl_strerror(CTL_ENOTIMEOUT));
		return CTL_EXIT_FAIL;
	}
	err = ctl_set_list(fd, &sets, &nsets);
	if (err && err != CTL_ENOSETS)
		return ctl_fail(cmd, err);
	rc = replace_part(cmd, fd, in, &p, sets, nsets, false);
	free(sets);
	return rc;
}
