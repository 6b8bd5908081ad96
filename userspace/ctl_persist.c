// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl: save-all and restore-all - the sets kept in files across
 * reboots and module reloads (cuckoo_nf.service runs them).
 *
 * A directory holds one file per set, NAME.list.  A file is 'save -s
 * NAME' output with a closing line (the default set has no set line):
 *
 *	# cuckoo_nf save
 *	# cuckoo_nf set office allow
 *	10.0.0.5
 *	198.51.100.0/24
 *	2001:db8::5
 *	# cuckoo_nf end 3 entries
 *
 * so that a file cut short, or any other file, is told from a save.  It is
 * written to a temporary file in the same directory, synced and renamed
 * over the old one, and the directory synced: after a crash the file is
 * the old save or the new one, never a part.  A set with a default timeout
 * has it on its set line ('# cuckoo_nf set bans block timeout 600') and
 * every prefix its own ('10.0.0.5 timeout 312', 'timeout 0' for none).
 *
 * The hooks' setting and scope are in DIR/hooks, written the same way,
 * the operands 'cuckooctl hooks' takes between a header and an end line:
 *
 *	# cuckoo_nf hooks
 *	on --iif eth0 --iif veth+
 *	# cuckoo_nf end
 *
 * restore-all sets them first, so that the sets' entries, once restored,
 * are judged where they were before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

#define END_FMT		"# cuckoo_nf end %" PRIu64 " entries"

#define SUFFIX		".list"

#define HOOKS_FILE	"hooks"
#define HOOKS_HEADER	"# cuckoo_nf hooks"
#define HOOKS_END	"# cuckoo_nf end"

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
		ctl_err("%s %s: %s", cmd, dir, strerror(err));
	return err ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

/*
 * Dump set @s (NULL: the default set of a module without sets) to a
 * temporary file, sync it, rename it into place.
 */
