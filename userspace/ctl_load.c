// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: load and del --file - prefix files sent to the device in
 * large batches.
 *
 * The whole input is parsed before the device is touched: --strict must
 * change nothing when a line is bad, and the progress bar needs
 * the total.  At 33 bytes per prefix (cnf_addr, timeout and line number)
 * that is 33 MB for a million lines.
 *
 * A batch carries timeouts only when some line of it gave one; the
 * others then get the set's default timeout, as they would without the
 * array (and as ipset's restore does).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_local.h"

/* Addresses per ioctl: big enough to make the call overhead vanish. */
#define CTL_BATCH	65536

/* One direction of a batch: what it is called and how it counts. */
struct batch_op {
	const char *cmd;		/* "load", "del", "restore" */
	bool del;			/* CNF_IOC_DEL_BATCH, else _ADD_BATCH */
	const char *applied_word;	/* "added", "deleted" */
	const char *skipped_word;	/* "already present", "not present" */
};

static const struct batch_op op_add = {
	"load", false, "added", "already present",
};
static const struct batch_op op_del = {
	"del", true, "deleted", "not present",
};

int ctl_read_input(const char *cmd, const char *path, struct ctl_input *in)
{
	bool use_stdin = !path || !strcmp(path, "-");
	FILE *f = use_stdin ? stdin : fopen(path, "re");
	int err;

	if (!f) {
		ctl_err("%s %s: %s", cmd, path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	err = ctl_input_read(in, f);
	if (!use_stdin)
		fclose(f);
	if (err) {
		ctl_err("%s %s: %s", cmd, use_stdin ? "stdin" : path,
			strerror(-err));
		return CTL_EXIT_FAIL;
	}
	return CTL_EXIT_OK;
}

void ctl_report_bad_lines(const char *cmd, const char *path,
			     const struct ctl_input *in)
{
	const char *name = !path || !strcmp(path, "-") ? "stdin" : path;
	char reason[CTL_REASONLEN];
	const struct ctl_bad_line *b;
	size_t i;

	for (i = 0; i < in->nbad; i++) {
		b = &in->bad[i];
		ctl_err("%s: %s:%lu: %s: %s", cmd, name, b->lineno, b->text,
			ctl_parse_reason(b->err, &b->hint, reason,
					 sizeof(reason)));
	}
}

const char *ctl_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A progress bar only where someone watches, and only for long inputs. */
static bool want_progress(size_t total)
{
	return total > CTL_BATCH && isatty(STDERR_FILENO);
}

static void show_progress(const char *cmd, size_t done, size_t total)
{
	const int width = 40;
	int fill = (int)((double)done / (double)total * width);

	fprintf(stderr, "\r%s [%-*.*s] %3d%% %zu/%zu", cmd, width, fill,
		"########################################",
		(int)((double)done * 100 / (double)total), done, total);
	fflush(stderr);
}

static void clear_progress(void)
{
	fputs("\r\033[K", stderr);
	fflush(stderr);
}

/*
 * The batch stopped at @failed (an index into @in when the kernel said which
 * entry, else -1 for a failure of the call as a whole).
 */
static int report_batch_failure(const struct batch_op *op, const char *set,
				const struct ctl_input *in, long failed,
				int err, const struct ctl_batch_result *res)
{
	char text[CTL_PREFIXSTRLEN], why[CTL_SET_ERRLEN];

	if (failed >= 0)
		ctl_err("%s: stopped at line %lu (%s): %s; %llu %s",
			op->cmd, in->lineno[failed],
			ctl_format_prefix(&in->addrs[failed], text, sizeof(text)),
			ctl_strerror_entry(err, &in->addrs[failed], set, why,
					   sizeof(why)),
			(unsigned long long)res->applied, op->applied_word);
	else
		ctl_err("%s: %s; %llu %s", op->cmd,
			ctl_strerror_entry(err, NULL, set, why, sizeof(why)),
			(unsigned long long)res->applied, op->applied_word);
	return ctl_exit_code(err);
}

int ctl_batch_timeouts(const struct ctl_input *in, size_t first, size_t end,
		       uint32_t deflt, uint32_t **timeouts)
{
	size_t i;

	*timeouts = NULL;
	for (i = first; i < end && !in->timed[i]; i++)
		;
	if (i == end)
		return 0;
	*timeouts = calloc(end - first, sizeof(**timeouts));
	if (!*timeouts)
		return ENOMEM;
	for (i = first; i < end; i++)
		(*timeouts)[i - first] = in->timed[i] ? in->timeout[i] : deflt;
	return 0;
}

int ctl_set_timeout(int fd, const char *set, uint32_t *deflt)
{
	struct cnf_set_info *sets;
	size_t n;
	long i;
	int err;

	*deflt = 0;
	if (!ctl_has_timeouts(fd))
		return CTL_ENOTIMEOUT;
	err = ctl_set_list(fd, &sets, &n);
	if (err)
		return err;
	i = ctl_find_set(sets, n, set);
	if (i >= 0)
		*deflt = sets[i].timeout;
	free(sets);
	/* A missing set: the batch's own call says so. */
	return 0;
}

/*
 * Send in->addrs[off..off+count) in one call, with @timeouts[0..count) when
 * not NULL: 0, or the positive errno with *failed set to the index of the
 * refused entry (-1 when the kernel refused the call as a whole).
 */
static int send_one_batch(int fd, const struct batch_op *op, const char *set,
			  const struct ctl_input *in, size_t off, size_t count,
			  const uint32_t *timeouts,
			  struct ctl_batch_result *res, long *failed)
{
	struct cnf_batch b;
	int err;

	memset(&b, 0, sizeof(b));
	b.addrs = (uintptr_t)&in->addrs[off];
	b.timeouts = (uintptr_t)timeouts;
	b.count = count;
	b.flags = CNF_BATCH_F_EXIST_OK;
	err = ctl_batch_call(fd, op->del, set, &b);
	/* The struct comes back on success and on a failing entry alike. */
	res->applied += b.applied;
	res->skipped += b.skipped;
	if (!err)
		return 0;
	if (b.error && b.done < count) {
		*failed = off + b.done;
		return -b.error;
	}
	*failed = -1;
	return err;
}

/*
 * in->addrs[first..end) in batches to @set; an add with the timeouts its
 * lines gave, the set's default for the others.
 */
static int send_batches(int fd, const struct batch_op *op, const char *set,
			const struct ctl_input *in, size_t first, size_t end,
			struct ctl_batch_result *res)
{
	bool progress = want_progress(end - first);
	/* One call when nobody watches: the kernel sizes the table once. */
	size_t step = progress ? CTL_BATCH : CNF_BATCH_MAX;
	uint32_t *timeouts = NULL, deflt;
	size_t off, count;
	long failed = -1;
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (!op->del && in->ntimed) {
		err = ctl_set_timeout(fd, set, &deflt);
		if (!err)
			err = ctl_batch_timeouts(in, first, end, deflt,
						 &timeouts);
	}
	for (off = first; off < end && !err; off += count) {
		count = end - off < step ? end - off : step;
		if (progress)
			show_progress(op->cmd, off - first, end - first);
		err = send_one_batch(fd, op, set, in, off, count,
				     timeouts ? timeouts + (off - first) : NULL,
				     res, &failed);
	}
	free(timeouts);
	/* Clear the bar first: a message must not land on its line. */
	if (progress)
		clear_progress();
	if (err)
		return report_batch_failure(op, set, in, failed, err, res);
	return CTL_EXIT_OK;
}

int ctl_add_batches(const char *cmd, int fd, const char *set,
		    const struct ctl_input *in, size_t first, size_t end,
		    struct ctl_batch_result *res)
{
	struct batch_op op = op_add;

	op.cmd = cmd;
	return send_batches(fd, &op, set, in, first, end, res);
}

static void print_summary(const struct batch_op *op,
			  const struct ctl_batch_result *res, size_t nbad)
{
	printf("%llu %s, %llu %s", (unsigned long long)res->applied,
	       op->applied_word, (unsigned long long)res->skipped,
	       op->skipped_word);
	if (nbad)
		printf(", %zu bad %s", nbad, ctl_plural(nbad, "line", "lines"));
	putchar('\n');
}

/*
 * Parse @path, report its bad lines; under @strict a bad line means nothing
 * is sent.  Then send what parsed; bad lines make the exit status 1.
 */
static int run_file(const struct batch_op *op, const struct ctl_opts *o,
		    const char *path, bool strict)
{
	struct ctl_input in;
	struct ctl_batch_result res;
	int fd, rc;

	ctl_input_init(&in, o->flags | CTL_PARSE_F_RANGE);
	rc = ctl_read_input(op->cmd, path, &in);
	if (rc)
		goto out;
	ctl_report_bad_lines(op->cmd, path, &in);
	/* Only bad lines is the wrong file, not a blocklist with typos. */
	if (in.nbad && (strict || !in.n)) {
		ctl_err("%s: %zu bad %s, nothing changed", op->cmd, in.nbad,
			ctl_plural(in.nbad, "line", "lines"));
		rc = CTL_EXIT_BADINPUT;
		goto out;
	}
	fd = ctl_open_device();
	if (fd < 0) {
		rc = -fd;
		goto out;
	}
	if (!op->del)
		ctl_local_warn_all(op->cmd, fd, o->set, o->quiet, in.addrs,
				   in.n);
	rc = send_batches(fd, op, o->set, &in, 0, in.n, &res);
	close(fd);
	if (!rc) {
		if (!o->quiet)
			print_summary(op, &res, in.nbad);
		/* The good lines are in, but the file is not what it says. */
		if (in.nbad)
			rc = CTL_EXIT_FAIL;
	}
out:
	ctl_input_free(&in);
	return rc;
}

int ctl_load(const struct ctl_opts *o, const char *path)
{
	return run_file(&op_add, o, path, o->strict);
}

int ctl_del_file(const struct ctl_opts *o, const char *path)
{
	return run_file(&op_del, o, path, false);
}
