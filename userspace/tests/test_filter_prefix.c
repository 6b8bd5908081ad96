// SPDX-License-Identifier: GPL-2.0
/*
 * Prefixes against a plain model: a list of the stored prefixes, scanned
 * linearly.  Random mixes of every length of both families, overlapping
 * (prefixes are drawn from a few narrow regions), added and deleted in
 * phases so that tables grow and shrink; after every change the return
 * code, and every so often the whole filter, is checked: the walk gives
 * the model's prefixes back exactly, has() and match() agree, and random
 * addresses (inside, outside and at the edges of stored prefixes) are
 * covered exactly when the model says.  Changes that run out of memory
 * must leave the filter as it was.
 *
 * Fixed seeds (printed): a failure replays exactly.
 */
#include "cnf_test.h"
#include "prefix.h"
#include "v6dir.h"
#include "cnf_harness.h"

#define MODEL_MAX	4096
#define NO_LIMIT	(1ULL << 40)

/*
 * The tables' seeds too, before the harness forks each test: a test that
 * sets none of its own replays as well.
 */
static void __attribute__((constructor)) seed_core(void)
{
	cnf_user_seed_random(0x636f7265ULL);
}

static bool has6(struct cnf_filter *f, u32 w0, u32 w1, u32 w2, u32 w3)
{
	struct cnf_key k = cnf_key6(w0, w1, w2, w3);

	return cnf_filter_lookup6(f, &k.v6);
}

static bool has4(struct cnf_filter *f, u32 a)
{
	return cnf_filter_lookup4(f, htonl(a));
}

struct pmodel {
	struct cnf_key p[MODEL_MAX];
	unsigned int n;
};

static int model_find(const struct pmodel *m, const struct cnf_key *p)
{
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (cnf_key_same(&m->p[i], p))
			return i;
	return -1;
}

/* The longest model prefix covering @a, or NULL. */
static const struct cnf_key *model_match(const struct pmodel *m,
					 const struct cnf_key *a)
{
	const struct cnf_key *best = NULL;
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (cnf_key_covers(&m->p[i], a) &&
		    (!best || m->p[i].len > best->len))
			best = &m->p[i];
	return best;
}

/*
 * A random address of @fam from one of a few regions, so that prefixes
 * drawn from it overlap: the first bits come from 4 values, the rest are
 * random but for a run of zeros or ones that makes edges common.
 */
static struct cnf_key region_addr(struct cnf_rng *r, enum cnf_family fam)
{
	static const u32 v4[] = { 0x0a000000, 0x0a010000, 0xc6336400,
				  0x01000000 };
	static const u32 v6[] = { 0x20010db8, 0x20010db9, 0x2a000000,
				  0x24000000 };
	unsigned int region = cnf_rng_below(r, 4);
	struct cnf_key k;

	if (fam == CNF_V4) {
		u32 x = v4[region] ^ ((u32)cnf_rng_next(r) >>
				      (4 + cnf_rng_below(r, 20)));

		return cnf_key4(x);
	}
	k = cnf_key6(v6[region], (u32)cnf_rng_next(r) >> cnf_rng_below(r, 32),
		     (u32)cnf_rng_next(r) >> cnf_rng_below(r, 32),
		     (u32)cnf_rng_next(r) >> cnf_rng_below(r, 32));
	if (cnf_rng_below(r, 2))
		k.v6.s6_addr32[3] = 0;
	return k;
}

/* A length mix like real lists', every length possible. */
static unsigned int random_len(struct cnf_rng *r, enum cnf_family fam)
{
	static const u8 v4[] = { 8, 12, 16, 19, 20, 22, 24, 24, 25, 28, 32,
				 32 };
	static const u8 v6[] = { 19, 20, 29, 32, 32, 33, 36, 44, 48, 48, 56,
				 64, 64, 80, 96, 120, 127, 128, 128 };

	if (!cnf_rng_below(r, 8))
		return 1 + cnf_rng_below(r, fam == CNF_V4 ? 32 : 128);
	return fam == CNF_V4 ? v4[cnf_rng_below(r, sizeof(v4))] :
			       v6[cnf_rng_below(r, sizeof(v6))];
}

static struct cnf_key random_prefix(struct cnf_rng *r, enum cnf_family fam)
{
	struct cnf_key k = region_addr(r, fam);

	cnf_key_cut(&k, random_len(r, fam));
	return k;
}

/* An address inside @p, at an edge of it half of the time. */
static struct cnf_key addr_in(struct cnf_rng *r, const struct cnf_key *p)
{
	struct cnf_key a = region_addr(r, p->family), b = *p;
	unsigned int w, len = p->len;

	a.len = cnf_family_bits(p->family);
	b.len = a.len;
	if (cnf_rng_below(r, 2)) {	/* the first or the last address */
		memset(&a.v6, cnf_rng_below(r, 2) ? 0xff : 0, sizeof(a.v6));
		if (p->family == CNF_V4)
			a.v4 = cnf_rng_below(r, 2) ? ~0U : 0;
	}
	if (p->family == CNF_V4) {
		u32 mask = len ? ~0U << (32 - len) : 0;

		b.v4 = htonl((ntohl(p->v4) & mask) | (ntohl(a.v4) & ~mask));
		return b;
	}
	for (w = 0; w < 4; w++, len = len > 32 ? len - 32 : 0) {
		u32 mask = len >= 32 ? ~0U : len ? ~0U << (32 - len) : 0;

		b.v6.s6_addr32[w] = htonl((ntohl(p->v6.s6_addr32[w]) & mask) |
					  (ntohl(a.v6.s6_addr32[w]) & ~mask));
	}
	return b;
}

/* Just outside @p: one past its last address, or one before its first. */
static struct cnf_key addr_next_to(struct cnf_rng *r, const struct cnf_key *p)
{
	struct cnf_key a = *p;
	unsigned int len = p->len;

	a.len = cnf_family_bits(p->family);
	if (!len)
		return addr_in(r, p);
	if (p->family == CNF_V4) {
		u32 size = len == 32 ? 1 : 1U << (32 - len);

		a.v4 = htonl(cnf_rng_below(r, 2) ? ntohl(p->v4) + size :
						   ntohl(p->v4) - 1);
		return a;
	}
	/* Flip the last bit of the prefix: the neighbour of the same size. */
	a.v6.s6_addr32[(len - 1) / 32] ^= htonl(1U << (31 - (len - 1) % 32));
	return addr_in(r, &(struct cnf_key){ .family = CNF_V6, .len = len,
					     .v6 = a.v6 });
}

struct walk_ctx {
	const struct pmodel *m;
	unsigned int seen;
	bool bad;
	unsigned char hit[MODEL_MAX];
};

static int walk_one(void *ctx, const struct cnf_key *k)
{
	struct walk_ctx *w = ctx;
	int i = model_find(w->m, k);

	if (i < 0 || w->hit[i]++) {
		w->bad = true;
		return 1;
	}
	w->seen++;
	return 0;
}

struct prefix_run {
	struct cnf_filter *f;
	struct pmodel m;
	struct cnf_rng r;
	u64 queries, hits, adds, dels, refused;
};

static bool query_ok(struct prefix_run *s, const struct cnf_key *a)
{
	const struct cnf_key *want = model_match(&s->m, a);
	struct cnf_key got;
	bool hit;
	int err;

	hit = a->family == CNF_V4 ? cnf_filter_lookup4(s->f, a->v4) :
				    cnf_filter_lookup6(s->f, &a->v6);
	cnf_filter_lock(s->f);
	err = cnf_filter_match(s->f, a, &got);
	cnf_filter_unlock(s->f);
	s->queries++;
	s->hits += hit;
	if (hit != !!want || (err == 0) != !!want)
		return false;
	return !want || cnf_key_same(want, &got);
}

static void check_all(struct __test_metadata *_metadata,
		      struct prefix_run *s, unsigned int queries)
{
	static struct walk_ctx w;
	struct cnf_filter_stats st;
	u64 n[CNF_NFAMILIES] = { 0 };
	unsigned int i;

	memset(&w, 0, sizeof(w));
	w.m = &s->m;
	cnf_filter_lock(s->f);
	cnf_filter_walk(s->f, walk_one, &w);
	cnf_filter_stats(s->f, &st);
	for (i = 0; i < s->m.n; i++) {
		ASSERT_TRUE(cnf_filter_has(s->f, &s->m.p[i]));
		n[s->m.p[i].family]++;
	}
	cnf_filter_unlock(s->f);
	ASSERT_FALSE(w.bad);
	ASSERT_EQ(s->m.n, w.seen);
	ASSERT_EQ(n[CNF_V4], st.fam[CNF_V4].entries);
	ASSERT_EQ(n[CNF_V6], st.fam[CNF_V6].entries);
	for (i = 0; i < queries; i++) {
		enum cnf_family fam = cnf_rng_below(&s->r, 2);
		struct cnf_key a;

		if (s->m.n && cnf_rng_below(&s->r, 3)) {
			const struct cnf_key *p =
				&s->m.p[cnf_rng_below(&s->r, s->m.n)];

			a = cnf_rng_below(&s->r, 2) ? addr_in(&s->r, p) :
						      addr_next_to(&s->r, p);
		} else {
			a = region_addr(&s->r, fam);
		}
		if (!query_ok(s, &a)) {
			char buf[64];

			cnf_key_str(&a, buf, sizeof(buf));
			ASSERT_TRUE(false) TH_LOG("wrong answer for %s", buf);
		}
	}
}

static u64 filter_bytes(struct cnf_filter *f)
{
	struct cnf_filter_stats st;

	cnf_filter_stats(f, &st);
	return st.fam[CNF_V4].bytes + st.fam[CNF_V6].bytes;
}

