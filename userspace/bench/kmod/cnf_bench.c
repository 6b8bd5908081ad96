// SPDX-License-Identifier: GPL-2.0
/*
 * cnf_bench: the cuckoo_nf filter core against the kernel's rhashtable.
 *
 * In the style of lib/test_rhashtable.c: everything runs at module load and
 * the results go to the kernel log; a clean run returns 0 (rmmod the module
 * afterwards), a failed check or allocation an error.
 *
 * The filter core is the real one: module/filter.c is compiled into this
 * module.  The rhashtable holds the same u32 keys in objects of
 * { u32 key; struct rhash_head node; } with the default hash (jhash), the
 * structure behind nftables' hash sets.  For each size N (1K, 64K, 1M, and
 * 16M with max_log=24) it times:
 *   ins-pre  N inserts into a structure presized for N (cnf_filter_reserve,
 *            rhashtable nelem_hint)
 *   ins      N inserts into an empty structure that grows as it fills (the
 *            filter from the module's default initial_capacity, 256)
 *   hit      @ops lookups of present keys, in a scattered order
 *   miss     @ops lookups of absent keys
 * Lookups run on the structures the "ins" pass grew.  A 1K pass that is not
 * reported runs first: under an emulator (TCG) the first run of any code
 * path pays for translating it.
 * Lookups run in batches under rcu_read_lock() with bottom halves disabled,
 * the context of a netfilter hook; each batch is timed with ktime_get_ns().
 * Inserts may sleep (the filter grows with GFP_KERNEL under its mutex,
 * rhashtable resizes from a work item), so they are timed per batch with
 * preemption enabled: run on an idle machine.  Figures are the median of
 * @runs runs (inserts: one run above 1M entries).  Output, one line per size
 * and operation:
 *
 *   cnf_bench: n=1048576 op=hit cuckoo_ns=41.20 rht_ns=95.33 ratio=0.432
 *   cnf_bench: n=1048576 mem cuckoo_bytes=4194304 rht_bytes=25165824
 *
 * ratio = cuckoo / rhashtable (below 1: the filter core is faster).  Timing
 * is reported, never asserted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rhashtable.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "../../../module/budget.c"
#include "../../../module/ftable.c"
#include "../../../module/store.c"
#include "../../../module/tier.c"
#include "../../../module/walk.c"
#include "../../../module/table.c"
#include "../../../module/v6dir.c"
#include "../../../module/filter.c"

#define BENCH_MIN_LOG		10
#define BENCH_MAX_LOG		24
#define BENCH_BATCH		1024
#define BENCH_MAX_RUNS		15

static unsigned int max_log = 20;
module_param(max_log, uint, 0444);
MODULE_PARM_DESC(max_log, "Largest size as log2(entries), 10..24 (default: 20)");

static unsigned int ops = 1U << 20;
module_param(ops, uint, 0444);
MODULE_PARM_DESC(ops, "Lookups per run, hits and misses each (default: 1M)");

static unsigned int runs = 3;
module_param(runs, uint, 0444);
MODULE_PARM_DESC(runs, "Lookup runs per size; the median is reported (default: 3)");

struct bench_obj {
	u32 key;
	struct rhash_head node;
};

static const struct rhashtable_params bench_params = {
	.key_len = sizeof(u32),
	.key_offset = offsetof(struct bench_obj, key),
	.head_offset = offsetof(struct bench_obj, node),
	.automatic_shrinking = false,
};

/* One size's state: both structures and the keys they hold or miss. */
struct bench_ctx {
	unsigned int log;
	u32 n;
	u32 seed;
	struct bench_obj *objs;	/* keys 0..n-1, network order */
	u32 *hit;		/* @ops present keys, scattered */
	u32 *miss;		/* @ops absent keys */
	struct cnf_filter *f;
	struct rhashtable ht;
	bool ht_live;
	bool report;		/* false: warm-up pass */
};

/* Distinct keys for distinct @i: fmix32 is a bijection of u32. */
static u32 bench_key(const struct bench_ctx *c, u32 i)
{
	u32 x = i ^ c->seed;

	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return (__force u32)cpu_to_be32(x);
}

/* i -> i * odd mod n visits every key once per n lookups, out of order. */
static u32 bench_scatter(const struct bench_ctx *c, u32 i)
{
	return (i * 0x9e3779b1U) & (c->n - 1);
}

/* Nanoseconds * 100 per op, for printing with two decimals. */
static u64 bench_cns(u64 ns, u64 nops)
{
	return div64_u64(ns * 100, nops ? nops : 1);
}

static int bench_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 bench_median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), bench_cmp_u64, NULL);
	return v[n / 2];
}

static void bench_report(const struct bench_ctx *c, const char *op,
			 u64 cuckoo_cns, u64 rht_cns)
{
	u64 ratio = div64_u64(cuckoo_cns * 1000, rht_cns ? rht_cns : 1);

	pr_info("n=%u op=%s cuckoo_ns=%llu.%02llu rht_ns=%llu.%02llu ratio=%llu.%03llu\n",
		c->n, op, cuckoo_cns / 100, cuckoo_cns % 100,
		rht_cns / 100, rht_cns % 100, ratio / 1000, ratio % 1000);
}

