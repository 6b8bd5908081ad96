/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: what the command files share.
 */
#ifndef _CTL_H
#define _CTL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>

#include "ctl_format.h"
#include "ctl_parse.h"

#define CTL_NAME	"cuckooctl"

/* Device path; only the -d option changes it (tests, other namespaces). */
extern const char *ctl_device;

/* "cuckooctl: " + message + newline, on stderr. */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where save-all and restore-all keep the sets. */
#define CTL_STATE_DIR	"/var/lib/cuckoo_nf"
/* First line of 'save' and 'save-all' output. */
#define CTL_SAVE_HEADER	"# cuckoo_nf save"

/*
 * Open the device and check that the module speaks an ABI this tool knows:
 * fd, or minus the exit code after saying what is wrong.
 */
int ctl_open_device(void);

/* CNF_IOC_VERSION: 0, or -errno (-ENOTTY: a module older than the call). */
int ctl_module_version(int fd, struct cnf_version *v);

/* Write the set to @out, one address a line, counting them: exit code. */
int ctl_dump(const char *cmd, int fd, FILE *out, uint64_t *count);

/* Report a failed device call "cuckooctl: WHAT: text"; return its exit code. */
int ctl_fail(const char *what, int err);

/* Usage error for command @cmd: message, usage line, return CTL_EXIT_USAGE. */
int ctl_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Read all of @path ("-" or NULL: stdin) into @in: exit code. */
int ctl_read_input(const char *cmd, const char *path, struct ctl_input *in);

/*
 * The commands working on prefix files (ctl_load.c).  @flags: for every
 * line, as ctl_parse_prefix() takes them (CTL_PARSE_F_ALL: --all-addresses).
 */
int ctl_load(const char *path, bool strict, unsigned int flags);
int ctl_del_file(const char *path, unsigned int flags);
int ctl_restore(const char *path, unsigned int flags);
/* Replace the set with @in's prefixes (restore's second half): exit code. */
int ctl_replace_set(const char *cmd, int fd, const struct ctl_input *in);

/* save-all and restore-all (ctl_persist.c). */
int ctl_save_all(const char *dir);
int ctl_restore_all(const char *dir);

#endif /* _CTL_H */