/* One random change, checked against the model. */
static void step(struct __test_metadata *_metadata, struct prefix_run *s,
		 bool adding)
{
	struct cnf_key p;
	int want, err, i;
	u64 bytes;

	if (!adding && s->m.n && cnf_rng_below(&s->r, 4))
		p = s->m.p[cnf_rng_below(&s->r, s->m.n)];
	else
		p = random_prefix(&s->r, cnf_rng_below(&s->r, 2));
	i = model_find(&s->m, &p);
	cnf_filter_lock(s->f);
	bytes = filter_bytes(s->f);
	if (adding) {
		want = i >= 0 ? -EEXIST : 0;
		if (s->m.n == MODEL_MAX && i < 0) {
			cnf_filter_unlock(s->f);
			return;
		}
		err = cnf_filter_add(s->f, &p);
	} else {
		want = i >= 0 ? 0 : -ENOENT;
		err = cnf_filter_del(s->f, &p);
	}
	cnf_filter_unlock(s->f);
	if (err == -ENOSPC && adding && i < 0) {
		s->refused++;	/* the memory limit: nothing may change */
		cnf_filter_lock(s->f);
		ASSERT_EQ(bytes, filter_bytes(s->f));
		cnf_filter_unlock(s->f);
		return;
	}
	ASSERT_EQ(want, err);
	if (err)
		return;
	if (adding) {
		s->m.p[s->m.n++] = p;
		s->adds++;
	} else {
		s->m.p[i] = s->m.p[--s->m.n];
		s->dels++;
	}
}

static void run(struct __test_metadata *_metadata, u64 seed, u64 mem_limit,
		unsigned int phases, unsigned int ops, unsigned int queries)
{
	static struct prefix_run s;
	unsigned int ph, i;

	memset(&s, 0, sizeof(s));
	s.r.s = seed;
	s.f = cnf_filter_create(16, mem_limit);
	ASSERT_NE(NULL, s.f);
	for (ph = 0; ph < phases; ph++) {
		bool grow = ph % 2 == 0;

		for (i = 0; i < ops; i++) {
			step(_metadata, &s, cnf_rng_below(&s.r, 10) < (grow ? 8 : 2));
			if (i % 64 == 0)
				check_all(_metadata, &s, 16);
		}
		check_all(_metadata, &s, queries);
	}
	TH_LOG("seed %llu: %llu adds, %llu deletes, %llu refused by the limit, %llu queries (%llu covered), %u prefixes at the end",
	       (unsigned long long)seed, (unsigned long long)s.adds,
	       (unsigned long long)s.dels, (unsigned long long)s.refused,
	       (unsigned long long)s.queries, (unsigned long long)s.hits,
	       s.m.n);
	ASSERT_GT(s.hits, s.queries / 8);
	ASSERT_GT(s.queries - s.hits, s.queries / 8);
	cnf_filter_destroy(s.f);
}

TEST(random_mix)
{
	run(_metadata, 0x70726566ULL, 1ULL << 34, 5, 3000, 100000);
}

/* A limit that stops growth: refused adds leave everything as it was. */
TEST(random_mix_tight_limit)
{
	run(_metadata, 0x6c696d69ULL, 1 << 17, 3, 3000, 50000);
}

static int add_p(struct cnf_filter *f, struct cnf_key k, unsigned int len)
{
	int err;

	cnf_key_cut(&k, len);
	cnf_filter_lock(f);
	err = cnf_filter_add(f, &k);
	cnf_filter_unlock(f);
	return err;
}

static int del_p(struct cnf_filter *f, struct cnf_key k, unsigned int len)
{
	int err;

	cnf_key_cut(&k, len);
	cnf_filter_lock(f);
	err = cnf_filter_del(f, &k);
	cnf_filter_unlock(f);
	return err;
}

/* The overlap rules of the manual, one by one. */
TEST(overlaps_kept_as_given)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_key net8 = cnf_key4(0x0a000000), host = cnf_key4(0x0a010203);
	struct cnf_key six = cnf_key6(0x20010db8, 0, 0, 0);

	ASSERT_EQ(0, add_p(f, net8, 8));
	ASSERT_EQ(0, add_p(f, net8, 16));	/* 10.0.0.0/16 */
	ASSERT_EQ(0, add_p(f, host, 16));	/* 10.1.0.0/16 */
	ASSERT_EQ(-EEXIST, add_p(f, host, 16));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a7f0001)));
	ASSERT_EQ(0, del_p(f, net8, 8));
	ASSERT_EQ(-ENOENT, del_p(f, net8, 8));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a7f0001)));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a01ffff)));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a020000)));
	/* Covered, but not stored: not deletable. */
	ASSERT_EQ(-ENOENT, del_p(f, host, 24));
	ASSERT_EQ(-ENOENT, del_p(f, host, 32));
	/* A native /24 under a /16 of its tier, and the reverse order. */
	ASSERT_EQ(0, add_p(f, host, 24));
	ASSERT_EQ(0, del_p(f, host, 16));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a0102ff)));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a010300)));
	ASSERT_EQ(0, add_p(f, host, 20));
	ASSERT_EQ(0, del_p(f, host, 24));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a010203)));
	ASSERT_EQ(0, del_p(f, host, 20));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a010203)));
	/* Host bits, lengths past the width. */
	cnf_filter_lock(f);
	host.len = 24;
	ASSERT_EQ(-EINVAL, cnf_filter_add(f, &host));
	host.len = 33;
	ASSERT_EQ(-EINVAL, cnf_filter_add(f, &host));
	six.len = 129;
	ASSERT_EQ(-EINVAL, cnf_filter_add(f, &six));
	cnf_filter_unlock(f);
	/* IPv6: a /20 (16 /24 keys), a /33 (8 /36 keys), a /128. */
	six = cnf_key6(0x20010000, 0, 0, 0);
	ASSERT_EQ(0, add_p(f, six, 20));
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, 0, 0, 0), 33));
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, 0x0fff0000, 0, 5), 128));
	ASSERT_TRUE(has6(f, 0x20010db8, 0x0fffffff, ~0U, ~0U));
	ASSERT_EQ(0, del_p(f, cnf_key6(0x20010db8, 0, 0, 0), 33));
	ASSERT_TRUE(has6(f, 0x20010db8, 0x0fffffff, ~0U, ~0U));
	ASSERT_EQ(0, del_p(f, six, 20));
	ASSERT_FALSE(has6(f, 0x20010db8, 0x0fffffff, ~0U, ~0U));
	ASSERT_TRUE(has6(f, 0x20010db8, 0x0fff0000, 0, 5));
	cnf_filter_destroy(f);
}

/*
 * A prefix with one bit set, at every position and every length of both
 * families: refused (-EINVAL, nothing stored) when the bit is past the
 * length, stored and deleted again when not.
 */
TEST(host_bits_every_length)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_filter_stats st;
	unsigned int fam, len, bit, width;
	struct cnf_key k;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		width = fam == CNF_V4 ? 32 : 128;
		for (len = 1; len <= width; len++) {
			for (bit = 0; bit < width; bit++) {
				memset(&k, 0, sizeof(k));
				k.family = fam;
				k.len = len;
				if (fam == CNF_V4)
					k.v4 = htonl(0x80000000U >> bit);
				else
					k.v6.s6_addr32[bit / 32] =
						htonl(0x80000000U >> bit % 32);
				cnf_filter_lock(f);
				ASSERT_EQ(bit < len ? 0 : -EINVAL,
					  cnf_filter_add(f, &k))
					TH_LOG("family %u /%u, bit %u", fam, len, bit);
				if (bit < len)
					ASSERT_EQ(0, cnf_filter_del(f, &k));
				cnf_filter_unlock(f);
			}
		}
	}
	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	ASSERT_EQ(0U, st.fam[CNF_V4].entries + st.fam[CNF_V6].entries);
	cnf_filter_destroy(f);
}

/* A set of addresses probes one table per family, as before prefixes. */
TEST(addresses_probe_one_table)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_filter_stats st;

	ASSERT_EQ(0, add_p(f, cnf_key4(0x0a000001), 32));
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, 0, 0, 1), 128));
	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	ASSERT_EQ(1U, st.fam[CNF_V4].tables);
	ASSERT_EQ(1U, st.fam[CNF_V6].tables);
	ASSERT_EQ(1U, st.fam[CNF_V4].keys);
	/* A /17: 8 keys of the /20 tier. */
	ASSERT_EQ(0, add_p(f, cnf_key4(0x0a000000), 17));
	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	ASSERT_EQ(2U, st.fam[CNF_V4].tables);
	ASSERT_EQ(1U + 8, st.fam[CNF_V4].keys);
	ASSERT_EQ(2U, st.fam[CNF_V4].lengths);
	/* A /8: 256 bits of the /16 map, read as one more table. */
	ASSERT_EQ(0, add_p(f, cnf_key4(0x0b000000), 8));
	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	ASSERT_EQ(3U, st.fam[CNF_V4].tables);
	ASSERT_EQ(1U + 8 + 256, st.fam[CNF_V4].keys);
	cnf_filter_destroy(f);
}

static u64 v4_bytes(struct cnf_filter *f)
{
	struct cnf_filter_stats st;

	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	return st.fam[CNF_V4].bytes;
}

/*
 * A filter's IPv4-layout tables share its tabulation, narrow slots or
 * wide: a tier opened, or grown, adds its slots to the filter's memory and
 * no hashes; the shared one counts once.  A filter of its own has its own.
 */