static int save_one(int fd, const char *dir, const struct cnf_set_info *s)
{
	const char *name = s ? s->name : CNF_SET_DEFAULT;
	char path[PATH_MAX], tmp[PATH_MAX];
	uint64_t count = 0;
	FILE *f = NULL;
	int tfd, rc, err;
	bool failed;

	if (set_path(path, sizeof(path), dir, name, ""))
		return CTL_EXIT_FAIL;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.list.XXXXXX", dir, name) >=
	    (int)sizeof(tmp)) {
		ctl_err("save-all %s: path too long", dir);
		return CTL_EXIT_FAIL;
	}
	tfd = mkostemp(tmp, O_CLOEXEC);
	if (tfd < 0) {
		ctl_err("save-all %s: %s", tmp, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	f = fdopen(tfd, "w");
	if (!f) {
		ctl_err("save-all %s: %s", tmp, strerror(errno));
		close(tfd);
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	fputs(CTL_SAVE_HEADER "\n", f);
	if (!ctl_set_is_default(name))
		ctl_print_set_line(f, s);
	rc = ctl_dump("save-all", fd, name, s && s->timeout, f, &count);
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
		ctl_err("save-all %s: %s", tmp, strerror(err ? err : EIO));
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	if (rename(tmp, path)) {
		ctl_err("save-all %s: %s", path, strerror(errno));
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

/* The set name NAME.list stands for, into @name: false for other files. */
static bool list_file(const char *file, char name[CNF_SET_NAME_LEN])
{
	size_t n = strlen(file), k = strlen(SUFFIX);

	if (n <= k || n - k >= CNF_SET_NAME_LEN || strcmp(file + n - k, SUFFIX))
		return false;
	memcpy(name, file, n - k);
	name[n - k] = '\0';
	return ctl_set_name_ok(name);
}

/* The files of sets the namespace no longer has: removed. */
static int prune(const char *dir, const struct cnf_set_info *sets, size_t n)
{
	char name[CNF_SET_NAME_LEN], path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = CTL_EXIT_OK;

	if (!d) {
		ctl_err("save-all %s: %s", dir, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	while ((e = readdir(d))) {
		if (!list_file(e->d_name, name) ||
		    ctl_find_set(sets, n, name) >= 0 ||
		    set_path(path, sizeof(path), dir, name, ""))
			continue;
		if (unlink(path)) {
			ctl_err("save-all %s: %s", path, strerror(errno));
			rc = CTL_EXIT_FAIL;
		} else {
			printf("%s: no such set any more, removed %s\n", name, path);
		}
	}
	closedir(d);
	return rc;
}

/*
 * Write @text to DIR/@file through a temporary file, synced and renamed
 * into place, the directory synced after.
 */
static int write_atomic(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int tfd, err = 0;
	size_t n = strlen(text);

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, file) >=
	    (int)sizeof(tmp)) {
		ctl_err("save-all %s: path too long", dir);
		return CTL_EXIT_FAIL;
	}
	tfd = mkostemp(tmp, O_CLOEXEC);
	if (tfd < 0) {
		ctl_err("save-all %s: %s", tmp, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	if (write(tfd, text, n) != (ssize_t)n || fsync(tfd))
		err = errno ? errno : EIO;
	if (close(tfd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		ctl_err("save-all %s: %s", path, strerror(err));
		unlink(tmp);
		return CTL_EXIT_FAIL;
	}
	return fsync_dir("save-all", dir);
}

/* The hooks' setting and scope to DIR/hooks. */
static int save_hooks(int fd, const char *dir)
{
	char text[512];
	struct cnf_stats st;
	FILE *m;

	memset(&st, 0, sizeof(st));
	if (ioctl(fd, CNF_IOC_STATS, &st))
		return ctl_fail("save-all", errno);
	memset(text, 0, sizeof(text));
	m = fmemopen(text, sizeof(text) - 1, "w");
	if (!m)
		return ctl_fail("save-all", errno);
	fputs(HOOKS_HEADER "\n", m);
	ctl_print_hooks(m, &st);
	fputs("\n" HOOKS_END "\n", m);
	if (fclose(m))
		return ctl_fail("save-all", errno);
	if (write_atomic(dir, HOOKS_FILE, text))
		return CTL_EXIT_FAIL;
	printf("hooks: saved '");
	ctl_print_hooks(stdout, &st);
	printf("' to %s/" HOOKS_FILE "\n", dir);
	return CTL_EXIT_OK;
}

int ctl_save_all(const char *dir)
{
	struct cnf_set_info *sets = NULL;
	int fd, rc = CTL_EXIT_OK, r, err;
	size_t i, n = 0;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		ctl_err("save-all %s: %s", dir, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	err = ctl_set_list(fd, &sets, &n);
	if (err == CTL_ENOSETS)
		rc = save_one(fd, dir, NULL);
	else if (err)
		rc = ctl_fail("save-all", err);
	for (i = 0; i < n; i++) {
		r = save_one(fd, dir, &sets[i]);
		if (r && !rc)
			rc = r;
	}
	r = save_hooks(fd, dir);
	if (r && !rc)
		rc = r;
	/* Only after every set is saved: a failed save removes nothing. */
	if (!err && !rc)
		rc = prune(dir, sets, n);
	free(sets);
	close(fd);
	return rc;
}

/*
 * Whether @f is a complete save: the header first, the end line last with
 * the count of prefix lines.  NULL when it is, else why not.
 */
static const char *check_save(FILE *f, const struct ctl_input *in,
			      const char *name)
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
	/* The default set's file has no set line, any other its own only. */
	if (ctl_set_is_default(name) ? in->nsect != 0 :
	    in->nsect != 1 || in->sect[0].first || strcmp(in->sect[0].name, name))
		return "not the set's own save";
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
			ctl_err("restore-all %s: no saved set, %s left as it is",
				path, name);
			return CTL_EXIT_OK;
		}
		ctl_err("restore-all %s: %s", path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	/*
	 * A /0 is taken: the file is save-all's copy of the kernel's own set
	 * (checked complete below), not typed in, and refusing it here would
	 * leave the set empty at boot.
	 */
	ctl_input_init(&in, CTL_PARSE_F_ALL | CTL_PARSE_F_SETS);
	err = ctl_input_read(&in, f);
	if (err) {
		ctl_err("restore-all %s: %s", path, strerror(-err));
		rc = CTL_EXIT_FAIL;
		goto out;
	}
	why = check_save(f, &in, name);
	if (why) {
		/* Out of the way: the next save-all must not overwrite it. */
		if (rename(path, bad))
			ctl_err("restore-all %s: not a complete save (%s), skipped; renaming it to %s: %s",
				path, why, bad, strerror(errno));
		else
			ctl_err("restore-all %s: not a complete save (%s), skipped and renamed %s",
				path, why, bad);
		rc = CTL_EXIT_BADINPUT;
		goto out;
	}
	rc = ctl_replace_set("restore-all", fd,
			     ctl_set_is_default(name) ? NULL : name,
			     in.nsect ? in.sect[0].kind : CNF_SET_BLOCK,
			     in.nsect ? in.sect[0].timeout : 0,
			     in.nsect ? &in.sect[0].log : NULL, &in, 0, in.n);
out:
	fclose(f);
	ctl_input_free(&in);
	return rc;
}

/* The sets saved in @dir: their names into *@names, default first. */
static int saved_sets(const char *dir, char (**names)[CNF_SET_NAME_LEN],
		      size_t *n)
{
	char name[CNF_SET_NAME_LEN], (*p)[CNF_SET_NAME_LEN];
	DIR *d = opendir(dir);
	struct dirent *e;

	*n = 1;
	*names = calloc(1, sizeof(**names));
	if (!*names || !d) {
		ctl_err("restore-all %s: %s", dir, strerror(d ? ENOMEM : errno));
		if (d)
			closedir(d);
		free(*names);
		*names = NULL;
		return CTL_EXIT_FAIL;
	}
	strcpy((*names)[0], CNF_SET_DEFAULT);
	while ((e = readdir(d))) {
		if (!list_file(e->d_name, name) || ctl_set_is_default(name))
			continue;
		p = reallocarray(*names, *n + 1, sizeof(**names));
		if (!p) {
			closedir(d);
			/* Those read so far are still restored. */
			return ctl_fail("restore-all", ENOMEM);
		}
		*names = p;
		memcpy((*names)[(*n)++], name, sizeof(name));
	}
	closedir(d);
	return CTL_EXIT_OK;
}

/*
 * The operands of DIR/hooks into @argv and @o, from @line (changed): 0,
 * or why they are not 'hooks' ones.
 */
static const char *hooks_words(char *line, struct ctl_opts *o, char **argv,
			       int *argc)
{
	char *save = NULL, *w;

	*argc = 0;
	for (w = strtok_r(line, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(w, "--iif")) {
			if (*argc)
				return "more than one setting";
			argv[(*argc)++] = w;
			continue;
		}
		w = strtok_r(NULL, " \t\n", &save);
		if (!w)
			return "--iif without its device";
		if (o->niif == CNF_IIF_MAX)
			return "more --iif than a scope has";
		o->iifs[o->niif++] = w;
	}
	return *argc ? NULL : "no setting";
}

/*
 * Whether the namespace's hooks are as @cfg would set them already: then
 * nothing is set, and a namespace restored to the default ("on") stays
 * unconfigured until a set's entries come.
 */
static bool hooks_as_saved(const struct cnf_config *cfg)
{
	struct cnf_stats st;
	int fd = ctl_open_device();
	bool same;

	if (fd < 0)
		return false;
	memset(&st, 0, sizeof(st));
	same = !ioctl(fd, CNF_IOC_STATS, &st) &&
	       !(st.flags & CNF_STATS_F_HOOKS_OFF) ==
	       (cfg->hooks == CNF_HOOKS_ON) &&
	       st.iif_count == cfg->iif_count &&
	       !memcmp(st.iif, cfg->iif, sizeof(st.iif));
	close(fd);
	return same;
}

/*
 * DIR/hooks, if there is one: its setting applied, CTL_EXIT_BADINPUT when
 * it is not a complete save (renamed hooks.bad, the hooks left as they
 * are).
 */
static int restore_hooks(const char *dir)
{
	char path[PATH_MAX], bad[PATH_MAX], head[64], line[512], end[64];
	struct ctl_opts o = { .cmd = "hooks" };
	struct cnf_config cfg;
	const char *why = NULL;
	char *argv[1];
	int argc;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/" HOOKS_FILE, dir) >=
	    (int)sizeof(path) ||
	    snprintf(bad, sizeof(bad), "%s/" HOOKS_FILE ".bad", dir) >=
	    (int)sizeof(bad)) {
		ctl_err("restore-all %s: path too long", dir);
		return CTL_EXIT_FAIL;
	}
	f = fopen(path, "re");
	if (!f) {
		/* Saved by a cuckooctl from before it: the hooks as they are. */
		if (errno == ENOENT)
			return CTL_EXIT_OK;
		ctl_err("restore-all %s: %s", path, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	if (!fgets(head, sizeof(head), f) || strcmp(head, HOOKS_HEADER "\n"))
		why = "no '" HOOKS_HEADER "' first line";
	else if (!fgets(line, sizeof(line), f) || !fgets(end, sizeof(end), f) ||
		 strcmp(end, HOOKS_END "\n") || fgetc(f) != EOF)
		why = "not a setting and an end line: cut short?";
	else
		why = hooks_words(line, &o, argv, &argc);
	fclose(f);
	if (!why) {
		/* It says why on stderr. */
		if (ctl_hooks_config(&o, argc, argv, &cfg))
			why = "not a setting 'hooks' takes";
	}
	if (why) {
		if (rename(path, bad))
			ctl_err("restore-all %s: not a complete save (%s), skipped; renaming it to %s: %s",
				path, why, bad, strerror(errno));
		else
			ctl_err("restore-all %s: not a complete save (%s), skipped and renamed %s",
				path, why, bad);
		return CTL_EXIT_BADINPUT;
	}
	return hooks_as_saved(&cfg) ? CTL_EXIT_OK :
	       ctl_set_hooks("restore-all hooks", &cfg);
}

int ctl_restore_all(const char *dir)
{
	char (*names)[CNF_SET_NAME_LEN] = NULL;
	int fd, rc, r;
	size_t i, n;

	fd = ctl_open_device();
	if (fd < 0)
		return -fd;
	rc = restore_hooks(dir);
	r = saved_sets(dir, &names, &n);
	if (r && (!rc || rc == CTL_EXIT_BADINPUT))
		rc = r;
	for (i = 0; names && i < n; i++) {
		r = restore_one(fd, dir, names[i]);
		/* A failure outranks a skipped file. */
		if (r && (!rc || rc == CTL_EXIT_BADINPUT))
			rc = r;
	}
	free(names);
	close(fd);
	return rc;
}
