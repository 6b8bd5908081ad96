// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the filter core (module/filter.c built for userspace):
 * edge sizes, every error path, duplicates and absent keys, IPv6 shapes,
 * structured IPv4 keys, growth, walk, stats, flush.
 *
 * Every test seeds both the core's random source (table seeds) and its own
 * key generator with fixed values, printed, so a failure replays exactly.
 */
#include "cnf_test.h"
#include "core.h"
#include "cnf_harness.h"

#define NO_LIMIT	(1ULL << 40)
#define MIN_CAPACITY	((u64)CNF_BUCKET_SLOTS << CNF_MIN_BUCKETS_LOG)

static const char *const fam_name[] = { "IPv4", "IPv6" };

/* Fixed seeds: the core's table seeds and the test's keys. */
#define SEED_CORE	0x5eed0001ULL
#define SEED_KEYS	0x5eed0002ULL

static struct cnf_rng seeded(struct __test_metadata *_metadata, u64 salt)
{
	struct cnf_rng r = { SEED_KEYS ^ salt };

	cnf_user_seed_random(SEED_CORE ^ salt);
	TH_LOG("seeds: core %#llx, keys %#llx",
	       (unsigned long long)(SEED_CORE ^ salt),
	       (unsigned long long)(SEED_KEYS ^ salt));
	return r;
}

static struct cnf_key random_key(struct cnf_rng *r, enum cnf_family fam)
{
	return cnf_pool_key(fam, CNF_SHAPE_RANDOM, cnf_rng_next(r), 0);
}

#define ASSERT_HAS(f, k)	ASSERT_EQ(1, cnf_t_has(f, k))
#define ASSERT_HASNT(f, k)	ASSERT_EQ(0, cnf_t_has(f, k))

/* Adds @k to filter and model; the filter must accept it. */
static void add_ok(struct __test_metadata *_metadata, struct cnf_filter *f,
		   struct cnf_model *m, const struct cnf_key *k)
{
	ASSERT_EQ(0, cnf_t_add(f, k));
	ASSERT_TRUE(cnf_model_add(m, k));
}

/* Adds @n new random keys of @fam (skipping the rare repeats). */
static void add_random(struct __test_metadata *_metadata, struct cnf_filter *f,
		       struct cnf_model *m, struct cnf_rng *r,
		       enum cnf_family fam, u64 n)
{
	while (n) {
		struct cnf_key k = random_key(r, fam);

		if (cnf_model_has(m, &k))
			continue;
		add_ok(_metadata, f, m, &k);
		n--;
	}
}

/* A key of @fam not in the model. */
static struct cnf_key absent_key(struct cnf_rng *r, const struct cnf_model *m,
				 enum cnf_family fam)
{
	struct cnf_key k;

	do
		k = random_key(r, fam);
	while (cnf_model_has(m, &k));
	return k;
}

static u64 total_bytes(const struct cnf_filter_stats *st)
{
	return st->fam[CNF_V4].bytes + st->fam[CNF_V6].bytes;
}

/* ---- edge sizes ---- */

TEST(empty_filter)
{
	struct cnf_key probes[] = {
		cnf_key4(0), cnf_key4(0xffffffff), cnf_key4(0x0a000001),
		cnf_key6(0, 0, 0, 0), cnf_key6(0, 0, 0, 1),
		cnf_key6(~0u, ~0u, ~0u, ~0u),
	};
	struct cnf_model m;
	struct cnf_filter_stats st;
	struct cnf_filter *f;
	unsigned int i, fam;

	seeded(_metadata, 1);
	f = cnf_filter_create(0, NO_LIMIT);
	ASSERT_NE(NULL, f);
	st = cnf_t_stats(f);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		EXPECT_EQ((u64)0, st.fam[fam].entries);
		EXPECT_EQ((u64)0, st.fam[fam].stashed);
		EXPECT_EQ((u64)0, st.fam[fam].grows);
		EXPECT_EQ(MIN_CAPACITY, st.fam[fam].capacity);
		EXPECT_LT((u64)0, st.fam[fam].bytes);
		EXPECT_EQ((u64)0, cnf_t_count(f, fam));
	}
	EXPECT_EQ(NO_LIMIT, st.mem_limit);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		ASSERT_HASNT(f, &probes[i]);
		ASSERT_EQ(-ENOENT, cnf_t_del(f, &probes[i]));
	}
	cnf_model_init(&m, 4);
	ASSERT_MATCHES(f, &m);
	ASSERT_EQ(0, cnf_t_flush(f));
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* The smallest table, filled and then well past full: it must grow. */
TEST(smallest_table_fills_and_grows)
{
	struct cnf_rng r = seeded(_metadata, 2);
	unsigned int fam;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
		struct cnf_filter_stats st;
		struct cnf_model m;
		u64 i;

		ASSERT_NE(NULL, f);
		cnf_model_init(&m, 4);
		/* Up to exactly full, every key found after every add. */
		for (i = 0; i < MIN_CAPACITY; i++) {
			add_random(_metadata, f, &m, &r, fam, 1);
			ASSERT_MATCHES(f, &m);
		}
		/* Eight times the smallest capacity: at least 3 doublings. */
		for (; i < 8 * MIN_CAPACITY; i++) {
			add_random(_metadata, f, &m, &r, fam, 1);
			ASSERT_MATCHES(f, &m);
		}
		st = cnf_t_stats(f);
		TH_LOG("%s: %llu entries, capacity %llu, %llu grows",
		       fam_name[fam], (unsigned long long)st.fam[fam].entries,
		       (unsigned long long)st.fam[fam].capacity,
		       (unsigned long long)st.fam[fam].grows);
		ASSERT_LE((u64)3, st.fam[fam].grows);
		ASSERT_LE(st.fam[fam].entries, st.fam[fam].capacity);
		/* The other family is untouched by this one's growth. */
		ASSERT_EQ((u64)0, st.fam[!fam].grows);
		ASSERT_EQ(MIN_CAPACITY, st.fam[!fam].capacity);
		cnf_model_free(&m);
		cnf_filter_destroy(f);
	}
}

/*
 * Memory limit = the smallest tables' bytes: the table can never grow, so
 * filling it must end in -ENOSPC with the stash full, every stored key still
 * found, the count right, and the failed add leaving no trace.
 */
static void fill_to_enospc(struct __test_metadata *_metadata,
			   struct cnf_filter *f, struct cnf_model *m,
			   struct cnf_rng *r, enum cnf_family fam,
			   struct cnf_key *failed, struct cnf_key *stashed)
{
	u64 tries, nstash = cnf_t_stats(f).fam[fam].stashed, now;
	int err = 0;

	for (tries = 0; tries < 100 * MIN_CAPACITY && err != -ENOSPC;
	     tries++) {
		*failed = absent_key(r, m, fam);
		err = cnf_t_add(f, failed);
		if (err) {
			ASSERT_EQ(-ENOSPC, err);
		} else {
			ASSERT_TRUE(cnf_model_add(m, failed));
		}
		ASSERT_MATCHES(f, m);
		/* An add that grew the stash put its own key there. */
		now = cnf_t_stats(f).fam[fam].stashed;
		if (!err && now > nstash) {
			ASSERT_EQ(nstash + 1, now);
			stashed[nstash] = *failed;
		}
		nstash = now;
	}
	ASSERT_EQ(-ENOSPC, err);
	ASSERT_HASNT(f, failed);
	ASSERT_EQ((u64)CNF_STASH_SLOTS, nstash);
}