TEST(tiers_share_tabulation)
{
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter *g = cnf_filter_create(0, NO_LIMIT);
	const struct cnf_table *t20, *t24, *t32;
	u64 slots = 0;
	unsigned int i;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, g);
	ASSERT_NE(NULL, f->thash4);
	ASSERT_NE(f->thash4, g->thash4);
	ASSERT_EQ(0, add_p(f, cnf_key4(0x0a000000), 19));	/* /20 keys */
	ASSERT_EQ(0, add_p(f, cnf_key4(0x0b000000), 23));	/* /24 keys */
	for (i = 0; i < 5000; i++)	/* the /32 tier grows */
		ASSERT_EQ(0, add_p(f, cnf_key4(0x0c000000 + 7 * i), 32));
	t20 = rcu_dereference_protected(f->tier[CNF_V4][20], 1);
	t24 = rcu_dereference_protected(f->tier[CNF_V4][24], 1);
	t32 = rcu_dereference_protected(f->tier[CNF_V4][32], 1);
	ASSERT_NE(NULL, t20);
	ASSERT_NE(NULL, t24);
	ASSERT_EQ((unsigned int)CNF_SLOT_V4_WIDE, cnf_width(t32));
	ASSERT_EQ(f->thash4, t20->thash);
	ASSERT_EQ(f->thash4, t24->thash);
	ASSERT_EQ(f->thash4, t32->thash);
	ASSERT_TRUE(t32->shared_thash);
	for (i = 0; i < CNF_TIERS; i++) {
		const struct cnf_table *t =
			rcu_dereference_protected(f->tier[CNF_V4][i], 1);

		slots += t ? t->bytes : 0;
	}
	for (i = 0; i < CNF_STORE_TABLES; i++) {
		const struct cnf_table *t =
			rcu_dereference_protected(f->store[CNF_V4][i], 1);

		slots += t ? t->bytes : 0;
	}
	ASSERT_EQ(slots + cnf_thash4_bytes(), v4_bytes(f));
	ASSERT_EQ(0, add_p(f, cnf_key4(0x0a000000), 20));
	ASSERT_TRUE(cnf_t_has(f, &(struct cnf_key){ .family = CNF_V4,
		.len = 32, .v4 = htonl(0x0a000fff) }));
	ASSERT_FALSE(cnf_t_has(f, &(struct cnf_key){ .family = CNF_V4,
		.len = 32, .v4 = htonl(0x0a002000) }));
	cnf_filter_destroy(g);
	cnf_filter_destroy(f);
}

/*
 * Prefixes of up to 16 bits share the /16 map: deleting one clears only
 * the /16s no other covers, and the map goes with the last of them.
 */
TEST(map_overlaps)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_key net = cnf_key4(0x0a000000), all = cnf_key4(0);
	u64 empty = v4_bytes(f);

	ASSERT_EQ(0, add_p(f, net, 8));			/* 10.0.0.0/8 */
	ASSERT_EQ(0, add_p(f, net, 12));		/* 10.0.0.0/12 */
	ASSERT_EQ(0, add_p(f, cnf_key4(0x0a100000), 16)); /* 10.16.0.0/16 */
	ASSERT_EQ(-EEXIST, add_p(f, net, 12));
	ASSERT_LT(empty, v4_bytes(f));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0affffff)));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0b000000)));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x09ffffff)));
	ASSERT_EQ(0, del_p(f, net, 8));
	ASSERT_EQ(-ENOENT, del_p(f, net, 8));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a0fffff)));	/* the /12 */
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a10ffff)));	/* the /16 */
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a110000)));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0aff0000)));
	ASSERT_EQ(0, del_p(f, net, 12));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a0fffff)));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a100000)));
	/* /0 covers everything; deleting it leaves the /16 alone. */
	ASSERT_EQ(0, add_p(f, all, 0));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0xffffffff)));
	ASSERT_EQ(0, del_p(f, all, 0));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0xffffffff)));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0)));
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a10abcd)));
	ASSERT_EQ(0, del_p(f, cnf_key4(0x0a100000), 16));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a10abcd)));
	ASSERT_EQ(empty, v4_bytes(f));
	/* IPv6 has a map too: 2000::/3, then a /16 inside it. */
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20000000, 0, 0, 0), 3));
	ASSERT_EQ(0, add_p(f, cnf_key6(0x2a000000, 0, 0, 0), 16));
	ASSERT_TRUE(has6(f, 0x3fffffff, ~0U, ~0U, ~0U));
	ASSERT_FALSE(has6(f, 0x40000000, 0, 0, 0));
	ASSERT_EQ(0, del_p(f, cnf_key6(0x20000000, 0, 0, 0), 3));
	ASSERT_FALSE(has6(f, 0x3fffffff, ~0U, ~0U, ~0U));
	ASSERT_TRUE(has6(f, 0x2a00ffff, ~0U, ~0U, ~0U));
	ASSERT_FALSE(has6(f, 0x2a010000, 0, 0, 0));
	cnf_filter_destroy(f);
}

/*
 * A batch's tally sizes its tables as its keys land: each of the six
 * tables its adds make (three tiers, three stores) grows twice at most on
 * its way to the tally's keys, a reload of the same list grows nothing
 * and takes no more memory, and no table is made for keys that never
 * come.
 */
TEST(tally_sizes_in_steps)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_tally *tally = calloc(1, sizeof(*tally));
	struct cnf_key k[3000];
	struct cnf_filter_stats st;
	u64 grows, bytes, empty, empty6;
	unsigned int i, pass;

	ASSERT_NE(NULL, tally);
	cnf_filter_lock(f);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	empty6 = st.fam[CNF_V6].bytes;
	/* /17s: 8 /20 keys; /23s: 2 /24 keys; /29s: 8 /32 keys. */
	for (i = 0; i < 3000; i++) {
		k[i] = cnf_key4(0x0a000000 + (i << 15));
		cnf_key_cut(&k[i], i % 3 == 0 ? 17 : i % 3 == 1 ? 23 : 29);
		cnf_tally_add(tally, &k[i]);
	}
	cnf_tally_add(tally, &(struct cnf_key){ .family = CNF_V4, .len = 8 });
	ASSERT_EQ(1000U * 8, tally->keys[CNF_V4][20]);
	ASSERT_EQ(1000U * 2, tally->keys[CNF_V4][24]);
	ASSERT_EQ(1000U * 8, tally->keys[CNF_V4][32]);
	ASSERT_EQ(0U, tally->keys[CNF_V4][16]);	/* the map does not grow */
	empty = v4_bytes(f);
	for (pass = 0; pass < 2; pass++) {
		cnf_filter_lock(f);
		cnf_filter_expect(f, 3000);
		cnf_filter_expect_tally(f, tally);
		cnf_filter_stats(f, &st);
		grows = st.fam[CNF_V4].grows;
		bytes = st.fam[CNF_V4].bytes;
		for (i = 0; i < 3000; i++)
			ASSERT_EQ(pass ? -EEXIST : 0, cnf_filter_add(f, &k[i]));
		cnf_filter_expect(f, 0);
		cnf_filter_stats(f, &st);
		cnf_filter_unlock(f);
		TH_LOG("pass %u: %llu grows", pass,
		       (unsigned long long)(st.fam[CNF_V4].grows - grows));
		ASSERT_GE(pass ? grows : grows + 6 * 2, st.fam[CNF_V4].grows);
		ASSERT_EQ(1000U * (8 + 2 + 8), st.fam[CNF_V4].keys);
		/* Sized for the keys: not past twice them, the store aside. */
		ASSERT_LT(st.fam[CNF_V4].capacity, 3 * st.fam[CNF_V4].keys);
		if (pass)
			ASSERT_EQ(bytes, st.fam[CNF_V4].bytes);
	}
	/*
	 * A batch none of whose adds went in: a table comes with its first
	 * key, never for keys announced alone.
	 */
	ASSERT_EQ(0, cnf_t_flush(f));
	memset(tally, 0, sizeof(*tally));
	tally->keys[CNF_V4][20] = 100000;
	tally->keys[CNF_V6][40] = 100000;
	cnf_filter_lock(f);
	cnf_filter_expect(f, 100000);
	cnf_filter_expect_tally(f, tally);
	cnf_filter_stats(f, &st);
	ASSERT_EQ(empty, st.fam[CNF_V4].bytes);
	cnf_filter_expect(f, 0);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	ASSERT_EQ(empty, st.fam[CNF_V4].bytes);
	ASSERT_EQ(empty6, st.fam[CNF_V6].bytes);
	free(tally);
	cnf_filter_destroy(f);
}

/*
 * Load @n keys, @k[i % @distinct], as the module loads one batch: tallied
 * first, then a part of @chunk at a time (0: all at once), each under the
 * lock announcing what is left and taking the tally, as dev.c's chunks
 * do.  Return: how many times the address tiers' tables were replaced
 * while the batch was under way, at its end not counted.
 */
static unsigned int load_copies(struct __test_metadata *_metadata,
				struct cnf_filter *f, const struct cnf_key *k,
				u64 distinct, u64 n, u64 chunk)
{
	struct cnf_tally *tally = calloc(1, sizeof(*tally));
	const struct cnf_table *t4, *t6;
	unsigned int replaced = 0;
	u64 i = 0, end;

	if (!tally)
		abort();
	for (i = 0; i < n; i++)
		cnf_tally_add(tally, &k[i % distinct]);
	for (i = 0; i < n; i = end) {
		end = chunk ? min_t(u64, n, i + chunk) : n;
		cnf_filter_lock(f);
		cnf_filter_expect(f, n - i);
		cnf_filter_expect_tally(f, tally);
		t4 = f->tier[CNF_V4][CNF_V4_BITS];
		t6 = f->tier[CNF_V6][CNF_V6_BITS];
		for (; i < end; i++) {
			int err = cnf_filter_add(f, &k[i % distinct]);

			EXPECT_EQ(i < distinct ? 0 : -EEXIST, err);
		}
		replaced += (t4 != f->tier[CNF_V4][CNF_V4_BITS]) +
			    (t6 != f->tier[CNF_V6][CNF_V6_BITS]);
		cnf_filter_expect(f, 0);
		cnf_filter_unlock(f);
	}
	free(tally);
	return replaced;
}

/*
 * Duplicates in a batch take no memory: 100,000 copies of one address
 * leave the filter as adding it once does; a list of 3,000 addresses given
 * 40 times over, in one batch or in parts of 256 as dev.c applies them,
 * leaves its tables no larger than loading it once (what its copies left
 * mostly empty shrinks at its end), and in parts the tables are not
 * rebuilt for every part.
 */
