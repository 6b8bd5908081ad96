// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo-crowdsec-bouncer: what the set holds, as the bouncer put it
 * there: each prefix with the end of the longest decision that named it.
 * A chained hash table keyed by the prefix; the daemon's single thread is
 * its only user.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cbn.h"

int64_t cbn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

uint32_t cbn_timeout_at(int64_t until, int64_t now)
{
	uint64_t s = cbn_duration_secs(until - now);

	if (!s)
		return 1;
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* FNV-1a over the prefix's bytes and its origin's index. */
static size_t hash_key(const struct cnf_addr *a, unsigned int origin)
{
	const unsigned char *p = (const unsigned char *)a;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < sizeof(*a); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h = (h ^ origin) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static size_t hash(const struct cbn_entry *e)
{
	return hash_key(&e->addr, e->origin);
}

static int grow(struct cbn_table *t)
{
	size_t n = t->nbuckets ? 2 * t->nbuckets : 1024, i;
	struct cbn_entry **b = calloc(n, sizeof(*b)), *e, *next;

	if (!b)
		return -1;
	for (i = 0; i < t->nbuckets; i++)
		for (e = t->b[i]; e; e = next) {
			next = e->next;
			e->next = b[hash(e) & (n - 1)];
			b[hash(e) & (n - 1)] = e;
		}
	free(t->b);
	t->b = b;
	t->nbuckets = n;
	return 0;
}

struct cbn_entry *cbn_table_get(struct cbn_table *t, const struct cnf_addr *a,
				bool create)
{
	return cbn_table_get_origin(t, a, 0, create);
}

struct cbn_entry *cbn_table_get_origin(struct cbn_table *t,
				       const struct cnf_addr *a,
				       unsigned int origin, bool create)
{
	struct cbn_entry *e;
	size_t h;

	if (t->nbuckets) {
		for (e = t->b[hash_key(a, origin) & (t->nbuckets - 1)]; e;
		     e = e->next)
			if (e->origin == origin &&
			    !memcmp(&e->addr, a, sizeof(*a)))
				return e;
	}
	if (!create)
		return NULL;
	if (t->n >= t->nbuckets && grow(t))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->addr = *a;
	e->origin = origin;
	h = hash(e) & (t->nbuckets - 1);
	e->next = t->b[h];
	t->b[h] = e;
	t->n++;
	return e;
}

static void entry_free(struct cbn_entry *e)
{
	free(e->src);
	free(e);
}

void cbn_table_remove(struct cbn_table *t, struct cbn_entry *e)
{
	struct cbn_entry **p = &t->b[hash(e) & (t->nbuckets - 1)];

	while (*p != e)
		p = &(*p)->next;
	*p = e->next;
	t->n--;
	entry_free(e);
}

int cbn_entry_src_add(struct cbn_entry *e, const struct cnf_addr *src,
		      int64_t until)
{
	struct cbn_src *p;
	size_t i;

	for (i = 0; i < e->nsrc; i++)
		if (!memcmp(&e->src[i].addr, src, sizeof(*src)))
			break;
	if (i == e->nsrc) {
		/* Widened by ipv6_ban_prefix: a /64 may gather a few. */
		p = realloc(e->src, (e->nsrc + 1) * sizeof(*p));
		if (!p)
			return -1;
		e->src = p;
		e->src[e->nsrc].addr = *src;
		e->src[e->nsrc++].until = until;
	} else if (until > e->src[i].until) {
		e->src[i].until = until;
	}
	if (until > e->until)
		e->until = until;
	return 0;
}

void cbn_entry_src_del(struct cbn_entry *e, const struct cnf_addr *src,
		       int64_t now)
{
	size_t i, n = 0;

	e->until = 0;
	for (i = 0; i < e->nsrc; i++) {
		if (e->src[i].until <= now ||
		    (src && !memcmp(&e->src[i].addr, src, sizeof(*src))))
			continue;
		if (e->src[i].until > e->until)
			e->until = e->src[i].until;
		e->src[n++] = e->src[i];
	}
	e->nsrc = n;
}

void cbn_table_prune(struct cbn_table *t, int64_t now)
{
	struct cbn_entry **p, *e;
	size_t i;

	for (i = 0; i < t->nbuckets; i++)
		for (p = &t->b[i]; (e = *p);) {
			if (e->until > now) {
				p = &e->next;
				continue;
			}
			*p = e->next;
			t->n--;
			entry_free(e);
		}
}

void cbn_table_clear(struct cbn_table *t)
{
	cbn_table_prune(t, INT64_MAX);
	free(t->b);
	memset(t, 0, sizeof(*t));
}

static int id_cmp(const void *a, const void *b)
{
	const struct cbn_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

bool cbn_ids_seen(const struct cbn_ids *s, int64_t id)
{
	struct cbn_id key = { .id = id };

	return s->n && bsearch(&key, s->v, s->n, sizeof(key), id_cmp);
}

int cbn_ids_note(struct cbn_ids *s, const struct cbn_stream *st, int64_t now,
		 int64_t keep)
{
	size_t i, n = 0, sorted;

	for (i = 0; i < s->n; i++)
		if (s->v[i].seen >= now - keep)
			s->v[n++] = s->v[i];
	s->n = n;
	sorted = n;
	for (i = 0; i < st->n; i++) {
		struct cbn_id *hit, key = { .id = st->d[i].id };

		if (!st->d[i].deleted)
			continue;
		hit = sorted ? bsearch(&key, s->v, sorted, sizeof(key), id_cmp) :
			       NULL;
		/* Seen again: kept as long again. */
		if (hit) {
			hit->seen = now;
			continue;
		}
		if (s->n == s->room) {
			size_t room = s->room ? 2 * s->room : 256;
			struct cbn_id *p = realloc(s->v, room * sizeof(*p));

			if (!p)
				return -1;
			s->v = p;
			s->room = room;
		}
		s->v[s->n].id = st->d[i].id;
		s->v[s->n++].seen = now;
	}
	qsort(s->v, s->n, sizeof(*s->v), id_cmp);
	/* An id twice in one answer: keep one. */
	for (i = n = 0; i < s->n; i++)
		if (!n || s->v[n - 1].id != s->v[i].id)
			s->v[n++] = s->v[i];
	s->n = n;
	return 0;
}

void cbn_ids_free(struct cbn_ids *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
