// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: the device calls, through cuckooctl's helpers
 * (../ctl_dev.c).  The bouncer needs a module with timeouts: with one
 * without them, adds and replaces fail with CTL_ENOTIMEOUT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cbn.h"
#include "../ctl.h"

int cbn_dev_open(const char *path)
{
	struct cnf_version v;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
			cbn_log(CBN_ERROR,
				"cuckoo_nf module not loaded (%s: %s): modprobe cuckoo_nf",
				path, strerror(errno));
		else
			cbn_log(CBN_ERROR, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(&v, 0, sizeof(v));
	if (ioctl(fd, CNF_IOC_VERSION, &v)) {
		cbn_log(CBN_ERROR, "%s: %s: not a cuckoo_nf module with entry timeouts",
			path, strerror(errno));
		close(fd);
		return -1;
	}
	if (v.abi != CNF_ABI_VERSION) {
		cbn_log(CBN_ERROR,
			"%s: the module (%.*s) speaks ABI %u, this bouncer ABI %u",
			path, CNF_VERSION_LEN, v.version, v.abi, CNF_ABI_VERSION);
		close(fd);
		return -1;
	}
	return fd;
}

bool cbn_dev_lost(int err)
{
	/* The set was destroyed, the module is going, or is not ours. */
	return err == ENXIO || err == ENODEV || err == EBADF ||
	       err == ENOTTY || err == E2BIG || err == EPERM ||
	       err == CTL_ENOSETS || err == CTL_ENOTIMEOUT;
}

int cbn_dev_ensure_set(int fd, const char *set)
{
	return cbn_dev_ensure_set_log(fd, set, false);
}

/*
 * deny_log: @set's drops logged to the kernel log, as `cuckooctl set SET
 * log on`.  A module or kernel that cannot is said, and the set drops
 * all the same: the drops are counted, only not logged.
 */
static void set_log_on(int fd, const char *set)
{
	struct ctl_log log = { .flags = CNF_SET_F_LOG };
	char why[CTL_SET_ERRLEN];
	int err;

	err = ctl_set_log_call(fd, CNF_IOC_SET_CHANGE, set, 0, 0, &log);
	if (err)
		cbn_log(CBN_ERROR, "deny_log: set %s log on: %s; its drops are counted, not logged",
			set, ctl_strerror_set(err, set, why, sizeof(why)));
	else
		cbn_log(CBN_INFO, "set %s logs its drops (deny_log)", set);
}

int cbn_dev_ensure_set_log(int fd, const char *set, bool log)
{
	char why[CTL_SET_ERRLEN];
	struct cnf_set_info *sets;
	bool logs = false;
	size_t n;
	long i;
	int err;

	err = ctl_set_list(fd, &sets, &n);
	if (err) {
		cbn_log(CBN_ERROR, "list of sets: %s", ctl_strerror(err));
		return err;
	}
	i = ctl_find_set(sets, n, set);
	if (i >= 0 && sets[i].kind != CNF_SET_BLOCK) {
		cbn_log(CBN_ERROR,
			"set %s is an allow set: name a block set in the configuration ('set:') or destroy it (cuckooctl destroy %s)",
			set, set);
		free(sets);
		return EINVAL;
	}
	if (i >= 0)
		logs = sets[i].flags & (CNF_SET_F_LOG | CNF_SET_F_NFLOG);
	free(sets);
	if (i < 0) {
		err = ctl_set_call(fd, CNF_IOC_SET_CREATE, set, CNF_SET_BLOCK, 0);
		if (err && err != EEXIST) {
			cbn_log(CBN_ERROR, "create set %s: %s", set,
				ctl_strerror_set(err, set, why, sizeof(why)));
			return err;
		}
		if (!err)
			cbn_log(CBN_INFO, "created block set %s", set);
	}
	/* Without deny_log, a logging set someone turned on is left so. */
	if (log && !logs)
		set_log_on(fd, set);
	return 0;
}

int cbn_dev_add(int fd, const char *set, const struct cnf_addr *a,
		uint32_t timeout)
{
	char text[CTL_PREFIXSTRLEN], why[CTL_SET_ERRLEN];
	struct cnf_addr copy = *a;
	int err;

	err = ctl_entry_call(fd, CTL_ADD, set, &copy,
			     CNF_ENTRY_F_TIMEOUT | CNF_ENTRY_F_EXIST, &timeout);
	if (!err)
		return 0;
	cbn_log(CBN_ERROR, "add %s to %s (timeout %us): %s",
		ctl_format_prefix(a, text, sizeof(text)), set, timeout,
		ctl_strerror_entry(err, a, set, why, sizeof(why)));
	return err;
}

int cbn_dev_del(int fd, const char *set, const struct cnf_addr *a)
{
	char text[CTL_PREFIXSTRLEN], why[CTL_SET_ERRLEN];
	struct cnf_addr copy = *a;
	int err = ctl_entry_call(fd, CTL_DEL, set, &copy, 0, NULL);

	/* Gone already: its timeout ran out, or someone deleted it. */
	if (!err || err == ENOENT)
		return 0;
	cbn_log(CBN_ERROR, "delete %s from %s: %s",
		ctl_format_prefix(a, text, sizeof(text)), set,
		ctl_strerror_entry(err, a, set, why, sizeof(why)));
	return err;
}

/*
 * dev_batch_all: one batch call of the n prefixes with FLAGS; a failure
 * logged as "WHAT SET: ..." with the entry it stopped at, and AFTER (what
 * the failure left of the set) at the end.
 */
static int dev_batch_all(int fd, const char *what, const char *set,
			 const struct cnf_addr *addrs, const uint32_t *timeouts,
			 size_t n, uint32_t flags, const char *after)
{
	char text[CTL_PREFIXSTRLEN], why[CTL_SET_ERRLEN];
	struct cnf_batch b;
	int err;

	if (n > CNF_BATCH_MAX) {
		cbn_log(CBN_ERROR, "%s %s: %zu prefixes, the module takes at most %u in one call",
			what, set, n, CNF_BATCH_MAX);
		return E2BIG;
	}
	memset(&b, 0, sizeof(b));
	b.addrs = (uintptr_t)addrs;
	b.timeouts = (uintptr_t)timeouts;
	b.count = n;
	b.flags = flags;
	err = ctl_batch_call(fd, false, set, &b);
	if (!err)
		return 0;
	if (b.done < n && b.error)
		cbn_log(CBN_ERROR, "%s %s: %s (timeout %us): %s%s", what, set,
			ctl_format_prefix(&addrs[b.done], text, sizeof(text)),
			timeouts[b.done],
			ctl_strerror_entry(-b.error, &addrs[b.done], set, why,
					   sizeof(why)), after);
	else
		cbn_log(CBN_ERROR, "%s %s: %s%s", what, set,
			ctl_strerror_entry(err, NULL, set, why, sizeof(why)),
			after);
	return err;
}

int cbn_dev_replace(int fd, const char *set, const struct cnf_addr *addrs,
		    const uint32_t *timeouts, size_t n)
{
	return dev_batch_all(fd, "replace", set, addrs, timeouts, n,
			     CNF_BATCH_F_REPLACE | CNF_BATCH_F_EXIST_OK,
			     "; the set is left as it was");
}

int cbn_dev_add_all(int fd, const char *set, const struct cnf_addr *addrs,
		    const uint32_t *timeouts, size_t n)
{
	return dev_batch_all(fd, "add to", set, addrs, timeouts, n,
			     CNF_BATCH_F_EXIST_OK, "");
}
