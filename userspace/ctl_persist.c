// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: save-all and restore-all - the sets kept in files across
 * reboots and module reloads (cuckoo_nf.service runs them).
 *
 * A directory holds one file per set, NAME.list; a namespace has one set
 * today, "default".  A file is 'save' output with a closing line:
 *
 *	# cuckoo_nf save
 *	10.0.0.5
 *	198.51.100.0/24
 *	2001:db8::5
 *	# cuckoo_nf end 3 entries
 *
 * so that a file cut short, or any other file, is told from a save.  It is
 * written to a temporary file in the same directory, synced and renamed
 * over the old one, and the directory synced: after a crash the file is
 * the old save or the new one, never a part.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

#define END_FMT		"# cuckoo_nf end %" PRIu64 " entries"

/* The sets a namespace has; every set gets NAME.list. */
static const char *const set_names[] = { "default" };

static int set_path(char *buf, size_t size, const char *dir, const char *name,
		    const char *suffix)
{
	int n = snprintf(buf, size, "%s/%s.list%s", dir, name, suffix);

	if (n < 0 || (size_t)n >= size) {
		ctl_err("%s/%s.list%s: path too long", dir, name, suffix);
		return -1;
	}
	return 0;
}

static int fsync_dir(const char *cmd, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = 0;

	if (fd < 0 || fsync(fd))
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		ctl_err("%s: %s: %s", cmd, dir, strerror(err));
	return err ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

/* Dump the set to a temporary file, sync it, rename it into place. */
static int save_one(int fd, const char *dir, const char *name)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	uint64_t count = 0;
	FILE *f = NULL;
	int tfd, rc, err;
	bool failed;

	if (set_path(path, sizeof(path), dir, name, ""))
		return CTL_EXIT_FAIL;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.list.XXXXXX", dir, name) >=
	    (int)sizeof(tmp)) {
		ctl_err("save-all: %s: path too long", dir);
		return CTL_EXIT_FAIL;
	}
	tfd = mkostemp(tmp, O_CLOEXEC);
	if (tfd < 0) {
		ctl_err("save-all: %s: %s", tmp, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	f = fdopen(tfd, "w");
	if (!f) {
		ctl_err("save-all: %s: %s", tmp, strerror(errno));
		close(tfd);
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	fputs(CTL_SAVE_HEADER "\n", f);
	rc = ctl_dump("save-all", fd, NULL, f, &count);
	if (rc)
		goto out;
	fprintf(f, END_FMT "\n", count);
	/* fflush, fsync, fclose: any of them may be where a write fails. */
	errno = 0;
	failed = fflush(f) || ferror(f) || fsync(tfd);
	err = errno;
	if (fclose(f) && !failed) {
		failed = true;
		err = errno;
	}
	f = NULL;
	if (failed) {
		ctl_err("save-all: %s: %s", tmp, strerror(err ? err : EIO));
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	if (rename(tmp, path)) {
		ctl_err("save-all: %s: %s", path, strerror(errno));
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	rc = fsync_dir("save-all", dir);
	if (!rc)
		printf("%s: saved %" PRIu64 " %s to %s\n", name, count,
		       count == 1 ? "entry" : "entries", path);
	return rc;
out:
	if (f)
		fclose(f);
	unlink(tmp);
	return rc;
}

int ctl_save_all(const char *dir)
{
	int fd, rc = CTL_EXIT_OK, r;
	size_t i;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		ctl_err("save-all: %s: %s", dir, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	for (i = 0; i < ARRAY_SIZE(set_names); i++) {
		r = save_one(fd, dir, set_names[i]);
		if (r && !rc)
			rc = r;
	}
	close(fd);
	return rc;
}

/*
 * Whether @f is a complete save: the header first, the end line last with
 * the count of prefix lines.  NULL when it is, else why not.
 */
static const char *check_save(FILE *f, const struct ctl_input *in)
{
	char line[256], last[256] = "";
	uint64_t n;
	char tail;

	rewind(f);
	if (!fgets(line, sizeof(line), f))
		return "empty";
	if (strcmp(line, CTL_SAVE_HEADER "\n"))
		return "no '" CTL_SAVE_HEADER "' first line";
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			memcpy(last, line, sizeof(last));
	if (ferror(f))
		return "read error";
	if (sscanf(last, END_FMT "%c", &n, &tail) != 2 || tail != '\n')
		return "no '# cuckoo_nf end N entries' last line: cut short?";
	if (in->nbad)
		return "bad lines";
	if (n != in->n)
		return "the end line's count is not the number of addresses";
	return NULL;
}

/*
 * Restore one set: CTL_EXIT_OK when restored or when there is no file,
 * CTL_EXIT_BADINPUT when the file is not a complete save (renamed .bad).
 */
static int restore_one(int fd, const char *dir, const char *name)
{
	char path[PATH_MAX], bad[PATH_MAX];
	struct ctl_input in;
	const char *why;
	FILE *f;
	int rc, err;

	if (set_path(path, sizeof(path), dir, name, "") ||
	    set_path(bad, sizeof(bad), dir, name, ".bad"))
		return CTL_EXIT_FAIL;
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT) {
			ctl_err("restore-all: %s: no saved set, %s left as it is",
				path, name);
			return CTL_EXIT_OK;
		}
		ctl_err("restore-all: %s: %s", path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	/*
	 * A /0 is taken: the file is save-all's copy of the kernel's own set
	 * (checked complete below), not typed in, and refusing it here would
	 * leave the set empty at boot.
	 */
	ctl_input_init(&in, CTL_PARSE_F_ALL);
	err = ctl_input_read(&in, f);
	if (err) {
		ctl_err("restore-all: %s: %s", path, strerror(-err));
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	why = check_save(f, &in);
	if (why) {
		/* Out of the way: the next save-all must not overwrite it. */
		if (rename(path, bad))
			ctl_err("restore-all: %s: not a complete save (%s), skipped; renaming it to %s: %s",
				path, why, bad, strerror(errno));
		else
			ctl_err("restore-all: %s: not a complete save (%s), skipped and renamed %s",
				path, why, bad);
		rc = CTL_EXIT_BADINPUT;
		goto out;
	}
	rc = ctl_replace_set("restore-all", fd, &in);
out:
	fclose(f);
	ctl_input_free(&in);
	return rc;
}

int ctl_restore_all(const char *dir)
{
	int fd, rc = CTL_EXIT_OK, r;
	size_t i;

	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	for (i = 0; i < ARRAY_SIZE(set_names); i++) {
		r = restore_one(fd, dir, set_names[i]);
		/* A failure outranks a skipped file. */
		if (r && (!rc || rc == CTL_EXIT_BADINPUT))
			rc = r;
	}
	close(fd);
	return rc;
}
