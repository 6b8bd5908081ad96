// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for the bouncer's tests: the cuckoo_nf calls the bouncer
 * makes, answered as a module with sets and timeouts would, without one.
 * The device is any file (its absence: the module is not loaded); every
 * cuckoo_nf request is answered here, anything else goes to the real
 * ioctl().  Entries end when their timeout runs out (wall-clock seconds,
 * so that another process reading the state sees them end too).
 *
 * CBN_FAKE_STATE=FILE: the sets, a line per entry "SET PREFIX END" (END:
 *   the entry's end in seconds since the epoch, 0 for none) and a line
 *   "SET -" per set; read before each request when present, written after
 *   each change.
 * CBN_FAKE_LOG=FILE: a line per request: "VERSION", "SET_LIST",
 *   "SET_CREATE SET", "ADD SET PREFIX TIMEOUT FLAGS", "DEL SET PREFIX",
 *   "REPLACE SET COUNT".
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/cuckoo_nf.h>

#include "../../ctl_format.h"
#include "../../ctl_parse.h"

#define FAKE_SETS	8
#define FAKE_ROOM	4096

struct fake_set {
	char name[CNF_SET_NAME_LEN];
	uint32_t n;
	struct cnf_addr a[FAKE_ROOM];
	time_t end[FAKE_ROOM];
};

static struct fake_set sets[FAKE_SETS];
static uint32_t nsets;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("CBN_FAKE_LOG");
	va_list ap;
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static struct fake_set *find(const char *name)
{
	uint32_t i;

	if (!name[0])
		name = CNF_SET_DEFAULT;
	for (i = 0; i < nsets; i++)
		if (!strncmp(sets[i].name, name, CNF_SET_NAME_LEN))
			return &sets[i];
	return NULL;
}

static struct fake_set *new_set(const char *name)
{
	struct fake_set *s;

	if (nsets == FAKE_SETS)
		return NULL;
	s = &sets[nsets++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%.*s", CNF_SET_NAME_LEN - 1, name);
	return s;
}

static void load(void)
{
	const char *path = getenv("CBN_FAKE_STATE");
	char set[64], prefix[64];
	struct fake_set *s;
	struct cnf_addr a;
	long long end;
	FILE *f;
	int n;

	nsets = 0;
	new_set(CNF_SET_DEFAULT);
	f = path ? fopen(path, "re") : NULL;
	if (!f)
		return;
	while ((n = fscanf(f, "%63s %63s", set, prefix)) == 2) {
		s = find(set);
		if (!s)
			s = new_set(set);
		if (!strcmp(prefix, "-"))
			continue;
		if (fscanf(f, "%lld", &end) != 1 || !s || s->n == FAKE_ROOM ||
		    ctl_parse_prefix(prefix, CTL_PARSE_F_ALL, &a, NULL))
			break;
		s->a[s->n] = a;
		s->end[s->n++] = end;
	}
	fclose(f);
}

static void save(void)
{
	const char *path = getenv("CBN_FAKE_STATE");
	char text[CTL_PREFIXSTRLEN], tmp[4096];
	uint32_t i, j;
	FILE *f;

	if (!path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	for (i = 0; i < nsets; i++) {
		fprintf(f, "%s -\n", sets[i].name);
		for (j = 0; j < sets[i].n; j++)
			fprintf(f, "%s %s %lld\n", sets[i].name,
				ctl_format_prefix(&sets[i].a[j], text, sizeof(text)),
				(long long)sets[i].end[j]);
	}
	fclose(f);
	rename(tmp, path);
}

/* Entries whose timeout ran out go, as the kernel's expiry does. */
static void expire(void)
{
	time_t now = time(NULL);
	uint32_t i, j;

	for (i = 0; i < nsets; i++)
		for (j = 0; j < sets[i].n;) {
			if (sets[i].end[j] && sets[i].end[j] <= now) {
				sets[i].a[j] = sets[i].a[sets[i].n - 1];
				sets[i].end[j] = sets[i].end[--sets[i].n];
				continue;
			}
			j++;
		}
}

static long index_of(const struct fake_set *s, const struct cnf_addr *a)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		if (!memcmp(&s->a[i], a, sizeof(*a)))
			return i;
	return -1;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static time_t end_of(uint32_t timeout)
{
	return timeout ? time(NULL) + timeout : 0;
}

static int entry(unsigned long req, struct cnf_entry *e)
{
	struct fake_set *s = find(e->set);
	char text[CTL_PREFIXSTRLEN];
	long i;

	ctl_format_prefix(&e->addr, text, sizeof(text));
	if (req == CNF_IOC_ADD)
		logf_("ADD %.*s %s %u %u", CNF_SET_NAME_LEN, e->set, text,
		      e->timeout, e->flags);
	else
		logf_("DEL %.*s %s", CNF_SET_NAME_LEN, e->set, text);
	if (!s)
		return fail(ENXIO);
	i = index_of(s, &e->addr);
	if (req == CNF_IOC_DEL) {
		if (e->flags || e->timeout)
			return fail(EINVAL);
		if (i < 0)
			return fail(ENOENT);
		s->a[i] = s->a[s->n - 1];
		s->end[i] = s->end[--s->n];
		return 0;
	}
	if (e->flags & ~(CNF_ENTRY_F_TIMEOUT | CNF_ENTRY_F_EXIST))
		return fail(EINVAL);
	if (i >= 0) {
		if (!(e->flags & CNF_ENTRY_F_EXIST))
			return fail(EEXIST);
	} else {
		if (s->n == FAKE_ROOM)
			return fail(ENOSPC);
		i = s->n++;
		s->a[i] = e->addr;
	}
	s->end[i] = end_of(e->flags & CNF_ENTRY_F_TIMEOUT ? e->timeout : 0);
	return 0;
}

static int replace(struct cnf_batch *b)
{
	const struct cnf_addr *addrs = (const void *)(uintptr_t)b->addrs;
	const uint32_t *t = (const void *)(uintptr_t)b->timeouts;
	struct fake_set *s = find(b->set), *next;
	long i;

	logf_("REPLACE %.*s %u", CNF_SET_NAME_LEN, b->set, b->count);
	if (b->flags != (CNF_BATCH_F_REPLACE | CNF_BATCH_F_EXIST_OK))
		return fail(EINVAL);
	if (!s)
		return fail(ENXIO);
	next = calloc(1, sizeof(*next));
	if (!next)
		return fail(ENOMEM);
	memcpy(next->name, s->name, sizeof(next->name));
	b->applied = b->skipped = b->error = 0;
	for (b->done = 0; b->done < b->count; b->done++) {
		i = index_of(next, &addrs[b->done]);
		if (i >= 0) {
			b->skipped++;
		} else if (next->n == FAKE_ROOM) {
			b->error = -ENOSPC;
			b->applied = b->skipped = 0;
			free(next);
			return fail(ENOSPC);
		} else {
			i = next->n++;
			next->a[i] = addrs[b->done];
			b->applied++;
		}
		next->end[i] = end_of(t ? t[b->done] : 0);
	}
	*s = *next;
	free(next);
	return 0;
}

static int set_list(struct cnf_set_list *l)
{
	struct cnf_set_info *out = (void *)(uintptr_t)l->sets;
	uint32_t i;

	logf_("SET_LIST");
	if (l->size < sizeof(*out))
		return fail(EINVAL);
	l->total = nsets;
	if (l->count > nsets)
		l->count = nsets;
	for (i = 0; i < l->count; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		memcpy(out[i].name, sets[i].name, CNF_SET_NAME_LEN);
		out[i].kind = CNF_SET_BLOCK;
	}
	return 0;
}

static int set_create(const struct cnf_set_req *r)
{
	logf_("SET_CREATE %.*s", CNF_SET_NAME_LEN, r->name);
	if (r->kind != CNF_SET_BLOCK || r->flags || r->timeout)
		return fail(EINVAL);
	if (find(r->name))
		return fail(EEXIST);
	return new_set(r->name) ? 0 : fail(ENOSPC);
}

static int fake(unsigned long req, void *arg)
{
	struct cnf_version *v = arg;
	int rc;

	load();
	expire();
	switch (req) {
	case CNF_IOC_VERSION:
		logf_("VERSION");
		memset(v, 0, sizeof(*v));
		v->abi = CNF_ABI_VERSION;
		strcpy(v->version, "fake");
		return 0;
	case CNF_IOC_SET_LIST:
		return set_list(arg);
	case CNF_IOC_SET_CREATE:
		rc = set_create(arg);
		break;
	case CNF_IOC_ADD:
	case CNF_IOC_DEL:
		rc = entry(req, arg);
		break;
	case CNF_IOC_ADD_BATCH:
		rc = replace(arg);
		break;
	default:
		logf_("unexpected request %#lx", req);
		return fail(ENOTTY);
	}
	if (!rc)
		save();
	return rc;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) == CNF_IOC_TYPE)
		return fake(req, arg);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
