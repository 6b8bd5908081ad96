// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for test_ctl_cli: cuckooctl's ioctls answered as a
 * cuckoo_nf module would, without one.  The device cuckooctl opens is any
 * file (the test uses /dev/null); every cuckoo_nf request is answered here,
 * anything else goes to the real ioctl().
 *
 * CNF_FAKE_KERNEL=new: a module with prefixes, sets and timeouts.  The
 *   default set starts with the prefixes below; sets are created,
 *   destroyed, swapped, listed and replaced in one step as the uapi header
 *   says, with its errnos.  At most FAKE_SETS sets of FAKE_ROOM prefixes
 *   (-ENOSPC).  Timeouts are stored per entry, a set's default given to
 *   entries added without one; having no clock, the fake never expires an
 *   entry and reports as the seconds it has left the timeout it was given.
 *   Its expiry figures: 48 bytes per timed entry, and fixed counts of
 *   entries expired (FAKE_EXPIRED, FAKE_LATE late, FAKE_MAX_LATE_MS).
 *   Its XDP path counted FAKE_XDP_CHECKED IPv4 packets (FAKE_XDP_MATCHED
 *   matched, FAKE_XDP_DROPPED dropped) and one more IPv6 packet, none
 *   matched; its tc path likewise, with FAKE_TC_*.
 * CNF_FAKE_KERNEL=sets: the same module before timeouts: a timeout or an
 *   entry flag in a grown struct is refused with -E2BIG, as a module with
 *   a shorter struct refuses a nonzero tail; sets report no timeouts, the
 *   stats no expiry figures.
 * CNF_FAKE_KERNEL=old: a module from before prefixes and sets: it knows
 *   only the first version's struct sizes (-ENOTTY for any other), has no
 *   CNF_IOC_MATCH and no set calls (-ENOTTY), takes single addresses only
 *   (-EINVAL), and its stats end before the lookup figures.
 *   Its settings (CNF_IOC_SET_CONFIG): the mode, mark, hooks and scope,
 *   kept and reported in the stats, the errnos of the uapi header for a
 *   mark outside its mask, a mode mark without one, a bad name or too
 *   many of them.
 * CNF_FAKE_STATE=FILE: the sets are read from FILE and written back after
 *   each change, so that several runs of cuckooctl see one module; each
 *   request holds FILE.lock, and FILE is replaced whole (state_lock()), so
 *   runs at the same time see one module too.
 * CNF_FAKE_IFADDRS=DEV=ADDR[,DEV=ADDR...]: what getifaddrs() answers,
 *   the namespace's own addresses; none when unset, so that what a test
 *   prints does not depend on the host's devices.
 * CNF_FAKE_LOG=FILE: one line per cuckoo_nf request: its name ("MATCH",
 *   "ADD_BATCH"...), then "/1" for the first version's size, " SET" for a
 *   named set, " replace" for CNF_BATCH_F_REPLACE, " exist" for
 *   CNF_ENTRY_F_EXIST, " timeout=N" for an entry's timeout, " timeouts"
 *   for a batch with its array of them.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/cuckoo_nf.h>

#define FAKE_SETS	8
#define FAKE_ROOM	64
#define FAKE_EXPIRED	7
#define FAKE_LATE	2
#define FAKE_MAX_LATE_MS 1250
#define FAKE_XDP_CHECKED 90
#define FAKE_XDP_MATCHED 5
#define FAKE_XDP_DROPPED 4
#define FAKE_TC_CHECKED 70
#define FAKE_TC_MATCHED 3
#define FAKE_TC_DROPPED 2

/* The first version's requests: the struct ends before the set's name. */
#define V1(dir, nr, size)	_IOC(dir, CNF_IOC_TYPE, nr, size)
#define RW			(_IOC_READ | _IOC_WRITE)
#define V1_ADD		V1(_IOC_WRITE, 0x01, sizeof(struct cnf_addr))
#define V1_DEL		V1(_IOC_WRITE, 0x02, sizeof(struct cnf_addr))
#define V1_TEST		V1(_IOC_WRITE, 0x03, sizeof(struct cnf_addr))
#define V1_MATCH	V1(RW, 0x0b, sizeof(struct cnf_addr))
#define V1_ADD_BATCH	V1(RW, 0x04, offsetof(struct cnf_batch, set))
#define V1_DEL_BATCH	V1(RW, 0x05, offsetof(struct cnf_batch, set))
#define V1_DUMP		V1(RW, 0x06, offsetof(struct cnf_dump, set))

