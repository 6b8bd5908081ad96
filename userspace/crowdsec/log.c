// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: log lines on stderr.  Under systemd (stderr a
 * journal stream) each line starts with its syslog priority, "<3>" for an
 * error, which the journal takes as the line's level; elsewhere with the
 * time.  Then the level's name and the message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cbn.h"
#include "../ctl.h"

enum cbn_level cbn_log_level = CBN_INFO;

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
	char stamp[32];
	struct tm tm;
	time_t now;
	va_list ap;

	if (level > cbn_log_level)
		return;
	if (journal < 0)
		journal = !!getenv("JOURNAL_STREAM");
	if (journal) {
		fprintf(stderr, "<%d>%s: ", levels[level].syslog,
			levels[level].name);
	} else {
		now = time(NULL);
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fprintf(stderr, "%s %s: ", stamp, levels[level].name);
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
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
 * What cuckooctl's device helpers (../ctl_dev.c) call to report: here,
 * error lines of the log.
 */
void ctl_err(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cbn_log(CBN_ERROR, "%s", msg);
}

int ctl_fail(const char *what, int err)
{
	ctl_err("%s: %s", what, ctl_strerror(err));
	return ctl_exit_code(err);
}