TEST(limit_at_smallest_table_enospc)
{
	struct cnf_rng r = seeded(_metadata, 3);
	unsigned int fam;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
		struct cnf_key failed, k, stashed[CNF_STASH_SLOTS];
		struct cnf_filter_stats st;
		struct cnf_model m;
		u64 bytes, i;

		ASSERT_NE(NULL, f);
		cnf_model_init(&m, 4);
		bytes = cnf_t_bytes(f);
		ASSERT_EQ(-EINVAL, cnf_t_set_limit(f, bytes - 1));
		ASSERT_EQ(0, cnf_t_set_limit(f, bytes));
		fill_to_enospc(_metadata, f, &m, &r, fam, &failed, stashed);
		st = cnf_t_stats(f);
		TH_LOG("%s: -ENOSPC at %llu entries (%llu stashed) of %llu slots",
		       fam_name[fam], (unsigned long long)st.fam[fam].entries,
		       (unsigned long long)st.fam[fam].stashed,
		       (unsigned long long)st.fam[fam].capacity);
		ASSERT_EQ((u64)0, st.fam[fam].grows);
		ASSERT_EQ(MIN_CAPACITY, st.fam[fam].capacity);
		ASSERT_EQ(bytes, total_bytes(&st));
		ASSERT_EQ((u64)CNF_STASH_SLOTS, st.fam[fam].stashed);
		ASSERT_LE(st.fam[fam].entries, MIN_CAPACITY + CNF_STASH_SLOTS);
		/* Full and stashed: -ENOSPC again, duplicates still -EEXIST. */
		k = absent_key(&r, &m, fam);
		ASSERT_EQ(-ENOSPC, cnf_t_add(f, &k));
		for (i = 0; i < cnf_model_size(&m); i++)
			ASSERT_EQ(-EEXIST, cnf_t_add(f, &m.keys[i]));
		/* Absent deletes in a full table disturb nothing. */
		for (i = 0; i < 1000; i++) {
			k = absent_key(&r, &m, fam);
			ASSERT_EQ(-ENOENT, cnf_t_del(f, &k));
		}
		ASSERT_MATCHES(f, &m);
		/* Stashed keys: found, deletable, and re-addable into the stash. */
		for (i = 0; i < CNF_STASH_SLOTS; i++) {
			ASSERT_HAS(f, &stashed[i]);
			ASSERT_EQ(-EEXIST, cnf_t_add(f, &stashed[i]));
		}
		ASSERT_EQ(0, cnf_t_del(f, &stashed[0]));
		ASSERT_TRUE(cnf_model_del(&m, &stashed[0]));
		ASSERT_HASNT(f, &stashed[0]);
		ASSERT_EQ(-ENOENT, cnf_t_del(f, &stashed[0]));
		ASSERT_EQ((u64)CNF_STASH_SLOTS - 1, cnf_t_stats(f).fam[fam].stashed);
		ASSERT_MATCHES(f, &m);
		add_ok(_metadata, f, &m, &stashed[0]);
		ASSERT_EQ((u64)CNF_STASH_SLOTS, cnf_t_stats(f).fam[fam].stashed);
		ASSERT_MATCHES(f, &m);
		/* Raising the limit lets the failed key in, by growing. */
		ASSERT_EQ(0, cnf_t_set_limit(f, NO_LIMIT));
		add_ok(_metadata, f, &m, &failed);
		ASSERT_MATCHES(f, &m);
		ASSERT_LE((u64)1, cnf_t_stats(f).fam[fam].grows);
		cnf_model_free(&m);
		cnf_filter_destroy(f);
	}
}

/* Emptying a full, stashed table key by key: the stash drains correctly. */
TEST(full_table_delete_all)
{
	struct cnf_rng r = seeded(_metadata, 4);
	unsigned int fam;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
		struct cnf_key failed, stashed[CNF_STASH_SLOTS];
		struct cnf_model m;
		int i;

		ASSERT_NE(NULL, f);
		cnf_model_init(&m, 4);
		ASSERT_EQ(0, cnf_t_set_limit(f, cnf_t_bytes(f)));
		fill_to_enospc(_metadata, f, &m, &r, fam, &failed, stashed);
		/* The stash first, newest key first: the stash shrinks by one. */
		for (i = CNF_STASH_SLOTS - 1; i >= 0; i--) {
			ASSERT_EQ(0, cnf_t_del(f, &stashed[i]));
			ASSERT_TRUE(cnf_model_del(&m, &stashed[i]));
			ASSERT_EQ((u64)i, cnf_t_stats(f).fam[fam].stashed);
			ASSERT_MATCHES(f, &m);
		}
		while (cnf_model_size(&m)) {
			struct cnf_key k = *cnf_model_any(&m, &r);

			ASSERT_EQ(0, cnf_t_del(f, &k));
			ASSERT_TRUE(cnf_model_del(&m, &k));
			ASSERT_HASNT(f, &k);
			ASSERT_EQ(-ENOENT, cnf_t_del(f, &k));
			ASSERT_MATCHES(f, &m);
		}
		ASSERT_EQ((u64)0, cnf_t_stats(f).fam[fam].stashed);
		/* Empty again: it fills up to its stash as before. */
		fill_to_enospc(_metadata, f, &m, &r, fam, &failed, stashed);
		cnf_model_free(&m);
		cnf_filter_destroy(f);
	}
}

/* ---- error paths ---- */

