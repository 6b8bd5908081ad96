// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for test_ctl_cli: cuckooctl's ioctls answered as a
 * cuckoo_nf module would, without one.  The device cuckooctl opens is any
 * file (the test uses /dev/null); every cuckoo_nf request is answered here,
 * anything else goes to the real ioctl().
 *
 * CNF_FAKE_KERNEL=new: a module with prefixes.  The set is fixed (below);
 *   CNF_IOC_MATCH returns the longest stored prefix covering the query,
 *   CNF_IOC_STATS fills the whole struct.
 * CNF_FAKE_KERNEL=old: a module from before prefixes: CNF_IOC_MATCH is
 *   unknown (-ENOTTY), CNF_IOC_TEST covers single addresses only, stats
 *   end before the lookup figures (left as the caller had them).
 * CNF_FAKE_LOG=FILE: one line per cuckoo_nf request ("MATCH", "TEST", ...).
 *
 * Batches apply every entry; single adds and deletes and flushes succeed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/cuckoo_nf.h>

static const struct cnf_addr fake_set[] = {
	{ AF_INET, 8, 0, { 10 } },
	{ AF_INET, 16, 0, { 10, 1 } },
	{ AF_INET, 32, 0, { 192, 0, 2, 7 } },
	{ AF_INET6, 32, 0, { 0x20, 0x01, 0x0d, 0xb8 } },
};

static bool old_kernel(void)
{
	const char *k = getenv("CNF_FAKE_KERNEL");

	return k && !strcmp(k, "old");
}

static void log_call(const char *name)
{
	const char *path = getenv("CNF_FAKE_LOG");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s\n", name);
	fclose(f);
}

/* Does @p (a stored prefix) cover @q? */
static bool covers(const struct cnf_addr *p, const struct cnf_addr *q)
{
	unsigned int i;

	if (p->family != q->family || p->prefixlen > q->prefixlen)
		return false;
	for (i = 0; i < p->prefixlen; i++) {
		unsigned int bit = 0x80 >> (i % 8);

		if ((p->addr[i / 8] & bit) != (q->addr[i / 8] & bit))
			return false;
	}
	return true;
}

/* The longest stored prefix covering @q, or NULL. */
static const struct cnf_addr *longest_cover(const struct cnf_addr *q)
{
	const struct cnf_addr *best = NULL;
	size_t i;

	for (i = 0; i < sizeof(fake_set) / sizeof(fake_set[0]); i++)
		if (covers(&fake_set[i], q) &&
		    (!best || fake_set[i].prefixlen > best->prefixlen))
			best = &fake_set[i];
	return best;
}

static bool single(const struct cnf_addr *a)
{
	return a->prefixlen == (a->family == AF_INET ? 32 : 128);
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static int fake_stats(struct cnf_stats *st)
{
	struct cnf_stats s;

	memset(&s, 0, sizeof(s));
	s.v4.entries = 3;
	s.v4.capacity = 1024;
	s.v4.bytes = 4096;
	s.v6.entries = 1;
	s.v6.capacity = 256;
	s.v6.bytes = 4096;
	s.mem_limit = 1 << 20;
	s.v4_lookup.prefixes = 3;
	s.v4_lookup.keys = 256;
	s.v4_lookup.lengths = 3;
	s.v4_lookup.tables = 3;
	s.v6_lookup.prefixes = 1;
	s.v6_lookup.keys = 1;
	s.v6_lookup.lengths = 1;
	s.v6_lookup.tables = 1;
	/* An older module writes its own, shorter struct. */
	memcpy(st, &s, old_kernel() ? offsetof(struct cnf_stats, v4_lookup) :
				      sizeof(s));
	return 0;
}

static int fake_ioctl(unsigned long req, void *arg)
{
	const struct cnf_addr *m;
	struct cnf_batch *b;
	struct cnf_addr *a;

	switch (req) {
	case CNF_IOC_MATCH:
		log_call("MATCH");
		if (old_kernel())
			return fail(ENOTTY);
		a = arg;
		m = longest_cover(a);
		if (!m)
			return fail(ENOENT);
		*a = *m;
		return 0;
	case CNF_IOC_TEST:
		log_call("TEST");
		a = arg;
		if (old_kernel() && !single(a))
			return fail(EINVAL);
		return longest_cover(a) ? 0 : fail(ENOENT);
	case CNF_IOC_ADD:
	case CNF_IOC_DEL:
		log_call(req == CNF_IOC_ADD ? "ADD" : "DEL");
		a = arg;
		return old_kernel() && !single(a) ? fail(EINVAL) : 0;
	case CNF_IOC_ADD_BATCH:
	case CNF_IOC_DEL_BATCH:
		log_call(req == CNF_IOC_ADD_BATCH ? "ADD_BATCH" : "DEL_BATCH");
		b = arg;
		b->applied = b->count;
		b->skipped = 0;
		b->done = b->count;
		b->error = 0;
		return 0;
	case CNF_IOC_STATS:
		log_call("STATS");
		return fake_stats(arg);
	case CNF_IOC_FLUSH:
		log_call("FLUSH");
		return 0;
	}
	return -2;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;
	int rc;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) == CNF_IOC_TYPE) {
		rc = fake_ioctl(req, arg);
		if (rc != -2)
			return rc;
		return fail(ENOTTY);
	}
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
