// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: load, del --file and restore - prefix files sent to the
 * device in large batches.
 *
 * The whole input is parsed before the device is touched: --strict and
 * restore must change nothing when a line is bad, and the progress bar needs
 * the total.  At 28 bytes per prefix (cnf_addr and line number) that is
 * 28 MB for a million lines.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl.h"

/* Addresses per ioctl: big enough to make the call overhead vanish. */
#define CTL_BATCH	65536

/* One direction of a batch: what it is called and how it counts. */
struct batch_op {
	const char *cmd;		/* "load", "del", "restore" */
	unsigned long req;		/* CNF_IOC_ADD_BATCH or _DEL_BATCH */
	const char *applied_word;	/* "added", "deleted" */
	const char *skipped_word;	/* "already present", "not present" */
};

static const struct batch_op op_add = {
	"load", CNF_IOC_ADD_BATCH, "added", "already present",
};
static const struct batch_op op_del = {
	"del", CNF_IOC_DEL_BATCH, "deleted", "not present",
};
static const struct batch_op op_restore = {
	"restore", CNF_IOC_ADD_BATCH, "added", "duplicates",
};

struct batch_result {
	uint64_t applied, skipped;
};

int ctl_read_input(const char *cmd, const char *path, struct ctl_input *in)
{
	bool use_stdin = !path || !strcmp(path, "-");
	FILE *f = use_stdin ? stdin : fopen(path, "re");
	int err;

	if (!f) {
		ctl_err("%s: %s: %s", cmd, path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	err = ctl_input_read(in, f);
	if (!use_stdin)
		fclose(f);
	if (err) {
		ctl_err("%s: %s: %s", cmd, use_stdin ? "stdin" : path,
			strerror(-err));
		return CTL_EXIT_FAIL;
	}
	return CTL_EXIT_OK;
}

/* "cuckooctl: load: FILE:LINE: VALUE: reason" for each bad line. */
static void report_bad_lines(const char *cmd, const char *path,
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

static const char *plural(uint64_t n, const char *one, const char *many)
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
static int report_batch_failure(const struct batch_op *op,
				const struct ctl_input *in, long failed,
				int err, const struct batch_result *res)
{
	char text[CTL_PREFIXSTRLEN];

	if (failed >= 0)
		ctl_err("%s: stopped at line %lu (%s): %s; %llu %s",
			op->cmd, in->lineno[failed],
			ctl_format_prefix(&in->addrs[failed], text, sizeof(text)),
			ctl_strerror_addr(err, &in->addrs[failed]),
			(unsigned long long)res->applied, op->applied_word);
	else
		ctl_err("%s: %s; %llu %s", op->cmd, ctl_strerror(err),
			(unsigned long long)res->applied, op->applied_word);
	return ctl_exit_code(err);
}

/*
 * Send in->addrs[off..off+count) in one call: 0, or the positive errno with
 * *failed set to the index of the refused entry (-1 when the kernel refused
 * the call as a whole).
 */
static int send_one_batch(int fd, const struct batch_op *op,
			  const struct ctl_input *in, size_t off, size_t count,
			  struct batch_result *res, long *failed)
{
	struct cnf_batch b;
	int err;

	memset(&b, 0, sizeof(b));
	b.addrs = (uintptr_t)&in->addrs[off];
	b.count = count;
	b.flags = CNF_BATCH_F_EXIST_OK;
	err = ioctl(fd, op->req, &b) < 0 ? errno : 0;
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

static int send_batches(int fd, const struct batch_op *op,
			const struct ctl_input *in, struct batch_result *res)
{
	bool progress = want_progress(in->n);
	/* One call when nobody watches: the kernel sizes the table once. */
	size_t step = progress ? CTL_BATCH : CNF_BATCH_MAX;
	size_t off, count;
	long failed;
	int err = 0;

	memset(res, 0, sizeof(*res));
	for (off = 0; off < in->n && !err; off += count) {
		count = in->n - off < step ? in->n - off : step;
		if (progress)
			show_progress(op->cmd, off, in->n);
		err = send_one_batch(fd, op, in, off, count, res, &failed);
	}
	/* Clear the bar first: a message must not land on its line. */
	if (progress)
		clear_progress();
	if (err)
		return report_batch_failure(op, in, failed, err, res);
	return CTL_EXIT_OK;
}

static void print_summary(const struct batch_op *op,
			  const struct batch_result *res, size_t nbad)
{
	printf("%llu %s, %llu %s", (unsigned long long)res->applied,
	       op->applied_word, (unsigned long long)res->skipped,
	       op->skipped_word);
	if (nbad)
		printf(", %zu bad %s", nbad, plural(nbad, "line", "lines"));
	putchar('\n');
}

/*
 * Parse @path, report its bad lines; under @strict a bad line means nothing
 * is sent.  Then send what parsed; bad lines make the exit status 1.
 */
static int run_file(const struct batch_op *op, const char *path, bool strict,
		    unsigned int flags)
{
	struct ctl_input in;
	struct batch_result res;
	int fd, rc;

	ctl_input_init(&in, flags);
	rc = ctl_read_input(op->cmd, path, &in);
	if (rc)
		goto out;
	report_bad_lines(op->cmd, path, &in);
	/* Only bad lines is the wrong file, not a blocklist with typos. */
	if (in.nbad && (strict || !in.n)) {
		ctl_err("%s: %zu bad %s, nothing changed", op->cmd, in.nbad,
			plural(in.nbad, "line", "lines"));
		rc = CTL_EXIT_BADINPUT;
		goto out;
	}
	fd = ctl_open_device();
	if (fd < 0) {
		rc = -fd;
		goto out;
	}
	rc = send_batches(fd, op, &in, &res);
	close(fd);
	if (!rc) {
		print_summary(op, &res, in.nbad);
		/* The good lines are in, but the file is not what it says. */
		if (in.nbad)
			rc = CTL_EXIT_FAIL;
	}
out:
	ctl_input_free(&in);
	return rc;
}

int ctl_load(const char *path, bool strict, unsigned int flags)
{
	return run_file(&op_add, path, strict, flags);
}

int ctl_del_file(const char *path, unsigned int flags)
{
	return run_file(&op_del, path, false, flags);
}

static int entries_now(const char *cmd, int fd, uint64_t *entries)
{
	struct cnf_stats st;

	memset(&st, 0, sizeof(st));
	if (ioctl(fd, CNF_IOC_STATS, &st) < 0)
		return ctl_fail(cmd, errno);
	*entries = st.v4.entries + st.v6.entries;
	return CTL_EXIT_OK;
}

int ctl_replace_set(const char *cmd, int fd, const struct ctl_input *in)
{
	struct batch_op op = op_restore;
	struct batch_result res;
	uint64_t before = 0;
	int rc;

	op.cmd = cmd;
	rc = entries_now(cmd, fd, &before);
	if (rc)
		return rc;
	if (ioctl(fd, CNF_IOC_FLUSH) < 0) {
		ctl_err("%s: flush: %s", cmd, ctl_strerror(errno));
		return ctl_exit_code(errno);
	}
	rc = send_batches(fd, &op, in, &res);
	if (rc) {
		ctl_err("%s: the set was flushed and is now incomplete", cmd);
		return rc;
	}
	printf("replaced the set: %llu %s (was %llu)",
	       (unsigned long long)res.applied,
	       plural(res.applied, "entry", "entries"),
	       (unsigned long long)before);
	if (res.skipped)
		printf(", %llu duplicate %s skipped",
		       (unsigned long long)res.skipped,
		       plural(res.skipped, "line", "lines"));
	putchar('\n');
	return CTL_EXIT_OK;
}

/* Restore replaces everything, so a bad line always stops it. */
int ctl_restore(const char *path, unsigned int flags)
{
	struct ctl_input in;
	int fd, rc;

	ctl_input_init(&in, flags);
	rc = ctl_read_input("restore", path, &in);
	if (rc)
		goto out;
	if (in.nbad) {
		report_bad_lines("restore", path, &in);
		ctl_err("restore: %zu bad %s, nothing changed", in.nbad,
			plural(in.nbad, "line", "lines"));
		rc = CTL_EXIT_BADINPUT;
		goto out;
	}
	fd = ctl_open_device();
	if (fd < 0) {
		rc = -fd;
		goto out;
	}
	rc = ctl_replace_set("restore", fd, &in);
	close(fd);
out:
	ctl_input_free(&in);
	return rc;
}
