/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: output formatting and the mapping of errors to text and exit
 * codes.  Pure functions of their arguments, unit-tested on the host
 * (userspace/tests/test_ctl_format.c).
 */
#ifndef _CTL_FORMAT_H
#define _CTL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Exit codes, part of the CLI contract (see cuckooctl(8)). */
enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAIL = 1,	/* operation failed, or test found an absent address */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_BADINPUT = 3,	/* unparsable input, nothing changed */
	CTL_EXIT_PERM = 5,
	CTL_EXIT_NODEV = 6,	/* /dev/cuckoo_nf missing: module not loaded */
	CTL_EXIT_ABI = 7,	/* the module speaks an ABI cuckooctl does not know */
	CTL_EXIT_ERROR = 8,	/* test: a call failed, so no answer */
};

/* Failures of this tool's own, past any errno, for ctl_strerror(). */
#define CTL_ENOSETS	4096	/* a named set, and a module without sets */
#define CTL_ENOREPLACE	4097	/* replace, and a module without sets */
#define CTL_ENOTIMEOUT	4098	/* a timeout, and a module without them */
#define CTL_ENOLOG	4099	/* a set's logging, and a module without it */
#define CTL_ENOLOGGER	4100	/* a set's logging, and no logger for it */

/* Longest address text we print: an IPv6 address, as INET6_ADDRSTRLEN. */
#define CTL_ADDRSTRLEN		46
/* The same with "/128" after it. */
#define CTL_PREFIXSTRLEN	(CTL_ADDRSTRLEN + 4)

/* Canonical inet_ntop() text of @a's address into @buf (CTL_ADDRSTRLEN). */
const char *ctl_format_addr(const struct cnf_addr *a, char *buf, size_t len);
/*
 * @a as ctl_parse_prefix() reads it back: the address, then "/LEN" unless
 * LEN is the family's width (a single address); @buf of CTL_PREFIXSTRLEN.
 */
const char *ctl_format_prefix(const struct cnf_addr *a, char *buf, size_t len);

/* "512 B", "4.0 KiB", "1.5 GiB"... into @buf. */
const char *ctl_format_bytes(uint64_t bytes, char *buf, size_t len);

/* "drop", "monitor", "mark", or NULL for a mode this tool does not know. */
const char *ctl_mode_name(uint32_t mode);
/* CNF_MODE_* for @name, or -EINVAL. */
int ctl_mode_parse(const char *name);
const char *ctl_hooks_name(const struct cnf_stats *st);
/*
 * The mode as 'mode' takes it: "drop", "monitor", "mark 0x10/0x10", or
 * "unknown (N)".
 */
void ctl_print_mode(FILE *out, const struct cnf_stats *st);
/*
 * The hooks as 'hooks' takes them: "off", "on", or "on --iif NAME..." for
 * a scope.
 */
void ctl_print_hooks(FILE *out, const struct cnf_stats *st);
/* The scope's names in @st (at most CNF_IIF_MAX, whatever it says). */
uint32_t ctl_iif_count(const struct cnf_stats *st);

/*
 * Whether the kernel filled @ls: kernels before prefixes leave it zero,
 * which is only right for an empty family.
 */
bool ctl_lookup_reported(const struct cnf_family_stats *fs,
			 const struct cnf_lookup_stats *ls);
/*
 * Keys in the tables / their slots (entries / capacity when the kernel does
 * not report keys), 0 for no capacity.
 */
double ctl_load_factor(const struct cnf_family_stats *fs,
		       const struct cnf_lookup_stats *ls);

void ctl_print_stats_text(FILE *out, const struct cnf_stats *st);
/*
 * The drop log's figures after ctl_print_stats_text(): "log: N lines, M
 * suppressed (limit R/s, burst B)", nothing from a module without logging
 * (log_rate 0).
 */
void ctl_print_log_text(FILE *out, const struct cnf_stats *st);
/*
 * The expiry figures (entries with a timeout, all sets together), after
 * ctl_print_stats_text(); @ex NULL: a module without timeouts.
 */
void ctl_print_expiry_text(FILE *out, const struct cnf_expiry_stats *ex);
/* Bytes per timed entry, 0 for none. */
double ctl_bytes_per_timed(const struct cnf_expiry_stats *ex);
/*
 * One line of JSON, keys as in the CLI contract; with @ex (the module has
 * timeouts) the expiry figures as "expiry"; with @sets (the module has
 * sets), their ctl_print_sets_json() as "sets" last.
 */
void ctl_print_stats_json(FILE *out, const struct cnf_stats *st,
			  const struct cnf_expiry_stats *ex,
			  const struct cnf_set_info *sets, size_t nsets);

/*
 * The sets of CNF_IOC_SET_LIST: a table with a header line; a set's
 * default timeout is '-' when it has none.
 */
void ctl_print_sets_text(FILE *out, const struct cnf_set_info *s, size_t n);
/* The same as a JSON array: [{"name":...,"kind":...,...},...], no newline. */
void ctl_print_sets_json(FILE *out, const struct cnf_set_info *s, size_t n);

/* Text for a positive errno from the device, in the tool's words. */
const char *ctl_strerror(int err);
/*
 * As ctl_strerror() for a call about @a: an EINVAL for a prefix this tool
 * checked can only come from a module that takes single addresses only.
 */
const char *ctl_strerror_addr(int err, const struct cnf_addr *a);
/*
 * As ctl_strerror_addr() for a call about @a (NULL: about no prefix, as
 * ctl_strerror()) in @set (NULL: default): ENXIO names the set, in @buf.
 */
const char *ctl_strerror_entry(int err, const struct cnf_addr *a,
			       const char *set, char *buf, size_t len);
/*
 * For a call about set @set as a whole (create, destroy, flush, swap):
 * the errors a set call gives, naming the set, into @buf.
 */
const char *ctl_strerror_set(int err, const char *set, char *buf, size_t len);
/* Room ctl_strerror_entry() and ctl_strerror_set() need. */
#define CTL_SET_ERRLEN	128

/* Exit code for a failed device call with positive errno @err. */
int ctl_exit_code(int err);

#endif /* _CTL_FORMAT_H */