TEST(tally_of_duplicates)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	static struct cnf_key k[3000];
	struct cnf_filter_stats st;
	u64 once[CNF_NFAMILIES], chunk;
	unsigned int i, fam, replaced;

	ASSERT_NE(NULL, f);
	for (i = 0; i < ARRAY_SIZE(k); i++)
		k[i] = i % 2 ? cnf_key4(0x0a000000 + 7919 * i) :
			       cnf_key6(0x20010db8, 0, i, 1);
	ASSERT_EQ(0, cnf_t_add(f, &k[0]));
	st = cnf_t_stats(f);
	ASSERT_EQ(0, cnf_t_flush(f));
	load_copies(_metadata, f, k, 1, 100000, 0);
	ASSERT_EQ(st.fam[CNF_V6].bytes, cnf_t_stats(f).fam[CNF_V6].bytes);
	ASSERT_EQ(st.fam[CNF_V4].bytes, cnf_t_stats(f).fam[CNF_V4].bytes);
	ASSERT_EQ(1U, cnf_t_stats(f).fam[CNF_V6].entries);

	ASSERT_EQ(0, cnf_t_flush(f));
	load_copies(_metadata, f, k, ARRAY_SIZE(k), ARRAY_SIZE(k), 0);
	st = cnf_t_stats(f);
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		once[fam] = st.fam[fam].bytes;
	for (chunk = 0; chunk <= 256; chunk += 256) {
		ASSERT_EQ(0, cnf_t_flush(f));
		replaced = load_copies(_metadata, f, k, ARRAY_SIZE(k),
				       40 * ARRAY_SIZE(k), chunk);
		st = cnf_t_stats(f);
		TH_LOG("parts of %llu: %llu and %llu bytes, %llu and %llu once; address tables replaced %u times",
		       (unsigned long long)chunk,
		       (unsigned long long)st.fam[CNF_V4].bytes,
		       (unsigned long long)st.fam[CNF_V6].bytes,
		       (unsigned long long)once[CNF_V4],
		       (unsigned long long)once[CNF_V6], replaced);
		for (fam = 0; fam < CNF_NFAMILIES; fam++) {
			ASSERT_EQ(ARRAY_SIZE(k) / 2, st.fam[fam].entries);
			ASSERT_GE(once[fam], st.fam[fam].bytes);
		}
		/* Two steps per family at most, and no shrink before the end. */
		ASSERT_GE(4U, replaced);
	}
	for (i = 0; i < ARRAY_SIZE(k); i++)
		ASSERT_TRUE(i % 2 ? has4(f, 0x0a000000 + 7919 * i) :
				    has6(f, 0x20010db8, 0, i, 1));
	cnf_filter_destroy(f);
}

/*
 * Keys added one by one to a new filter with memory limit @limit, under a
 * batch whose tally says @told keys of their tier (0: no batch), until one
 * does not fit.  Return: the slots of the family's tables then.
 */
static u64 fill_to_limit(struct __test_metadata *_metadata,
			 enum cnf_family fam, u64 limit, u64 told)
{
	struct cnf_filter *f = cnf_filter_create(16, limit);
	struct cnf_tally tally = { 0 };
	struct cnf_filter_stats st;
	struct cnf_key k;
	u64 n;
	int err;

	if (!f)
		abort();
	tally.keys[fam][cnf_family_bits(fam)] = told;
	cnf_filter_lock(f);
	if (told) {
		cnf_filter_expect(f, told);
		cnf_filter_expect_tally(f, &tally);
	}
	for (n = 0;; n++) {
		k = fam == CNF_V4 ? cnf_key4(0x0a000000 + 7919 * (u32)n) :
				    cnf_key6(0x20010db8, 0, (u32)n, 1);
		err = cnf_filter_add(f, &k);
		if (err)
			break;
	}
	cnf_filter_expect(f, 0);
	cnf_filter_stats(f, &st);
	cnf_filter_unlock(f);
	cnf_filter_destroy(f);
	EXPECT_EQ(-ENOSPC, err);
	TH_LOG("%s, %s: %llu keys in %llu slots",
	       fam == CNF_V4 ? "IPv4" : "IPv6", told ? "told" : "one by one",
	       (unsigned long long)n,
	       (unsigned long long)st.fam[fam].capacity);
	return st.fam[fam].capacity;
}

/*
 * A batch's tally that counts more keys than the memory limit holds grows
 * its tables as far as the limit lets adds one by one grow them: to the
 * largest size that fits, not stopped at the size it asked for.
 */
TEST(tally_bounded_by_headroom)
{
	enum cnf_family fam;
	u64 plain, told;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		plain = fill_to_limit(_metadata, fam, 1 << 20, 0);
		told = fill_to_limit(_metadata, fam, 1 << 20, 1 << 26);
		ASSERT_LE(plain, told);
	}
}

/*
 * An allocation that fails while a prefix goes to the /16 map (the map,
 * its words, the store's table), or while a table is made during a batch,
 * fails the add with -ENOMEM and leaves the filter as it was; one that
 * fails while a batch's tally is taken in changes nothing of what the
 * filter holds.  Every allocation in turn.
 */
TEST(map_and_tally_enomem)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_filter_stats before, after;
	struct cnf_key p = cnf_key4(0x0a000000), q;
	struct cnf_tally tally = { 0 };
	unsigned int failed = 0;
	bool hit;
	long n;
	int err;

	ASSERT_NE(NULL, f);
	cnf_key_cut(&p, 8);
	for (n = 0;; n++) {
		before = cnf_t_stats(f);
		cnf_user_fail_alloc_in = n;
		err = cnf_t_add(f, &p);
		if (cnf_user_fail_alloc_in >= 0) {
			cnf_user_fail_alloc_in = -1;
			ASSERT_EQ(0, err);	/* every allocation went through */
			break;
		}
		ASSERT_EQ(-ENOMEM, err);
		after = cnf_t_stats(f);
		ASSERT_EQ(0, memcmp(&before, &after, sizeof(before)));
		ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a123456)));
		failed++;
	}
	ASSERT_LE(3U, failed);
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0a123456)));
	tally.keys[CNF_V4][20] = 50000;
	tally.keys[CNF_V6][48] = 50000;
	tally.stored[CNF_V4][0] = 1000;
	for (n = 0; n < 12; n++) {
		cnf_filter_lock(f);
		cnf_user_fail_alloc_in = n;
		cnf_filter_expect_tally(f, &tally);
		cnf_user_fail_alloc_in = -1;
		cnf_filter_expect(f, 0);
		cnf_filter_stats(f, &after);
		cnf_filter_unlock(f);
		ASSERT_EQ(1U, after.fam[CNF_V4].entries);
		ASSERT_EQ(256U, after.fam[CNF_V4].keys);
		ASSERT_EQ(0U, after.fam[CNF_V6].entries);
		ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0affffff)));
		ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0b000000)));
	}
	/* A /17's tier table, made during the batch, under failures. */
	q = cnf_key4(0x0b000000);
	cnf_key_cut(&q, 17);
	for (n = 0;; n++) {
		cnf_filter_lock(f);
		cnf_filter_expect_tally(f, &tally);
		cnf_filter_stats(f, &before);
		cnf_user_fail_alloc_in = n;
		err = cnf_filter_add(f, &q);
		hit = cnf_user_fail_alloc_in < 0;
		cnf_user_fail_alloc_in = -1;
		cnf_filter_expect(f, 0);
		cnf_filter_stats(f, &after);
		cnf_filter_unlock(f);
		if (!hit) {
			ASSERT_EQ(0, err);
			break;
		}
		ASSERT_EQ(-ENOMEM, err);
		ASSERT_EQ(0, memcmp(&before, &after, sizeof(before)));
	}
	ASSERT_LE(1, n);
	ASSERT_NE(NULL, f->tier[CNF_V4][20]);
	ASSERT_TRUE(cnf_filter_lookup4(f, htonl(0x0b007fff)));
	ASSERT_EQ(0, del_p(f, q, 17));
	ASSERT_EQ(0, del_p(f, p, 8));
	ASSERT_FALSE(cnf_filter_lookup4(f, htonl(0x0a123456)));
	cnf_filter_destroy(f);
}

/*
 * A prefix of every length of @fam at once, /1 to its width, probes at
 * most @tables tables and the /16 map, and none expands into more than
 * @most keys, but those of the map, one bit per /16: the bounds prefix.h
 * states.  The /L is L - 1 zero bits and a one: no two overlap.
 */
static void check_tiers_bounded(struct __test_metadata *_metadata,
				enum cnf_family fam, unsigned int tables,
				unsigned int most)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	unsigned int len, bits = cnf_family_bits(fam);
	struct cnf_filter_stats st;
	struct cnf_key p;
	u64 keys = 0;

	ASSERT_NE(NULL, f);
	for (len = 1; len <= bits; len++) {
		p = fam == CNF_V4 ? cnf_key4(0) : cnf_key6(0, 0, 0, 0);
		if (fam == CNF_V4)
			p.v4 = htonl(1U << (32 - len));
		else
			p.v6.s6_addr32[(len - 1) / 32] =
				htonl(1U << (31 - (len - 1) % 32));
		ASSERT_EQ(0, add_p(f, p, len));
		cnf_filter_lock(f);
		cnf_filter_stats(f, &st);
		cnf_filter_unlock(f);
		if (len <= CNF_MAP_BITS) {
			ASSERT_EQ(1U << (CNF_MAP_BITS - len),
				  st.fam[fam].keys - keys);
		} else {
			ASSERT_LE(st.fam[fam].keys - keys, most);
		}
		keys = st.fam[fam].keys;
	}
	ASSERT_EQ(bits, st.fam[fam].lengths);
	ASSERT_EQ(tables + 1, st.fam[fam].tables);
	cnf_filter_destroy(f);
}

/* IPv4: the /20, /24, /28 and /32 tiers; a /17, /21, /25 or /29, 8 keys. */
TEST(ipv4_tiers_bounded)
{
	check_tiers_bounded(_metadata, CNF_V4, 4, 8);
}

TEST(ipv6_tiers_bounded)
{
	check_tiers_bounded(_metadata, CNF_V6, 19, 128);
}

/*
 * Every length of both families, IPv4 /0 to /32 and IPv6 /0 to /128, a
 * few prefixes each from a few narrow regions: short ones cover longer
 * ones, so the store holds prefixes shorter than their tier and tier keys
 * that shorter prefixes also cover, of every length.  The walk gives each
 * back once and each is found; deleting them one by one in random order
 * (checked as it goes) leaves the filter as it was created.
 */