TEST(duplicate_add_eexist)
{
	struct cnf_rng r = seeded(_metadata, 5);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_key k4 = cnf_key4(0xc0a80001), k6 = cnf_key6(0x20010db8, 0,
								0, 1);
	struct cnf_model m;
	int i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_ok(_metadata, f, &m, &k4);
	add_ok(_metadata, f, &m, &k6);
	/* The classic endless-kick trap: one key inserted over and over. */
	for (i = 0; i < 10000; i++) {
		ASSERT_EQ(-EEXIST, cnf_t_add(f, &k4));
		ASSERT_EQ(-EEXIST, cnf_t_add(f, &k6));
	}
	ASSERT_MATCHES(f, &m);
	/* Same in a crowded table, where a wrong insert would kick. */
	add_random(_metadata, f, &m, &r, CNF_V4, 3000);
	add_random(_metadata, f, &m, &r, CNF_V6, 3000);
	for (i = 0; i < 10000; i++) {
		ASSERT_EQ(-EEXIST, cnf_t_add(f, &k4));
		ASSERT_EQ(-EEXIST, cnf_t_add(f, &k6));
	}
	ASSERT_EQ((u64)0, cnf_t_stats(f).fam[CNF_V4].stashed);
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * Absent deletes must never remove another key, in particular keys that
 * share parts of the encoding with stored ones: same low word (same bucket
 * bits) with other upper bits, and vice versa.
 */
TEST(absent_delete_enoent)
{
	struct cnf_rng r = seeded(_metadata, 6);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_model m;
	u64 i, before[CNF_NFAMILIES];
	unsigned int fam;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 5000);
	add_random(_metadata, f, &m, &r, CNF_V6, 5000);
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		before[fam] = cnf_t_count(f, fam);
	for (i = 0; i < 20000; i++) {
		const struct cnf_key *in = cnf_model_any(&m, &r);
		struct cnf_key k = *in;

		/* A near miss of a stored key: flip one random bit. */
		if (k.family == CNF_V4)
			k.v4 ^= htonl(1u << cnf_rng_below(&r, 32));
		else
			k.v6.s6_addr[cnf_rng_below(&r, 16)] ^=
				1u << cnf_rng_below(&r, 8);
		if (cnf_model_has(&m, &k))
			continue;
		ASSERT_EQ(-ENOENT, cnf_t_del(f, &k));
		k = absent_key(&r, &m, cnf_rng_below(&r, 2));
		ASSERT_EQ(-ENOENT, cnf_t_del(f, &k));
	}
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		ASSERT_EQ(before[fam], cnf_t_count(f, fam));
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

TEST(bad_family_einval)
{
	struct cnf_filter *f;
	struct cnf_key k = cnf_key4(0x0a000001);
	u8 bad[] = { CNF_NFAMILIES, CNF_NFAMILIES + 1, 255 };
	struct cnf_model m;
	unsigned int i;

	seeded(_metadata, 7);
	f = cnf_filter_create(0, NO_LIMIT);
	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_ok(_metadata, f, &m, &k);
	for (i = 0; i < sizeof(bad); i++) {
		struct cnf_key b = k;

		b.family = bad[i];
		ASSERT_EQ(-EINVAL, cnf_t_add(f, &b));
		ASSERT_EQ(-EINVAL, cnf_t_del(f, &b));
		ASSERT_EQ(-EINVAL, cnf_t_reserve(f, bad[i], 1000));
		rcu_read_lock();
		ASSERT_FALSE(cnf_filter_contains(f, &b));
		rcu_read_unlock();
	}
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * -ENOMEM during growth.  Every add across several doublings runs with its
 * first (or, one in 64, its second) table allocation failing: so tables
 * fill past the growth threshold, up to the stash.  The add may still succeed
 * (the core retries the allocation once the cheaper way out fails), or fail
 * with -ENOMEM; either way the filter must hold exactly the model's keys.
 *
 * cnf_user_fail_alloc_in fails one allocation only, and add makes a second
 * attempt after a failed one, so an add that ends in -ENOMEM cannot be forced
 * this way; the test counts them rather than requiring one.
 */
TEST(enomem_during_growth)
{
	struct cnf_rng r = seeded(_metadata, 8);
	unsigned int fam;

	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
		u64 injected = 0, enomem = 0, n;
		struct cnf_model m;

		ASSERT_NE(NULL, f);
		cnf_model_init(&m, 4);
		for (n = 0; n < 20000; n++) {
			struct cnf_key k = absent_key(&r, &m, fam);
			bool hit;
			int err;

			cnf_user_fail_alloc_in = n % 64 == 63;
			err = cnf_t_add(f, &k);
			hit = cnf_user_fail_alloc_in == -1;
			injected += hit;
			cnf_user_fail_alloc_in = -1;
			if (err) {
				ASSERT_EQ(-ENOMEM, err);
				ASSERT_HASNT(f, &k);
				enomem++;
			} else {
				ASSERT_TRUE(cnf_model_add(&m, &k));
			}
			if (hit) {
				ASSERT_MATCHES(f, &m);
			}
		}
		ASSERT_MATCHES(f, &m);
		TH_LOG("%s: %llu adds, %llu allocation failures injected, %llu adds failed with -ENOMEM, %llu grows",
		       fam_name[fam], (unsigned long long)n,
		       (unsigned long long)injected,
		       (unsigned long long)enomem,
		       (unsigned long long)cnf_t_stats(f).fam[fam].grows);
		/* The failures really hit growth, and growth still happened. */
		ASSERT_LE((u64)5, injected);
		ASSERT_LE((u64)5, cnf_t_stats(f).fam[fam].grows);
		cnf_model_free(&m);
		cnf_filter_destroy(f);
	}
}

static bool same_stats(const struct cnf_filter_stats *a,
		       const struct cnf_filter_stats *b)
{
	return !memcmp(a, b, sizeof(*a));
}

TEST(enomem_reserve)
{
	struct cnf_rng r = seeded(_metadata, 9);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter_stats before, after;
	struct cnf_model m;
	unsigned int fam;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 500);
	add_random(_metadata, f, &m, &r, CNF_V6, 500);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		before = cnf_t_stats(f);
		cnf_user_fail_alloc_in = 0;
		ASSERT_EQ(-ENOMEM, cnf_t_reserve(f, fam, 100000));
		cnf_user_fail_alloc_in = -1;
		after = cnf_t_stats(f);
		ASSERT_TRUE(same_stats(&before, &after));
		ASSERT_MATCHES(f, &m);
		ASSERT_EQ(0, cnf_t_reserve(f, fam, 100000));
		after = cnf_t_stats(f);
		ASSERT_LE((u64)100000, after.fam[fam].capacity);
		ASSERT_EQ(before.fam[fam].grows + 1, after.fam[fam].grows);
		ASSERT_MATCHES(f, &m);
		/* Room enough already: nothing to do, nothing allocated. */
		cnf_user_fail_alloc_in = 0;
		ASSERT_EQ(0, cnf_t_reserve(f, fam, 50000));
		cnf_user_fail_alloc_in = -1;
		before = cnf_t_stats(f);
		ASSERT_TRUE(same_stats(&before, &after));
	}
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* reserve beyond the memory limit or the largest table: -ENOSPC, no change */
TEST(reserve_enospc)
{
	struct cnf_rng r = seeded(_metadata, 10);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter_stats before, after;
	struct cnf_model m;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 300);
	add_random(_metadata, f, &m, &r, CNF_V6, 300);
	before = cnf_t_stats(f);
	ASSERT_EQ(-ENOSPC, cnf_t_reserve(f, CNF_V4, 4ULL << 27));
	ASSERT_EQ(-ENOSPC, cnf_t_reserve(f, CNF_V6, 4ULL << 24));
	ASSERT_EQ(-ENOSPC, cnf_t_reserve(f, CNF_V6,
					 cnf_filter_max_capacity() + 1));
	ASSERT_EQ(0, cnf_t_set_limit(f, total_bytes(&before)));
	ASSERT_EQ(-ENOSPC, cnf_t_reserve(f, CNF_V6, 100000));
	ASSERT_EQ(-ENOSPC, cnf_t_reserve(f, CNF_V4, 100000));
	after = cnf_t_stats(f);
	before.mem_limit = after.mem_limit;
	ASSERT_TRUE(same_stats(&before, &after));
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* flush fails cleanly whichever of its two table allocations fails. */
TEST(enomem_flush)
{
	struct cnf_rng r = seeded(_metadata, 11);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter_stats before;
	struct cnf_model m;
	long fail_at;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 2000);
	add_random(_metadata, f, &m, &r, CNF_V6, 2000);
	before = cnf_t_stats(f);
	for (fail_at = 0; fail_at < CNF_NFAMILIES; fail_at++) {
		struct cnf_filter_stats after;

		cnf_user_fail_alloc_in = fail_at;
		ASSERT_EQ(-ENOMEM, cnf_t_flush(f));
		cnf_user_fail_alloc_in = -1;
		after = cnf_t_stats(f);
		ASSERT_TRUE(same_stats(&before, &after));
		ASSERT_MATCHES(f, &m);
	}
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