/* ---- inserts ---- */

static int bench_cuckoo_fill(struct bench_ctx *c, bool presize, u64 *ns)
{
	struct cnf_key key = { .family = CNF_V4, .len = CNF_V4_BITS };
	u32 i, end;
	u64 t0;
	int err = 0;

	c->f = cnf_filter_create(256, 1ULL << 30);
	if (!c->f)
		return -ENOMEM;
	if (presize) {
		cnf_filter_lock(c->f);
		err = cnf_filter_reserve(c->f, CNF_V4, c->n);
		cnf_filter_unlock(c->f);
		if (err)
			return err;
	}
	*ns = 0;
	for (i = 0; i < c->n && !err; i = end) {
		end = min(c->n, i + BENCH_BATCH);
		cnf_filter_lock(c->f);
		t0 = ktime_get_ns();
		for (; i < end && !err; i++) {
			key.v4 = (__force __be32)c->objs[i].key;
			err = cnf_filter_add(c->f, &key);
		}
		*ns += ktime_get_ns() - t0;
		cnf_filter_unlock(c->f);
		cond_resched();
	}
	if (err)
		pr_err("n=%u: cuckoo insert %u failed: %d\n", c->n, i - 1, err);
	return err;
}

static int bench_rht_fill(struct bench_ctx *c, bool presize, u64 *ns)
{
	struct rhashtable_params params = bench_params;
	u32 i, end;
	u64 t0;
	int err;

	if (presize)
		params.nelem_hint = c->n;
	err = rhashtable_init(&c->ht, &params);
	if (err)
		return err;
	c->ht_live = true;
	*ns = 0;
	for (i = 0; i < c->n; i = end) {
		end = min(c->n, i + BENCH_BATCH);
		t0 = ktime_get_ns();
		for (; i < end; i++) {
			/* -EBUSY: a resize is due first; let it run. */
			do {
				err = rhashtable_insert_fast(&c->ht,
							     &c->objs[i].node,
							     bench_params);
				if (err == -EBUSY)
					cond_resched();
			} while (err == -EBUSY);
			if (err) {
				pr_err("n=%u: rhashtable insert %u failed: %d\n",
				       c->n, i, err);
				return err;
			}
		}
		*ns += ktime_get_ns() - t0;
		cond_resched();
	}
	return 0;
}

static void bench_teardown(struct bench_ctx *c)
{
	if (c->f) {
		cnf_filter_destroy(c->f);
		c->f = NULL;
	}
	if (c->ht_live) {
		rhashtable_destroy(&c->ht);
		c->ht_live = false;
	}
}

/*
 * Both structures filled, presized or not, @n times (medians reported); they
 * stay filled from the last run.
 */
static int bench_fill(struct bench_ctx *c, bool presize, unsigned int n)
{
	u64 cns[BENCH_MAX_RUNS], rns[BENCH_MAX_RUNS];
	unsigned int r;
	int err = 0;

	for (r = 0; r < n && !err; r++) {
		bench_teardown(c);
		err = bench_cuckoo_fill(c, presize, &cns[r]);
		if (!err)
			err = bench_rht_fill(c, presize, &rns[r]);
	}
	if (!err && c->report)
		bench_report(c, presize ? "ins-pre" : "ins",
			     bench_cns(bench_median(cns, n), c->n),
			     bench_cns(bench_median(rns, n), c->n));
	return err;
}

/* ---- lookups ---- */

static u64 bench_cuckoo_lookups(const struct bench_ctx *c, const u32 *keys,
				u64 *found)
{
	u64 t0, ns = 0;
	u32 i, end;

	for (i = 0; i < ops; i = end) {
		end = min(ops, i + BENCH_BATCH);
		local_bh_disable();
		rcu_read_lock();
		t0 = ktime_get_ns();
		for (; i < end; i++)
			*found += cnf_filter_lookup4(c->f,
						     (__force __be32)keys[i]);
		ns += ktime_get_ns() - t0;
		rcu_read_unlock();
		local_bh_enable();
		cond_resched();
	}
	return ns;
}

static u64 bench_rht_lookups(struct bench_ctx *c, const u32 *keys, u64 *found)
{
	u64 t0, ns = 0;
	u32 i, end;

	for (i = 0; i < ops; i = end) {
		end = min(ops, i + BENCH_BATCH);
		local_bh_disable();
		rcu_read_lock();
		t0 = ktime_get_ns();
		for (; i < end; i++)
			*found += !!rhashtable_lookup(&c->ht, &keys[i],
						      bench_params);
		ns += ktime_get_ns() - t0;
		rcu_read_unlock();
		local_bh_enable();
		cond_resched();
	}
	return ns;
}