TEST(store_round_trip_every_length)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 34);
	struct cnf_rng r = { 0x726f756eULL };
	struct cnf_model m;
	unsigned int len, i;
	enum cnf_family fam;
	u64 bytes0, dels = 0;

	ASSERT_NE(NULL, f);
	cnf_user_seed_random(0x726f756fULL);
	cnf_model_init(&m, 10);
	bytes0 = cnf_t_bytes(f);
	for (fam = CNF_V4; fam <= CNF_V6; fam++) {
		for (len = 0; len <= cnf_family_bits(fam); len++) {
			for (i = 0; i < 24; i++) {
				struct cnf_key p = region_addr(&r, fam);
				int err;

				cnf_key_cut(&p, len);
				err = cnf_t_add(f, &p);
				ASSERT_EQ(cnf_model_has(&m, &p) ? -EEXIST : 0,
					  err);
				cnf_model_add(&m, &p);
			}
		}
	}
	TH_LOG("%llu IPv4 and %llu IPv6 prefixes",
	       (unsigned long long)m.n[CNF_V4],
	       (unsigned long long)m.n[CNF_V6]);
	ASSERT_MATCHES(f, &m);
	while (cnf_model_size(&m)) {
		struct cnf_key p = *cnf_model_any(&m, &r);

		ASSERT_EQ(0, cnf_t_del(f, &p));
		ASSERT_EQ(-ENOENT, cnf_t_del(f, &p));
		cnf_model_del(&m, &p);
		cnf_filter_lock(f);
		ASSERT_FALSE(cnf_filter_has(f, &p));
		cnf_filter_unlock(f);
		if (!(++dels % 256))
			ASSERT_MATCHES(f, &m);
	}
	ASSERT_MATCHES(f, &m);
	ASSERT_EQ(bytes0, cnf_t_bytes(f));
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * Adds @want prefixes of @fam from @next, which change the store alone
 * (prefixes already there made the tier keys they need).  At each growth
 * of the store past 1000 of them, the bytes it took on per slot it gained
 * must be at most @slot, and the bytes the filter took on for them until
 * then, per prefix, are logged: the fewest must be at most 9/8 of @slot.
 */
static void store_fill(struct __test_metadata *_metadata,
			 struct cnf_filter *f, struct cnf_model *m,
			 struct cnf_rng *r, enum cnf_family fam,
			 struct cnf_key (*next)(struct cnf_rng *r),
			 unsigned int want, unsigned int slot)
{
	struct cnf_table_stats st0 = cnf_t_stats(f).fam[fam], prev = st0, st;
	double per, best = 0;
	u64 n = 0;

	while (n < want) {
		struct cnf_key p = next(r);

		if (cnf_model_has(m, &p))
			continue;
		ASSERT_EQ(0, cnf_t_add(f, &p));
		cnf_model_add(m, &p);
		st = cnf_t_stats(f).fam[fam];
		ASSERT_EQ(st0.keys, st.keys);
		if (st.bytes != prev.bytes && n >= 1000) {
			per = (double)(prev.bytes - st0.bytes) / n;
			TH_LOG("%s: %llu prefixes, %llu slots more, %.2f bytes each",
			       fam == CNF_V4 ? "IPv4" : "IPv6",
			       (unsigned long long)n,
			       (unsigned long long)(prev.capacity - st0.capacity),
			       per);
			ASSERT_GE(slot * (st.capacity - prev.capacity),
				  st.bytes - prev.bytes);
			if (!best || per < best)
				best = per;
		}
		prev = st;
		n++;
	}
	ASSERT_LT(0, best);
	ASSERT_GE(slot * 9.0 / 8, best);
}

/* IPv4 /1 to /15: under 0.0.0.0/0, their /16 keys are there. */
static struct cnf_key short4(struct cnf_rng *r)
{
	struct cnf_key p = cnf_key4((u32)cnf_rng_next(r));

	cnf_key_cut(&p, 1 + cnf_rng_below(r, 15));
	return p;
}

/*
 * IPv6 /46 to /48 in 2001:db8::/35, under its 1024 /45s, which make the
 * /48 keys: /48s are tier keys there that the store keeps as native too.
 */
static struct cnf_key short6(struct cnf_rng *r)
{
	struct cnf_key p = cnf_key6(0x20010db8, (u32)cnf_rng_next(r) >> 3, 0,
				    0);

	cnf_key_cut(&p, 46 + cnf_rng_below(r, 3));
	return p;
}

/* Add @p cut to @len, which must go in, to @f and the model. */
static void add_ok(struct __test_metadata *_metadata, struct cnf_filter *f,
		   struct cnf_model *m, struct cnf_key p, unsigned int len)
{
	cnf_key_cut(&p, len);
	ASSERT_EQ(0, cnf_t_add(f, &p));
	cnf_model_add(m, &p);
}

/*
 * The store's bytes per prefix: prefixes shorter than 32 bits are keys of
 * one word, numbers of 16 bits at most for those of up to 15 bits, in
 * 2-byte slots, 2.08 bytes a prefix at the 96% load limit; IPv6 ones
 * shorter than /64 of two, in 8-byte slots (6-byte ones from 2^18 buckets
 * on), 8.33 bytes.  Prefixes that change the store alone are
 * added under covering ones, and the filter's bytes counted: one growth at
 * least must find the store about 90% full.
 */
TEST(store_key_bytes)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 34);
	struct cnf_rng r = { 0x73746f72ULL };
	struct cnf_model m;
	unsigned int i;

	ASSERT_NE(NULL, f);
	cnf_user_seed_random(0x73746f73ULL);
	cnf_model_init(&m, 14);
	add_ok(_metadata, f, &m, cnf_key4(0), 0);
	store_fill(_metadata, f, &m, &r, CNF_V4, short4, 8000,
		   CNF_SLOT_V4_NARROW);
	for (i = 0; i < 1024; i++)
		add_ok(_metadata, f, &m, cnf_key6(0x20010db8, i << 19, 0, 0), 45);
	store_fill(_metadata, f, &m, &r, CNF_V6, short6, 8000,
		   CNF_SLOT_64_WIDE);
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * A store table keeps the one-word keys of one width: those of /16 to /19
 * are numbers below 2^20, of /20 to /23 below 2^24, of /24 to /27 below
 * 2^28, so their tables take 2-byte slots from 2^6, 2^10 and 2^14 buckets
 * on.  Enough prefixes of the longest length of each range grow its table
 * to that size: it has 2-byte slots there, and every prefix is found.
 */
TEST(store_narrow_by_width)
{
	static const struct { unsigned int len, n; } range[] = {
		{ 19, 200 }, { 23, 3000 }, { 27, 40000 },
	};
	unsigned int i, j, s, bits;

	for (j = 0; j < ARRAY_SIZE(range); j++) {
		struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
		unsigned int len = range[j].len, step = 1U << (32 - len);
		const struct cnf_table *t = NULL;

		ASSERT_NE(NULL, f);
		for (i = 0; i < range[j].n; i++)
			ASSERT_EQ(0, add_p(f, cnf_key4(0x0a000000 + i * step),
					   len));
		for (s = 0; s < CNF_STORE_ONE_WORD && !t; s++) {
			t = rcu_dereference_protected(f->store[CNF_V4][s], 1);
			if (t && t->count != range[j].n)
				t = NULL;
		}
		ASSERT_NE(NULL, t);
		bits = cnf_layout_last_bits(cnf_table_layout(t));
		TH_LOG("/%u: keys below 2^%u, 2^%u buckets, %u-byte slots",
		       len, bits, t->log, cnf_width(t));
		ASSERT_EQ(len + 1, bits);
		ASSERT_EQ(bits - CNF_NARROW_R_BITS, t->log);
		ASSERT_EQ((unsigned int)CNF_SLOT_V4_NARROW, cnf_width(t));
		for (i = 0; i < range[j].n; i++)
			ASSERT_TRUE(has4(f, 0x0a000000 + i * step + step - 1));
		ASSERT_FALSE(has4(f, 0x0a000000 + range[j].n * step));
		cnf_filter_destroy(f);
	}
}

/*
 * Three tables of IPv6 at their load limit (30 keys in their first 32
 * slots, unless a cuckoo path failed earlier): the two-word store (/55s),
 * the four-word store (/65s) and the /64 tier (/64s).  Then one add
 * changes all three: 2001:db8:0:10::/61 is a two-word store key, it covers
 * a native /64 that the store must now keep (a four-word key), and /64s
 * the tier lacks.  The core's random numbers come from @seed.
 */
static struct cnf_filter *three_at_limit(struct __test_metadata *_metadata,
					 struct cnf_model *m, u64 seed)
{
	struct cnf_filter *f;
	unsigned int i;

	cnf_user_seed_random(seed);
	f = cnf_filter_create(16, NO_LIMIT);
	if (!f)
		return NULL;
	cnf_model_clear(m);
	add_ok(_metadata, f, m, cnf_key6(0x20010db8, 0x10, 0, 0), 64);
	for (i = 0; i < 29; i++)
		add_ok(_metadata, f, m, cnf_key6(0x20010db8, 0x10000 + i, 0, 0),
		       64);
	for (i = 0; i < 30; i++) {
		add_ok(_metadata, f, m, cnf_key6(0x20010db9, i << 9, 0, 0), 55);
		add_ok(_metadata, f, m,
		       cnf_key6(0x20010db8, 0xffff0000 + i, 0, 0), 65);
	}
	return f;
}

/*
 * A new tier's table shares its filter's tabulation, and the memory limit
 * counts it so: a limit of exactly what the filter will hold lets it in,
 * a byte less refuses it and changes nothing.
 */
