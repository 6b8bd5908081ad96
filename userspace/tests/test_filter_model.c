// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the filter core: millions of random add/delete/lookup
 * operations on both families, each result checked against an exact set
 * model (cnf_test.h), across growth, with the occasional reserve and flush.
 *
 * Keys come from weighted pools: small ones (a few dozen keys, so duplicate
 * adds and deletes of present keys are frequent), large ones (absent deletes
 * and lookups frequent, growth to hundreds of thousands of entries) and
 * structured ones (consecutive IPv4, IPv6 differing only in the top or the
 * low word, v4-mapped).  Operations run in phases that mostly add, then
 * mostly delete, so tables grow, empty and grow again.
 *
 * Fixed seeds (printed): a failure replays exactly.
 */
#include "cnf_test.h"
#include "cnf_harness.h"

#define NO_LIMIT	(1ULL << 40)
#define CHECK_EVERY	(1u << 18)	/* full walk + lookups of all keys */

struct pool {
	enum cnf_family fam;
	enum cnf_shape shape;
	u64 size;
	unsigned int weight;
};

struct run {
	u64 seed;
	u64 ops;
	const struct pool *pools;
	unsigned int npools;
	unsigned int phase_ops;	/* ops per add-heavy or delete-heavy phase */
	u64 min_peak;		/* entries the run must reach at least */
};

/* What happened, to show (and check) that every outcome was exercised. */
enum outcome {
	ADD_NEW, ADD_DUP, DEL_PRESENT, DEL_ABSENT, HIT, MISS, RESERVE, FLUSH,
	NOUTCOMES,
};

static const char *const outcome_name[] = {
	"add", "add-dup", "del", "del-absent", "hit", "miss", "reserve",
	"flush",
};

struct state {
	struct cnf_filter *f;
	struct cnf_model m;
	struct cnf_rng r;
	const struct run *run;
	unsigned int weight_sum;
	u64 n[NOUTCOMES];
	u64 max_entries;
};

static struct cnf_key pick(struct state *s)
{
	u64 w = cnf_rng_below(&s->r, s->weight_sum);
	const struct pool *p = s->run->pools;

	while (w >= p->weight)
		w -= p++->weight;
	/* The pool's index in the table salts its keys: pools differ. */
	return cnf_pool_key(p->fam, p->shape,
			    s->run->seed ^ (u64)(p - s->run->pools),
			    cnf_rng_below(&s->r, p->size));
}

/* ASSERT_MATCHES(), naming the operation @op it failed after. */
#define ASSERT_MATCHES_AT(f, m, op) do { \
	char why_[256]; \
	bool ok_ = cnf_check_full(f, m, why_, sizeof(why_)); \
	if (!ok_) \
		TH_LOG("op %llu: filter differs from model: %s", \
		       (unsigned long long)(op), why_); \
	ASSERT_TRUE(ok_); \
} while (0)

static void op_add(struct __test_metadata *_metadata, struct state *s,
		   const struct cnf_key *k, u64 op)
{
	bool had = cnf_model_has(&s->m, k);
	char buf[INET6_ADDRSTRLEN];
	int err = cnf_t_add(s->f, k);

	if (err != (had ? -EEXIST : 0))
		TH_LOG("op %llu: add %s: %d, model says %s",
		       (unsigned long long)op, cnf_key_str(k, buf, sizeof(buf)),
		       err, had ? "present" : "absent");
	ASSERT_EQ(had ? -EEXIST : 0, err);
	if (!had)
		cnf_model_add(&s->m, k);
	s->n[had ? ADD_DUP : ADD_NEW]++;
}

static void op_del(struct __test_metadata *_metadata, struct state *s,
		   const struct cnf_key *k, u64 op)
{
	bool had = cnf_model_has(&s->m, k);
	char buf[INET6_ADDRSTRLEN];
	int err = cnf_t_del(s->f, k);

	if (err != (had ? 0 : -ENOENT))
		TH_LOG("op %llu: del %s: %d, model says %s",
		       (unsigned long long)op, cnf_key_str(k, buf, sizeof(buf)),
		       err, had ? "present" : "absent");
	ASSERT_EQ(had ? 0 : -ENOENT, err);
	if (had)
		cnf_model_del(&s->m, k);
	s->n[had ? DEL_PRESENT : DEL_ABSENT]++;
}