struct fake_set {
	char name[CNF_SET_NAME_LEN];
	uint32_t kind;
	uint32_t timeout;		/* default of entries added without */
	uint32_t flags;			/* CNF_SET_F_RULES_ONLY */
	uint32_t n;
	struct cnf_addr a[FAKE_ROOM];
	uint32_t to[FAKE_ROOM];		/* timeout of a[i], 0: none */
};

static struct {
	uint32_t nsets;
	struct fake_set s[FAKE_SETS];
	struct cnf_config cfg;		/* mode, mark, hooks, scope */
} st;
static bool loaded;

static const struct cnf_addr first_prefixes[] = {
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

/* A module without timeouts: "old" or "sets". */
static bool no_timeouts(void)
{
	const char *k = getenv("CNF_FAKE_KERNEL");

	return old_kernel() || (k && !strcmp(k, "sets"));
}

static void load_state(void)
{
	const char *path = getenv("CNF_FAKE_STATE");
	FILE *f = path ? fopen(path, "re") : NULL;

	loaded = true;
	if (f && fread(&st, sizeof(st), 1, f) == 1) {
		fclose(f);
		return;
	}
	if (f)
		fclose(f);
	memset(&st, 0, sizeof(st));
	st.nsets = 1;
	strcpy(st.s[0].name, CNF_SET_DEFAULT);
	st.s[0].n = sizeof(first_prefixes) / sizeof(first_prefixes[0]);
	memcpy(st.s[0].a, first_prefixes, sizeof(first_prefixes));
}

/*
 * Written whole to PATH.tmp, then renamed over PATH: a reader sees the
 * old state or the new one, never half of one.  Under state_lock().
 */
static void save_state(void)
{
	const char *path = getenv("CNF_FAKE_STATE");
	char tmp[4096];
	FILE *f;
	bool ok;

	if (!path || (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >=
		     sizeof(tmp))
		return;
	f = fopen(tmp, "we");
	if (!f)
		return;
	ok = fwrite(&st, sizeof(st), 1, f) == 1;
	if (fclose(f) || !ok || rename(tmp, path))
		unlink(tmp);
}

/*
 * With CNF_FAKE_STATE, several processes share the state: each request
 * takes PATH.lock (flock, released when the fd closes), reads the state
 * afresh and writes what it changed before the next process may read.
 * Returns the lock's fd, -1 for none (no state file, or no lock to be
 * had: then the request works on what this process read last).
 */
static int state_lock(void)
{
	const char *path = getenv("CNF_FAKE_STATE");
	char lock[4096];
	int fd;

	if (!path || (size_t)snprintf(lock, sizeof(lock), "%s.lock", path) >=
		     sizeof(lock))
		return -1;
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX)) {
		close(fd);
		return -1;
	}
	load_state();
	return fd;
}

static void log_call(const char *name, bool v1, const char *set, bool replace,
		     const char *extra)
{
	const char *path = getenv("CNF_FAKE_LOG");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s%s%s%.*s%s%s\n", name, v1 ? "/1" : "",
		set && set[0] ? " " : "", CNF_SET_NAME_LEN, set ? set : "",
		replace ? " replace" : "", extra);
	fclose(f);
}

static int fail(int err)
{
	errno = err;
	return -1;
}

/* The set @name names (all zero: the default set), or NULL. */
static struct fake_set *find(const char *name)
{
	uint32_t i;

	if (!name[0])
		return &st.s[0];
	for (i = 0; i < st.nsets; i++)
		if (!strncmp(st.s[i].name, name, CNF_SET_NAME_LEN))
			return &st.s[i];
	return NULL;
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

/* The longest prefix of @s covering @q, or NULL. */
static const struct cnf_addr *longest_cover(const struct fake_set *s,
					    const struct cnf_addr *q)
{
	const struct cnf_addr *best = NULL;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (covers(&s->a[i], q) &&
		    (!best || s->a[i].prefixlen > best->prefixlen))
			best = &s->a[i];
	return best;
}

/* Index of exactly @q in @s, or -1. */
static long index_of(const struct fake_set *s, const struct cnf_addr *q)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (!memcmp(&s->a[i], q, sizeof(*q)))
			return i;
	return -1;
}

