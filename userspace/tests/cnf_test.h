/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the filter core's unit, property, stress tests, fuzzer and
 * benchmark: a seeded PRNG, key builders for both families, locked wrappers
 * around the writer API, and an exact set model to check the filter against.
 *
 * Everything is static inline so each test stays a single translation unit
 * plus CORE_SRCS, whatever flags (sanitizers, -O0) it is built with.
 */
#ifndef _CNF_TEST_H
#define _CNF_TEST_H

#include "budget.h"
#include "filter.h"
#include "walk.h"

/*
 * cnf_scaled - the size of this run, as selftests/lib.sh's scaled: @full
 * when CNF_TEST_FULL is 1 (make unit's default), else @quick (make
 * check's, which runs the unit tests beside the VMs).
 */
static inline u64 cnf_scaled(u64 quick, u64 full)
{
	const char *e = getenv("CNF_TEST_FULL");

	return e && e[0] == '1' && !e[1] ? full : quick;
}

/* ---- PRNG: splitmix64, tiny and good enough; state is the seed ---- */
struct cnf_rng {
	u64 s;
};

static inline u64 cnf_rng_next(struct cnf_rng *r)
{
	u64 z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0; the multiply-shift bias is irrelevant here. */
static inline u64 cnf_rng_below(struct cnf_rng *r, u64 n)
{
	return (u64)(((unsigned __int128)cnf_rng_next(r) * n) >> 64);
}

/* A stateless 64-bit mix: the idx-th member of a pool, reproducibly. */
static inline u64 cnf_mix64(u64 x)
{
	struct cnf_rng r = { x };

	return cnf_rng_next(&r);
}

/* ---- keys ---- */

/* A bijection of u32: distinct, well spread addresses from an index. */
static inline u32 cnf_spread32(u32 x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

static inline struct cnf_key cnf_key4(u32 host)
{
	struct cnf_key k;

	memset(&k, 0, sizeof(k));
	k.family = CNF_V4;
	k.len = CNF_V4_BITS;
	k.v4 = htonl(host);
	return k;
}

/* @w are the four 32-bit words of the address, most significant first. */
static inline struct cnf_key cnf_key6(u32 w0, u32 w1, u32 w2, u32 w3)
{
	struct cnf_key k;

	memset(&k, 0, sizeof(k));
	k.family = CNF_V6;
	k.len = CNF_V6_BITS;
	k.v6.s6_addr32[0] = htonl(w0);
	k.v6.s6_addr32[1] = htonl(w1);
	k.v6.s6_addr32[2] = htonl(w2);
	k.v6.s6_addr32[3] = htonl(w3);
	return k;
}

/* The same prefix: family, length and address. */
static inline bool cnf_key_same(const struct cnf_key *a,
				const struct cnf_key *b)
{
	if (a->family != b->family || a->len != b->len)
		return false;
	if (a->family == CNF_V4)
		return a->v4 == b->v4;
	return !memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

/* Does prefix @p cover the first @p->len bits of @a (of @p's family)? */
static inline bool cnf_key_covers(const struct cnf_key *p,
				  const struct cnf_key *a)
{
	unsigned int len = p->len, w;

	if (p->family != a->family || a->len < len)
		return false;
	if (p->family == CNF_V4)
		return !len || !((ntohl(p->v4) ^ ntohl(a->v4)) >> (32 - len));
	for (w = 0; w < 4 && len; w++, len = len > 32 ? len - 32 : 0) {
		u32 x = ntohl(p->v6.s6_addr32[w]) ^ ntohl(a->v6.s6_addr32[w]);

		if (len < 32 ? x >> (32 - len) : x)
			return false;
	}
	return true;
}

/* @k cut to its first @len bits: the prefix of that length covering it. */
static inline void cnf_key_cut(struct cnf_key *k, unsigned int len)
{
	unsigned int w, l = len;

	k->len = len;
	if (k->family == CNF_V4) {
		k->v4 = len ? htonl(ntohl(k->v4) & (~0U << (32 - len))) : 0;
		return;
	}
	for (w = 0; w < 4; w++, l = l > 32 ? l - 32 : 0)
		if (l < 32)
			k->v6.s6_addr32[w] &= l ? htonl(~0U << (32 - l)) : 0;
}

static inline const char *cnf_key_str(const struct cnf_key *k, char *buf,
				      size_t len)
{
	if (k->family == CNF_V4)
		return inet_ntop(AF_INET, &k->v4, buf, len);
	if (k->family == CNF_V6)
		return inet_ntop(AF_INET6, &k->v6, buf, len);
	snprintf(buf, len, "<family %u>", k->family);
	return buf;
}

/*
 * Key shapes that stress different parts of the core's encoding: the low
 * word (of a /64 prefix, the second) feeds the bucket index and the stored
 * remainder, the upper IPv6 words only the hashes.  @idx selects the member of the shape's pool; distinct
 * idx (below 2^32) give distinct keys for every shape but CNF_SHAPE_RANDOM,
 * where collisions are merely unlikely.
 */
enum cnf_shape {
	CNF_SHAPE_RANDOM,	/* all bits random */
	CNF_SHAPE_SEQ,		/* consecutive: base + idx in the low word */
	CNF_SHAPE_HIGH,		/* IPv6: only the top word varies */
	CNF_SHAPE_MAPPED,	/* IPv6: ::ffff:a.b.c.d, v4-mapped */
	CNF_SHAPE_NET64,	/* IPv6: /64 prefixes, random first 64 bits */
	CNF_NSHAPES,
};

static inline struct cnf_key cnf_pool_key(enum cnf_family fam,
					  enum cnf_shape shape, u64 salt,
					  u64 idx)
{
	u64 h = cnf_mix64(salt ^ (idx * 0x100000001b3ULL));
	u64 g = cnf_mix64(h);

	if (fam == CNF_V4) {
		if (shape == CNF_SHAPE_SEQ)
			return cnf_key4((u32)(0x0a000000u + (salt & 0xffff) +
					      idx));
		return cnf_key4((u32)h);
	}
	switch (shape) {
	case CNF_SHAPE_SEQ:
		return cnf_key6(0x20010db8u, (u32)salt, 0, (u32)idx);
	case CNF_SHAPE_HIGH:
		return cnf_key6(0x20000000u ^ (u32)idx, 0, 0, 1);
	case CNF_SHAPE_MAPPED:
		return cnf_key6(0, 0, 0xffff, (u32)(salt + idx));
	case CNF_SHAPE_NET64: {
		struct cnf_key k = cnf_key6((u32)(h >> 32), (u32)h, 0, 0);

		k.len = 64;
		return k;
	}
	default:
		return cnf_key6((u32)(h >> 32), (u32)h, (u32)(g >> 32),
				(u32)g);
	}
}

/* ---- the API under its writer lock, as the module's callers use it ---- */
static inline int cnf_t_add(struct cnf_filter *f, const struct cnf_key *k)
{
	int err;

	cnf_filter_lock(f);
	cnf_filter_prefetch(f, k);	/* a hint: must change nothing */
	err = cnf_filter_add(f, k);
	cnf_filter_unlock(f);
	return err;
}

static inline int cnf_t_del(struct cnf_filter *f, const struct cnf_key *k)
{
	int err;

	cnf_filter_lock(f);
	cnf_filter_prefetch(f, k);	/* a hint: must change nothing */
	err = cnf_filter_del(f, k);
	cnf_filter_unlock(f);
	return err;
}

static inline int cnf_t_reserve(struct cnf_filter *f, enum cnf_family fam,
				u64 n)
{
	int err;

	cnf_filter_lock(f);
	err = cnf_filter_reserve(f, fam, n);
	cnf_filter_unlock(f);
	return err;
}

static inline int cnf_t_flush(struct cnf_filter *f)
{
	int err;

	cnf_filter_lock(f);
	err = cnf_filter_flush(f);
	cnf_filter_unlock(f);
	return err;
}

static inline int cnf_t_set_limit(struct cnf_filter *f, u64 bytes)
{
	int err;

	cnf_filter_lock(f);
	err = cnf_filter_set_limit(f, bytes);
	cnf_filter_unlock(f);
	return err;
}

static inline u64 cnf_t_count(struct cnf_filter *f, enum cnf_family fam)
{
	u64 n;

	cnf_filter_lock(f);
	n = cnf_filter_count(f, fam);
	cnf_filter_unlock(f);
	return n;
}

static inline struct cnf_filter_stats cnf_t_stats(struct cnf_filter *f)
{
	struct cnf_filter_stats st;

	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	return st;
}

static inline u64 cnf_t_bytes(struct cnf_filter *f)
{
	struct cnf_filter_stats st = cnf_t_stats(f);

	return st.fam[CNF_V4].bytes + st.fam[CNF_V6].bytes;
}

/*
 * A reader's lookup.  All entry points must agree (IPv4 also as a batch of
 * one); 1 or 0, or -1 when they do not (a bug of its own, which callers
 * report).
 */
static inline int cnf_t_has(const struct cnf_filter *f,
			    const struct cnf_key *k)
{
	bool a, b, c;

	rcu_read_lock();
	a = cnf_filter_contains(f, k);
	if (k->family == CNF_V4) {
		b = cnf_filter_lookup4(f, k->v4);
		cnf_filter_lookup4_batch(f, &k->v4, 1, &c);
	} else {
		b = cnf_filter_lookup6(f, &k->v6);
		c = b;
	}
	rcu_read_unlock();
	return a == b && b == c ? a : -1;
}

/*
 * ---- the model: an exact set ----
 * Keys live densely in @keys (so a random member is O(1)); @idx is an
 * open-addressing index over them, linear probing, slot = position + 1,
 * 0 = empty.  Kept at most half full; backward-shift deletion, no tombstones.
 */
struct cnf_model {
	struct cnf_key *keys;
	u32 *idx;
	u64 mask;		/* index slots - 1 */
	u64 n[CNF_NFAMILIES];
};

static inline u64 cnf_model_hash(const struct cnf_key *k)
{
	u64 a, b;

	if (k->family == CNF_V4)
		return cnf_mix64(k->v4);
	memcpy(&a, &k->v6.s6_addr[0], 8);
	memcpy(&b, &k->v6.s6_addr[8], 8);
	return cnf_mix64(a ^ cnf_mix64(b ^ 0x6666));
}

static inline u64 cnf_model_size(const struct cnf_model *m)
{
	return m->n[CNF_V4] + m->n[CNF_V6];
}

static inline void cnf_model_init(struct cnf_model *m, u64 slots_log)
{
	memset(m, 0, sizeof(*m));
	m->mask = (1ULL << slots_log) - 1;
	m->idx = calloc(m->mask + 1, sizeof(*m->idx));
	/* Half the index slots: the most keys before the next doubling. */
	m->keys = calloc((m->mask + 1) / 2 + 1, sizeof(*m->keys));
	if (!m->idx || !m->keys)
		abort();
}

static inline void cnf_model_free(struct cnf_model *m)
{
	free(m->idx);
	free(m->keys);
	m->idx = NULL;
	m->keys = NULL;
}

static inline void cnf_model_clear(struct cnf_model *m)
{
	memset(m->idx, 0, (m->mask + 1) * sizeof(*m->idx));
	m->n[CNF_V4] = m->n[CNF_V6] = 0;
}

/* Index slot of @k, or the empty slot where it would go. */
static inline u64 cnf_model_probe(const struct cnf_model *m,
				  const struct cnf_key *k)
{
	u64 i = cnf_model_hash(k) & m->mask;

	while (m->idx[i] && !cnf_key_same(&m->keys[m->idx[i] - 1], k))
		i = (i + 1) & m->mask;
	return i;
}

static inline bool cnf_model_has(const struct cnf_model *m,
				 const struct cnf_key *k)
{
	return m->idx[cnf_model_probe(m, k)];
}

static inline bool cnf_model_add(struct cnf_model *m,
				 const struct cnf_key *k);

static inline void cnf_model_grow(struct cnf_model *m)
{
	struct cnf_model old = *m;
	u64 i;

	cnf_model_init(m, __builtin_ctzll(old.mask + 1) + 1);
	for (i = 0; i < cnf_model_size(&old); i++)
		cnf_model_add(m, &old.keys[i]);
	cnf_model_free(&old);
}

/* false if already there. */
static inline bool cnf_model_add(struct cnf_model *m, const struct cnf_key *k)
{
	u64 i, n = cnf_model_size(m);

	if (2 * (n + 1) > m->mask + 1)
		cnf_model_grow(m);
	i = cnf_model_probe(m, k);
	if (m->idx[i])
		return false;
	m->keys[n] = *k;
	m->idx[i] = n + 1;
	m->n[k->family]++;
	return true;
}

/* Empties index slot @i, shifting back the entries probing past it. */
static inline void cnf_model_unindex(struct cnf_model *m, u64 i)
{
	u64 j = i, home;

	for (;;) {
		m->idx[i] = 0;
		for (;;) {
			j = (j + 1) & m->mask;
			if (!m->idx[j])
				return;
			home = cnf_model_hash(&m->keys[m->idx[j] - 1]) & m->mask;
			/* May the entry at j move back to i?  (cyclic) */
			if (((j - home) & m->mask) >= ((j - i) & m->mask))
				break;
		}
		m->idx[i] = m->idx[j];
		i = j;
	}
}

/* false if absent.  The last key moves into the freed position. */
static inline bool cnf_model_del(struct cnf_model *m, const struct cnf_key *k)
{
	u64 i = cnf_model_probe(m, k), pos, last;

	if (!m->idx[i])
		return false;
	pos = m->idx[i] - 1;
	last = cnf_model_size(m) - 1;
	cnf_model_unindex(m, i);
	m->n[k->family]--;
	if (pos != last) {
		m->keys[pos] = m->keys[last];
		m->idx[cnf_model_probe(m, &m->keys[pos])] = pos + 1;
	}
	return true;
}

/* A random member, or NULL if empty. */
static inline const struct cnf_key *cnf_model_any(const struct cnf_model *m,
						  struct cnf_rng *r)
{
	u64 n = cnf_model_size(m);

	return n ? &m->keys[cnf_rng_below(r, n)] : NULL;
}

/* ---- comparing the filter with the model ---- */
struct cnf_walk_check {
	const struct cnf_model *model;
	struct cnf_model seen;	/* to catch a key walked twice */
	u64 extra, twice, n;
	struct cnf_key bad;	/* first extra or twice-walked key */
};

static inline int cnf_walk_check_one(void *ctx, const struct cnf_key *k)
{
	struct cnf_walk_check *c = ctx;
	bool bad = false;

	c->n++;
	if (!cnf_model_has(c->model, k)) {
		c->extra++;
		bad = true;
	}
	if (!cnf_model_add(&c->seen, k)) {
		c->twice++;
		bad = true;
	}
	if (bad && c->extra + c->twice == 1)
		c->bad = *k;
	return 0;
}

/*
 * Full agreement of filter and model, or a description of the first
 * difference in @why (returns false): counts per family, walk() yields the
 * model's set exactly once each, every model key is found.
 */
static inline bool cnf_check_full(struct cnf_filter *f,
				  const struct cnf_model *m, char *why,
				  size_t len)
{
	struct cnf_walk_check c = { .model = m };
	char buf[INET6_ADDRSTRLEN + 16];
	unsigned int fam;
	u64 i;
	int err;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		u64 n = cnf_t_count(f, fam);

		if (n != m->n[fam]) {
			snprintf(why, len, "family %u: count %llu, model %llu",
				 fam, (unsigned long long)n,
				 (unsigned long long)m->n[fam]);
			return false;
		}
	}
	cnf_model_init(&c.seen, 4);
	cnf_filter_lock(f);
	err = cnf_filter_walk(f, cnf_walk_check_one, &c);
	cnf_filter_unlock(f);
	cnf_model_free(&c.seen);
	if (err || c.extra || c.twice || c.n != cnf_model_size(m)) {
		snprintf(why, len,
			 "walk: err %d, %llu keys, model %llu, %llu not in model, %llu twice, first bad %s",
			 err, (unsigned long long)c.n,
			 (unsigned long long)cnf_model_size(m),
			 (unsigned long long)c.extra,
			 (unsigned long long)c.twice,
			 c.extra + c.twice ?
			 cnf_key_str(&c.bad, buf, sizeof(buf)) : "-");
		return false;
	}
	for (i = 0; i < cnf_model_size(m); i++) {
		if (cnf_t_has(f, &m->keys[i]) != 1) {
			snprintf(why, len, "lookup of stored %s: %d",
				 cnf_key_str(&m->keys[i], buf, sizeof(buf)),
				 cnf_t_has(f, &m->keys[i]));
			return false;
		}
	}
	return true;
}

/*
 * In a kselftest_harness test: the filter agrees with the model in every
 * respect cnf_check_full sees.
 */
#define ASSERT_MATCHES(f, m) do { \
	char why_[256]; \
	bool ok_ = cnf_check_full(f, m, why_, sizeof(why_)); \
	if (!ok_) \
		TH_LOG("filter differs from model: %s", why_); \
	ASSERT_TRUE(ok_); \
} while (0)

#endif /* _CNF_TEST_H */