static void op_lookup(struct __test_metadata *_metadata, struct state *s,
		      const struct cnf_key *k, u64 op)
{
	int want = cnf_model_has(&s->m, k), got = cnf_t_has(s->f, k);
	char buf[INET6_ADDRSTRLEN];

	if (got != want)
		TH_LOG("op %llu: lookup %s: %d, model says %d",
		       (unsigned long long)op, cnf_key_str(k, buf, sizeof(buf)),
		       got, want);
	ASSERT_EQ(want, got);
	s->n[want ? HIT : MISS]++;
}

/* Rare whole-filter operations: reserve room, or (rarer) flush. */
static void op_rare(struct __test_metadata *_metadata, struct state *s, u64 op)
{
	if (cnf_rng_below(&s->r, 4)) {
		enum cnf_family fam = cnf_rng_below(&s->r, 2);
		u64 want = s->m.n[fam] + cnf_rng_below(&s->r, 100000);

		ASSERT_EQ(0, cnf_t_reserve(s->f, fam, want));
		s->n[RESERVE]++;
	} else {
		ASSERT_EQ(0, cnf_t_flush(s->f));
		cnf_model_clear(&s->m);
		s->n[FLUSH]++;
	}
	ASSERT_MATCHES_AT(s->f, &s->m, op);
}

/*
 * One operation.  In add-heavy phases: 55% add, 15% delete, 30% lookup;
 * delete-heavy phases swap add and delete.  Half the deletes and a third of
 * the lookups target a stored key, so they are not all misses.
 */
static void one_op(struct __test_metadata *_metadata, struct state *s, u64 op,
		   bool adding)
{
	u64 dice = cnf_rng_below(&s->r, 100);
	struct cnf_key k = pick(s);
	const struct cnf_key *in;

	if (dice < 70 && (dice < 55) == adding) {
		op_add(_metadata, s, &k, op);
	} else if (dice < 70) {
		in = cnf_rng_below(&s->r, 2) ? cnf_model_any(&s->m, &s->r) : NULL;
		op_del(_metadata, s, in ? in : &k, op);
	} else {
		in = cnf_rng_below(&s->r, 3) ? NULL : cnf_model_any(&s->m, &s->r);
		op_lookup(_metadata, s, in ? in : &k, op);
	}
}

static void run_model(struct __test_metadata *_metadata, const struct run *run)
{
	struct state s = { .run = run, .r = { run->seed } };
	unsigned int i, fam;
	u64 op;

	TH_LOG("seed %#llx, %llu ops", (unsigned long long)run->seed,
	       (unsigned long long)run->ops);
	cnf_user_seed_random(run->seed);
	for (i = 0; i < run->npools; i++)
		s.weight_sum += run->pools[i].weight;
	s.f = cnf_filter_create(0, NO_LIMIT);
	ASSERT_NE(NULL, s.f);
	cnf_model_init(&s.m, 10);
	for (op = 0; op < run->ops; op++) {
		/* Add-heavy phases twice as long: the set grows overall. */
		bool adding = op % (3 * run->phase_ops) < 2 * run->phase_ops;

		one_op(_metadata, &s, op, adding);
		if (cnf_rng_below(&s.r, 200000) == 0)
			op_rare(_metadata, &s, op);
		if (cnf_model_size(&s.m) > s.max_entries)
			s.max_entries = cnf_model_size(&s.m);
		if (op % CHECK_EVERY == CHECK_EVERY - 1)
			ASSERT_MATCHES_AT(s.f, &s.m, op);
	}
	ASSERT_MATCHES_AT(s.f, &s.m, op);
	for (i = 0; i < NOUTCOMES; i++)
		TH_LOG("%-10s %llu", outcome_name[i], (unsigned long long)s.n[i]);
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		TH_LOG("family %u: %llu entries now, %llu grows", fam,
		       (unsigned long long)cnf_t_count(s.f, fam),
		       (unsigned long long)cnf_t_stats(s.f).fam[fam].grows);
	TH_LOG("at most %llu entries", (unsigned long long)s.max_entries);
	ASSERT_LE(run->min_peak, s.max_entries);
	/* The run exercised what it claims to: every common outcome. */
	for (i = ADD_NEW; i <= MISS; i++)
		ASSERT_LT((u64)1000, s.n[i]);
	cnf_model_free(&s.m);
	cnf_filter_destroy(s.f);
}