static bool single(const struct cnf_addr *a)
{
	return a->prefixlen == (a->family == AF_INET ? 32 : 128);
}

/*
 * Add (@add) or delete @a in @s: 0 or an errno.  An add gives @a timeout
 * *@to, or the set's default when @to is NULL; with @exist a present @a
 * gets it anew and EEXIST is still returned.
 */
static int change(struct fake_set *s, const struct cnf_addr *a, bool add,
		  const uint32_t *to, bool exist)
{
	long i = index_of(s, a);

	if (old_kernel() && !single(a))
		return EINVAL;
	if (!add) {
		if (i < 0)
			return ENOENT;
		s->n--;
		s->a[i] = s->a[s->n];
		s->to[i] = s->to[s->n];
		return 0;
	}
	if (i >= 0) {
		if (exist)
			s->to[i] = to ? *to : s->timeout;
		return EEXIST;
	}
	if (s->n == FAKE_ROOM)
		return ENOSPC;
	s->to[s->n] = to ? *to : s->timeout;
	s->a[s->n++] = *a;
	return 0;
}

/* @e: the whole struct cnf_entry, NULL for the first version's. */
static int entry_call(unsigned long nr, struct cnf_addr *a, const char *set,
		      struct cnf_entry *e)
{
	const uint32_t known = CNF_ENTRY_F_TIMEOUT | CNF_ENTRY_F_EXIST;
	struct fake_set *s = find(set);
	const struct cnf_addr *m;
	bool exist = false;
	int err;

	if (e && no_timeouts() && (e->timeout || e->flags))
		return fail(E2BIG);
	if (e && ((e->flags & ~known) || (nr != 0x01 && e->flags) ||
		  (!(e->flags & CNF_ENTRY_F_TIMEOUT) && e->timeout)))
		return fail(EINVAL);
	if (!s)
		return fail(ENXIO);
	exist = e && (e->flags & CNF_ENTRY_F_EXIST);
	switch (nr) {
	case 0x01:
	case 0x02:
		err = change(s, a, nr == 0x01,
			     e && (e->flags & CNF_ENTRY_F_TIMEOUT) ?
			     &e->timeout : NULL, exist);
		if (err == EEXIST && exist)
			err = 0;
		save_state();
		return err ? fail(err) : 0;
	case 0x03:
		if (old_kernel() && !single(a))
			return fail(EINVAL);
		return longest_cover(s, a) ? 0 : fail(ENOENT);
	}
	if (old_kernel())
		return fail(ENOTTY);
	m = longest_cover(s, a);
	if (!m)
		return fail(ENOENT);
	*a = *m;
	if (e)
		e->timeout = s->to[m - s->a];
	return 0;
}

/* The batch in @b on @s, into @out (a copy of @s for a replace). */
static int batch_apply(struct cnf_batch *b, struct fake_set *out, bool add)
{
	const struct cnf_addr *addrs = (const void *)(uintptr_t)b->addrs;
	const uint32_t *to = (const void *)(uintptr_t)b->timeouts;
	int err;

	b->applied = b->skipped = b->error = 0;
	for (b->done = 0; b->done < b->count; b->done++) {
		err = change(out, &addrs[b->done], add,
			     to ? &to[b->done] : NULL,
			     b->flags & CNF_BATCH_F_EXIST_OK);
		if (err == (add ? EEXIST : ENOENT) &&
		    (b->flags & CNF_BATCH_F_EXIST_OK)) {
			b->skipped++;
			continue;
		}
		if (err) {
			b->error = -err;
			return err;
		}
		b->applied++;
	}
	return 0;
}

