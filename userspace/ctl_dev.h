/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcnfctl: the device, /dev/cuckoo_nf, and its calls, on modules with
 * sets and timeouts and on those from before (ctl_dev.c).  Failures are
 * reported through ctl_report.h's reporter where a function says so.
 */
#ifndef _CTL_DEV_H
#define _CTL_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>

#include "ctl_setname.h"

/* Device path; only the -d option changes it (tests, other namespaces). */
extern const char *ctl_device;

/*
 * Open the device and check that the module speaks an ABI this tool knows:
 * fd, or minus the exit code after saying what is wrong.
 */
int ctl_open_device(void);

/*
 * Open ctl_device without a question to the module: fd, or minus
 * CTL_EXIT_NODEV, CTL_EXIT_PERM or CTL_EXIT_FAIL with errno kept and
 * nothing said.
 */
int ctl_open_unchecked(void);

/*
 * ctl_open_device() for command @cmd, which takes no operand: with one
 * (@argc of @argv), a usage error and -CTL_EXIT_USAGE.
 */
int ctl_open_no_args(const char *cmd, int argc, char **argv);

/* CNF_IOC_VERSION: 0, or -errno (-ENOTTY: a module older than the call). */
int ctl_module_version(int fd, struct cnf_version *v);

/*
 * The device calls naming a set (ctl_dev.c): 0 or a positive errno,
 * CTL_ENOSETS for a named set on a module without sets.  @set NULL or
 * "default": the default set, which works on every module.
 */
enum ctl_entry_op { CTL_ADD, CTL_DEL, CTL_TEST, CTL_MATCH, CTL_ENTRY_OPS };
/*
 * One entry; CTL_MATCH overwrites @a with the covering prefix and
 * *@timeout (may be NULL) with the seconds it has left, 0: none.  @flags:
 * CNF_ENTRY_F_* for CTL_ADD, with CNF_ENTRY_F_TIMEOUT *@timeout its
 * timeout.  CTL_ENOTIMEOUT: a module without timeouts, and a timeout.
 */
int ctl_entry_call(int fd, enum ctl_entry_op op, const char *set,
		   struct cnf_addr *a, uint32_t flags, uint32_t *timeout);
/*
 * CNF_IOC_ADD_BATCH, or CNF_IOC_DEL_BATCH when @del, on @b for @set;
 * CTL_ENOTIMEOUT for b->timeouts and a module without timeouts.
 */
int ctl_batch_call(int fd, bool del, const char *set, struct cnf_batch *b);
int ctl_dump_call(int fd, const char *set, struct cnf_dump *d);
/*
 * CNF_IOC_SET_CREATE, _DESTROY or _FLUSH (req) of set @name; @kind and
 * @timeout (its default, 0: none) for CNF_IOC_SET_CREATE, else 0.
 */
int ctl_set_call(int fd, unsigned long req, const char *name, uint32_t kind,
		 uint32_t timeout);
/*
 * As ctl_set_call(), with the set's logging (NULL: none given): for
 * CNF_IOC_SET_CREATE and CNF_IOC_SET_CHANGE.
 */
int ctl_set_log_call(int fd, unsigned long req, const char *name,
		     uint32_t kind, uint32_t timeout, const struct ctl_log *log);
/* Whether the module takes timeouts: asked once, without a change. */
bool ctl_has_timeouts(int fd);
/* Empty @set: CNF_IOC_FLUSH for the default set, else CNF_IOC_SET_FLUSH. */
int ctl_flush_call(int fd, const char *set);
int ctl_swap_call(int fd, const char *a, const char *b);
/* The namespace's sets into *@sets (malloc'd, creation order), *@n of them. */
int ctl_set_list(int fd, struct cnf_set_info **sets, size_t *n);
/* The index of set @name (NULL: default) in @sets, or -1. */
long ctl_find_set(const struct cnf_set_info *sets, size_t n, const char *name);

/*
 * Write @set (NULL: default) to @out, a prefix a line, counting them: exit
 * code.  A prefix with a timeout is followed by " timeout SECONDS" (the
 * seconds it has left); with @every_timeout one without by " timeout 0".
 */
int ctl_dump(const char *cmd, int fd, const char *set, bool every_timeout,
	     FILE *out, uint64_t *count);

#endif /* _CTL_DEV_H */
