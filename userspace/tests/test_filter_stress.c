// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency stress test of the filter core: reader threads (registered
 * with liburcu, lookups under rcu_read_lock, as the packet path does) look
 * up a fixed set of addresses of both families in a tight loop, while the
 * writer adds and deletes other addresses, reserves, and so forces growth
 * across many doublings (growth test) or kicks keys around a nearly full
 * table whose memory limit forbids growth (full-table test).
 *
 * A reader missing a fixed address, or finding an address that no one ever
 * adds, fails the test.  The run is bounded by the writer's operation count,
 * not by time; readers stop when the writer is done.  Seeds are fixed.
 */
#include <stdatomic.h>

#include "cnf_test.h"
#include "cnf_harness.h"

#define NO_LIMIT	(1ULL << 40)
#define READERS		2	/* + the writer: more threads than CPUs here */
#define NFIXED		1024	/* per family */
#define NNEVER		256	/* per family */

/*
 * Disjoint key classes by the top two address bits: fixed keys 00, keys
 * that are never added 01, the writer's keys 1x.  So no writer operation can
 * touch a fixed key, and a hit on a "never" key is always wrong.
 */
enum key_class { FIXED, NEVER, WRITER };

static struct cnf_key class_key(struct cnf_rng *r, enum cnf_family fam,
				enum key_class c)
{
	struct cnf_key k = cnf_pool_key(fam, CNF_SHAPE_RANDOM,
					cnf_rng_next(r), 0);
	u8 *top = fam == CNF_V4 ? (u8 *)&k.v4 : k.v6.s6_addr;
	static const u8 bits[] = { 0x00, 0x40, 0x80 };

	*top = (*top & 0x3f) | bits[c];
	if (c == WRITER)
		*top |= cnf_rng_below(r, 2) << 6;
	return k;
}

struct stress {
	struct cnf_filter *f;
	struct cnf_key fixed[2 * NFIXED];
	struct cnf_key never[2 * NNEVER];
	atomic_bool stop;
	atomic_ullong lookups;
	atomic_ullong misses;		/* fixed key not found */
	atomic_ullong false_hits;	/* never-added key found */
	atomic_ullong writer_op;	/* progress, for failure reports */
	pthread_mutex_t bad_lock;
	struct cnf_key bad;		/* first wrong answer */
	u64 bad_op;
	bool bad_was_miss;
};

struct reader {
	struct stress *s;
	pthread_t tid;
	bool use_contains;	/* and the batched path; else lookup4/6 */
};

static bool reader_lookup(const struct reader *rd, const struct cnf_key *k)
{
	bool hit;

	rcu_read_lock();
	if (rd->use_contains)
		hit = cnf_filter_contains(rd->s->f, k);
	else if (k->family == CNF_V4)
		hit = cnf_filter_lookup4(rd->s->f, k->v4);
	else
		hit = cnf_filter_lookup6(rd->s->f, &k->v6);
	rcu_read_unlock();
	return hit;
}

static void reader_report(struct stress *s, const struct cnf_key *k,
			  bool miss)
{
	atomic_ullong *ctr = miss ? &s->misses : &s->false_hits;

	pthread_mutex_lock(&s->bad_lock);
	if (!s->misses && !s->false_hits) {
		s->bad = *k;
		s->bad_op = s->writer_op;
		s->bad_was_miss = miss;
	}
	(*ctr)++;
	pthread_mutex_unlock(&s->bad_lock);
}

/*
 * The IPv4 keys of @keys through cnf_filter_lookup4_batch(), in one call
 * (groups of CNF_LOOKUP_BATCH inside); each answer must be @want.  Returns
 * the lookups made.
 */