TEST(new_tier_fits_exactly)
{
	struct cnf_key p = cnf_key4(0x0a000000);
	struct cnf_filter *f = cnf_filter_create(16, NO_LIMIT);
	u64 before, grown;
	unsigned int fits;

	ASSERT_NE(NULL, f);
	before = cnf_t_bytes(f);
	ASSERT_EQ(0, add_p(f, p, 20));
	grown = cnf_t_bytes(f) - before;
	cnf_filter_destroy(f);
	for (fits = 0; fits < 2; fits++) {
		f = cnf_filter_create(16, NO_LIMIT);
		ASSERT_NE(NULL, f);
		ASSERT_EQ(before, cnf_t_bytes(f));
		ASSERT_EQ(0, cnf_t_set_limit(f, before + grown - 1 + fits));
		ASSERT_EQ(fits ? 0 : -ENOSPC, add_p(f, p, 20));
		ASSERT_EQ(before + (fits ? grown : 0), cnf_t_bytes(f));
		ASSERT_EQ(fits, cnf_filter_lookup4(f, htonl(0x0a000fff)));
		cnf_filter_destroy(f);
	}
}

/*
 * Under memory limits from none to spare to enough, that add either
 * succeeds (past the limit, keys go to the stashes) or leaves the filter
 * exactly as it was, its memory included: the tables it replaced go back.
 * First a seed is found with which the add, without a limit, doubles each
 * of the three.
 */
TEST(one_add_three_tables)
{
	struct cnf_key p61 = cnf_key6(0x20010db8, 0x10, 0, 0);
	struct cnf_table_stats before, after;
	u64 seed, extra, bytes, grown = 0;
	unsigned int refused = 0, stashed = 0;
	struct cnf_filter *f;
	struct cnf_model m;
	int err;

	cnf_key_cut(&p61, 61);
	cnf_model_init(&m, 8);
	for (seed = 0x74687265ULL; grown != 3 * 32; seed++) {
		ASSERT_GT(0x74687265ULL + 20, seed);
		f = three_at_limit(_metadata, &m, seed);
		ASSERT_NE(NULL, f);
		before = cnf_t_stats(f).fam[CNF_V6];
		ASSERT_EQ(0, cnf_t_add(f, &p61));
		grown = cnf_t_stats(f).fam[CNF_V6].capacity - before.capacity;
		cnf_filter_destroy(f);
	}
	seed--;
	for (extra = 0; extra < 1 << 16; extra += 16) {
		f = three_at_limit(_metadata, &m, seed);
		ASSERT_NE(NULL, f);
		before = cnf_t_stats(f).fam[CNF_V6];
		bytes = cnf_t_bytes(f);
		ASSERT_EQ(0, cnf_t_set_limit(f, bytes + extra));
		err = cnf_t_add(f, &p61);
		after = cnf_t_stats(f).fam[CNF_V6];
		if (!err) {
			cnf_model_add(&m, &p61);
			ASSERT_MATCHES(f, &m);
			cnf_filter_destroy(f);
			if (after.capacity == before.capacity + 3 * 32)
				break;
			stashed++;
			continue;
		}
		ASSERT_EQ(-ENOSPC, err);
		ASSERT_EQ(bytes, cnf_t_bytes(f));
		ASSERT_EQ(before.capacity, after.capacity);
		ASSERT_MATCHES(f, &m);
		refused++;
		cnf_filter_destroy(f);
	}
	TH_LOG("seed %#llx: refused under %u limits, stashed under %u, all three grown with %llu bytes to spare",
	       (unsigned long long)seed, refused, stashed,
	       (unsigned long long)extra);
	ASSERT_GT(1U << 16, extra);
	ASSERT_LT(100U, refused);
	cnf_model_free(&m);
}

/* ---- the directory of the long tiers ---- */

/*
 * Add @p cut to @len with the @n'th allocation from now on failing.  An add
 * that fails must have failed there, with -ENOMEM, and left the filter's
 * stats as they were.  Returns the add's result.
 */
static int add_failing_at(struct __test_metadata *_metadata,
			  struct cnf_filter *f, struct cnf_key p,
			  unsigned int len, long n)
{
	struct cnf_filter_stats before = cnf_t_stats(f), after;
	bool hit;
	int err;

	cnf_user_fail_alloc_in = n;
	err = add_p(f, p, len);
	hit = cnf_user_fail_alloc_in < 0;
	cnf_user_fail_alloc_in = -1;
	if (err) {
		EXPECT_TRUE(hit);
		EXPECT_EQ(-ENOMEM, err);
		after = cnf_t_stats(f);
		EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)));
	}
	return err;
}

/* A long IPv6 prefix, /33 to /127, in a /32 of its own or in @near's. */
static struct cnf_key long_prefix(struct cnf_rng *r, const struct pmodel *m)
{
	struct cnf_key k = cnf_key6((u32)cnf_rng_next(r), (u32)cnf_rng_next(r),
				    (u32)cnf_rng_next(r), (u32)cnf_rng_next(r));

	if (m->n && cnf_rng_below(r, 2))
		k.v6.s6_addr32[0] =
			m->p[cnf_rng_below(r, m->n)].v6.s6_addr32[0];
	cnf_key_cut(&k, 33 + cnf_rng_below(r, 95));
	return k;
}

/* The tier of a long prefix of @len bits: as prefix.h places it. */
static unsigned int long_tier(unsigned int len)
{
	return len > 120 ? 127 : (len + 7) / 8 * 8;
}

/* Distinct (first 32 bits, tier) of the model: the bits a directory needs. */
static u64 long_pairs(const struct pmodel *m)
{
	static u64 pair[MODEL_MAX];
	unsigned int i, j, n = 0;

	for (i = 0; i < m->n; i++) {
		u64 x = (u64)ntohl(m->p[i].v6.s6_addr32[0]) << 8 |
			long_tier(m->p[i].len);

		for (j = 0; j < n && pair[j] != x; j++)
			;
		if (j == n)
			pair[n++] = x;
	}
	return n;
}

/* A directory is there, at most half full, and not much larger than need be. */
static void dir_sized(struct __test_metadata *_metadata, struct prefix_run *s)
{
	const struct cnf_v6dir *d = s->f->v6dir;
	u64 pairs = long_pairs(&s->m);

	ASSERT_NE(NULL, d);
	ASSERT_LE(d->bits, d->grow_at);
	ASSERT_LE(d->grow_at, 1ULL << (d->log - 1));
	ASSERT_LE(1ULL << d->log, 32 * pairs + 64)
		TH_LOG("%llu words for %llu pairs", 1ULL << d->log,
		       (unsigned long long)pairs);
}

/* Addresses in /32s of their own: those of no long prefix, mostly. */
static void far_queries(struct __test_metadata *_metadata,
			struct prefix_run *s, unsigned int n)
{
	struct cnf_key a;

	while (n--) {
		a = cnf_key6((u32)cnf_rng_next(&s->r), (u32)cnf_rng_next(&s->r),
			     (u32)cnf_rng_next(&s->r), (u32)cnf_rng_next(&s->r));
		ASSERT_TRUE(query_ok(s, &a));
	}
}

/*
 * Long IPv6 prefixes of every long tier, in thousands of /32s, half of
 * them shared: the directory (table.h) must name the tier of every key
 * from its add on, through the directory's growth, deletes and churn.  An
 * address inside each prefix is covered the moment it is added, and one
 * inside each prefix deleted is not (unless another covers it); the whole
 * filter is checked as it grows.  The directory stays at most half full
 * and within 32 words per (/32, tier) pair, churn included, and goes with
 * the last long prefix.
 */
TEST(long_tiers_directory)
{
	static struct prefix_run s;
	unsigned int round, i;
	struct cnf_key p, a;

	memset(&s, 0, sizeof(s));
	s.r.s = 0x64697230ULL;
	s.f = cnf_filter_create(16, NO_LIMIT);
	ASSERT_NE(NULL, s.f);
	for (round = 0; round < 4; round++) {
		while (s.m.n < MODEL_MAX - 96) {
			p = long_prefix(&s.r, &s.m);
			if (model_find(&s.m, &p) >= 0)
				continue;
			ASSERT_EQ(0, cnf_t_add(s.f, &p));
			s.m.p[s.m.n++] = p;
			a = addr_in(&s.r, &p);
			ASSERT_TRUE(query_ok(&s, &a));
			if (s.m.n % 512 == 0) {
				check_all(_metadata, &s, 256);
				far_queries(_metadata, &s, 256);
				dir_sized(_metadata, &s);
			}
		}
		/* Two thirds go, in random order. */
		while (s.m.n > MODEL_MAX / 3) {
			i = cnf_rng_below(&s.r, s.m.n);
			p = s.m.p[i];
			ASSERT_EQ(0, cnf_t_del(s.f, &p));
			s.m.p[i] = s.m.p[--s.m.n];
			a = addr_in(&s.r, &p);
			ASSERT_TRUE(query_ok(&s, &a));
		}
		check_all(_metadata, &s, 2000);
		far_queries(_metadata, &s, 2000);
		dir_sized(_metadata, &s);
	}
	TH_LOG("%llu queries, %llu covered; directory of %llu words, %llu bits set, for %llu pairs",
	       (unsigned long long)s.queries, (unsigned long long)s.hits,
	       1ULL << s.f->v6dir->log, (unsigned long long)s.f->v6dir->bits,
	       (unsigned long long)long_pairs(&s.m));
	while (s.m.n) {
		ASSERT_EQ(0, cnf_t_del(s.f, &s.m.p[--s.m.n]));
	}
	ASSERT_EQ(NULL, s.f->v6dir);
	ASSERT_EQ(0, s.f->long_tiers);
	cnf_filter_destroy(s.f);
}

/*
 * An add that makes a directory, with each of its allocations failing in
 * turn: an add that fails leaves the filter as it was, memory included;
 * one that goes through without a directory (its allocation failed) is as
 * exact, and the next long add makes one.
 */
