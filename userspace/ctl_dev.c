// SPDX-License-Identifier: GPL-2.0
/*
 * libcnfctl: the device - opening it, checking the module's ABI - and the
 * calls that name a set, on modules with sets and without.
 *
 * A module from before sets takes single entries as a struct cnf_addr and
 * batches and dumps without their set name.  One that takes grown structs
 * accepts the new ones with an all-zero name (the default set) and answers
 * -E2BIG to a name; an older one answers -ENOTTY to any size but its own.
 * So the default set is always sent as an all-zero name, retried in the
 * first version's size on -ENOTTY; a named set on such a module is
 * CTL_ENOSETS.
 *
 * Timeouts travel in the fields structs gained last.  A module from before
 * them takes the grown structs with those fields zero, and refuses them
 * set: -E2BIG (it knows a shorter struct) or -ENOTTY (it knows the first
 * version's only).  A call carrying a timeout is not retried then: it is
 * CTL_ENOTIMEOUT.  --exist's flag alone is dropped and the call retried:
 * such a module leaves a present entry as it is anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl_dev.h"
#include "ctl_format.h"
#include "ctl_parse.h"
#include "ctl_report.h"

#ifndef CTL_VERSION
#error "CTL_VERSION: build with make, which takes it from dkms.conf"
#endif

const char *ctl_device = CNF_DEVICE_PATH;

int ctl_module_version(int fd, struct cnf_version *v)
{
	memset(v, 0, sizeof(*v));
	if (ioctl(fd, CNF_IOC_VERSION, v) < 0)
		return -errno;
	/* Never trust the kernel to terminate it. */
	v->version[sizeof(v->version) - 1] = '\0';
	return 0;
}

/*
 * The module's ABI must be one this tool knows.  A module without
 * CNF_IOC_VERSION (-ENOTTY) predates it and speaks ABI 1; any other
 * failure is left for the command's own call to report.
 */
static int check_abi(int fd)
{
	struct cnf_version v;

	if (ctl_module_version(fd, &v) || v.abi == CNF_ABI_VERSION)
		return 0;
	ctl_err("the loaded module (version %s) speaks ABI %u; this cuckooctl (" CTL_VERSION ") knows ABI %u only: install a cuckooctl matching the module",
		v.version, v.abi, CNF_ABI_VERSION);
	return -CTL_EXIT_ABI;
}

int ctl_open_unchecked(void)
{
	int fd = open(ctl_device, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOENT:
	case ENOTDIR:
	case ENXIO:	/* a stale node whose driver is gone */
	case ENODEV:
		return -CTL_EXIT_NODEV;
	case EPERM:
	case EACCES:
		return -CTL_EXIT_PERM;
	}
	return -CTL_EXIT_FAIL;
}

int ctl_open_device(void)
{
	int fd = ctl_open_unchecked(), rc;

	if (fd >= 0) {
		rc = check_abi(fd);
		if (!rc)
			return fd;
		close(fd);
		return rc;
	}
	if (fd == -CTL_EXIT_NODEV)
		ctl_err("%s not found: load the module (modprobe cuckoo_nf / insmod cuckoo_nf.ko)",
			ctl_device);
	else if (fd == -CTL_EXIT_PERM)
		ctl_err("%s: %s", ctl_device, ctl_strerror(errno));
	else
		ctl_err("%s: %s", ctl_device, strerror(errno));
	return fd;
}

int ctl_open_no_args(const char *cmd, int argc, char **argv)
{
	if (argc)
		return -ctl_usage_error(cmd, argv[0], "unexpected argument");
	return ctl_open_device();
}

/* The calls in their first version's size. */
#define V1_IOC(dir, nr, size)	_IOC(dir, CNF_IOC_TYPE, nr, size)
#define V1_ENTRY(dir, nr)	V1_IOC(dir, nr, sizeof(struct cnf_addr))
#define V1_BATCH(nr)		V1_IOC(_IOC_READ | _IOC_WRITE, nr, \
				       offsetof(struct cnf_batch, set))
#define V1_DUMP			V1_IOC(_IOC_READ | _IOC_WRITE, 0x06, \
				       offsetof(struct cnf_dump, set))

static const struct {
	unsigned long req, v1;
} entry_calls[CTL_ENTRY_OPS] = {
	[CTL_ADD] = { CNF_IOC_ADD, V1_ENTRY(_IOC_WRITE, 0x01) },
	[CTL_DEL] = { CNF_IOC_DEL, V1_ENTRY(_IOC_WRITE, 0x02) },
	[CTL_TEST] = { CNF_IOC_TEST, V1_ENTRY(_IOC_WRITE, 0x03) },
	[CTL_MATCH] = { CNF_IOC_MATCH, V1_ENTRY(_IOC_READ | _IOC_WRITE, 0x0b) },
};

/*
 * @req on @arg, then @v1 when the module knows only the first version
 * (remembered in *@old): 0 or a positive errno.  @timed: @arg carries a
 * timeout or a flag of timeouts, refused by a module without them.
 */