static u64 reader_batch(struct stress *s, const struct cnf_key *keys,
			unsigned int n, bool want)
{
	__be32 a[2 * NFIXED];
	const struct cnf_key *k[2 * NFIXED];
	bool hit[2 * NFIXED];
	unsigned int i, m = 0;

	for (i = 0; i < n; i++)
		if (keys[i].family == CNF_V4) {
			k[m] = &keys[i];
			a[m++] = keys[i].v4;
		}
	rcu_read_lock();
	cnf_filter_lookup4_batch(s->f, a, m, hit);
	rcu_read_unlock();
	for (i = 0; i < m; i++)
		if (hit[i] != want)
			reader_report(s, k[i], want);
	return m;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct stress *s = rd->s;
	u64 n = 0;
	unsigned int i;

	rcu_register_thread();
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		for (i = 0; i < 2 * NFIXED; i++)
			if (!reader_lookup(rd, &s->fixed[i]))
				reader_report(s, &s->fixed[i], true);
		for (i = 0; i < 2 * NNEVER; i++)
			if (reader_lookup(rd, &s->never[i]))
				reader_report(s, &s->never[i], false);
		n += 2 * NFIXED + 2 * NNEVER;
		if (rd->use_contains) {
			n += reader_batch(s, s->fixed, 2 * NFIXED, true);
			n += reader_batch(s, s->never, 2 * NNEVER, false);
		}
	}
	rcu_unregister_thread();
	s->lookups += n;
	return NULL;
}

/* A fresh filter holding the fixed set; the never set is drawn too. */
static struct stress *stress_setup(struct __test_metadata *_metadata,
				   u64 seed)
{
	struct stress *s = calloc(1, sizeof(*s));
	struct cnf_rng r = { seed };
	struct cnf_model m;
	unsigned int i;

	ASSERT_NE(NULL, s);
	TH_LOG("seed %#llx", (unsigned long long)seed);
	cnf_user_seed_random(seed);
	pthread_mutex_init(&s->bad_lock, NULL);
	s->f = cnf_filter_create(0, NO_LIMIT);
	ASSERT_NE(NULL, s->f);
	cnf_model_init(&m, 4);
	for (i = 0; i < 2 * NFIXED; i++) {
		do
			s->fixed[i] = class_key(&r, i % 2, FIXED);
		while (!cnf_model_add(&m, &s->fixed[i]));
		ASSERT_EQ(0, cnf_t_add(s->f, &s->fixed[i]));
	}
	for (i = 0; i < 2 * NNEVER; i++)
		s->never[i] = class_key(&r, i % 2, NEVER);
	cnf_model_free(&m);
	return s;
}

static void readers_start(struct __test_metadata *_metadata, struct stress *s,
			  struct reader *rd)
{
	unsigned int i;

	for (i = 0; i < READERS; i++) {
		rd[i] = (struct reader){ .s = s, .use_contains = i & 1 };
		ASSERT_EQ(0, pthread_create(&rd[i].tid, NULL, reader_main,
					    &rd[i]));
	}
}

static void readers_stop(struct stress *s, struct reader *rd)
{
	unsigned int i;

	atomic_store(&s->stop, true);
	for (i = 0; i < READERS; i++)
		pthread_join(rd[i].tid, NULL);
}

/* After the run: no wrong answer, and the fixed set is intact. */
static void stress_verdict(struct __test_metadata *_metadata,
			   struct stress *s)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned int i, fam;

	TH_LOG("%llu lookups by %d readers, %llu misses of fixed keys, %llu hits of never-added keys",
	       (unsigned long long)s->lookups, READERS,
	       (unsigned long long)s->misses,
	       (unsigned long long)s->false_hits);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_filter_stats st = cnf_t_stats(s->f);

		TH_LOG("family %u: %llu entries, capacity %llu, %llu grows, %llu stashed",
		       fam, (unsigned long long)st.fam[fam].entries,
		       (unsigned long long)st.fam[fam].capacity,
		       (unsigned long long)st.fam[fam].grows,
		       (unsigned long long)st.fam[fam].stashed);
	}
	if (s->misses || s->false_hits)
		TH_LOG("first wrong answer: %s %s at writer op %llu",
		       s->bad_was_miss ? "missed fixed" : "found never-added",
		       cnf_key_str(&s->bad, buf, sizeof(buf)),
		       (unsigned long long)s->bad_op);
	ASSERT_EQ(0ULL, s->misses);
	ASSERT_EQ(0ULL, s->false_hits);
	for (i = 0; i < 2 * NFIXED; i++)
		ASSERT_EQ(1, cnf_t_has(s->f, &s->fixed[i]));
	ASSERT_LT(0ULL, s->lookups);
}

