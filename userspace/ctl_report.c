// SPDX-License-Identifier: GPL-2.0
/*
 * libcnfctl: reports of failures, through the program's reporter.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctl_format.h"
#include "ctl_report.h"

/*
 * The default: the line on stderr, after what the program printed on
 * stdout, so that the two read in order on a terminal.
 */
static void report_stderr(enum ctl_report_kind kind, const char *cmd,
			  const char *msg)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
}

static ctl_reporter_fn *reporter = report_stderr;

void ctl_set_reporter(ctl_reporter_fn *fn)
{
	reporter = fn ? fn : report_stderr;
}

/*
 * @head, then @fmt made with @ap, to the reporter.  Out of memory, the
 * line is @head and @fmt as they are: less said, but said.
 */
static void report(enum ctl_report_kind kind, const char *cmd,
		   const char *head, const char *fmt, va_list ap)
{
	char *text, *line;

	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	if (asprintf(&line, "%s%s", head, text ? text : fmt) < 0)
		line = NULL;
	reporter(kind, cmd, line ? line : text ? text : fmt);
	free(line);
	free(text);
}

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(CTL_REPORT_ERROR, NULL, "", fmt, ap);
	va_end(ap);
}

int ctl_fail(const char *what, int err)
{
	ctl_err("%s: %s", what, ctl_strerror(err));
	return ctl_exit_code(err);
}

int ctl_usage_error(const char *cmd, const char *value, const char *fmt, ...)
{
	char *head;
	va_list ap;

	if (asprintf(&head, "%s%s%s: ", cmd, value ? " " : "",
		     value ? value : "") < 0)
		head = NULL;
	va_start(ap, fmt);
	report(CTL_REPORT_USAGE, cmd, head ? head : "", fmt, ap);
	va_end(ap);
	free(head);
	return CTL_EXIT_USAGE;
}