TEST(set_limit_below_usage)
{
	struct cnf_rng r = seeded(_metadata, 12);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter_stats st;
	struct cnf_model m;
	struct cnf_key k;
	u64 bytes;
	int err = 0, n;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 1000);
	add_random(_metadata, f, &m, &r, CNF_V6, 1000);
	bytes = cnf_t_bytes(f);
	ASSERT_EQ(-EINVAL, cnf_t_set_limit(f, bytes - 1));
	ASSERT_EQ(-EINVAL, cnf_t_set_limit(f, 0));
	ASSERT_EQ(NO_LIMIT, cnf_t_stats(f).mem_limit);
	ASSERT_EQ(0, cnf_t_set_limit(f, bytes));
	ASSERT_EQ(bytes, cnf_t_stats(f).mem_limit);
	/* Now no growth: adds end in -ENOSPC, within the limit. */
	for (n = 0; n < 1000000 && !err; n++) {
		k = absent_key(&r, &m, n & 1);
		err = cnf_t_add(f, &k);
		if (!err) {
			ASSERT_TRUE(cnf_model_add(&m, &k));
		}
	}
	ASSERT_EQ(-ENOSPC, err);
	st = cnf_t_stats(f);
	ASSERT_EQ(bytes, total_bytes(&st));
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * The memory limit bounds what the core holds at its peak: the old table
 * while growth builds the new one, and charges, count against it.
 */
