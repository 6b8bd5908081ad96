/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: what the command files share.
 */
#ifndef _CTL_H
#define _CTL_H

#include <stdarg.h>
#include <linux/cuckoo_nf.h>

#include "ctl_format.h"
#include "ctl_parse.h"

#define CTL_NAME	"cuckooctl"

/* Device path; only the -d option changes it (tests, other namespaces). */
extern const char *ctl_device;

/* "cuckooctl: " + message + newline, on stderr. */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Open the device: fd, or minus the exit code after saying what is wrong. */
int ctl_open_device(void);

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

#endif /* _CTL_H */
