/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcnfctl: how its functions report a failure.  They put what went
 * wrong into one line and hand it to the program's reporter: cuckooctl
 * prints it on stderr with the command's usage, the bouncer logs it.
 * Until a program sets one, the line goes to stderr after the program's
 * name.
 */
#ifndef _CTL_REPORT_H
#define _CTL_REPORT_H

/* What a report is about. */
enum ctl_report_kind {
	CTL_REPORT_ERROR,	/* a failure */
	CTL_REPORT_USAGE,	/* a command given wrong operands or options */
};

/*
 * A program's reporter.  @msg: the line, without its newline.  @cmd: for
 * CTL_REPORT_USAGE, the command it is about (the program may add how to
 * use it), else NULL.
 */
typedef void ctl_reporter_fn(enum ctl_report_kind kind, const char *cmd,
			     const char *msg);

/* Where the reports go from now on; NULL: the default, stderr. */
void ctl_set_reporter(ctl_reporter_fn *fn);

/* Report the message @fmt makes, a CTL_REPORT_ERROR. */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report a failed device call "WHAT: text"; return its exit code. */
int ctl_fail(const char *what, int err);

/*
 * Usage error of command @cmd: "CMD[ VALUE]: message", a
 * CTL_REPORT_USAGE; returns CTL_EXIT_USAGE.
 */
int ctl_usage_error(const char *cmd, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* _CTL_REPORT_H */