TEST(limit_bounds_peak)
{
	struct cnf_rng r = seeded(_metadata, 20);
	const u64 limit = 3 << 20;
	struct cnf_filter *f;
	struct cnf_model m;
	size_t base;
	int err = 0;
	u64 n;

	base = cnf_user_bytes;
	f = cnf_filter_create(0, limit);
	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	/* The filter itself (its path scratch) is not table memory. */
	base = cnf_user_bytes - cnf_t_bytes(f) - base;
	cnf_user_bytes_peak = cnf_user_bytes;
	for (n = 0; !err; n++) {
		struct cnf_key k = absent_key(&r, &m, n % 3 == 0);

		err = cnf_t_add(f, &k);
		if (!err)
			ASSERT_TRUE(cnf_model_add(&m, &k));
	}
	ASSERT_EQ(-ENOSPC, err);
	TH_LOG("%llu keys in %llu bytes, peak %zu bytes held, limit %llu",
	       (unsigned long long)cnf_model_size(&m),
	       (unsigned long long)cnf_t_bytes(f),
	       cnf_user_bytes_peak - base, (unsigned long long)limit);
	ASSERT_LE(cnf_user_bytes_peak - base, limit);
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* Charges count against the limit like tables, and come back. */
TEST(charge)
{
	struct cnf_filter *f = cnf_filter_create(0, 1 << 20);
	struct cnf_budget b;
	u64 used;

	ASSERT_NE(NULL, f);
	used = cnf_t_bytes(f);
	cnf_budget_init(&b, 1 << 20);
	cnf_filter_destroy(f);
	f = cnf_filter_create_in(0, &b);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(used, cnf_budget_used(&b));
	ASSERT_EQ(-ENOSPC, cnf_budget_charge(&b, (1 << 20) - used + 1));
	ASSERT_EQ(0, cnf_budget_charge(&b, (1 << 20) - used));
	ASSERT_EQ(-ENOSPC, cnf_budget_charge(&b, 1));
	ASSERT_EQ(-EINVAL, cnf_budget_set_limit(&b, (1 << 20) - 1));
	cnf_budget_uncharge(&b, (1 << 20) - used);
	ASSERT_EQ(0, cnf_budget_set_limit(&b, used));
	ASSERT_EQ(0, cnf_budget_charge(&b, 0));
	ASSERT_EQ(-ENOSPC, cnf_budget_charge(&b, 1));
	cnf_filter_destroy(f);
	ASSERT_EQ(0ULL, cnf_budget_used(&b));
}

/*
 * Filters sharing a budget share its limit: what one holds, another
 * cannot grow into; destroying one gives its memory back to the others.
 */
TEST(shared_budget)
{
	struct cnf_filter *f, *g;
	struct cnf_budget b;
	struct cnf_key k;
	u64 one, n = 0;
	int err = 0;

	cnf_budget_init(&b, U64_MAX);
	f = cnf_filter_create_in(0, &b);
	ASSERT_NE(NULL, f);
	one = cnf_budget_used(&b);
	g = cnf_filter_create_in(0, &b);
	ASSERT_NE(NULL, g);
	ASSERT_EQ(2 * one, cnf_budget_used(&b));
	ASSERT_EQ(one, cnf_filter_bytes(g));
	ASSERT_EQ(0, cnf_budget_set_limit(&b, 2 * one + (64 << 10)));
	cnf_filter_lock(f);
	while (!err) {
		k = cnf_key4(0x0a000000 + n++);
		err = cnf_filter_add(f, &k);
	}
	cnf_filter_unlock(f);
	ASSERT_EQ(-ENOSPC, err);
	ASSERT_LE(cnf_budget_used(&b), b.limit);
	cnf_filter_lock(g);
	k = cnf_key4(0x0b000000);
	/* g's growth would not fit beside f's tables. */
	ASSERT_EQ(-ENOSPC, cnf_filter_reserve(g, CNF_V4, n));
	cnf_filter_unlock(g);
	cnf_filter_destroy(f);
	ASSERT_EQ(one, cnf_budget_used(&b));
	cnf_filter_lock(g);
	ASSERT_EQ(0, cnf_filter_reserve(g, CNF_V4, n / 2));
	ASSERT_EQ(0, cnf_filter_add(g, &k));
	cnf_filter_unlock(g);
	cnf_filter_destroy(g);
}

/*
 * A batch announces its adds: growth sizes for them in steps of at most 8
 * times, and duplicates, which land nowhere, grow nothing.
 */
TEST(expect_sizes_growth)
{
	struct cnf_rng r = seeded(_metadata, 21);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_table_stats before, after;
	struct cnf_model m;
	struct cnf_key dup;
	u64 i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	cnf_filter_lock(f);
	cnf_filter_expect(f, 4 << 20);
	cnf_filter_unlock(f);
	dup = random_key(&r, CNF_V6);
	add_ok(_metadata, f, &m, &dup);
	for (i = 0; i < 100000; i++)
		ASSERT_EQ(-EEXIST, cnf_t_add(f, &dup));
	ASSERT_EQ(MIN_CAPACITY, cnf_t_stats(f).fam[CNF_V6].capacity);
	for (i = 0; i < 5; i++) {
		before = cnf_t_stats(f).fam[CNF_V4];
		while (cnf_t_stats(f).fam[CNF_V4].grows == before.grows)
			add_random(_metadata, f, &m, &r, CNF_V4, 1);
		after = cnf_t_stats(f).fam[CNF_V4];
		TH_LOG("growth %llu: %llu -> %llu slots",
		       (unsigned long long)after.grows,
		       (unsigned long long)before.capacity,
		       (unsigned long long)after.capacity);
		ASSERT_EQ(8 * before.capacity, after.capacity);
	}
	/* Done: doubling again. */
	cnf_filter_lock(f);
	cnf_filter_expect(f, 0);
	cnf_filter_unlock(f);
	before = cnf_t_stats(f).fam[CNF_V4];
	while (cnf_t_stats(f).fam[CNF_V4].grows == before.grows)
		add_random(_metadata, f, &m, &r, CNF_V4, 1);
	ASSERT_EQ(2 * before.capacity, cnf_t_stats(f).fam[CNF_V4].capacity);
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* Deletes that leave a table mostly empty shrink it, not below the start. */
TEST(shrink_after_deletes)
{
	struct cnf_rng r = seeded(_metadata, 22);
	struct cnf_filter *f = cnf_filter_create(1000, NO_LIMIT);
	struct cnf_table_stats st, start;
	struct cnf_model m;
	unsigned int fam;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	start = cnf_t_stats(f).fam[CNF_V4];
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		u64 peak;

		add_random(_metadata, f, &m, &r, fam, 100000);
		peak = cnf_t_stats(f).fam[fam].capacity;
		while (m.n[fam] > 100) {
			const struct cnf_key *k = cnf_model_any(&m, &r);

			if (k->family != fam)
				continue;
			struct cnf_key del = *k;

			ASSERT_EQ(0, cnf_t_del(f, &del));
			ASSERT_TRUE(cnf_model_del(&m, &del));
			st = cnf_t_stats(f).fam[fam];
			/* Never under a sixteenth of its slots in use for long. */
			if (st.capacity > start.capacity)
				ASSERT_LE(st.capacity, 16 * (st.entries + 1));
		}
		st = cnf_t_stats(f).fam[fam];
		TH_LOG("%s: %llu slots at 100000 keys, %llu at 100",
		       fam_name[fam], (unsigned long long)peak,
		       (unsigned long long)st.capacity);
		ASSERT_EQ(start.capacity, st.capacity);
		ASSERT_MATCHES(f, &m);
	}
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* ---- key shapes ---- */

/* Special and near-identical IPv6 addresses, and v4 vs v4-mapped. */
TEST(ipv6_keys)
{
	struct cnf_key keys[] = {
		cnf_key6(0, 0, 0, 0),			/* :: */
		cnf_key6(0, 0, 0, 1),			/* ::1 */
		cnf_key6(0, 0, 0xffff, 0x0a000001),	/* ::ffff:10.0.0.1 */
		cnf_key6(0, 0, 0xffff, 0),		/* ::ffff:0.0.0.0 */
		cnf_key6(~0u, ~0u, ~0u, ~0u),
		cnf_key6(0xfe800000, 0, 0, 1),
		cnf_key6(0x20010db8, 0, 0, 1),
		cnf_key6(0xa0010db8, 0, 0, 1),		/* top bit only */
		cnf_key6(0x20010db9, 0, 0, 1),		/* bit 96 only */
		cnf_key6(0x20010db8, 0x80000000, 0, 1),
		cnf_key6(0x20010db8, 0, 1, 1),
		cnf_key6(0x20010db8, 0, 0, 0x80000001),	/* bit 31 */
		cnf_key6(0x20010db8, 0, 0, 3),		/* bit 1 */
		cnf_key6(0x20010db8, 0, 0, 0x00040001),	/* bit 18 */
	};
	const unsigned int n = sizeof(keys) / sizeof(keys[0]);
	struct cnf_key v4 = cnf_key4(0x0a000001), absent[] = {
		cnf_key6(0, 0, 0, 2), cnf_key6(0x20010db8, 0, 0, 0),
		cnf_key6(0x20010db8, 0, 0, 5), cnf_key6(0x40010db8, 0, 0, 1),
		cnf_key6(0, 0, 0xfffe, 0x0a000001),
	};
	struct cnf_filter *f;
	struct cnf_model m;
	unsigned int i;

	seeded(_metadata, 13);
	f = cnf_filter_create(0, NO_LIMIT);
	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	for (i = 0; i < n; i++) {
		add_ok(_metadata, f, &m, &keys[i]);
		ASSERT_MATCHES(f, &m);
	}
	/* The v4-mapped address is not the IPv4 address, nor vice versa. */
	ASSERT_HASNT(f, &v4);
	for (i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
		ASSERT_HASNT(f, &absent[i]);
	for (i = 0; i < n; i += 2) {
		ASSERT_EQ(0, cnf_t_del(f, &keys[i]));
		ASSERT_TRUE(cnf_model_del(&m, &keys[i]));
		ASSERT_HASNT(f, &keys[i]);
		ASSERT_MATCHES(f, &m);
	}
	add_ok(_metadata, f, &m, &v4);
	ASSERT_HASNT(f, &keys[2]);
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * Pools of IPv6 keys that differ only in the top word, only in the low
 * word, v4-mapped, random, and /64 prefixes: thousands of each, across
 * growth.
 */
TEST(ipv6_shapes_grow)
{
	const enum cnf_shape shapes[] = { CNF_SHAPE_HIGH, CNF_SHAPE_SEQ,
					  CNF_SHAPE_MAPPED, CNF_SHAPE_RANDOM,
					  CNF_SHAPE_NET64 };
	struct cnf_filter *f;
	struct cnf_model m;
	unsigned int s;
	u64 i;

	seeded(_metadata, 14);
	f = cnf_filter_create(0, NO_LIMIT);
	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	for (s = 0; s < ARRAY_SIZE(shapes); s++) {
		for (i = 0; i < 5000; i++) {
			struct cnf_key k = cnf_pool_key(CNF_V6, shapes[s], 77,
							i);

			add_ok(_metadata, f, &m, &k);
		}
		ASSERT_MATCHES(f, &m);
	}
	/* Neighbours of the pools, never added, are absent. */
	for (s = 0; s < ARRAY_SIZE(shapes); s++)
		for (i = 5000; i < 10000; i++) {
			struct cnf_key k = cnf_pool_key(CNF_V6, shapes[s], 77,
							i);

			ASSERT_HASNT(f, &k);
		}
	ASSERT_LE((u64)8, cnf_t_stats(f).fam[CNF_V6].grows);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * Consecutive IPv4 addresses (and a stride that keeps the low bits fixed)
 * in a table sized for them: the load reached just before the first growth
 * must be high, i.e. structured keys spread over the buckets.
 */
static double load_at_first_growth(struct __test_metadata *_metadata,
				   u32 base, u32 stride, u64 reserve)
{
	struct cnf_filter *f = cnf_filter_create(reserve, NO_LIMIT);
	struct cnf_filter_stats st;
	struct cnf_model m;
	double load = 0;
	u32 i;

	if (!f)
		return -1;
	cnf_model_init(&m, 4);
	st = cnf_t_stats(f);
	for (i = 0; !cnf_t_stats(f).fam[CNF_V4].grows; i++) {
		struct cnf_key k = cnf_key4(base + i * stride);

		st = cnf_t_stats(f);
		if (cnf_t_add(f, &k) || !cnf_model_add(&m, &k))
			break;
	}
	/* count and capacity just before the add that grew the table */
	load = (double)st.fam[CNF_V4].entries / st.fam[CNF_V4].capacity;
	if (!cnf_check_full(f, &m, (char[256]){ 0 }, 256))
		load = -1;
	cnf_model_free(&m);
	cnf_filter_destroy(f);
	return load;
}

TEST(consecutive_ipv4_high_load)
{
	const struct { u32 base, stride; } runs[] = {
		{ 0x0a000000, 1 }, { 0xc0a80000, 1 }, { 0, 1 },
		{ 0x0a000001, 256 }, { 0x0a000001, 65536 },
	};
	unsigned int i;

	seeded(_metadata, 15);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		double load = load_at_first_growth(_metadata, runs[i].base,
						   runs[i].stride, 20000);

		TH_LOG("base %#x stride %u: load %.4f before first growth",
		       runs[i].base, runs[i].stride, load);
		ASSERT_LE(0.90, load);
	}
}

/*
 * Fill a table of 2^@log buckets with keys @first + i * @step (@step added to
 * the key's @word) until the first that finds no room: the share of its
 * slots then in use.
 */
static double fill_at_first_failure(enum cnf_layout layout, unsigned int log,
				    struct cnf_key first, unsigned int word,
				    u32 step)
{
	static struct cnf_path_node path[CNF_PATH_NODES];
	struct cnf_table *t = cnf_table_alloc(layout, log, true, NULL);
	u32 slots = CNF_BUCKET_SLOTS << log, i, w;
	struct cnf_key k = first;

	if (!t)
		return -1;
	w = ntohl(first.v6.s6_addr32[word]);
	for (i = 0; i < slots; i++, w += step) {
		k.v6.s6_addr32[word] = htonl(w);
		if (cnf_table_insert(t, path, &k))
			break;
	}
	cnf_table_free(t);
	return (double)i / slots;
}

/*
 * IPv6 keys in arithmetic progression, as an expanded prefix brings them to
 * its tier: the /48s of a /41 (second word, step 2^16), the /56s of a /49
 * (step 2^8), the /88s of an /81 (third word, step 2^8), and the first
 * address of each /64 of a /32.  Each of 100 tables with seeds of their own
 * takes at least 90% of its slots before a key finds no room, as random
 * keys do.
 */
TEST(ipv6_progressions_high_load)
{
	const struct {
		enum cnf_layout layout;
		unsigned int word;
		u32 step;
	} runs[] = {
		{ CNF_LAYOUT64, 1, 1U << 16 }, { CNF_LAYOUT64, 1, 1U << 8 },
		{ CNF_LAYOUT128, 2, 1U << 8 }, { CNF_LAYOUT128, 1, 1 },
	};
	const struct cnf_key first = cnf_key6(0x20010db8, 0, 0, 0);
	double fill, least;
	unsigned int i, n;

	seeded(_metadata, 16);
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		least = 1;
		for (n = 0; n < 100; n++) {
			fill = fill_at_first_failure(runs[i].layout, 10, first,
						     runs[i].word,
						     runs[i].step);
			ASSERT_LE(0, fill);
			least = fill < least ? fill : least;
		}
		TH_LOG("word %u, step %u: %.4f of the slots at the worst",
		       runs[i].word, runs[i].step, least);
		ASSERT_LE(0.90, least);
	}
}

/* The share of 100,000 absent IPv6 addresses the address tier's summary passes. */
static double summary_passes(struct cnf_filter *f, struct cnf_rng *r,
			     const struct cnf_model *m)
{
	const struct cnf_table *t = f->tier[CNF_V6][CNF_V6_BITS];
	unsigned int i, passed = 0;
	struct cnf_pos p;
	u32 h;

	for (i = 0; i < 100000; i++) {
		struct cnf_key k = absent_key(r, m, CNF_V6);

		h = cnf_locate(t, cnf_width(t), &k.v6, &p);
		passed += cnf_summary_has(t, p.b[0], h);
	}
	return passed / 100000.0;
}

/*
 * The summary of an IPv6 table sends few absent keys on to the buckets,
 * and keeps doing so through deletes: 20 rounds of deleting and adding
 * back half the keys would leave it flagging more than half of them if
 * deletes were never cleaned up.
 */
TEST(ipv6_summary_rejects_absent)
{
	struct cnf_rng r = seeded(_metadata, 17);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	unsigned int round, i;
	struct cnf_model m;
	double fresh, churned;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V6, 20000);
	fresh = summary_passes(f, &r, &m);
	for (round = 0; round < 20; round++) {
		for (i = 0; i < 10000; i++) {
			struct cnf_key k = *cnf_model_any(&m, &r);

			ASSERT_EQ(0, cnf_t_del(f, &k));
			ASSERT_TRUE(cnf_model_del(&m, &k));
		}
		add_random(_metadata, f, &m, &r, CNF_V6, 10000);
	}
	ASSERT_MATCHES(f, &m);
	churned = summary_passes(f, &r, &m);
	TH_LOG("absent keys past the summary: %.3f, %.3f after 200000 deletes",
	       fresh, churned);
	ASSERT_GE(0.20, fresh);
	ASSERT_GE(0.20, churned);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * A million IPv4 addresses: the table has 16-bit slots (and the lookups
 * their two-chunk tabulation), about 4 bytes per entry, and both lookup
 * paths find every address and nothing else.
 */
TEST(ipv4_million_16bit_slots)
{
	const u32 n = 1 << 20;
	struct cnf_filter *f = cnf_filter_create(n, NO_LIMIT);
	__be32 *a = calloc(2 * (size_t)n, sizeof(*a));
	bool *hits = calloc(n, sizeof(*hits));
	struct cnf_filter_stats st;
	u64 wrong = 0;
	u32 i;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, hits);
	for (i = 0; i < 2 * n; i++)
		a[i] = htonl(cnf_spread32(i));
	for (i = 0; i < n; i++) {
		struct cnf_key k = cnf_key4(cnf_spread32(i));

		ASSERT_EQ(0, cnf_t_add(f, &k));
	}
	st = cnf_t_stats(f);
	ASSERT_EQ((u64)n, st.fam[CNF_V4].entries);
	ASSERT_EQ((u64)0, st.fam[CNF_V4].grows);
	TH_LOG("%u IPv4: %.3f bytes per entry", n,
	       (double)st.fam[CNF_V4].bytes / n);
	ASSERT_GE(4.1, (double)st.fam[CNF_V4].bytes / n);
	rcu_read_lock();
	for (i = 0; i < 2 * n; i++)
		wrong += cnf_filter_lookup4(f, a[i]) != (i < n);
	cnf_filter_lookup4_batch(f, a, n, hits);
	for (i = 0; i < n; i++)
		wrong += !hits[i];
	cnf_filter_lookup4_batch(f, a + n, n, hits);
	for (i = 0; i < n; i++)
		wrong += hits[i];
	rcu_read_unlock();
	ASSERT_EQ((u64)0, wrong);
	free(hits);
	free(a);
	cnf_filter_destroy(f);
}

/* ---- the /64 tier: 6- and 8-byte slots (CNF_LAYOUT64) ---- */

static struct cnf_key net64(u64 salt, u64 i)
{
	return cnf_pool_key(CNF_V6, CNF_SHAPE_NET64, salt, i);
}

/* The IPv6 figures of @f beyond those of @base: the /64 tier's. */
static struct cnf_table_stats tier_stats(struct cnf_filter *f,
					 const struct cnf_table_stats *base)
{
	struct cnf_table_stats t = cnf_t_stats(f).fam[CNF_V6];

	t.bytes -= base->bytes;
	t.capacity -= base->capacity;
	t.keys -= base->keys;
	return t;
}

/*
 * /64 prefixes added one by one from the tier's smallest table until it
 * grows past 2^18 buckets, where its slots narrow: just before each growth
 * the table is near its load limit, and the bytes it takes per key then
 * (its own byte count, header included) are logged; at 2^18 buckets they
 * must be at most 8.  Every key is found, nothing else; then deletes
 * shrink it back across the switch, to 8-byte slots.
 */
TEST(ipv6_net64_tier_bytes)
{
	struct cnf_rng r = seeded(_metadata, 20);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_table_stats base, prev, now;
	double narrow = 0, wide = 0;
	struct cnf_model m;
	u64 i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 10);
	base = cnf_t_stats(f).fam[CNF_V6];
	prev = tier_stats(f, &base);
	for (i = 0; !narrow; i++) {
		struct cnf_key k = net64(20, i);

		add_ok(_metadata, f, &m, &k);
		now = tier_stats(f, &base);
		if (now.bytes != prev.bytes && prev.keys) {
			double per_key = (double)prev.bytes / prev.keys;

			TH_LOG("%8llu slots: %8llu keys before growth, load %.3f, %.2f bytes/key, %.2f bytes/slot",
			       (unsigned long long)prev.capacity,
			       (unsigned long long)prev.keys,
			       (double)prev.keys / prev.capacity, per_key,
			       (double)prev.bytes / prev.capacity);
			ASSERT_LE(0.85, (double)prev.keys / prev.capacity);
			if (prev.capacity == (u64)CNF_BUCKET_SLOTS << 18)
				narrow = per_key;
		}
		prev = now;
	}
	ASSERT_EQ(i, now.keys);
	ASSERT_GE(8.0, narrow);
	ASSERT_MATCHES(f, &m);
	/* Addresses inside stored /64s are covered; others are not. */
	for (i = 0; i < 200000; i++) {
		struct cnf_key in = *cnf_model_any(&m, &r);
		struct cnf_key out = net64(20, now.keys + i);

		in.len = CNF_V6_BITS;
		in.v6.s6_addr32[2] = (u32)cnf_rng_next(&r);
		in.v6.s6_addr32[3] = (u32)cnf_rng_next(&r);
		ASSERT_HAS(f, &in);
		ASSERT_HASNT(f, &out);
	}
	/* Deletes shrink the tier back below 2^18 buckets: 8-byte slots. */
	for (i = 0; cnf_model_size(&m) > 3000; i++) {
		struct cnf_key k = *cnf_model_any(&m, &r);

		ASSERT_EQ(0, cnf_t_del(f, &k));
		ASSERT_TRUE(cnf_model_del(&m, &k));
		if (!(i % 200000))
			ASSERT_MATCHES(f, &m);
	}
	ASSERT_MATCHES(f, &m);
	now = tier_stats(f, &base);
	wide = (double)now.bytes / now.capacity;
	TH_LOG("%llu keys after deletes: %llu slots, %.2f bytes/slot",
	       (unsigned long long)now.keys,
	       (unsigned long long)now.capacity, wide);
	ASSERT_LT((u64)CNF_BUCKET_SLOTS << 12, now.capacity);
	ASSERT_GT((u64)CNF_BUCKET_SLOTS << 18, now.capacity);
	ASSERT_LE(8.0, wide);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/*
 * A /64 tier that may not grow (the limit is what the filter uses), with
 * 8-byte slots (hundreds of keys) and with 6-byte ones (past 2^18
 * buckets): adds go on past the load limit along ever longer cuckoo paths,
 * then into the stash, then fail with -ENOSPC and change nothing.  Stashed
 * keys are found, deleted and added back; deletes free slots the stash
 * drains into.
 */
TEST(ipv6_net64_stash)
{
	const u64 sizes[] = { 200, 600000 };
	struct cnf_rng r = seeded(_metadata, 21);
	unsigned int z;

	for (z = 0; z < ARRAY_SIZE(sizes); z++) {
		struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
		struct cnf_key k, stashed[CNF_STASH_SLOTS];
		struct cnf_table_stats base, st;
		u64 i = 0, nstash = 0, bytes;
		struct cnf_model m;
		int err = 0;

		ASSERT_NE(NULL, f);
		cnf_model_init(&m, 10);
		base = cnf_t_stats(f).fam[CNF_V6];
		for (; i < sizes[z]; i++) {
			k = net64(21 + z, i);
			add_ok(_metadata, f, &m, &k);
		}
		bytes = cnf_t_bytes(f);
		ASSERT_EQ(0, cnf_t_set_limit(f, bytes));
		for (; err != -ENOSPC; i++) {
			k = net64(21 + z, i);
			err = cnf_t_add(f, &k);
			if (err) {
				ASSERT_EQ(-ENOSPC, err);
				continue;
			}
			ASSERT_TRUE(cnf_model_add(&m, &k));
			st = tier_stats(f, &base);
			if (st.stashed > nstash) {
				ASSERT_EQ(nstash + 1, st.stashed);
				stashed[nstash++] = k;
			}
		}
		st = tier_stats(f, &base);
		TH_LOG("-ENOSPC at %llu keys (%llu stashed) of %llu slots, %.2f bytes/slot",
		       (unsigned long long)st.keys,
		       (unsigned long long)st.stashed,
		       (unsigned long long)st.capacity,
		       (double)st.bytes / st.capacity);
		ASSERT_EQ(bytes, cnf_t_bytes(f));
		ASSERT_EQ((u64)CNF_STASH_SLOTS, st.stashed);
		ASSERT_LE((u64)CNF_STASH_SLOTS, nstash);
		/* Up to the load limit (96%, where a table would grow). */
		ASSERT_LE(st.capacity * 96 / 100, st.keys - st.stashed);
		ASSERT_HASNT(f, &k);
		ASSERT_MATCHES(f, &m);
		for (i = 0; i < CNF_STASH_SLOTS; i++) {
			ASSERT_HAS(f, &stashed[i]);
			ASSERT_EQ(-EEXIST, cnf_t_add(f, &stashed[i]));
			ASSERT_EQ(0, cnf_t_del(f, &stashed[i]));
			ASSERT_HASNT(f, &stashed[i]);
			ASSERT_EQ(0, cnf_t_add(f, &stashed[i]));
			ASSERT_HAS(f, &stashed[i]);
		}
		ASSERT_MATCHES(f, &m);
		/* Freed slots take stashed keys back. */
		for (i = 0; i < 100000 && tier_stats(f, &base).stashed; i++) {
			k = *cnf_model_any(&m, &r);
			ASSERT_EQ(0, cnf_t_del(f, &k));
			ASSERT_TRUE(cnf_model_del(&m, &k));
			ASSERT_HASNT(f, &k);
		}
		TH_LOG("stash empty after %llu deletes", (unsigned long long)i);
		ASSERT_EQ((u64)0, tier_stats(f, &base).stashed);
		ASSERT_MATCHES(f, &m);
		cnf_model_free(&m);
		cnf_filter_destroy(f);
	}
}

/* Growth across many doublings, both families: nothing lost, no intruder. */
TEST(growth_many_doublings)
{
	struct cnf_rng r = seeded(_metadata, 16);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter_stats st;
	struct cnf_model m;
	unsigned int fam;
	u64 i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	for (i = 0; i < 10; i++) {
		add_random(_metadata, f, &m, &r, CNF_V4, 20000);
		add_random(_metadata, f, &m, &r, CNF_V6, 5000);
		ASSERT_MATCHES(f, &m);
	}
	st = cnf_t_stats(f);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		TH_LOG("%s: %llu entries, capacity %llu, %llu grows, %llu bytes",
		       fam_name[fam], (unsigned long long)st.fam[fam].entries,
		       (unsigned long long)st.fam[fam].capacity,
		       (unsigned long long)st.fam[fam].grows,
		       (unsigned long long)st.fam[fam].bytes);
		ASSERT_LE((u64)10, st.fam[fam].grows);
	}
	/* Exact: a million absent addresses, not one false positive. */
	for (i = 0; i < 1000000; i++) {
		struct cnf_key k = absent_key(&r, &m, i & 1);

		ASSERT_HASNT(f, &k);
	}
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* ---- walk, stats, flush ---- */

struct stop_after {
	int calls, stop_at;
};

static int stop_walk(void *ctx, const struct cnf_key *k)
{
	struct stop_after *s = ctx;

	return ++s->calls == s->stop_at ? 42 : 0;
}

TEST(walk_stops_at_nonzero)
{
	struct cnf_rng r = seeded(_metadata, 17);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct stop_after s = { .stop_at = 3 };
	struct cnf_model m;
	int err;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 10);
	add_random(_metadata, f, &m, &r, CNF_V6, 10);
	cnf_filter_lock(f);
	err = cnf_filter_walk(f, stop_walk, &s);
	cnf_filter_unlock(f);
	ASSERT_EQ(42, err);
	ASSERT_EQ(3, s.calls);
	s = (struct stop_after){ .stop_at = 15 };	/* in the IPv6 table */
	cnf_filter_lock(f);
	err = cnf_filter_walk(f, stop_walk, &s);
	cnf_filter_unlock(f);
	ASSERT_EQ(42, err);
	ASSERT_EQ(15, s.calls);
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* stats: entries, capacity, bytes and grows move together and sensibly. */
TEST(stats_consistent)
{
	struct cnf_rng r = seeded(_metadata, 18);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_filter_stats prev, st;
	struct cnf_model m;
	unsigned int fam;
	int i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	prev = cnf_t_stats(f);
	for (i = 0; i < 40000; i++) {
		fam = i % 5 == 0;	/* one IPv6 add in five */
		add_random(_metadata, f, &m, &r, fam, 1);
		st = cnf_t_stats(f);
		ASSERT_EQ(m.n[fam], st.fam[fam].entries);
		ASSERT_EQ(st.fam[fam].entries, cnf_t_count(f, fam));
		ASSERT_LE(st.fam[fam].entries - st.fam[fam].stashed,
			  st.fam[fam].capacity);
		ASSERT_LE(st.fam[fam].stashed, (u64)CNF_STASH_SLOTS);
		if (st.fam[fam].capacity != prev.fam[fam].capacity) {
			/* A capacity change is exactly one grow, upwards. */
			ASSERT_EQ(prev.fam[fam].grows + 1, st.fam[fam].grows);
			ASSERT_LT(prev.fam[fam].capacity, st.fam[fam].capacity);
			ASSERT_LE(prev.fam[fam].bytes, st.fam[fam].bytes);
		} else {
			ASSERT_EQ(prev.fam[fam].grows, st.fam[fam].grows);
			ASSERT_EQ(prev.fam[fam].bytes, st.fam[fam].bytes);
		}
		/* The other family does not move at all. */
		ASSERT_EQ(0, memcmp(&prev.fam[!fam], &st.fam[!fam],
				    sizeof(st.fam[0])));
		prev = st;
	}
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		TH_LOG("%s: %llu entries, capacity %llu, %.2f bytes/entry",
		       fam_name[fam], (unsigned long long)st.fam[fam].entries,
		       (unsigned long long)st.fam[fam].capacity,
		       (double)st.fam[fam].bytes / st.fam[fam].entries);
		ASSERT_LT((u64)0, st.fam[fam].bytes);
	}
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

TEST(flush_empties_and_readd)
{
	struct cnf_rng r = seeded(_metadata, 19);
	struct cnf_filter *f = cnf_filter_create(1000, NO_LIMIT);
	struct cnf_filter_stats initial, st;
	struct cnf_model m;
	unsigned int fam, round;
	u64 i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	initial = cnf_t_stats(f);
	for (round = 0; round < 3; round++) {
		struct cnf_model kept;

		add_random(_metadata, f, &m, &r, CNF_V4, 30000);
		add_random(_metadata, f, &m, &r, CNF_V6, 10000);
		ASSERT_MATCHES(f, &m);
		ASSERT_EQ(0, cnf_t_flush(f));
		st = cnf_t_stats(f);
		for (fam = 0; fam < CNF_NFAMILIES; fam++) {
			ASSERT_EQ((u64)0, st.fam[fam].entries);
			ASSERT_EQ((u64)0, st.fam[fam].stashed);
			ASSERT_EQ(initial.fam[fam].capacity,
				  st.fam[fam].capacity);
			ASSERT_EQ(initial.fam[fam].bytes, st.fam[fam].bytes);
		}
		for (i = 0; i < cnf_model_size(&m); i++)
			ASSERT_HASNT(f, &m.keys[i]);
		/* Every flushed key can be added again. */
		kept = m;
		cnf_model_init(&m, 4);
		for (i = 0; i < cnf_model_size(&kept); i++)
			add_ok(_metadata, f, &m, &kept.keys[i]);
		cnf_model_free(&kept);
		ASSERT_MATCHES(f, &m);
	}
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

/* Adding and deleting the same key over and over: no drift in count. */
TEST(add_delete_cycles)
{
	struct cnf_rng r = seeded(_metadata, 20);
	struct cnf_filter *f = cnf_filter_create(0, NO_LIMIT);
	struct cnf_model m;
	int i;

	ASSERT_NE(NULL, f);
	cnf_model_init(&m, 4);
	add_random(_metadata, f, &m, &r, CNF_V4, 1000);
	add_random(_metadata, f, &m, &r, CNF_V6, 1000);
	for (i = 0; i < 20000; i++) {
		struct cnf_key k = absent_key(&r, &m, i & 1);

		ASSERT_EQ(0, cnf_t_add(f, &k));
		ASSERT_HAS(f, &k);
		ASSERT_EQ(0, cnf_t_del(f, &k));
		ASSERT_HASNT(f, &k);
	}
	ASSERT_MATCHES(f, &m);
	cnf_model_free(&m);
	cnf_filter_destroy(f);
}

TEST_HARNESS_MAIN