/* @v1: the first version's struct, which ends before the set's name. */
static int batch_call(struct cnf_batch *b, const char *set, bool add, bool v1)
{
	struct fake_set *s = find(set), next;
	bool replace = b->flags & CNF_BATCH_F_REPLACE;
	int err;

	if (!v1 && b->timeouts && no_timeouts())
		return fail(E2BIG);
	if ((!v1 && b->timeouts && !add) ||
	    b->flags & ~(CNF_BATCH_F_EXIST_OK | CNF_BATCH_F_REPLACE) ||
	    (replace && (!add || old_kernel())))
		return fail(EINVAL);
	if (!s)
		return fail(ENXIO);
	next = *s;
	if (replace)
		next.n = 0;
	err = batch_apply(b, &next, add);
	if (err && replace)
		b->applied = b->skipped = 0;
	if (!err || !replace)
		*s = next;
	save_state();
	return err ? fail(err) : 0;
}

static int dump_call(struct cnf_dump *d, const char *set, bool v1)
{
	struct fake_set *s = find(set);
	struct cnf_addr *out = (void *)(uintptr_t)d->addrs;
	uint32_t *to = v1 ? NULL : (void *)(uintptr_t)d->timeouts;
	uint32_t n;

	if (to && no_timeouts())
		return fail(E2BIG);
	if (!s)
		return fail(ENXIO);
	n = s->n - d->cursor < d->count ? s->n - d->cursor : d->count;
	memcpy(out, &s->a[d->cursor], n * sizeof(*out));
	if (to)
		memcpy(to, &s->to[d->cursor], n * sizeof(*to));
	d->cursor += n;
	d->count = n;
	d->flags = d->cursor == s->n ? CNF_DUMP_F_DONE : 0;
	return 0;
}

static int stats_call(struct cnf_stats *out)
{
	struct cnf_stats s;
	uint32_t i, j;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < st.nsets; i++)
		for (j = 0; j < st.s[i].n; j++) {
			if (st.s[i].a[j].family == AF_INET)
				s.v4.entries++;
			else
				s.v6.entries++;
			s.expiry.entries += !!st.s[i].to[j];
		}
	s.expiry.bytes = 48 * s.expiry.entries;
	s.expiry.expired = FAKE_EXPIRED;
	s.expiry.late = FAKE_LATE;
	s.expiry.max_late_ms = FAKE_MAX_LATE_MS;
	s.v4.capacity = 1024;
	s.v4.bytes = 4096;
	s.v6.capacity = 256;
	s.v6.bytes = 4096;
	s.mem_limit = 1 << 20;
	s.v4_lookup.prefixes = s.v4.entries;
	s.v4_lookup.keys = 256;
	s.v4_lookup.lengths = 3;
	s.v4_lookup.tables = 3;
	s.v6_lookup.prefixes = s.v6.entries;
	s.v6_lookup.keys = 1;
	s.v6_lookup.lengths = 1;
	s.v6_lookup.tables = 1;
	s.xdp_v4.checked = FAKE_XDP_CHECKED;
	s.xdp_v4.matched = FAKE_XDP_MATCHED;
	s.xdp_v4.dropped = FAKE_XDP_DROPPED;
	s.xdp_v6.checked = FAKE_XDP_CHECKED + 1;
	s.tc_v4.checked = FAKE_TC_CHECKED;
	s.tc_v4.matched = FAKE_TC_MATCHED;
	s.tc_v4.dropped = FAKE_TC_DROPPED;
	s.tc_v6.checked = FAKE_TC_CHECKED + 1;
	s.bytes_v4.checked = 84 * FAKE_XDP_CHECKED;
	s.xdp_bytes_v6.dropped = 98;
	s.tc_bytes_v4.matched = 84 * FAKE_TC_MATCHED;
	/* -m cuckoo rules: checked and matched, each figure its own. */
	s.rule_v4.checked = 50;
	s.rule_v4.matched = 11;
	s.rule_v6.checked = 51;
	s.rule_v6.matched = 12;
	s.rule_bytes_v4.checked = 84 * 50;
	s.rule_bytes_v4.matched = 84 * 11;
	s.rule_bytes_v6.checked = 104 * 51;
	s.rule_bytes_v6.matched = 104 * 12;
	s.logged = 7;
	s.log_suppressed = 3;
	s.log_rate = CNF_LOG_RATE_DEFAULT;
	s.log_burst = CNF_LOG_BURST_DEFAULT;
	s.mode = st.cfg.mode;
	if (st.cfg.hooks == CNF_HOOKS_OFF)
		s.flags |= CNF_STATS_F_HOOKS_OFF;
	s.mark = st.cfg.mark;
	s.mark_mask = st.cfg.mark_mask;
	s.iif_count = st.cfg.iif_count;
	memcpy(s.iif, st.cfg.iif, sizeof(s.iif));
	/* An older module writes its own, shorter struct, and zeroes the rest. */
	if (no_timeouts())
		memset(&s.expiry, 0, sizeof(s.expiry));
	if (old_kernel())
		memset(&s.v4_lookup, 0,
		       sizeof(s) - offsetof(struct cnf_stats, v4_lookup));
	memcpy(out, &s, sizeof(s));
	return 0;
}