static int call_sized(int fd, unsigned long req, unsigned long v1,
		      void *arg, bool named, bool timed, bool *old)
{
	int err;

	if (timed && *old)
		return CTL_ENOTIMEOUT;
	if (!*old) {
		if (!ioctl(fd, req, arg))
			return 0;
		err = errno;
		if (err != ENOTTY && err != E2BIG)
			return err;
		if (timed) {
			/* Any size but the first version's: that one only. */
			*old = err == ENOTTY;
			return CTL_ENOTIMEOUT;
		}
		if (named)
			return CTL_ENOSETS;
		if (err == E2BIG)
			return err;
		*old = true;
	}
	if (named)
		return CTL_ENOSETS;
	return ioctl(fd, v1, arg) ? errno : 0;
}

int ctl_entry_call(int fd, enum ctl_entry_op op, const char *set,
		   struct cnf_addr *a, uint32_t flags, uint32_t *timeout)
{
	static bool old[CTL_ENTRY_OPS], no_exist;
	struct cnf_entry e;
	int err;

	memset(&e, 0, sizeof(e));
	e.addr = *a;
	ctl_set_field(e.set, set);
	if (no_exist)
		flags &= ~(uint32_t)CNF_ENTRY_F_EXIST;
	if (flags & CNF_ENTRY_F_TIMEOUT)
		e.timeout = *timeout;
	e.flags = flags;
	/* The first version's struct is the entry's first member. */
	err = call_sized(fd, entry_calls[op].req, entry_calls[op].v1, &e,
			 !!e.set[0], !!flags, &old[op]);
	if (err == CTL_ENOTIMEOUT && flags == CNF_ENTRY_F_EXIST) {
		no_exist = true;
		e.flags = 0;
		err = call_sized(fd, entry_calls[op].req, entry_calls[op].v1,
				 &e, !!e.set[0], false, &old[op]);
	}
	if (err)
		return err;
	*a = e.addr;
	if (op == CTL_MATCH && timeout)
		*timeout = e.timeout;
	return 0;
}

int ctl_batch_call(int fd, bool del, const char *set, struct cnf_batch *b)
{
	static bool old[2];

	ctl_set_field(b->set, set);
	return call_sized(fd, del ? CNF_IOC_DEL_BATCH : CNF_IOC_ADD_BATCH,
			  del ? V1_BATCH(0x05) : V1_BATCH(0x04), b, !!b->set[0],
			  !!b->timeouts, &old[del]);
}

int ctl_dump_call(int fd, const char *set, struct cnf_dump *d)
{
	static bool old, no_timeouts;
	int err;

	ctl_set_field(d->set, set);
	if (no_timeouts)
		d->timeouts = 0;
	err = call_sized(fd, CNF_IOC_DUMP, V1_DUMP, d, !!d->set[0],
			 !!d->timeouts, &old);
	/* A module without timeouts: the prefixes alone. */
	if (err == CTL_ENOTIMEOUT) {
		no_timeouts = true;
		d->timeouts = 0;
		err = call_sized(fd, CNF_IOC_DUMP, V1_DUMP, d, !!d->set[0],
				 false, &old);
	}
	return err;
}

int ctl_set_call(int fd, unsigned long req, const char *name, uint32_t kind,
		 uint32_t timeout)
{
	return ctl_set_log_call(fd, req, name, kind, timeout, NULL);
}

int ctl_set_log_call(int fd, unsigned long req, const char *name,
		     uint32_t kind, uint32_t timeout, const struct ctl_log *log)
{
	bool logs = log && log->flags;
	struct cnf_set_req r;

	memset(&r, 0, sizeof(r));
	strncpy(r.name, name, sizeof(r.name) - 1);
	r.kind = kind & ~CTL_KIND_RULES_ONLY;
	r.flags = kind & CTL_KIND_RULES_ONLY ? CNF_SET_F_RULES_ONLY : 0;
	r.timeout = timeout;
	if (log) {
		r.flags |= log->flags;
		r.log_group = log->group;
	}
	if (!ioctl(fd, req, &r))
		return 0;
	if (errno == ENOTTY)
		return req == CNF_IOC_SET_CHANGE ? CTL_ENOLOG : CTL_ENOSETS;
	/*
	 * Set names, kinds and logging were checked here: a module before
	 * logging refuses its flags (EINVAL) or its group (E2BIG); one with
	 * it says ENOENT when the kernel has no logger of the type.
	 */
	if (logs && (errno == EINVAL || errno == E2BIG))
		return CTL_ENOLOG;
	if (logs && errno == ENOENT)
		return CTL_ENOLOGGER;
	return errno == E2BIG && timeout ? CTL_ENOTIMEOUT : errno;
}

bool ctl_has_timeouts(int fd)
{
	static int known = -1;
	struct cnf_set_req r;

	if (known >= 0)
		return known;
	/*
	 * Creating the default set, which always exists, with a timeout:
	 * -EEXIST (or -EINVAL) from a module with timeouts, which reads the
	 * whole struct before anything else; -E2BIG or -ENOTTY from one
	 * without, which refuses the struct.  Nothing changes either way.
	 */
	memset(&r, 0, sizeof(r));
	strcpy(r.name, CNF_SET_DEFAULT);
	r.timeout = 1;
	known = !ioctl(fd, CNF_IOC_SET_CREATE, &r) ||
		(errno != E2BIG && errno != ENOTTY);
	return known;
}