FIXTURE(model) {};
FIXTURE_SETUP(model) {}
FIXTURE_TEARDOWN(model) {}

/* Small pools only: nearly every add after the first few is a duplicate. */
TEST_F_TIMEOUT(model, small_pools, 300)
{
	static const struct pool pools[] = {
		{ CNF_V4, CNF_SHAPE_RANDOM, 64, 3 },
		{ CNF_V4, CNF_SHAPE_SEQ, 300, 2 },
		{ CNF_V6, CNF_SHAPE_RANDOM, 64, 2 },
		{ CNF_V6, CNF_SHAPE_HIGH, 100, 1 },
		{ CNF_V6, CNF_SHAPE_SEQ, 100, 1 },
		{ CNF_V6, CNF_SHAPE_MAPPED, 100, 1 },
		{ CNF_V6, CNF_SHAPE_NET64, 100, 1 },
	};
	const struct run run = { 0xc0ffee01, 1500000, pools, 7, 20000 };

	run_model(_metadata, &run);
}

/* Large pools: adds mostly new, deletes often absent, growth to ~1M. */
TEST_F_TIMEOUT(model, large_pools, 300)
{
	static const struct pool pools[] = {
		{ CNF_V4, CNF_SHAPE_RANDOM, 1 << 22, 6 },
		{ CNF_V4, CNF_SHAPE_SEQ, 1 << 20, 2 },
		{ CNF_V6, CNF_SHAPE_RANDOM, 1 << 22, 2 },
		{ CNF_V6, CNF_SHAPE_HIGH, 1 << 20, 1 },
		{ CNF_V6, CNF_SHAPE_SEQ, 1 << 20, 1 },
	};
	const struct run run = { 0xc0ffee02, 3000000, pools, 5, 600000 };

	run_model(_metadata, &run);
}

/* Everything mixed, shorter phases: many grow/shrink cycles. */
TEST_F_TIMEOUT(model, mixed_pools, 300)
{
	static const struct pool pools[] = {
		{ CNF_V4, CNF_SHAPE_RANDOM, 128, 2 },
		{ CNF_V4, CNF_SHAPE_RANDOM, 1 << 16, 4 },
		{ CNF_V4, CNF_SHAPE_SEQ, 1 << 14, 2 },
		{ CNF_V6, CNF_SHAPE_RANDOM, 128, 1 },
		{ CNF_V6, CNF_SHAPE_RANDOM, 1 << 16, 2 },
		{ CNF_V6, CNF_SHAPE_HIGH, 1 << 12, 1 },
		{ CNF_V6, CNF_SHAPE_SEQ, 1 << 12, 1 },
		{ CNF_V6, CNF_SHAPE_MAPPED, 1 << 12, 1 },
		{ CNF_V6, CNF_SHAPE_NET64, 1 << 14, 2 },
	};
	const struct run run = { 0xc0ffee03, 2000000, pools, 9, 50000 };

	run_model(_metadata, &run);
}

/*
 * Mostly /64 prefixes, one table (the /64 tier, CNF_LAYOUT64): its first
 * add-heavy phase grows it past 2^18 buckets, where its slots narrow from
 * 8 bytes to 6, and the delete-heavy one shrinks it again.
 */
TEST_F_TIMEOUT(model, net64_pools, 300)
{
	static const struct pool pools[] = {
		{ CNF_V6, CNF_SHAPE_NET64, 1 << 22, 30 },
		{ CNF_V6, CNF_SHAPE_NET64, 200, 1 },
		{ CNF_V4, CNF_SHAPE_RANDOM, 1 << 16, 1 },
		{ CNF_V6, CNF_SHAPE_RANDOM, 1 << 16, 1 },
	};
	const struct run run = { 0xc0ffee04, 3000000, pools, 4, 1200000,
				 650000 };

	run_model(_metadata, &run);
}

TEST_HARNESS_MAIN