/* A scope's name as the module takes it, roughly: no '/' nor ':'. */
static bool iif_ok(const char *name)
{
	size_t n = strnlen(name, CNF_IFNAMSIZ);

	return n && n < CNF_IFNAMSIZ && !strpbrk(name, "/: ");
}

/* CNF_IOC_SET_CONFIG: the uapi header's rules, those cuckooctl meets. */
static int config_call(const struct cnf_config *c)
{
	uint32_t i;

	if ((c->set & CNF_CONFIG_MARK) &&
	    (!c->mark_mask || (c->mark & ~c->mark_mask)))
		return fail(EINVAL);
	if ((c->set & CNF_CONFIG_MODE) && c->mode == CNF_MODE_MARK &&
	    !(c->set & CNF_CONFIG_MARK) && !st.cfg.mark_mask)
		return fail(EINVAL);
	if (c->iif_count > CNF_IIF_MAX)
		return fail(E2BIG);
	for (i = 0; i < c->iif_count; i++)
		if (!iif_ok(c->iif[i]))
			return fail(EINVAL);
	if (c->set & CNF_CONFIG_MODE)
		st.cfg.mode = c->mode;
	if (c->set & CNF_CONFIG_HOOKS)
		st.cfg.hooks = c->hooks;
	if (c->set & CNF_CONFIG_MARK) {
		st.cfg.mark = c->mark;
		st.cfg.mark_mask = c->mark_mask;
	}
	if (c->set & CNF_CONFIG_IIF) {
		st.cfg.iif_count = c->iif_count;
		memcpy(st.cfg.iif, c->iif, sizeof(st.cfg.iif));
	}
	save_state();
	return 0;
}

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, CNF_SET_NAME_LEN);

	return n && n < CNF_SET_NAME_LEN &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static int set_info(struct cnf_set_list *l)
{
	struct cnf_set_info *out = (void *)(uintptr_t)l->sets;
	uint32_t i, j;

	if (l->size < sizeof(*out))
		return fail(EINVAL);
	l->total = st.nsets;
	if (l->count > st.nsets)
		l->count = st.nsets;
	for (i = 0; i < l->count; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		memcpy(out[i].name, st.s[i].name, CNF_SET_NAME_LEN);
		out[i].kind = st.s[i].kind;
		for (j = 0; j < st.s[i].n; j++) {
			if (st.s[i].a[j].family == AF_INET)
				out[i].v4_entries++;
			else
				out[i].v6_entries++;
			out[i].timed += !!st.s[i].to[j];
		}
		out[i].timeout = st.s[i].timeout;
		out[i].flags = st.s[i].flags;
		out[i].bytes = 512 * (i + 1);
		out[i].matched = 10 * i;
	}
	return 0;
}

static int set_create(const struct cnf_set_req *r)
{
	struct fake_set *s;

	if ((r->timeout || r->reserved) && no_timeouts())
		return fail(E2BIG);
	if (!name_ok(r->name) || r->kind > CNF_SET_ALLOW || r->reserved ||
	    (r->flags & ~CNF_SET_F_RULES_ONLY))
		return fail(EINVAL);
	if (find(r->name))
		return fail(EEXIST);
	if (st.nsets == FAKE_SETS)
		return fail(ENOSPC);
	s = &st.s[st.nsets++];
	memset(s, 0, sizeof(*s));
	memcpy(s->name, r->name, CNF_SET_NAME_LEN);
	s->kind = r->kind;
	s->timeout = r->timeout;
	s->flags = r->flags;
	save_state();
	return 0;
}

