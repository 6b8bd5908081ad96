// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: log lines on stderr.  Under systemd (stderr a
 * journal stream) each line starts with its syslog priority, "<3>" for an
 * error, which the journal takes as the line's level; elsewhere with the
 * time.  Then the level's name and the message.  With log_mode: file, the
 * lines go to a file, with the time, rotated by size (cbn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cbn.h"
#include "../ctl_format.h"

enum cbn_level cbn_log_level = CBN_INFO;

/*
 * log_mode: file.  The file is written by this process alone, and only
 * from its one thread: no lock.  lf.fd < 0: stderr.
 */
static struct {
	int fd;
	char *path;
	uint64_t size;			/* what the file holds */
	struct cbn_log_file cfg;
} lf = { .fd = -1 };

/* @lf.path's backup @n (0: the file itself), compressed or not. */
static char *backup_name(unsigned int n, bool gz)
{
	const char *ext = gz ? ".gz" : "";
	char *name = NULL;
	int rc;

	if (n)
		rc = asprintf(&name, "%s.%u%s", lf.path, n, ext);
	else
		rc = asprintf(&name, "%s%s", lf.path, ext);
	return rc < 0 ? NULL : name;
}

/* Rename backup @from to @to, whichever of its two names it has. */
static void backup_move(unsigned int from, unsigned int to)
{
	int gz;

	for (gz = 0; gz < 2; gz++) {
		char *a = backup_name(from, gz), *b = backup_name(to, gz);

		if (a && b)
			rename(a, b);
		free(a);
		free(b);
	}
}

/* Remove backup @n, whichever of its two names it has. */
static void backup_remove(unsigned int n)
{
	int gz;

	for (gz = 0; gz < 2; gz++) {
		char *a = backup_name(n, gz);

		if (a)
			unlink(a);
		free(a);
	}
}

/* The time backup @n was last written, or 0 when there is none. */
static time_t backup_mtime(unsigned int n)
{
	struct stat st;
	time_t t = 0;
	int gz;

	for (gz = 0; gz < 2 && !t; gz++) {
		char *a = backup_name(n, gz);

		if (a && !stat(a, &st))
			t = st.st_mtime;
		free(a);
	}
	return t;
}

/*
 * gzip backup 1 into .1.gz, with zlib; the plain one goes when done.  The
 * .gz is made 0600, as the log: gzopen() would make it as umask says.
 */
static int backup_compress(void)
{
	char *plain = backup_name(1, false), *gz = backup_name(1, true);
	int in = -1, ofd = -1, rc = -1;
	gzFile out = NULL;
	char buf[65536];
	ssize_t n;

	if (!plain || !gz)
		goto out;
	in = open(plain, O_RDONLY | O_CLOEXEC);
	ofd = open(gz, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	out = ofd < 0 ? NULL : gzdopen(ofd, "wb");
	if (ofd >= 0 && !out)
		close(ofd);
	if (in < 0 || !out)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (gzwrite(out, buf, (unsigned int)n) != n)
			goto out;
	rc = n < 0 ? -1 : 0;
out:
	if (out && gzclose(out) != Z_OK)
		rc = -1;
	if (in >= 0)
		close(in);
	if (gz)
		unlink(rc ? gz : plain);
	free(plain);
	free(gz);
	return rc;
}

/* Open (or create) the log file, for appending; its size noted. */
static int log_open(void)
{
	struct stat st;

	lf.fd = open(lf.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (lf.fd < 0)
		return -1;
	lf.size = fstat(lf.fd, &st) ? 0 : (uint64_t)st.st_size;
	return 0;
}

/*
 * The file is full: it becomes backup 1, the others move one up, the
 * last and those too old go.  What fails is said on stderr, and the
 * bouncer logs on into whatever file it can open.
 */
static void log_rotate(void)
{
	unsigned int last = lf.cfg.max_files, n;
	time_t oldest = 0;

	close(lf.fd);
	lf.fd = -1;
	if (!last)	/* keep all: up to the first free number */
		for (last = 1; backup_mtime(last); last++)
			;
	else
		backup_remove(last);
	for (n = last; n > 1; n--)
		backup_move(n - 1, n);
	backup_move(0, 1);
	if (lf.cfg.compress && backup_compress())
		fprintf(stderr, CBN_NAME ": %s.1: cannot compress: %s\n",
			lf.path, strerror(errno));
	if (lf.cfg.max_age)
		oldest = time(NULL) - (time_t)lf.cfg.max_age * 86400;
	for (n = 1; oldest && n <= last; n++)
		if (backup_mtime(n) && backup_mtime(n) < oldest)
			backup_remove(n);
	if (log_open())
		fprintf(stderr, CBN_NAME ": %s: %s\n", lf.path, strerror(errno));
}

int cbn_log_to_file(const struct cbn_log_file *f, char *err, size_t len)
{
	const char *dir = f->dir ? f->dir : CBN_LOG_DIR;
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (lf.fd >= 0)
		close(lf.fd);
	lf.fd = -1;
	free(lf.path);
	if (asprintf(&lf.path, "%.*s/%s", (int)n, dir, CBN_LOG_FILE) < 0) {
		lf.path = NULL;
		snprintf(err, len, "%s", strerror(ENOMEM));
		return -1;
	}
	lf.cfg = *f;
	lf.cfg.dir = NULL;
	if (log_open()) {
		snprintf(err, len, "log_dir: %s: %s", lf.path, strerror(errno));
		/* Lines go to stderr again. */
		free(lf.path);
		lf.path = NULL;
		return -1;
	}
	return 0;
}

/* A line of the file, rotated first when it would take it past its size. */
static void log_write(const char *line, size_t n)
{
	if (lf.size && lf.size + n > lf.cfg.max_size)
		log_rotate();
	if (lf.fd < 0 || write(lf.fd, line, n) != (ssize_t)n) {
		fputs(line, stderr);
		return;
	}
	lf.size += n;
}

static const struct {
	const char *name;
	int syslog;
} levels[] = {
	[CBN_ERROR] = { "error", 3 },
	[CBN_WARNING] = { "warning", 4 },
	[CBN_INFO] = { "info", 6 },
	[CBN_DEBUG] = { "debug", 7 },
	[CBN_TRACE] = { "trace", 7 },
};

void cbn_log(enum cbn_level level, const char *fmt, ...)
{
	static int journal = -1;
	char stamp[32], *msg = NULL, *line = NULL;
	struct tm tm;
	time_t now;
	va_list ap;
	int n;

	if (level > cbn_log_level)
		return;
	if (journal < 0)
		journal = !!getenv("JOURNAL_STREAM");
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (journal && !lf.path) {
		n = asprintf(&line, "<%d>%s: %s\n", levels[level].syslog,
			     levels[level].name, msg);
	} else {
		now = time(NULL);
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		n = asprintf(&line, "%s %s: %s\n", stamp, levels[level].name,
			     msg);
	}
	free(msg);
	if (n < 0)
		return;
	if (lf.path) {
		log_write(line, (size_t)n);
	} else {
		fputs(line, stderr);
		fflush(stderr);
	}
	free(line);
}

int cbn_level_parse(const char *s, enum cbn_level *level)
{
	static const struct {
		const char *name;
		enum cbn_level level;
	} names[] = {
		{ "trace", CBN_TRACE }, { "debug", CBN_DEBUG },
		{ "info", CBN_INFO }, { "warning", CBN_WARNING },
		{ "warn", CBN_WARNING }, { "error", CBN_ERROR },
		{ "fatal", CBN_ERROR }, { "panic", CBN_ERROR },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i].name)) {
			*level = names[i].level;
			return 0;
		}
	return -1;
}

/*
 * What libcnfctl's functions report (../ctl_report.h): here, error lines
 * of the log.
 */
void cbn_ctl_report(enum ctl_report_kind kind, const char *cmd,
		    const char *msg)
{
	cbn_log(CBN_ERROR, "%s", msg);
}