TEST(long_tiers_directory_enomem)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_key p40 = cnf_key6(0x20010db8, 0x11000000, 0, 0);
	struct cnf_key p48 = cnf_key6(0x20010db9, 0x22220000, 0, 0);
	struct cnf_key p60 = cnf_key6(0x20010dba, 0x33333330, 0, 0);
	struct cnf_key p96 = cnf_key6(0x20010dbb, 1, 2, 0);
	long n;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, add_p(f, p40, 40));
	ASSERT_EQ(0, add_p(f, p48, 48));
	ASSERT_EQ(NULL, f->v6dir);	/* two long tiers: none yet */
	for (n = 0; add_failing_at(_metadata, f, p60, 60, n); n++) {
		ASSERT_EQ(NULL, f->v6dir);
		ASSERT_FALSE(has6(f, 0x20010dba, 0x3333333f, 0, 0));
	}
	ASSERT_LE(1, n);
	/* The add went through, with or without its directory. */
	ASSERT_TRUE(has6(f, 0x20010dba, 0x3333333f, 9, 9));
	ASSERT_TRUE(has6(f, 0x20010db8, 0x11ffffff, 9, 9));
	ASSERT_TRUE(has6(f, 0x20010db9, 0x2222ffff, 9, 9));
	ASSERT_FALSE(has6(f, 0x20010dbb, 1, 2, 3));
	ASSERT_EQ(0, add_p(f, p96, 96));
	ASSERT_NE(NULL, f->v6dir);
	ASSERT_TRUE(has6(f, 0x20010dbb, 1, 2, 3));
	ASSERT_TRUE(has6(f, 0x20010dba, 0x3333333f, 9, 9));
	ASSERT_TRUE(has6(f, 0x20010db8, 0x11ffffff, 9, 9));
	ASSERT_FALSE(has6(f, 0x20010dbb, 1, 3, 3));
	ASSERT_FALSE(has6(f, 0x20010dbc, 1, 2, 3));
	cnf_filter_destroy(f);
}

/* Slot width of the tables of tier @tl at 2^@log buckets. */
static int width_of(unsigned int tl, unsigned int log)
{
	return cnf_slot_bytes(cnf_tier_layout(tl), log);
}

/*
 * Tier keys are numbers of as many bits as the tier has: the /20 and /24
 * tiers' below 2^20 and 2^24, whose r fits narrow slots from 2^6 and 2^10
 * buckets on, where the /32 tier's needs 2^18; the second word of the /48
 * and /56 tiers' below 2^16 and 2^24, narrow from 2^2 and 2^10 buckets on.
 * Tiers grown past those sizes, in both families, have narrow slots, and
 * every key grown across the change is found.
 */
TEST(short_tiers_narrow)
{
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	const struct cnf_table *t20, *t24, *t32, *t24_6, *t48, *t56;
	unsigned int i;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(CNF_SLOT_V4_WIDE, width_of(20, 5));
	ASSERT_EQ(CNF_SLOT_V4_NARROW, width_of(20, 6));
	ASSERT_EQ(CNF_SLOT_V4_WIDE, width_of(24, 9));
	ASSERT_EQ(CNF_SLOT_V4_NARROW, width_of(24, 10));
	ASSERT_EQ(CNF_SLOT_V4_WIDE, width_of(32, 17));
	ASSERT_EQ(CNF_SLOT_64_WIDE, width_of(48, 1));
	ASSERT_EQ(CNF_SLOT_64_NARROW, width_of(48, 2));
	ASSERT_EQ(CNF_SLOT_64_WIDE, width_of(56, 9));
	ASSERT_EQ(CNF_SLOT_64_NARROW, width_of(56, 10));
	ASSERT_EQ(CNF_SLOT_64_WIDE, width_of(64, 17));
	for (i = 0; i < 300; i++)
		ASSERT_EQ(0, add_p(f, cnf_key4(0x20000000 + (i << 12)), 20));
	for (i = 0; i < 3000; i++) {
		ASSERT_EQ(0, add_p(f, cnf_key4(0x0b000000 + (i << 8)), 24));
		ASSERT_EQ(0, add_p(f, cnf_key4(0x0c000000 + 7 * i), 32));
		ASSERT_EQ(0, add_p(f, cnf_key6(0x30000000 + (i << 8), 0, 0, 0),
				   24));
		ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, i << 16, 0, 0), 48));
		ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db9, i << 8, 0, 0), 56));
	}
	t20 = rcu_dereference_protected(f->tier[CNF_V4][20], 1);
	t24 = rcu_dereference_protected(f->tier[CNF_V4][24], 1);
	t32 = rcu_dereference_protected(f->tier[CNF_V4][32], 1);
	t24_6 = rcu_dereference_protected(f->tier[CNF_V6][24], 1);
	t48 = rcu_dereference_protected(f->tier[CNF_V6][48], 1);
	t56 = rcu_dereference_protected(f->tier[CNF_V6][56], 1);
	ASSERT_LE(6U, t20->log);
	ASSERT_EQ((unsigned int)CNF_SLOT_V4_NARROW, cnf_width(t20));
	ASSERT_LE(10U, t24->log);
	ASSERT_EQ((unsigned int)CNF_SLOT_V4_NARROW, cnf_width(t24));
	ASSERT_EQ((unsigned int)CNF_SLOT_V4_NARROW, cnf_width(t24_6));
	ASSERT_EQ(t24->log, t32->log);
	ASSERT_EQ((unsigned int)CNF_SLOT_V4_WIDE, cnf_width(t32));
	ASSERT_EQ((unsigned int)CNF_SLOT_64_NARROW, cnf_width(t48));
	ASSERT_LE(10U, t56->log);
	ASSERT_EQ((unsigned int)CNF_SLOT_64_NARROW, cnf_width(t56));
	for (i = 0; i < 300; i++) {
		ASSERT_TRUE(has4(f, 0x20000000 + (i << 12) + 0xfff));
		ASSERT_FALSE(has4(f, 0x21000000 + (i << 12)));
	}
	for (i = 0; i < 3000; i++) {
		ASSERT_TRUE(has4(f, 0x0b000000 + (i << 8) + 0xff));
		ASSERT_TRUE(has6(f, 0x30000000 + (i << 8) + 0xff, 1, 2, 3));
		ASSERT_TRUE(has4(f, 0x0c000000 + 7 * i));
		ASSERT_FALSE(has4(f, 0x0c000000 + 7 * i + 1));
		ASSERT_TRUE(has6(f, 0x20010db8, i << 16 | 0xffff, 5, 6));
		ASSERT_TRUE(has6(f, 0x20010db9, i << 8 | 0xff, 5, 6));
		ASSERT_FALSE(has6(f, 0x20010dba, i << 16, 0, 0));
	}
	ASSERT_FALSE(has4(f, 0x0b000000 + (3000 << 8)));
	ASSERT_FALSE(has6(f, 0x30000000 + (3000 << 8), 0, 0, 0));
	ASSERT_FALSE(has6(f, 0x20010db8, 3000 << 16, 0, 0));
	ASSERT_FALSE(has6(f, 0x20010db9, 3000 << 8, 0, 0));
	cnf_filter_destroy(f);
}

/*
 * A /36 tier's keys are their /32 and a number below 16, so r is 0 from
 * 2^4 buckets on: its tag words hold it mixed with bits of the /32, and
 * keys of different /32s sharing a bucket have different tags, which a
 * probe's tag test tells apart (hash.h).  Few of a bucket's pairs of keys
 * have equal tags; every key is found.
 */
TEST(two_word_tags_differ)
{
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_rng r = { 0x74616773ULL };
	unsigned int i, s, u, pairs = 0, same = 0;
	const struct cnf_table *t;
	u32 w0[2000];

	ASSERT_NE(NULL, f);
	for (i = 0; i < 2000; i++) {
		w0[i] = (u32)cnf_rng_next(&r);
		ASSERT_EQ(0, add_p(f, cnf_key6(w0[i], 0x70000000, 0, 0), 36));
	}
	t = rcu_dereference_protected(f->tier[CNF_V6][36], 1);
	ASSERT_LE(4U, t->log);
	for (i = 0; i <= t->mask; i++) {
		const u8 *b = cnf_bucket(t, cnf_width(t), i);

		for (s = 0; s < CNF_BUCKET_SLOTS; s++)
			for (u = s + 1; u < CNF_BUCKET_SLOTS; u++) {
				u32 ts = cnf_slot_tag(b, cnf_width(t), s);
				u32 tu = cnf_slot_tag(b, cnf_width(t), u);

				if (!(ts & CNF_TAG_VALID) ||
				    !(tu & CNF_TAG_VALID))
					continue;
				pairs++;
				same += ts >> 2 == tu >> 2;
			}
	}
	TH_LOG("%u pairs of keys in a bucket, %u with equal tags", pairs, same);
	ASSERT_LT(1000U, pairs);
	ASSERT_GE(pairs / 100, same);
	for (i = 0; i < 2000; i++) {
		ASSERT_TRUE(has6(f, w0[i], 0x7fffffff, 1, 2));
		ASSERT_FALSE(has6(f, w0[i], 0x80000000, 1, 2));
	}
	cnf_filter_destroy(f);
}

/*
 * A filter that starts with narrow IPv4 slots shares its tabulation all the
 * same: its address tier made it, its first wide table (a tier) shares it,
 * and an add whose allocations fail leaves the memory as it was.
 */
TEST(narrow_start_shares_tabulation)
{
	struct cnf_filter *f = cnf_filter_create(1U << 21, NO_LIMIT);
	struct cnf_key net = cnf_key4(0x0a000000);
	const struct cnf_table *t32, *t24;
	long n;

	ASSERT_NE(NULL, f);
	t32 = rcu_dereference_protected(f->tier[CNF_V4][32], 1);
	ASSERT_EQ((unsigned int)CNF_SLOT_V4_NARROW, cnf_width(t32));
	ASSERT_TRUE(t32->shared_thash);
	ASSERT_EQ(f->thash4, t32->thash);
	for (n = 0; add_failing_at(_metadata, f, net, 23, n); n++)
		ASSERT_EQ(NULL, rcu_dereference_protected(f->tier[CNF_V4][24],
							  1));
	ASSERT_LE(1, n);
	t24 = rcu_dereference_protected(f->tier[CNF_V4][24], 1);
	ASSERT_NE(NULL, t24);
	ASSERT_EQ(f->thash4, t24->thash);
	ASSERT_TRUE(cnf_t_has(f, &(struct cnf_key){ .family = CNF_V4,
		.len = 32, .v4 = htonl(0x0a0001ff) }));
	cnf_filter_destroy(f);
}