static int set_destroy(const struct cnf_set_req *r)
{
	struct fake_set *s;

	if (!name_ok(r->name))
		return fail(EINVAL);
	s = find(r->name);
	if (!s)
		return fail(ENOENT);
	if (s == &st.s[0])
		return fail(EBUSY);
	memmove(s, s + 1, (char *)&st.s[st.nsets] - (char *)(s + 1));
	st.nsets--;
	save_state();
	return 0;
}

static int set_swap(const struct cnf_set_swap *w)
{
	struct fake_set *a, *b, t;

	if (!name_ok(w->a) || !name_ok(w->b))
		return fail(EINVAL);
	a = find(w->a);
	b = find(w->b);
	if (!a || !b)
		return fail(ENOENT);
	if (a == b || a->kind != b->kind || a->flags != b->flags)
		return fail(EINVAL);
	t = *a;
	memcpy(a->a, b->a, sizeof(a->a));
	memcpy(a->to, b->to, sizeof(a->to));
	a->n = b->n;
	memcpy(b->a, t.a, sizeof(b->a));
	memcpy(b->to, t.to, sizeof(b->to));
	b->n = t.n;
	save_state();
	return 0;
}

static int set_flush(const struct cnf_set_req *r)
{
	struct fake_set *s = find(r->name);

	if ((r->timeout || r->reserved) && no_timeouts())
		return fail(E2BIG);
	if (r->timeout || r->reserved || r->kind)
		return fail(EINVAL);
	if (!s)
		return fail(ENXIO);
	s->n = 0;
	save_state();
	return 0;
}

/* What the calls of a module with sets log: their name, and a named set. */
static int new_call(unsigned long req, void *arg)
{
	struct cnf_entry *e = arg;
	struct cnf_batch *b = arg;
	struct cnf_dump *d = arg;

	switch (req) {
	case CNF_IOC_ADD:
	case CNF_IOC_DEL:
	case CNF_IOC_TEST:
	case CNF_IOC_MATCH:
		return entry_call(_IOC_NR(req), &e->addr, e->set, e);
	case CNF_IOC_ADD_BATCH:
	case CNF_IOC_DEL_BATCH:
		return batch_call(b, b->set, req == CNF_IOC_ADD_BATCH, false);
	case CNF_IOC_DUMP:
		return dump_call(d, d->set, false);
	case CNF_IOC_SET_CREATE:
		return set_create(arg);
	case CNF_IOC_SET_DESTROY:
		return set_destroy(arg);
	case CNF_IOC_SET_SWAP:
		return set_swap(arg);
	case CNF_IOC_SET_LIST:
		return set_info(arg);
	case CNF_IOC_SET_FLUSH:
		return set_flush(arg);
	case CNF_IOC_SET_CONFIG:
		return config_call(arg);
	}
	return -2;
}

/* The first version's calls, which every module takes: the default set. */
static int v1_call(unsigned long req, void *arg)
{
	static const char none[CNF_SET_NAME_LEN];

	switch (req) {
	case V1_ADD:
	case V1_DEL:
	case V1_TEST:
	case V1_MATCH:
		return entry_call(_IOC_NR(req), arg, none, NULL);
	case V1_ADD_BATCH:
	case V1_DEL_BATCH:
		return batch_call(arg, none, req == V1_ADD_BATCH, true);
	case V1_DUMP:
		return dump_call(arg, none, true);
	case CNF_IOC_STATS:
		return stats_call(arg);
	case CNF_IOC_FLUSH:
		st.s[0].n = 0;
		save_state();
		return 0;
	}
	return -2;
}

static const char *const call_names[] = {
	[0x01] = "ADD", [0x02] = "DEL", [0x03] = "TEST", [0x04] = "ADD_BATCH",
	[0x05] = "DEL_BATCH", [0x06] = "DUMP", [0x07] = "FLUSH",
	[0x08] = "STATS", [0x09] = "SET_CONFIG", [0x0b] = "MATCH",
	[0x0d] = "SET_CREATE", [0x0e] = "SET_DESTROY", [0x0f] = "SET_SWAP",
	[0x10] = "SET_LIST", [0x11] = "SET_FLUSH",
};