static void stress_free(struct stress *s)
{
	cnf_filter_destroy(s->f);
	pthread_mutex_destroy(&s->bad_lock);
	free(s);
}

/*
 * One writer operation: mostly add a new key of the writer's class, else
 * delete one it added (or an absent one of its class).  @m is the writer's
 * own keys; -ENOSPC is accepted only when @full says growth is forbidden.
 */
static void writer_op(struct __test_metadata *_metadata, struct stress *s,
		      struct cnf_model *m, struct cnf_rng *r, bool full,
		      unsigned int add_pct)
{
	struct cnf_key k = class_key(r, cnf_rng_below(r, 2), WRITER);
	int err;

	if (cnf_rng_below(r, 100) < add_pct) {
		err = cnf_t_add(s->f, &k);
		if (err == -ENOSPC && full)
			return;
		ASSERT_EQ(cnf_model_has(m, &k) ? -EEXIST : 0, err);
		cnf_model_add(m, &k);
		return;
	}
	if (cnf_rng_below(r, 4) && cnf_model_size(m))
		k = *cnf_model_any(m, r);
	ASSERT_EQ(cnf_model_has(m, &k) ? 0 : -ENOENT, cnf_t_del(s->f, &k));
	cnf_model_del(m, &k);
}

/* Growth: from the fixed set's table to 2^16+ buckets, with reserves. */
FIXTURE(race) {};
FIXTURE_SETUP(race) {}
FIXTURE_TEARDOWN(race) {}

TEST_F_TIMEOUT(race, growth, 300)
{
	const u64 rounds = 3, ops = 300000;
	struct reader rd[READERS];
	u64 round, op;

	for (round = 0; round < rounds; round++) {
		struct stress *s = stress_setup(_metadata, 0x57e55000 + round);
		struct cnf_rng r = { 0x77 + round };
		struct cnf_model m;

		cnf_model_init(&m, 10);
		readers_start(_metadata, s, rd);
		for (op = 0; op < ops; op++) {
			s->writer_op = op;
			writer_op(_metadata, s, &m, &r, false, 75);
			/* Now and then jump ahead: growth by reserve(). */
			if (op % 40000 == 39999)
				ASSERT_EQ(0, cnf_t_reserve(s->f, op / 40000 & 1,
					  2 * cnf_t_count(s->f, op / 40000 & 1)));
		}
		readers_stop(s, rd);
		stress_verdict(_metadata, s);
		ASSERT_LE(6ULL, cnf_t_stats(s->f).fam[CNF_V4].grows);
		cnf_model_free(&m);
		stress_free(s);
	}
}

/*
 * A table near full under a memory limit: every add kicks fixed keys along
 * cuckoo paths and fills the stash, every delete drains it.  The riskiest
 * case for a reader racing a move.
 */
TEST_F_TIMEOUT(race, full_table_kicks, 300)
{
	const u64 ops = 200000;
	struct stress *s = stress_setup(_metadata, 0x57e55100);
	struct cnf_rng r = { 0x99 };
	struct reader rd[READERS];
	struct cnf_model m;
	u64 op, enospc = 0, grows = cnf_t_stats(s->f).fam[CNF_V4].grows;

	cnf_model_init(&m, 10);
	ASSERT_EQ(0, cnf_t_set_limit(s->f, cnf_t_bytes(s->f)));
	readers_start(_metadata, s, rd);
	for (op = 0; op < ops; op++) {
		u64 before = cnf_model_size(&m);

		s->writer_op = op;
		/* Mostly adds: the table stays at its limit. */
		writer_op(_metadata, s, &m, &r, true, 60);
		enospc += cnf_model_size(&m) == before;
	}
	readers_stop(s, rd);
	TH_LOG("%llu writer ops, %llu without effect (mostly -ENOSPC)",
	       (unsigned long long)ops, (unsigned long long)enospc);
	stress_verdict(_metadata, s);
	ASSERT_EQ(grows, cnf_t_stats(s->f).fam[CNF_V4].grows);
	cnf_model_free(&m);
	stress_free(s);
}

TEST_HARNESS_MAIN