/*
 * A directory that the next new bit makes anew, and an add that would set
 * it, into a tier of its own, with each allocation failing in turn: a
 * failed add leaves the directory as it was, memory included.  The add
 * that stands makes it anew, one size larger, or the next add does if that
 * failed.
 */
TEST(long_tiers_directory_full)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	struct cnf_rng r = { .s = 0x66756c6cULL };
	struct cnf_key p41 = cnf_key6(0x30000000, 0x12800000, 0, 0), p;
	unsigned int failed = 0, log;
	const struct cnf_v6dir *d;
	long n;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, 0x11000000, 0, 0), 40));
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, 0x22000000, 0, 0), 56));
	ASSERT_EQ(0, add_p(f, cnf_key6(0x20010db8, 0x22000000, 0, 0), 64));
	for (d = f->v6dir; d->bits < d->grow_at - 1; d = f->v6dir) {
		p = cnf_key6((u32)cnf_rng_next(&r), 0, 0, 0);
		ASSERT_EQ(0, add_p(f, p, 56));
	}
	log = d->log;
	for (n = 0; add_failing_at(_metadata, f, p41, 41, n); n++) {
		ASSERT_EQ(d, f->v6dir);
		ASSERT_FALSE(has6(f, 0x30000000, 0x12812345, 0, 0));
		failed++;
	}
	ASSERT_LE(2U, failed);
	ASSERT_TRUE(has6(f, 0x30000000, 0x12812345, 0, 0));
	/* Its allocation was the one that failed: an add that sets no bit. */
	if (f->v6dir == d)
		ASSERT_EQ(0, add_p(f, cnf_key6(0x30000000, 0x14000000, 0, 0),
				   44));
	/* d is freed: its figures were read before. */
	ASSERT_NE(d, f->v6dir);
	ASSERT_EQ(log + 1, f->v6dir->log);
	ASSERT_GT(f->v6dir->grow_at, f->v6dir->bits);
	ASSERT_TRUE(has6(f, 0x30000000, 0x12812345, 0, 0));
	ASSERT_TRUE(has6(f, 0x20010db8, 0x22000000, 1, 2));
	ASSERT_FALSE(has6(f, 0x30000000, 0x13000000, 0, 0));
	cnf_filter_destroy(f);
}

/*
 * A batch's long prefixes make the directory as they land, once, large
 * enough for the tally's (cnf_tally_step()): it ends no fuller than half,
 * and every prefix is found.  The same batch with every prefix given 50
 * times, whose tally is then an upper bound only, grows it in steps as
 * they land: to no larger a size.
 */
TEST(long_tiers_directory_batch)
{
	struct cnf_filter *f = cnf_filter_create(16, 1ULL << 30);
	static struct cnf_key p[3000];
	struct cnf_rng r = { .s = 0x62617463ULL };
	struct cnf_tally tally = { 0 };
	const struct cnf_v6dir *d;
	unsigned int i, remade = 0, log, copy;

	ASSERT_NE(NULL, f);
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = cnf_key6((u32)cnf_rng_next(&r), (u32)cnf_rng_next(&r),
				0, 0);
		cnf_key_cut(&p[i], 33 + cnf_rng_below(&r, 31));
		cnf_tally_add(&tally, &p[i]);
	}
	cnf_filter_lock(f);
	cnf_filter_expect(f, ARRAY_SIZE(p));
	cnf_filter_expect_tally(f, &tally);
	d = f->v6dir;
	ASSERT_EQ(NULL, d);
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		int err = cnf_filter_add(f, &p[i]);

		ASSERT_TRUE(!err || err == -EEXIST);
		remade += d != f->v6dir;
		d = f->v6dir;
	}
	cnf_filter_expect(f, 0);
	ASSERT_EQ(1U, remade);
	ASSERT_LE(d->bits, d->grow_at);
	log = d->log;
	cnf_filter_unlock(f);
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		struct cnf_key a = p[i];

		a.v6.s6_addr32[3] = htonl(i);
		ASSERT_TRUE(cnf_filter_lookup6(f, &a.v6));
	}

	/* Each prefix 50 times, one after the other: as large, no larger. */
	ASSERT_EQ(0, cnf_t_flush(f));
	memset(&tally, 0, sizeof(tally));
	for (i = 0; i < ARRAY_SIZE(p); i++)
		for (copy = 0; copy < 50; copy++)
			cnf_tally_add(&tally, &p[i]);
	cnf_filter_lock(f);
	cnf_filter_expect(f, 50 * ARRAY_SIZE(p));
	cnf_filter_expect_tally(f, &tally);
	for (i = 0; i < ARRAY_SIZE(p); i++) {
		for (copy = 0; copy < 50; copy++) {
			int err = cnf_filter_add(f, &p[i]);

			ASSERT_TRUE(!err || err == -EEXIST);
		}
	}
	cnf_filter_expect(f, 0);
	TH_LOG("directory of 2^%u words, of 2^%u for the prefixes once",
	       f->v6dir->log, log);
	ASSERT_GE(log, f->v6dir->log);
	cnf_filter_unlock(f);
	cnf_filter_destroy(f);
}

/*
 * A walk in steps (cnf_walk_step()) while the filter changes between its
 * steps: adds and deletes of every length, tables that fill, move keys
 * along cuckoo paths, grow, shrink and are flushed.  Every prefix given
 * is stored when it is given; every prefix stored from the walk's
 * beginning to its end is given; one given twice only when the walk says
 * it may be (cnf_walk.again).
 */
struct step_run {
	struct pmodel m;		/* stored now */
	bool kept[MODEL_MAX];		/* stored since the walk began */
	bool given[MODEL_MAX];		/* given while stored */
	unsigned long gives, twice, phantoms;
};

static int step_give(void *ctx, const struct cnf_key *p)
{
	struct step_run *s = ctx;
	int i = model_find(&s->m, p);

	if (i < 0) {
		s->phantoms++;
		return 0;
	}
	s->gives++;
	s->twice += s->given[i];
	s->given[i] = true;
	return 0;
}

static void step_model_del(struct step_run *s, unsigned int i)
{
	unsigned int last = --s->m.n;

	s->m.p[i] = s->m.p[last];
	s->kept[i] = s->kept[last];
	s->given[i] = s->given[last];
}

/* A change between two steps: mostly adds, a delete in three. */
static void step_change(struct __test_metadata *_metadata,
			struct step_run *s, struct cnf_filter *f,
			struct cnf_rng *r)
{
	struct cnf_key p;
	unsigned int i;
	int err;

	if (s->m.n && !cnf_rng_below(r, 3)) {
		i = cnf_rng_below(r, s->m.n);
		ASSERT_EQ(0, cnf_t_del(f, &s->m.p[i]));
		step_model_del(s, i);
		return;
	}
	if (s->m.n == MODEL_MAX)
		return;
	p = random_prefix(r, cnf_rng_below(r, 4) ? CNF_V4 : CNF_V6);
	err = cnf_t_add(f, &p);
	ASSERT_TRUE(!err || err == -EEXIST);
	if (err)
		return;
	s->m.p[s->m.n] = p;
	s->kept[s->m.n] = false;
	s->given[s->m.n++] = false;
}

static void walk_in_steps(struct __test_metadata *_metadata, u64 seed,
			  unsigned int start, unsigned int changes,
			  unsigned long *moves, unsigned long *again)
{
	static struct step_run s;
	struct cnf_rng r = { 0x7374657073ULL ^ seed };
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_walk w;
	unsigned int i, steps = 0;
	u64 moves0;

	ASSERT_NE(NULL, f);
	memset(&s, 0, sizeof(s));
	while (s.m.n < start)
		step_change(_metadata, &s, f, &r);
	for (i = 0; i < s.m.n; i++)
		s.kept[i] = true;
	cnf_filter_lock(f);
	ASSERT_EQ(0, cnf_walk_begin(f, &w));
	moves0 = f->moves.n;
	cnf_filter_unlock(f);
	while (!w.done) {
		cnf_filter_lock(f);
		ASSERT_EQ(0, cnf_walk_step(&w, 1 + cnf_rng_below(&r, 8),
					   step_give, &s));
		cnf_filter_unlock(f);
		steps++;
		for (i = cnf_rng_below(&r, 2 * changes + 1); i > 0; i--)
			step_change(_metadata, &s, f, &r);
		if (!cnf_rng_below(&r, 5000)) {
			ASSERT_EQ(0, cnf_t_flush(f));
			s.m.n = 0;
		}
	}
	ASSERT_EQ(0UL, s.phantoms);
	for (i = 0; i < s.m.n; i++)
		if (s.kept[i])
			ASSERT_TRUE(s.given[i]) TH_LOG("prefix %u missed", i);
	if (!w.again)
		ASSERT_EQ(0UL, s.twice);
	cnf_filter_lock(f);
	*moves += f->moves.n - moves0;
	*again += w.again;
	cnf_walk_end(&w);
	ASSERT_EQ(NULL, f->moves.ring);
	cnf_filter_unlock(f);
	cnf_filter_destroy(f);
	(void)steps;
}

TEST(walk_in_steps_under_changes)
{
	unsigned long moves = 0, again = 0;
	u64 seed;

	for (seed = 0; seed < 40; seed++)
		walk_in_steps(_metadata, 100 + seed, 1000, 1 + seed % 8,
			      &moves, &again);
	TH_LOG("40 walks: %lu keys moved during them, %lu gave some twice",
	       moves, again);
	/* The changes moved keys behind the walks, as meant. */
	ASSERT_LT(0UL, moves);
}

/* A walk whose filter goes is left with nothing to end. */
TEST(walk_outlived_by_nothing)
{
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_key p = cnf_key4(0x0a000001);
	struct cnf_walk w, v;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, cnf_t_add(f, &p));
	cnf_filter_lock(f);
	ASSERT_EQ(0, cnf_walk_begin(f, &w));
	ASSERT_EQ(0, cnf_walk_begin(f, &v));
	cnf_walk_end(&v);
	ASSERT_NE(NULL, f->moves.ring);
	cnf_filter_unlock(f);
	cnf_filter_destroy(f);
	ASSERT_EQ(NULL, w.f);
	cnf_walk_end(&w);
}

TEST_HARNESS_MAIN