static void log_request(unsigned long req, void *arg, bool v1)
{
	unsigned int nr = _IOC_NR(req);
	const char *set = NULL;
	bool replace = false;
	char extra[64] = "";

	if (nr >= sizeof(call_names) / sizeof(call_names[0]) || !call_names[nr])
		return;
	if (!v1 && (nr <= 0x03 || nr == 0x0b)) {
		const struct cnf_entry *e = arg;

		set = e->set;
		snprintf(extra, sizeof(extra), "%s",
			 e->flags & CNF_ENTRY_F_EXIST ? " exist" : "");
		if (e->flags & CNF_ENTRY_F_TIMEOUT)
			snprintf(extra + strlen(extra),
				 sizeof(extra) - strlen(extra), " timeout=%u",
				 e->timeout);
	}
	if (!v1 && (nr == 0x04 || nr == 0x05)) {
		set = ((struct cnf_batch *)arg)->set;
		replace = ((struct cnf_batch *)arg)->flags & CNF_BATCH_F_REPLACE;
		if (((struct cnf_batch *)arg)->timeouts)
			strcpy(extra, " timeouts");
	}
	if (!v1 && nr == 0x06)
		set = ((struct cnf_dump *)arg)->set;
	if (nr == 0x0d || nr == 0x0e || nr == 0x11) {
		set = ((struct cnf_set_req *)arg)->name;
		if (((struct cnf_set_req *)arg)->timeout)
			snprintf(extra, sizeof(extra), " timeout=%u",
				 ((struct cnf_set_req *)arg)->timeout);
		if (((struct cnf_set_req *)arg)->flags & CNF_SET_F_RULES_ONLY)
			strcat(extra, " rules-only");
	}
	log_call(call_names[nr], v1 && nr != 0x07 && nr != 0x08, set, replace,
		 extra);
}

static int fake_call(unsigned long req, void *arg)
{
	int rc;

	rc = v1_call(req, arg);
	if (rc != -2) {
		log_request(req, arg, true);
		return rc;
	}
	log_request(req, arg, false);
	if (old_kernel())
		return -2;
	return new_call(req, arg);
}

static int fake_ioctl(unsigned long req, void *arg)
{
	int lock = state_lock(), rc, err;

	if (lock < 0 && !loaded)
		load_state();
	rc = fake_call(req, arg);
	if (lock >= 0) {
		err = errno;
		close(lock);
		errno = err;
	}
	return rc;
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

/* One address of CNF_FAKE_IFADDRS, with room for what it points to. */
struct fake_ifaddr {
	struct ifaddrs ifa;
	struct sockaddr_in6 sa;		/* room for either family */
	char name[32];
};

int getifaddrs(struct ifaddrs **out)
{
	const char *env = getenv("CNF_FAKE_IFADDRS");
	char *list, *item, *save = NULL, *eq;
	struct ifaddrs *head = NULL, **tail = &head;
	struct fake_ifaddr *f;

	*out = NULL;
	if (!env)
		return 0;
	list = strdup(env);
	if (!list)
		return -1;
	for (item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		f = calloc(1, sizeof(*f));
		if (!eq || !f) {
			free(f);
			continue;
		}
		*eq = 0;
		snprintf(f->name, sizeof(f->name), "%s", item);
		f->ifa.ifa_name = f->name;
		f->ifa.ifa_addr = (struct sockaddr *)&f->sa;
		if (inet_pton(AF_INET6, eq + 1, &f->sa.sin6_addr) == 1) {
			f->sa.sin6_family = AF_INET6;
		} else {
			struct sockaddr_in *in = (struct sockaddr_in *)&f->sa;

			in->sin_family = AF_INET;
			if (inet_pton(AF_INET, eq + 1, &in->sin_addr) != 1) {
				free(f);
				continue;
			}
		}
		*tail = &f->ifa;
		tail = &f->ifa.ifa_next;
	}
	free(list);
	*out = head;
	return 0;
}

void freeifaddrs(struct ifaddrs *ifa)
{
	struct ifaddrs *next;

	for (; ifa; ifa = next) {
		next = ifa->ifa_next;
		free((struct fake_ifaddr *)ifa);
	}
}