int ctl_flush_call(int fd, const char *set)
{
	if (ctl_set_is_default(set))
		return ioctl(fd, CNF_IOC_FLUSH) ? errno : 0;
	return ctl_set_call(fd, CNF_IOC_SET_FLUSH, set, 0, 0);
}

int ctl_swap_call(int fd, const char *a, const char *b)
{
	struct cnf_set_swap s;

	memset(&s, 0, sizeof(s));
	strncpy(s.a, a, sizeof(s.a) - 1);
	strncpy(s.b, b, sizeof(s.b) - 1);
	if (!ioctl(fd, CNF_IOC_SET_SWAP, &s))
		return 0;
	return errno == ENOTTY ? CTL_ENOSETS : errno;
}

long ctl_find_set(const struct cnf_set_info *sets, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strncmp(sets[i].name, name ? name : CNF_SET_DEFAULT,
			     sizeof(sets[i].name)))
			return i;
	return -1;
}

int ctl_set_list(int fd, struct cnf_set_info **sets, size_t *n)
{
	struct cnf_set_list l;
	struct cnf_set_info *buf = NULL, *p;
	uint32_t room = 16;

	for (;;) {
		p = realloc(buf, room * sizeof(*buf));
		if (!p) {
			free(buf);
			return ENOMEM;
		}
		buf = p;
		memset(&l, 0, sizeof(l));
		l.sets = (uintptr_t)buf;
		l.count = room;
		l.size = sizeof(*buf);
		if (ioctl(fd, CNF_IOC_SET_LIST, &l)) {
			free(buf);
			return errno == ENOTTY ? CTL_ENOSETS : errno;
		}
		/* Sets created meanwhile: ask again with room for them. */
		if (l.total <= l.count && l.count <= room)
			break;
		room = l.total + 16;
	}
	*sets = buf;
	*n = l.count;
	return 0;
}

static int dump_chunk(int fd, const char *set, struct cnf_dump *d,
		      struct cnf_addr *buf, uint32_t *sec, uint32_t room,
		      bool every_timeout, FILE *out)
{
	char text[CTL_PREFIXSTRLEN];
	uint32_t i;
	int err;

	d->addrs = (uintptr_t)buf;
	d->timeouts = (uintptr_t)sec;
	d->count = room;
	d->flags = 0;
	err = ctl_dump_call(fd, set, d);
	if (err)
		return err;
	if (d->count > room)
		return EPROTO;
	for (i = 0; i < d->count; i++) {
		fputs(ctl_format_prefix(&buf[i], text, sizeof(text)), out);
		/* Zeroed by ctl_dump_call() for a module without timeouts. */
		if ((d->timeouts && sec[i]) || every_timeout)
			fprintf(out, " " CTL_TIMEOUT_WORD " %lu",
				d->timeouts ? (unsigned long)sec[i] : 0ul);
		putc('\n', out);
	}
	return 0;
}

/* The dump loop: a chunk per call until the kernel says done. */
int ctl_dump(const char *cmd, int fd, const char *set, bool every_timeout,
	     FILE *out, uint64_t *count)
{
	const uint32_t room = 65536;
	struct cnf_addr *buf = calloc(room, sizeof(*buf));
	uint32_t *sec = calloc(room, sizeof(*sec));
	char why[CTL_SET_ERRLEN];
	struct cnf_dump d;
	int err = 0;

	*count = 0;
	if (!buf || !sec) {
		free(buf);
		free(sec);
		return ctl_fail(cmd, ENOMEM);
	}
	memset(&d, 0, sizeof(d));
	do {
		err = dump_chunk(fd, set, &d, buf, sec, room, every_timeout,
				 out);
		if (!err)
			*count += d.count;
		/* Neither done nor progress would loop forever. */
		if (!err && !d.count && !(d.flags & CNF_DUMP_F_DONE))
			err = EPROTO;
	} while (!err && !(d.flags & CNF_DUMP_F_DONE));
	free(buf);
	free(sec);
	if (err == ENOSPC) {
		/* The kernel copies the set first, within the memory limit. */
		ctl_err("%s: no room for a copy of the set within the namespace's memory limit: raise it ('cuckooctl limit')",
			cmd);
		return ctl_exit_code(ENOSPC);
	}
	if (!err)
		return CTL_EXIT_OK;
	if (err == EAGAIN) {
		/*
		 * The kernel copies the set in steps, anew after a replace,
		 * and a part anew that changed too much meanwhile.
		 */
		ctl_err("%s: the set's contents were replaced or changed over and over while it was copied: try again",
			cmd);
		return ctl_exit_code(EAGAIN);
	}
	if (ctl_set_is_default(set))
		return ctl_fail(cmd, err);
	ctl_err("%s %s: %s", cmd, set,
		ctl_strerror_entry(err, NULL, set, why, sizeof(why)));
	return ctl_exit_code(err);
}