/* Hits and misses, @runs times each, interleaved; medians reported. */
static int bench_lookups(struct bench_ctx *c)
{
	u64 ch[BENCH_MAX_RUNS], cm[BENCH_MAX_RUNS];
	u64 rh[BENCH_MAX_RUNS], rm[BENCH_MAX_RUNS];
	u64 found[4] = { 0 };
	unsigned int r;

	for (r = 0; r < runs; r++) {
		ch[r] = bench_cuckoo_lookups(c, c->hit, &found[0]);
		rh[r] = bench_rht_lookups(c, c->hit, &found[1]);
		cm[r] = bench_cuckoo_lookups(c, c->miss, &found[2]);
		rm[r] = bench_rht_lookups(c, c->miss, &found[3]);
	}
	if (found[0] != (u64)ops * runs || found[1] != (u64)ops * runs ||
	    found[2] || found[3]) {
		pr_err("n=%u: wrong lookup results: cuckoo %llu/%llu rhashtable %llu/%llu (hits/misses found)\n",
		       c->n, found[0], found[2], found[1], found[3]);
		return -EINVAL;
	}
	if (!c->report)
		return 0;
	bench_report(c, "hit", bench_cns(bench_median(ch, runs), ops),
		     bench_cns(bench_median(rh, runs), ops));
	bench_report(c, "miss", bench_cns(bench_median(cm, runs), ops),
		     bench_cns(bench_median(rm, runs), ops));
	return 0;
}

/* Table memory: the filter's own count; rhashtable buckets plus objects. */
static void bench_memory(struct bench_ctx *c)
{
	struct cnf_filter_stats st;
	u64 rbytes;

	cnf_filter_lock(c->f);
	cnf_filter_stats(c->f, &st);
	cnf_filter_unlock(c->f);
	rcu_read_lock();
	rbytes = (u64)rcu_dereference(c->ht.tbl)->size *
		 sizeof(struct rhash_lock_head *);
	rcu_read_unlock();
	rbytes += (u64)c->n * sizeof(struct bench_obj);
	pr_info("n=%u mem cuckoo_bytes=%llu rht_bytes=%llu\n", c->n,
		st.fam[CNF_V4].bytes, rbytes);
}

static int bench_size(unsigned int log, bool report)
{
	struct bench_ctx c = { .log = log, .n = 1U << log, .report = report };
	unsigned int fills = log <= 20 ? runs : 1;
	u32 i;
	int err = -ENOMEM;

	c.seed = get_random_u32();
	c.objs = vzalloc(array_size(c.n, sizeof(*c.objs)));
	c.hit = vmalloc(array_size(ops, sizeof(u32)));
	c.miss = vmalloc(array_size(ops, sizeof(u32)));
	if (!c.objs || !c.hit || !c.miss)
		goto out;
	for (i = 0; i < c.n; i++)
		c.objs[i].key = bench_key(&c, i);
	for (i = 0; i < ops; i++) {
		c.hit[i] = c.objs[bench_scatter(&c, i)].key;
		/* Keys n..2n-1 are never inserted. */
		c.miss[i] = bench_key(&c, c.n + bench_scatter(&c, i));
	}
	cond_resched();

	err = bench_fill(&c, true, fills);
	if (!err)
		err = bench_fill(&c, false, fills);
	if (!err)
		err = bench_lookups(&c);
	if (!err && report)
		bench_memory(&c);
out:
	bench_teardown(&c);
	vfree(c.miss);
	vfree(c.hit);
	vfree(c.objs);
	return err;
}

/* 1K, 64K, 1M, 16M entries: as many of them as max_log allows. */
static const unsigned int bench_logs[] = { 10, 16, 20, 24 };

static int __init cnf_bench_init(void)
{
	unsigned int i;
	int err;

	if (max_log < BENCH_MIN_LOG || max_log > BENCH_MAX_LOG || !ops ||
	    !runs || runs > BENCH_MAX_RUNS) {
		pr_err("max_log must be %u..%u, ops > 0, runs 1..%u\n",
		       BENCH_MIN_LOG, BENCH_MAX_LOG, BENCH_MAX_RUNS);
		return -EINVAL;
	}
	pr_info("start: sizes 2^%u..2^%u, %u lookups x %u runs\n",
		BENCH_MIN_LOG, max_log, ops, runs);
	err = bench_size(BENCH_MIN_LOG, false);	/* warm-up */
	for (i = 0; i < ARRAY_SIZE(bench_logs) && !err; i++)
		if (bench_logs[i] <= max_log)
			err = bench_size(bench_logs[i], true);
	if (err) {
		pr_err("failed: %d\n", err);
		return err;
	}
	pr_info("done\n");
	return 0;
}

static void __exit cnf_bench_exit(void)
{
}

module_init(cnf_bench_init);
module_exit(cnf_bench_exit);

MODULE_DESCRIPTION("cuckoo_nf filter core vs rhashtable: lookup and insert timing");
MODULE_LICENSE("GPL");
