// SPDX-License-Identifier: GPL-2.0
/*
 * Readers interleaved with every writer operation of the filter core, at
 * the granularity of single marked stores.
 *
 * The core is built with CNF_USER_INSTRUMENT (see compat_user.h): every
 * READ_ONCE, WRITE_ONCE, seqcount access and RCU pointer access goes
 * through hooks.  A writer operation runs once with its stores logged
 * (address, old and new value); the log then moves memory to the state
 * after any number of stores, forwards or backwards.  For each key that
 * the operation can affect, readers run:
 *
 *  - at every state (a reader between two stores), and
 *  - split: the loads before load j see state a, the loads from j on see
 *    a later state b, for every a < b and every j (a reader overtaken by
 *    the writer in the middle of its lookup).
 *
 * A reader that finds a write section open where it would wait for it
 * (read_seqcount_begin()) gives no answer: it would wait, then start again
 * at a later state, which is another case.  Every answer it gives must be
 * right: a key present before and after the operation is found, and a key
 * absent before and after is not.  Keys whose membership the operation
 * changes may go either way.
 *
 * The keys asked are the keys present before or after, the keys that walk()
 * decodes from the table at every state, and, where a slot takes more than
 * one store (IPv6: four words, or two in the tiers of 33 to 64 bits), the
 * keys decoded with one stored word rolled back: the torn slots a reader
 * could see.  States that differ only in memory the
 * reader does not load are the same to it, and are tried once.
 *
 * Prefix changes (adds and deletes that expand into many keys, over and
 * under overlapping prefixes; deletes that shrink a table, refresh a
 * summary or drop a table; adds that remake the directory; adds that fail
 * at the memory limit, at every step they can, also of a set and its
 * kind's union together) are checked the same way, with addresses: one
 * covered before and after is matched by a reader at every state and by
 * every split reader (a sample, where there are very many), one covered
 * neither before nor after by none.
 *
 * Memory the operation frees is kept until its states are done, and where
 * it went is checked: no reader may load what was freed at once, nor what
 * call_rcu() retired before the reader started (its pointer must have
 * been dropped by then, in a store the reader sees).
 *
 * Tables of 2-byte slots (and the 6-byte ones of /64 tiers) start at 2^18
 * buckets: their operations that publish a whole new table (growth,
 * reserve, flush) are left to smaller tables, which publish the same way.
 */
#include <setjmp.h>

#include "cnf_test.h"
#include "core.h"
#include "v6dir.h"
#include "cnf_harness.h"

#define NO_LIMIT	(1ULL << 40)
#define SEED_CORE	0x1eaf0001ULL
#define SEED_KEYS	0x1eaf0002ULL

/* ---- the store log ---- */

struct store {
	void *addr;
	u64 old, new;
	u8 size;
	bool seq;
};

static struct {
	struct store *s;
	size_t n, cap;
	size_t state;		/* memory holds the state after this many */
	bool recording;
} lg;

static void log_store(void *addr, size_t size, const void *val, bool seq)
{
	struct store *st;

	if (lg.recording) {
		if (lg.n == lg.cap) {
			lg.cap = lg.cap ? 2 * lg.cap : 1024;
			lg.s = realloc(lg.s, lg.cap * sizeof(*lg.s));
			if (!lg.s)
				abort();
		}
		st = &lg.s[lg.n++];
		st->addr = addr;
		st->size = size;
		st->seq = seq;
		st->old = 0;
		st->new = 0;
		memcpy(&st->old, addr, size);
		memcpy(&st->new, val, size);
		lg.state = lg.n;
	}
	memcpy(addr, val, size);
}

static void goto_state(size_t t)
{
	while (lg.state < t) {
		const struct store *st = &lg.s[lg.state++];

		memcpy(st->addr, &st->new, st->size);
	}
	while (lg.state > t) {
		const struct store *st = &lg.s[--lg.state];

		memcpy(st->addr, &st->old, st->size);
	}
}

/*
 * Memory freed during an operation stays until its states are done.  Where
 * it went is kept too, with the number of stores made before it went: a
 * reader that starts at a state from then on must not load from it (what
 * call_rcu() retires: unpublished before, by a store the reader sees), and
 * no reader at any state may load from what cnf_free() freed at once.
 * The callbacks of call_rcu() run when the operation ends, their frees
 * deferred and counted as retired at the call's place.
 */
struct gone {
	const char *a;
	size_t size;
	size_t at;		/* stores made before it went */
	bool rcu;
};

static struct {
	void **p;
	struct rcu_head **head;
	void (**fn)(struct rcu_head *head);
	size_t *at;
	size_t n, nrcu;
	struct gone *gone;
	size_t ngone;
	long retiring;		/* the call_rcu() whose callback runs, or -1 */
} later = { .retiring = -1 };

static void *grow_array(void *a, size_t n, size_t size)
{
	a = realloc(a, (n + 1) * size);
	if (!a)
		abort();
	return a;
}

static void defer_free(void *p)
{
	struct gone *g;

	if (!p)
		return;
	later.p = grow_array(later.p, later.n, sizeof(*later.p));
	later.p[later.n++] = p;
	later.gone = grow_array(later.gone, later.ngone, sizeof(*later.gone));
	g = &later.gone[later.ngone++];
	g->a = p;
	/* cnf_zalloc() keeps the size in the line before. */
	g->size = *(const size_t *)((const char *)p - 64);
	g->rcu = later.retiring >= 0;
	g->at = g->rcu ? later.at[later.retiring] : lg.n;
}

static void defer_retire(struct rcu_head *head,
			 void (*fn)(struct rcu_head *head))
{
	later.head = grow_array(later.head, later.nrcu, sizeof(*later.head));
	later.fn = grow_array(later.fn, later.nrcu, sizeof(*later.fn));
	later.at = grow_array(later.at, later.nrcu, sizeof(*later.at));
	later.head[later.nrcu] = head;
	later.at[later.nrcu] = lg.n;
	later.fn[later.nrcu++] = fn;
}

/* The grace periods of the operation end: what they free is known. */
static void retire_run(void)
{
	for (later.retiring = 0; (size_t)later.retiring < later.nrcu;
	     later.retiring++)
		later.fn[later.retiring](later.head[later.retiring]);
	later.retiring = -1;
	later.nrcu = 0;
}

/* May a reader that started at state @start load [@a, @a + @size)? */
static bool gone_reached(const char *a, size_t size, size_t start)
{
	size_t i;

	for (i = 0; i < later.ngone; i++) {
		const struct gone *g = &later.gone[i];

		if (a < g->a + g->size && g->a < a + size &&
		    (!g->rcu || start >= g->at))
			return true;
	}
	return false;
}

/* Was memory retired with @t stores made? */
static bool retired_at(size_t t)
{
	size_t i;

	for (i = 0; i < later.ngone; i++)
		if (later.gone[i].rcu && later.gone[i].at == t)
			return true;
	return false;
}

/* At the operation's last state only: memory then is as it really is. */
static void release_later(void)
{
	size_t i;

	if (lg.state != lg.n)
		abort();
	retire_run();
	cnf_user_hooks.free = NULL;
	cnf_user_hooks.retire = NULL;
	for (i = 0; i < later.n; i++)
		cnf_user_free_now(later.p[i]);
	later.n = 0;
	later.ngone = 0;
}

/* ---- readers ---- */

enum answer { MISS, HIT, WAITS };

/* Addresses one reader loaded: a small set. */
#define MAX_LOADS	256
struct loadset {
	const char *a[MAX_LOADS];
	u8 size[MAX_LOADS];
	unsigned int n;
};

static struct {
	jmp_buf wait;
	size_t start;		/* the state it started at */
	bool freed;		/* it loaded memory gone before it started */
	unsigned int loads;
	int split_at;		/* load index that first sees state @split_to */
	size_t split_to;
	struct loadset *record;
} rd;

static void reader_load(const void *addr, size_t size)
{
	struct loadset *ls = rd.record;
	unsigned int i;

	if ((int)rd.loads++ == rd.split_at)
		goto_state(rd.split_to);
	if (gone_reached(addr, size, rd.start))
		rd.freed = true;
	if (!ls)
		return;
	for (i = 0; i < ls->n; i++)
		if (ls->a[i] == addr && ls->size[i] == size)
			return;
	if (ls->n == MAX_LOADS)
		abort();
	ls->size[ls->n] = size;
	ls->a[ls->n++] = addr;
}

static void reader_waits(void)
{
	longjmp(rd.wait, 1);
}

/* The readers the packet path and the device use. */
enum reader { ONE_BY_ONE, BATCHED, NREADERS };

static enum answer ask(const struct cnf_filter *f, const struct cnf_key *k,
		       enum reader how, int split_at, size_t split_to,
		       struct loadset *record)
{
	volatile enum answer ans = WAITS;
	bool hit;

	rd.loads = 0;
	rd.start = lg.state;
	rd.freed = false;
	rd.split_at = split_at;
	rd.split_to = split_to;
	rd.record = record;
	cnf_user_hooks.load = reader_load;
	cnf_user_hooks.seq_wait = reader_waits;
	if (!setjmp(rd.wait)) {
		if (how == BATCHED)
			cnf_filter_lookup4_batch(f, &k->v4, 1, &hit);
		else
			hit = cnf_filter_contains(f, k);
		ans = hit ? HIT : MISS;
	}
	cnf_user_hooks.load = NULL;
	cnf_user_hooks.seq_wait = NULL;
	rd.record = NULL;
	rd.split_at = -1;
	return ans;
}

/* ---- key sets ---- */

struct keys {
	struct cnf_model m;
};

static int keys_add(void *ctx, const struct cnf_key *k)
{
	struct keys *ks = ctx;
	struct cnf_key c = *k;

	/* walk() leaves the words an IPv4 key does not use as they were. */
	if (c.family == CNF_V4)
		c = cnf_key4(ntohl(k->v4));
	cnf_model_add(&ks->m, &c);
	return 0;
}

static void keys_walk(struct cnf_filter *f, struct keys *ks)
{
	cnf_filter_walk(f, keys_add, ks);
}

/* ---- one operation ---- */

enum op_kind { OP_ADD, OP_DEL, OP_FLUSH, OP_RESERVE, OP_BATCH_END };

struct op {
	const char *name;
	enum op_kind kind;
	struct cnf_key key;	/* OP_ADD, OP_DEL; the family for the others */
	int want;		/* what it must return */
};

struct tally {
	u64 cases;		/* reader runs whose answer was checked */
	u64 answers[3];
	u64 open_hits;		/* hits given while a write section was open */
	u64 wrong;
	u64 cold;		/* keys no store of the operation can reach */
	u64 unsampled;		/* split readers left out (ctx's split_cap) */
};

static bool seq_open(void)
{
	u64 odd = 0;
	size_t i;

	/* Counts change one by one: an odd number of steps so far is open. */
	for (i = 0; i < lg.state; i++)
		odd += lg.s[i].seq;
	return odd & 1;
}

struct ctx {
	struct __test_metadata *md;
	struct cnf_filter *f;
	const struct op *op;
	const struct cnf_model *before;	/* the keys before the operation */
	/*
	 * Split readers per key, about, when there would be more: a sample,
	 * the same every run; 0, all of them.
	 */
	u64 split_cap;
	struct tally t;
};

static bool in_before(const struct ctx *c, const struct cnf_key *k)
{
	return cnf_model_has(c->before, k);
}

/* The keys after it, as the operation's contract says. */
static bool in_after(const struct ctx *c, const struct cnf_key *k)
{
	const struct op *op = c->op;

	switch (op->kind) {
	case OP_ADD:
		return cnf_key_same(k, &op->key) || in_before(c, k);
	case OP_DEL:
		return !cnf_key_same(k, &op->key) && in_before(c, k);
	case OP_FLUSH:
		return false;
	case OP_RESERVE:
	case OP_BATCH_END:
		break;
	}
	return in_before(c, k);
}

static int op_run(struct cnf_filter *f, const struct op *op)
{
	switch (op->kind) {
	case OP_ADD:
		return cnf_filter_add(f, &op->key);
	case OP_DEL:
		return cnf_filter_del(f, &op->key);
	case OP_FLUSH:
		return cnf_filter_flush(f);
	case OP_BATCH_END:
		cnf_filter_expect(f, 0);
		return 0;
	case OP_RESERVE:
		break;
	}
	return cnf_filter_reserve(f, op->key.family,
				  2 * cnf_filter_count(f, op->key.family) + 64);
}

/* The model follows the operation. */
static void op_apply(struct cnf_model *m, const struct op *op)
{
	if (op->want)
		return;
	if (op->kind == OP_ADD)
		cnf_model_add(m, &op->key);
	else if (op->kind == OP_DEL)
		cnf_model_del(m, &op->key);
	else if (op->kind == OP_FLUSH)
		cnf_model_clear(m);
}

static void report(struct ctx *c, const struct cnf_key *k, enum reader how,
		   bool present, enum answer ans, size_t a, int j, size_t b)
{
	char buf[INET6_ADDRSTRLEN];

	c->t.wrong++;
	if (c->t.wrong > 5)
		return;
	fprintf(stderr,
		"# %s: %s %s answered %s (present before and after: %d)%s, reader at state %zu of %zu%s",
		c->op->name, how == BATCHED ? "batched" : "one-by-one",
		cnf_key_str(k, buf, sizeof(buf)),
		ans == HIT ? "hit" : ans == MISS ? "miss" : "nothing", present,
		rd.freed ? " after loading memory gone before it started" : "",
		a, lg.n, j < 0 ? "\n" : "");
	if (j >= 0)
		fprintf(stderr, ", state %zu from its load %d on\n", b, j);
}

static void check(struct ctx *c, const struct cnf_key *k, enum reader how,
		  bool present, size_t a, int j, size_t b)
{
	enum answer ans;
	bool open;

	goto_state(a);
	open = j < 0 && seq_open();
	ans = ask(c->f, k, how, j, b, NULL);
	c->t.cases++;
	c->t.answers[ans]++;
	if (ans == HIT && open)
		c->t.open_hits++;
	if ((ans != WAITS && (ans == HIT) != present) || rd.freed)
		report(c, k, how, present, ans, a, j, b);
}

/* Does one of the loads of @ls read what store @st changes? */
static bool loads_addr(const struct loadset *ls, const struct store *st)
{
	const char *addr = st->addr;
	unsigned int i;

	for (i = 0; i < ls->n; i++)
		if (ls->a[i] < addr + st->size && addr < ls->a[i] + ls->size[i])
			return true;
	return false;
}

/*
 * Every state and every split reader for one key.  States that differ from
 * the one before only in memory the reader loads at neither are the same
 * to it: only states after a store it can see are tried.
 */
/* splitmix64's finaliser: which split readers a sample takes. */
static u64 sample_hash(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void check_key(struct ctx *c, const struct cnf_key *k, enum reader how,
		      bool present)
{
	size_t n = lg.n, i, a, b, nr = 0;
	struct loadset ls = { .n = 0 };
	u64 stride, split = 0;
	size_t *r;

	r = calloc(n + 1, sizeof(*r));
	if (!r)
		abort();
	/*
	 * A reader loads the same addresses as long as what it loads holds
	 * the same values: its loads are looked at again only after a store
	 * to one of them.  A state at which memory was retired is another to
	 * it too: one starting there must not reach that memory.
	 */
	goto_state(0);
	ask(c->f, k, how, -1, 0, &ls);
	r[nr++] = 0;
	for (i = 0; i < n; i++) {
		if (!loads_addr(&ls, &lg.s[i]) && !retired_at(i + 1))
			continue;
		r[nr++] = i + 1;
		goto_state(i + 1);
		ls.n = 0;
		ask(c->f, k, how, -1, 0, &ls);
	}
	stride = nr * (nr - 1) / 2 * (rd.loads ? rd.loads : 1);
	stride = c->split_cap && stride > c->split_cap ?
		 (stride + c->split_cap - 1) / c->split_cap : 1;
	for (a = 0; a < nr; a++) {
		unsigned int loads;

		check(c, k, how, present, r[a], -1, 0);
		loads = rd.loads;
		for (b = a + 1; b < nr; b++) {
			unsigned int j;

			for (j = 1; j < loads; j++) {
				if (stride > 1 && sample_hash(++split) % stride) {
					c->t.unsampled++;
					continue;
				}
				check(c, k, how, present, r[a], j, r[b]);
			}
		}
	}
	free(r);
}

/*
 * Keys that no store of the operation can reach, at its start and its end,
 * answer alike at every state: they are asked once, at the start.
 */
static bool reachable(struct ctx *c, const struct cnf_key *k, enum reader how)
{
	struct loadset ls = { .n = 0 };
	size_t i;

	goto_state(0);
	ask(c->f, k, how, -1, 0, &ls);
	goto_state(lg.n);
	ask(c->f, k, how, -1, 0, &ls);
	for (i = 0; i < lg.n; i++)
		if (!lg.s[i].seq && loads_addr(&ls, &lg.s[i]))
			return true;
	return false;
}

/* What the operation changed, but seqcounts: sorted, for the hot walk. */
static struct store *changed;
static size_t nchanged;

static int store_cmp(const void *a, const void *b)
{
	const char *x = ((const struct store *)a)->addr;
	const char *y = ((const struct store *)b)->addr;

	return x < y ? -1 : x > y;
}

static void changed_build(void)
{
	size_t i;

	free(changed);
	changed = calloc(lg.n + 1, sizeof(*changed));
	nchanged = 0;
	for (i = 0; i < lg.n; i++)
		if (!lg.s[i].seq)
			changed[nchanged++] = lg.s[i];
	qsort(changed, nchanged, sizeof(*changed), store_cmp);
}

/* Does a store of the operation overlap [@a, @a + @size)? */
static bool changed_overlaps(const char *a, size_t size)
{
	size_t lo = 0, hi = nchanged;

	/* First store at or above a - 8: stores are at most 8 bytes. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if ((const char *)changed[mid].addr + 8 <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nchanged && (const char *)changed[lo].addr < a + size; lo++)
		if (a < (const char *)changed[lo].addr + changed[lo].size)
			return true;
	return false;
}

/*
 * A key present before and after is found by its own slot (or stash
 * entry), whatever happens to the other slots of its buckets: only keys
 * whose own words the operation stores to (or all, when it replaces the
 * table) can be answered wrongly, and only keys made of words it stores can
 * be found wrongly.  walk() reads a key's words just before it calls back
 * with it; the last four loads cover them.
 */
#define HOT_LOADS	4
struct hot_walk {
	struct keys *hot;
	const char *a[HOT_LOADS];
	u8 size[HOT_LOADS];
	unsigned int n;
};

static struct hot_walk *hw;

static void hot_load(const void *addr, size_t size)
{
	hw->a[hw->n % HOT_LOADS] = addr;
	hw->size[hw->n % HOT_LOADS] = size;
	hw->n++;
}

static int hot_one(void *ctx, const struct cnf_key *k)
{
	unsigned int i;

	for (i = 0; i < HOT_LOADS && i < hw->n; i++)
		if (changed_overlaps(hw->a[i], hw->size[i])) {
			keys_add(hw->hot, k);
			break;
		}
	hw->n = 0;
	return 0;
}

static void hot_keys(struct cnf_filter *f, struct keys *hot)
{
	struct hot_walk w = { .hot = hot };

	hw = &w;
	cnf_user_hooks.load = hot_load;
	cnf_filter_walk(f, hot_one, NULL);
	cnf_user_hooks.load = NULL;
}

/*
 * The keys in the slots the operation stores to, at every state, and in
 * torn slots for IPv6 (one word rolled back): what a reader could find.
 */
static void collect_touched(struct ctx *c, struct keys *ks)
{
	size_t t, i;

	for (t = 0; t <= lg.n; t++) {
		/* A seqcount's store changes no key. */
		if (t && lg.s[t - 1].seq)
			continue;
		goto_state(t);
		hot_keys(c->f, ks);
		if (c->op->key.family != CNF_V6)
			continue;
		for (i = 0; i < t; i++) {
			const struct store *s = &lg.s[i];
			u64 now = 0;

			if (s->seq)
				continue;
			memcpy(&now, s->addr, s->size);
			memcpy(s->addr, &s->old, s->size);
			hot_keys(c->f, ks);
			memcpy(s->addr, &now, s->size);
		}
	}
}

/* What an operation did, from its log. */
struct shape {
	size_t slot_stores;	/* marked stores but seqcounts', pointers' */
	size_t summary_stores;	/* and summary words' (table.h) */
	bool published;		/* replaced a table */
};

/* Is @addr in the summary of a lookup table of @f? */
static bool in_summary(const struct cnf_filter *f, const void *addr)
{
	const struct cnf_table *t;
	unsigned int fam, i;

	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		for (i = 0; i < CNF_TIERS; i++) {
			t = f->tier[fam][i];
			if (t && t->summary &&
			    (const u32 *)addr >= t->summary &&
			    (const u32 *)addr <= t->summary + t->mask)
				return true;
		}
	return false;
}

static struct shape shape_of_log(const struct cnf_filter *f)
{
	struct shape sh = { 0 };
	size_t i;

	for (i = 0; i < lg.n; i++) {
		if (lg.s[i].seq)
			continue;
		if (lg.s[i].size == sizeof(void *))
			sh.published = true;
		else if (in_summary(f, lg.s[i].addr))
			sh.summary_stores++;
		else
			sh.slot_stores++;
	}
	return sh;
}

/*
 * Log the writer's marked stores from here on, its frees deferred, so
 * that goto_state() can put memory back to any point of the change.
 */
static void recording_start(void)
{
	lg.n = 0;
	lg.state = 0;
	lg.recording = true;
	cnf_user_hooks.store = log_store;
	cnf_user_hooks.free = defer_free;
	cnf_user_hooks.retire = defer_retire;
}

static void recording_stop(void)
{
	cnf_user_hooks.store = NULL;
	lg.recording = false;
	retire_run();
}

static struct shape run_op(struct __test_metadata *_metadata,
			   struct cnf_filter *f, const struct op *op,
			   struct cnf_model *m, struct tally *total)
{
	struct ctx c = { .md = _metadata, .f = f, .op = op, .before = m };
	struct keys asked;
	enum reader how;
	struct shape sh;
	u64 i;
	int err;

	cnf_model_init(&asked.m, 4);
	recording_start();
	cnf_filter_lock(f);
	err = op_run(f, op);
	cnf_filter_unlock(f);
	recording_stop();
	EXPECT_EQ(op->want, err);

	changed_build();
	sh = shape_of_log(f);
	collect_touched(&c, &asked);
	if (sh.published)
		keys_walk(f, &asked);	/* every key reads the new pointer */
	keys_add(&asked, &op->key);
	c.t.cold = cnf_model_size(m);
	for (i = 0; i < cnf_model_size(&asked.m); i++) {
		const struct cnf_key *k = &asked.m.keys[i];
		bool present = in_before(&c, k);

		if (k->family != op->key.family || present != in_after(&c, k))
			continue;
		c.t.cold -= present;
		for (how = 0; how < NREADERS; how++) {
			if (how == BATCHED && k->family != CNF_V4)
				continue;
			if (reachable(&c, k, how))
				check_key(&c, k, how, present);
			else
				check(&c, k, how, present, 0, -1, 0);
		}
	}
	goto_state(lg.n);
	release_later();
	TH_LOG("%s: %zu stores, %llu keys asked (%llu others out of its reach), %llu reader runs: %llu hits (%llu inside a write section), %llu misses, %llu waited",
	       op->name, lg.n, (unsigned long long)cnf_model_size(&asked.m),
	       (unsigned long long)c.t.cold,
	       (unsigned long long)c.t.cases,
	       (unsigned long long)c.t.answers[HIT],
	       (unsigned long long)c.t.open_hits,
	       (unsigned long long)c.t.answers[MISS],
	       (unsigned long long)c.t.answers[WAITS]);
	total->cases += c.t.cases;
	total->open_hits += c.t.open_hits;
	total->wrong += c.t.wrong;
	cnf_model_free(&asked.m);
	op_apply(m, op);
	for (i = 0; i < CNF_NFAMILIES; i++)
		EXPECT_EQ(m->n[i], cnf_filter_count(f, i));
	EXPECT_EQ(0ULL, c.t.wrong);
	return sh;
}

/*
 * The keys a fixture changes: addresses of a family (its address tier), or
 * /64 prefixes (the /64 tier, a table of CNF_LAYOUT64 slots), of which
 * @min_keys go in first so that the tier's table has grown to the size
 * the test wants (it starts at the smallest).
 */
struct keyset {
	enum cnf_family fam;
	enum cnf_shape shape;	/* CNF_SHAPE_RANDOM or CNF_SHAPE_NET64 */
	u64 min_keys;
};

FIXTURE(interleave) {
	struct cnf_filter *f;
	struct cnf_model m;
	struct cnf_rng r;
	struct tally total;
	u64 other_slots;	/* slots of the tables the keys are not in */
};

/*
 * Seconds per test: the 2-byte fixture looks up about 900,000 keys after
 * every store, some 20 s on a loaded 2-core host; the harness's 30 s
 * default would fail it there for no fault of the code.
 */
#define INTERLEAVE_TIMEOUT	300

FIXTURE_VARIANT(interleave) {
	struct keyset ks;
	u64 initial_capacity;	/* picks the address tiers' slot width */
	const char *width;
	u64 salt;
	/* add_cuckoo_path's paths at the quick size; 0: as many as at full */
	unsigned int quick_paths;
};

/*
 * add_cuckoo_path's paths in the tables of 2^18 buckets and more at the
 * quick size (make check), CUCKOO_PATHS at full size: each state of an
 * add there costs a walk of a million slots, and 40 paths took three
 * quarters of make unit's time.  With the path's moves taken out of
 * their write section, the first wrong reader came at the 4th path of
 * the 2-byte table and the 3rd of the 6-byte one; the smaller tables
 * keep their 40.
 */
#define CUCKOO_PATHS		40
#define CUCKOO_PATHS_BIG_QUICK	10

/* Big enough for cuckoo paths without growth. */
FIXTURE_VARIANT_ADD(interleave, v4_4byte) {
	.ks = { .fam = CNF_V4 }, .initial_capacity = 2000, .width = "4-byte",
	.salt = 1,
};

FIXTURE_VARIANT_ADD(interleave, v4_2byte) {
	.ks = { .fam = CNF_V4 }, .initial_capacity = 1000000,
	.width = "2-byte", .salt = 2, .quick_paths = CUCKOO_PATHS_BIG_QUICK,
};

FIXTURE_VARIANT_ADD(interleave, v6) {
	.ks = { .fam = CNF_V6 }, .initial_capacity = 2000,
	.width = "16-byte", .salt = 3,
};

/* The /64 tier: 2^9 buckets, then 2^18 and more (6-byte slots). */
FIXTURE_VARIANT_ADD(interleave, v6_64_8byte) {
	.ks = { .fam = CNF_V6, .shape = CNF_SHAPE_NET64, .min_keys = 1000 },
	.initial_capacity = 30, .width = "8-byte (/64 tier)", .salt = 9,
};

FIXTURE_VARIANT_ADD(interleave, v6_64_6byte) {
	.ks = { .fam = CNF_V6, .shape = CNF_SHAPE_NET64, .min_keys = 600000 },
	.initial_capacity = 30, .width = "6-byte (/64 tier)", .salt = 7,
	.quick_paths = CUCKOO_PATHS_BIG_QUICK,
};


FIXTURE_SETUP(interleave)
{
	cnf_user_seed_random(SEED_CORE ^ variant->salt);
	self->r.s = SEED_KEYS ^ variant->salt;
	self->f = cnf_filter_create(variant->initial_capacity, NO_LIMIT);
	ASSERT_NE(NULL, self->f);
	cnf_model_init(&self->m, variant->initial_capacity > 100000 ? 22 : 4);
	memset(&self->total, 0, sizeof(self->total));
	self->other_slots = variant->ks.shape == CNF_SHAPE_NET64 ?
			    cnf_t_stats(self->f).fam[CNF_V6].capacity : 0;
	TH_LOG("%s slots, seeds: core %#llx, keys %#llx", variant->width,
	       (unsigned long long)(SEED_CORE ^ variant->salt),
	       (unsigned long long)(SEED_KEYS ^ variant->salt));
}

FIXTURE_TEARDOWN(interleave)
{
	TH_LOG("%llu reader runs checked, %llu wrong",
	       (unsigned long long)self->total.cases,
	       (unsigned long long)self->total.wrong);
	/*
	 * docs/benchmarks.md's reliability table (summed over the tests by the report):
	 * a wrong answer is a key present before and after the operation
	 * not found, or one absent both times found.
	 */
	fprintf(stderr, "# reliability: interleavings_checked=%llu lost=%llu\n",
		(unsigned long long)self->total.cases,
		(unsigned long long)self->total.wrong);
	cnf_filter_destroy(self->f);
	cnf_model_free(&self->m);
}

static struct cnf_key fresh_key(struct cnf_rng *r, const struct cnf_model *m,
				const struct keyset *ks)
{
	struct cnf_key k;

	do
		k = cnf_pool_key(ks->fam, ks->shape, cnf_rng_next(r), 0);
	while (cnf_model_has(m, &k));
	return k;
}

static struct cnf_table_stats fam_stats(struct cnf_filter *f,
					enum cnf_family fam)
{
	return cnf_t_stats(f).fam[fam];
}

/*
 * Unlogged adds: @ks->min_keys, and up to @pct percent of the slots of the
 * table they are in (its family's, but @other's).
 */
static void fill(struct __test_metadata *_metadata, struct cnf_filter *f,
		 struct cnf_model *m, struct cnf_rng *r,
		 const struct keyset *ks, u64 other, unsigned int pct)
{
	while (m->n[ks->fam] < ks->min_keys ||
	       m->n[ks->fam] < (fam_stats(f, ks->fam).capacity - other) * pct /
			       100) {
		struct cnf_key k = fresh_key(r, m, ks);

		ASSERT_EQ(0, cnf_t_add(f, &k));
		cnf_model_add(m, &k);
	}
}

/*
 * Does the bucket of @k's home or alternate have a free slot?  The keys of
 * these tests are their tier's table keys as they are: addresses, /64s.
 */
static bool has_room(const struct cnf_filter *f, const struct cnf_key *k)
{
	const struct cnf_table *t = f->tier[k->family][k->len];
	unsigned int width = cnf_width(t);
	struct cnf_pos p;

	cnf_locate(t, width, &k->v6, &p);
	return cnf_bucket_free_slot(t, width, p.b[0]) >= 0 ||
	       cnf_bucket_free_slot(t, width, p.b[1]) >= 0;
}

/* Words a slot of the keys takes: more stores than this moved keys. */
static size_t slot_words(const struct keyset *ks)
{
	return ks->fam == CNF_V4 ? 1 : ks->shape == CNF_SHAPE_NET64 ? 2 : 4;
}

TEST_F_TIMEOUT(interleave, add_free_slot, INTERLEAVE_TIMEOUT)
{
	struct op op = { .name = "add into a free slot", .kind = OP_ADD };
	struct shape sh;

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 40);
	do
		op.key = fresh_key(&self->r, &self->m, &variant->ks);
	while (!has_room(self->f, &op.key));
	sh = run_op(_metadata, self->f, &op, &self->m, &self->total);
	ASSERT_EQ(slot_words(&variant->ks), sh.slot_stores);
	/* An IPv6 key's summary bit, set before its slot, unless set already. */
	ASSERT_GE((size_t)(variant->ks.fam == CNF_V6), sh.summary_stores);
}

TEST_F_TIMEOUT(interleave, add_present, INTERLEAVE_TIMEOUT)
{
	struct op op = { .name = "add of a present key", .kind = OP_ADD,
			 .want = -EEXIST };

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 40);
	op.key = self->m.keys[0];
	ASSERT_EQ(0U, run_op(_metadata, self->f, &op, &self->m, &self->total).slot_stores);
}

/*
 * Adds that move keys along a cuckoo path: close to the load limit, adds
 * until CUCKOO_PATHS of them (fewer at the quick size in the big tables)
 * took more stores than one slot's: enough that some move a key from its
 * alternate bucket to its home one, which a reader reads first.
 */
TEST_F_TIMEOUT(interleave, add_cuckoo_path, INTERLEAVE_TIMEOUT)
{
	unsigned int paths = 0, tries, want = CUCKOO_PATHS;

	if (variant->quick_paths)
		want = cnf_scaled(variant->quick_paths, CUCKOO_PATHS);
	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 85);
	for (tries = 0; paths < want && tries < 1000; tries++) {
		struct op op = { .name = "add, maybe along a cuckoo path",
				 .kind = OP_ADD };
		struct shape sh;

		op.key = fresh_key(&self->r, &self->m, &variant->ks);
		sh = run_op(_metadata, self->f, &op, &self->m, &self->total);
		ASSERT_FALSE(sh.published);
		paths += sh.slot_stores > slot_words(&variant->ks);
	}
	ASSERT_EQ(want, paths);
}

TEST_F_TIMEOUT(interleave, del, INTERLEAVE_TIMEOUT)
{
	struct op op = { .name = "delete", .kind = OP_DEL };
	unsigned int i;

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 85);
	for (i = 0; i < 3; i++) {
		op.key = self->m.keys[i * 7];
		run_op(_metadata, self->f, &op, &self->m, &self->total);
	}
	op.name = "delete of an absent key";
	op.want = -ENOENT;
	op.key = fresh_key(&self->r, &self->m, &variant->ks);
	run_op(_metadata, self->f, &op, &self->m, &self->total);
}

/*
 * The stash: with the memory limit at the tables' size, an add that finds
 * no cuckoo path goes to the stash.  Found unlogged (it takes a nearly full
 * table), the stashed key is deleted and added again logged: the buckets
 * are as they were, so it goes to the stash again.  Deletes of keys in the
 * buckets then drain it; a delete of a stashed key empties it.
 */
TEST_F_TIMEOUT(interleave, stash, INTERLEAVE_TIMEOUT)
{
	struct op op = { .name = "add into the stash", .kind = OP_ADD };
	struct cnf_key last;
	unsigned int i;

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 0);
	ASSERT_EQ(0, cnf_t_set_limit(self->f, cnf_t_bytes(self->f)));
	do {
		last = fresh_key(&self->r, &self->m, &variant->ks);
		ASSERT_EQ(0, cnf_t_add(self->f, &last));
		cnf_model_add(&self->m, &last);
	} while (!fam_stats(self->f, variant->ks.fam).stashed);
	ASSERT_EQ(0, cnf_t_del(self->f, &last));
	cnf_model_del(&self->m, &last);
	op.key = last;
	run_op(_metadata, self->f, &op, &self->m, &self->total);
	ASSERT_EQ(1ULL, fam_stats(self->f, variant->ks.fam).stashed);
	for (i = 0; i < 2; i++) {
		op.key = fresh_key(&self->r, &self->m, &variant->ks);
		run_op(_metadata, self->f, &op, &self->m, &self->total);
	}

	op.kind = OP_DEL;
	op.name = "delete of a stashed key";
	op.key = last;
	run_op(_metadata, self->f, &op, &self->m, &self->total);

	op.name = "delete that drains the stash";
	for (i = 0; i < 20 && fam_stats(self->f, variant->ks.fam).stashed; i++) {
		op.key = self->m.keys[i * 3];
		run_op(_metadata, self->f, &op, &self->m, &self->total);
	}
	ASSERT_EQ(0ULL, fam_stats(self->f, variant->ks.fam).stashed);
}

/*
 * Operations that publish a new table: growth, reserve, flush, a shrink
 * after a delete or at the end of a batch.  On small
 * tables, so that every key can be asked: tables of 2- and 6-byte slots
 * start at 2^18 buckets, and publish as the 4- and 8-byte ones do.
 */
FIXTURE(publish) {
	struct cnf_filter *f;
	struct cnf_model m;
	struct cnf_rng r;
	struct tally total;
	u64 other_slots;
};

FIXTURE_VARIANT(publish) {
	struct keyset ks;
	u64 salt;
};

FIXTURE_VARIANT_ADD(publish, v4) {
	.ks = { .fam = CNF_V4 }, .salt = 4,
};

FIXTURE_VARIANT_ADD(publish, v6) {
	.ks = { .fam = CNF_V6 }, .salt = 5,
};

/* The /64 tier's table, from its first key on. */
FIXTURE_VARIANT_ADD(publish, v6_64) {
	.ks = { .fam = CNF_V6, .shape = CNF_SHAPE_NET64, .min_keys = 1 },
	.salt = 8,
};

FIXTURE_SETUP(publish)
{
	cnf_user_seed_random(SEED_CORE ^ variant->salt);
	self->r.s = SEED_KEYS ^ variant->salt;
	self->f = cnf_filter_create(30, NO_LIMIT);
	ASSERT_NE(NULL, self->f);
	cnf_model_init(&self->m, 4);
	memset(&self->total, 0, sizeof(self->total));
	self->other_slots = variant->ks.shape == CNF_SHAPE_NET64 ?
			    cnf_t_stats(self->f).fam[CNF_V6].capacity : 0;
	TH_LOG("seeds: core %#llx, keys %#llx",
	       (unsigned long long)(SEED_CORE ^ variant->salt),
	       (unsigned long long)(SEED_KEYS ^ variant->salt));
}

FIXTURE_TEARDOWN(publish)
{
	TH_LOG("%llu reader runs checked, %llu wrong",
	       (unsigned long long)self->total.cases,
	       (unsigned long long)self->total.wrong);
	/*
	 * docs/benchmarks.md's reliability table (summed over the tests by the report):
	 * a wrong answer is a key present before and after the operation
	 * not found, or one absent both times found.
	 */
	fprintf(stderr, "# reliability: interleavings_checked=%llu lost=%llu\n",
		(unsigned long long)self->total.cases,
		(unsigned long long)self->total.wrong);
	cnf_filter_destroy(self->f);
	cnf_model_free(&self->m);
}

TEST_F(publish, growth)
{
	struct op op = { .name = "add", .kind = OP_ADD };
	unsigned int tries;
	struct shape sh;

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 90);
	for (tries = 0; tries < 64; tries++) {
		op.key = fresh_key(&self->r, &self->m, &variant->ks);
		sh = run_op(_metadata, self->f, &op, &self->m, &self->total);
		if (sh.published)
			break;
	}
	ASSERT_TRUE(sh.published);
	ASSERT_EQ(1ULL, fam_stats(self->f, variant->ks.fam).grows);
}

TEST_F(publish, reserve)
{
	struct op op = { .name = "reserve", .kind = OP_RESERVE };

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 50);
	op.key.family = variant->ks.fam;
	ASSERT_TRUE(run_op(_metadata, self->f, &op, &self->m, &self->total).published);
}

/*
 * The key-by-key rebuild of a shrink: a table grown once, emptied by
 * unlogged deletes down to a sixteenth of its slots; the next delete
 * shrinks it.
 */
TEST_F(publish, shrink_after_delete)
{
	struct op op = { .name = "delete that shrinks", .kind = OP_DEL };
	const struct keyset *ks = &variant->ks;
	struct cnf_table_stats st;
	struct shape sh;
	u64 i;

	fill(_metadata, self->f, &self->m, &self->r, ks, self->other_slots,
	     90);
	while (!fam_stats(self->f, ks->fam).grows) {
		struct cnf_key k = fresh_key(&self->r, &self->m, ks);

		ASSERT_EQ(0, cnf_t_add(self->f, &k));
		cnf_model_add(&self->m, &k);
	}
	/* The table of the keys: the family's but the address tier's. */
	st = fam_stats(self->f, ks->fam);
	st.capacity -= self->other_slots;
	for (i = 0; cnf_model_size(&self->m) > st.capacity / 16; i++) {
		struct cnf_key k = self->m.keys[cnf_model_size(&self->m) - 1];

		ASSERT_EQ(0, cnf_t_del(self->f, &k));
		cnf_model_del(&self->m, &k);
	}
	ASSERT_EQ(st.capacity, fam_stats(self->f, ks->fam).capacity -
			       self->other_slots);
	op.key = self->m.keys[0];
	sh = run_op(_metadata, self->f, &op, &self->m, &self->total);
	ASSERT_TRUE(sh.published);
	ASSERT_GT(st.capacity, fam_stats(self->f, ks->fam).capacity -
			       self->other_slots);
}

/*
 * The end of a batch whose tally counted far more keys than came (its
 * copies of keys): the table grew a step ahead of its keys
 * (cnf_tally_step(), once a copy came), unlogged, and the batch's end
 * rebuilds it to fit.
 */
TEST_F(publish, shrink_at_batch_end)
{
	struct op op = { .name = "end of a batch", .kind = OP_BATCH_END };
	const struct keyset *ks = &variant->ks;
	static struct cnf_tally tally;
	struct cnf_filter_stats st;
	struct cnf_key k;
	u64 grows, capacity;

	fill(_metadata, self->f, &self->m, &self->r, ks, self->other_slots,
	     0);
	k = fresh_key(&self->r, &self->m, ks);
	memset(&tally, 0, sizeof(tally));
	tally.keys[ks->fam][k.len] = 1ULL << 20;
	cnf_filter_lock(self->f);
	cnf_filter_stats(self->f, &st);
	grows = st.fam[ks->fam].grows;
	cnf_filter_expect(self->f, 1);
	cnf_filter_expect_tally(self->f, &tally);
	ASSERT_EQ(0, cnf_filter_add(self->f, &k));
	cnf_model_add(&self->m, &k);
	ASSERT_EQ(-EEXIST, cnf_filter_add(self->f, &k));
	while (st.fam[ks->fam].grows == grows) {
		k = fresh_key(&self->r, &self->m, ks);
		ASSERT_EQ(0, cnf_filter_add(self->f, &k));
		cnf_model_add(&self->m, &k);
		cnf_filter_stats(self->f, &st);
	}
	capacity = st.fam[ks->fam].capacity;
	cnf_filter_unlock(self->f);
	TH_LOG("%zu keys, %llu slots after the step", cnf_model_size(&self->m),
	       (unsigned long long)(capacity - self->other_slots));
	op.key.family = ks->fam;
	ASSERT_TRUE(run_op(_metadata, self->f, &op, &self->m, &self->total).published);
	ASSERT_GT(capacity, fam_stats(self->f, ks->fam).capacity);
}

TEST_F(publish, flush)
{
	struct op op = { .name = "flush", .kind = OP_FLUSH };

	fill(_metadata, self->f, &self->m, &self->r, &variant->ks,
	     self->other_slots, 50);
	op.key.family = variant->ks.fam;
	ASSERT_TRUE(run_op(_metadata, self->f, &op, &self->m, &self->total).published);
}

/* ---- prefixes ---- */

/*
 * A change of prefixes, logged: an address that stored prefixes cover
 * before and after it is matched by a reader at every state and by every
 * split reader, an address they cover neither before nor after by none,
 * whether the change stands or fails.  The addresses asked are the first,
 * last and a middle one of every prefix involved, and their neighbours
 * outside.  A change may be of two filters (a set and its kind's union):
 * readers of each are checked.
 */
#define PFX_PROBES	1024
/*
 * Split readers per address and reader, about, sampled where there are
 * more: some changes (a growth, with every key rewritten) have tens of
 * thousands.  The sample is the same every run.
 */
#define PFX_SPLIT_CAP	4000

struct pfx_run {
	const char *name;
	struct cnf_filter *f[3];	/* those asked, and one more */
	unsigned int nf;
	struct cnf_key probe[PFX_PROBES];
	unsigned int n;
	bool before[2][PFX_PROBES];
};

/* Summed over a fixture's changes: docs/benchmarks.md's reliability table. */
static struct tally pfx_total;

static struct cnf_key pfx_parse(const char *s)
{
	char buf[64], *slash;
	struct cnf_key k;
	int len;

	memset(&k, 0, sizeof(k));
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	*slash = 0;
	len = atoi(slash + 1);
	if (inet_pton(AF_INET, buf, &k.v4) == 1)
		k.family = CNF_V4;
	else if (inet_pton(AF_INET6, buf, &k.v6) == 1)
		k.family = CNF_V6;
	else
		abort();
	k.len = len;
	return k;
}

static struct cnf_key pfx4(u32 a, unsigned int len)
{
	struct cnf_key k = { .family = CNF_V4, .len = len };

	k.v4 = htonl(a);
	return k;
}

/* An IPv6 prefix whose first 64 bits are @hi, the rest zero. */
static struct cnf_key pfx6(u64 hi, unsigned int len)
{
	struct cnf_key k = { .family = CNF_V6, .len = len };

	k.v6.s6_addr32[0] = htonl((u32)(hi >> 32));
	k.v6.s6_addr32[1] = htonl((u32)hi);
	return k;
}

/* The first (or, @last, the last) address of @p, plus @off, wrapping. */
static struct cnf_key pfx_addr(const struct cnf_key *p, int off, bool last)
{
	unsigned int host = (p->family == CNF_V4 ? 32 : 128) - p->len, w;
	unsigned __int128 x = 0, ones;
	struct cnf_key a = *p;

	if (p->family == CNF_V4)
		x = ntohl(p->v4);
	else
		for (w = 0; w < 4; w++)
			x = x << 32 | ntohl(p->v6.s6_addr32[w]);
	ones = host >= 128 ? ~(unsigned __int128)0 :
			     ((unsigned __int128)1 << host) - 1;
	x = (last ? x | ones : x) + (__int128)off;
	a.len = p->family == CNF_V4 ? 32 : 128;
	if (p->family == CNF_V4) {
		a.v4 = htonl((u32)x);
		return a;
	}
	for (w = 4; w-- > 0; x >>= 32)
		a.v6.s6_addr32[w] = htonl((u32)x);
	return a;
}

/* The addresses that tell whether @p is matched: six, four for a host. */
static void pfx_probes(struct pfx_run *r, const struct cnf_key *p)
{
	struct cnf_key mid = *p;

	if (r->n + 6 > PFX_PROBES)
		abort();
	r->probe[r->n++] = pfx_addr(p, 0, false);
	r->probe[r->n++] = pfx_addr(p, 0, true);
	r->probe[r->n++] = pfx_addr(p, -1, false);
	r->probe[r->n++] = pfx_addr(p, 1, true);
	if (p->len && p->len < (p->family == CNF_V4 ? 32 : 128)) {
		/* The first address of the prefix's second half. */
		if (p->family == CNF_V4)
			mid.v4 |= htonl(1U << (31 - p->len));
		else
			mid.v6.s6_addr32[p->len / 32] |=
				htonl(1U << (31 - p->len % 32));
		mid.len = p->len + 1;
		r->probe[r->n++] = pfx_addr(&mid, 0, false);
		r->probe[r->n++] = pfx_addr(&mid, -1, false);
	}
}

/* Setup of a filter, unlogged; the prefixes' addresses are asked. */
static void pfx_setup(struct __test_metadata *_metadata, struct pfx_run *r,
		      struct cnf_filter *f, const struct cnf_key *p,
		      unsigned int n)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, cnf_t_add(f, &p[i]))
			TH_LOG("%s: %s/%u", r->name,
			       cnf_key_str(&p[i], buf, sizeof(buf)), p[i].len);
		pfx_probes(r, &p[i]);
	}
}

static void pfx_answers(const struct pfx_run *r, bool ans[][PFX_PROBES])
{
	unsigned int k, i;

	for (k = 0; k < r->nf; k++)
		for (i = 0; i < r->n; i++)
			ans[k][i] = ask(r->f[k], &r->probe[i], ONE_BY_ONE, -1, 0,
					NULL) == HIT;
}

/* The change's stores are logged from here on. */
static void pfx_begin(struct pfx_run *r)
{
	pfx_answers(r, r->before);
	recording_start();
}

/*
 * The change is done, and returned @err: every state of it, and every
 * split reader, for the addresses whose answer it does not change; a
 * failed change must leave every answer as it was.
 */
static void pfx_end(struct __test_metadata *_metadata, struct pfx_run *r,
		    int err, int want)
{
	static bool after[2][PFX_PROBES];
	struct op op = { .name = r->name };
	struct tally t = { 0 };
	unsigned int k, i;
	enum reader how;

	recording_stop();
	EXPECT_EQ(want, err) TH_LOG("%s", r->name);
	pfx_answers(r, after);
	for (k = 0; k < r->nf; k++) {
		struct ctx c = { .md = _metadata, .f = r->f[k], .op = &op,
				 .split_cap = PFX_SPLIT_CAP };

		for (i = 0; i < r->n; i++) {
			if (err)
				EXPECT_EQ(r->before[k][i], after[k][i]);
			if (r->before[k][i] != after[k][i])
				continue;
			for (how = 0; how < NREADERS; how++)
				if (how == ONE_BY_ONE ||
				    r->probe[i].family == CNF_V4)
					check_key(&c, &r->probe[i], how,
						  r->before[k][i]);
		}
		t.cases += c.t.cases;
		t.wrong += c.t.wrong;
		t.unsampled += c.t.unsampled;
		for (i = 0; i < 3; i++)
			t.answers[i] += c.t.answers[i];
	}
	goto_state(lg.n);
	release_later();
	TH_LOG("%s: returned %d, %zu stores, %u addresses, %llu reader runs (%llu split ones left out of the sample): %llu hits, %llu misses, %llu waited, %llu wrong",
	       r->name, err, lg.n, r->n, (unsigned long long)t.cases,
	       (unsigned long long)t.unsampled,
	       (unsigned long long)t.answers[HIT],
	       (unsigned long long)t.answers[MISS],
	       (unsigned long long)t.answers[WAITS],
	       (unsigned long long)t.wrong);
	pfx_total.cases += t.cases;
	pfx_total.wrong += t.wrong;
	EXPECT_EQ(0ULL, t.wrong);
	EXPECT_LT(0ULL, t.answers[HIT]);
}

/* A change of one filter: an add or a delete of @p. */
static int pfx_change(struct pfx_run *r, const struct cnf_key *p, bool add)
{
	struct cnf_filter *f = r->f[0];
	int err;

	pfx_probes(r, p);
	pfx_begin(r);
	cnf_filter_lock(f);
	err = add ? cnf_filter_add(f, p) : cnf_filter_del(f, p);
	cnf_filter_unlock(f);
	return err;
}

/* Stores the change made to @addr. */
static unsigned int logged_at(const void *addr)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < lg.n; i++)
		n += lg.s[i].addr == addr;
	return n;
}

struct pfx_case {
	const char *name;
	const char *setup[6];
	const char *change;
	bool add;
};

static void pfx_case_run(struct __test_metadata *_metadata,
			 const struct pfx_case *pc)
{
	struct pfx_run *r = calloc(1, sizeof(*r));
	struct cnf_key k;
	unsigned int i;

	ASSERT_NE(NULL, r);
	r->name = pc->name;
	r->nf = 1;
	r->f[0] = cnf_filter_create(64, NO_LIMIT);
	ASSERT_NE(NULL, r->f[0]);
	for (i = 0; i < ARRAY_SIZE(pc->setup) && pc->setup[i]; i++) {
		k = pfx_parse(pc->setup[i]);
		pfx_setup(_metadata, r, r->f[0], &k, 1);
	}
	k = pfx_parse(pc->change);
	pfx_end(_metadata, r, pfx_change(r, &k, pc->add), 0);
	cnf_filter_destroy(r->f[0]);
	free(r);
}

static const struct pfx_case pfx_cases[] = {
	{ "add a /20 over a /24 and a /32",
	  { "10.0.0.0/16", "10.0.2.0/24", "10.0.2.5/32", "10.0.15.0/24" },
	  "10.0.0.0/20", true },
	{ "delete a /20 under a /16, over a /24",
	  { "10.0.0.0/16", "10.0.0.0/20", "10.0.2.0/24", "10.0.16.0/24" },
	  "10.0.0.0/20", false },
	{ "delete a /24 a /20 covers",
	  { "10.0.0.0/20", "10.0.2.0/24", "10.0.2.128/25" },
	  "10.0.2.0/24", false },
	{ "delete the only /20: its tier's table goes",
	  { "10.0.0.0/20", "10.0.2.0/24", "10.1.0.0/16" },
	  "10.0.0.0/20", false },
	{ "add a /8 over /16s",
	  { "10.1.0.0/16", "10.255.0.0/16", "11.0.0.0/16", "10.2.3.0/24" },
	  "10.0.0.0/8", true },
	{ "delete a /8 over /16s",
	  { "10.0.0.0/8", "10.1.0.0/16", "10.255.0.0/16", "10.2.3.4/32" },
	  "10.0.0.0/8", false },
	{ "add the first prefix of the /16 map",
	  { "10.0.0.0/20", "10.2.3.0/24", "11.0.0.1/32" },
	  "10.0.0.0/14", true },
	{ "delete the last prefix of the /16 map",
	  { "10.0.0.0/14", "10.0.0.0/20", "10.2.3.0/24" },
	  "10.0.0.0/14", false },
	{ "delete a /12 between a /8 and a /16 of the map",
	  { "10.0.0.0/8", "10.0.0.0/12", "10.5.0.0/16", "12.0.0.0/16" },
	  "10.0.0.0/12", false },
	{ "add an IPv6 /41 over /48s",
	  { "2001:db8::/48", "2001:db8:7f::/48", "2001:db8:1::/64",
	    "2001:db8::1/128" },
	  "2001:db8::/41", true },
	{ "delete an IPv6 /41 over /48s",
	  { "2001:db8::/41", "2001:db8::/48", "2001:db8:7f::/48",
	    "2001:db8:80::/48" },
	  "2001:db8::/41", false },
	{ "add an IPv6 /70 over a /72 it covers",
	  { "2001:db8::/64", "2001:db8::/72" },
	  "2001:db8::400:0:0:0/70", true },
	{ "add an IPv6 /56, the third long tier: the directory is made",
	  { "2001:db8::/48", "2001:db8:1::/64", "2001:db8::1/128",
	    "2001:db9::/32" },
	  "2001:db8:0:100::/56", true },
	{ "add an IPv6 /47 under the directory, over a /48",
	  { "2001:db8::/48", "2001:db8:1::/64", "2001:db8:2::/72",
	    "2001:db8:1:2::/120" },
	  "2001:db8::/47", true },
	{ "delete the only IPv6 /64: its long tier's table goes",
	  { "2001:db8::/48", "2001:db8:1::/64", "2001:db8:2::/72" },
	  "2001:db8:1::/64", false },
};

FIXTURE(prefix) {
};

FIXTURE_SETUP(prefix)
{
	cnf_user_seed_random(SEED_CORE);
	memset(&pfx_total, 0, sizeof(pfx_total));
}

FIXTURE_TEARDOWN(prefix)
{
	fprintf(stderr, "# reliability: interleavings_checked=%llu lost=%llu\n",
		(unsigned long long)pfx_total.cases,
		(unsigned long long)pfx_total.wrong);
}

TEST_F_TIMEOUT(prefix, changes, INTERLEAVE_TIMEOUT)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pfx_cases); i++)
		pfx_case_run(_metadata, &pfx_cases[i]);
}

/* A change whose setup is a list of prefixes, some deleted again. */
static struct pfx_run *pfx_prepared(struct __test_metadata *_metadata,
				    const char *name, const struct cnf_key *p,
				    unsigned int n, const struct cnf_key *dels,
				    unsigned int ndels)
{
	struct pfx_run *r = calloc(1, sizeof(*r));
	unsigned int i;

	if (!r)
		abort();
	r->name = name;
	r->nf = 1;
	r->f[0] = cnf_filter_create(64, NO_LIMIT);
	if (!r->f[0])
		abort();
	pfx_setup(_metadata, r, r->f[0], p, n);
	for (i = 0; i < ndels; i++)
		if (cnf_t_del(r->f[0], &dels[i]))
			abort();
	return r;
}

static void pfx_free(struct pfx_run *r)
{
	unsigned int k;

	for (k = 0; k < r->nf; k++)
		cnf_filter_destroy(r->f[k]);
	free(r);
}

/* A delete that leaves a tier's table mostly empty: it shrinks. */
TEST_F(prefix, delete_shrinks)
{
	struct cnf_key p[40];
	struct pfx_run *r;
	unsigned int i;
	int err;

	for (i = 0; i < 40; i++)
		p[i] = pfx4(0x0a000000 | i << 12, 20);
	r = pfx_prepared(_metadata, "v4 delete: tier 20 shrinks", p, 40,
			 p + 4, 36);
	err = pfx_change(r, &p[3], false);
	pfx_end(_metadata, r, err, 0);
	EXPECT_EQ(1U, logged_at(&r->f[0]->tier[CNF_V4][20]));
	pfx_free(r);
}

/* A delete past which the summary of a long tier is made anew. */
TEST_F(prefix, delete_refreshes_summary)
{
	struct cnf_key p[20];
	struct pfx_run *r;
	unsigned int i;
	int err;

	for (i = 0; i < 20; i++)
		p[i] = pfx6(0x20010db800000000ULL | (u64)i << 16, 48);
	r = pfx_prepared(_metadata, "v6 delete: a new summary", p, 20,
			 p + 10, 10);
	err = pfx_change(r, &p[9], false);
	pfx_end(_metadata, r, err, 0);
	EXPECT_EQ(1U, logged_at(&r->f[0]->tier[CNF_V6][48]->summary));
	pfx_free(r);
}

/* An add that sets the directory bit past which it is made anew. */
TEST_F(prefix, add_remakes_directory)
{
	static struct cnf_key p[400];
	struct cnf_key change = pfx6(0x3fff000000000000ULL, 44);
	struct pfx_run *r = NULL;
	unsigned int n = 3;

	p[0] = pfx6(0x3000000000000000ULL, 40);
	p[1] = pfx6(0x3000000000000000ULL, 56);
	p[2] = pfx6(0x3000000000000000ULL, 64);
	/* Long prefixes in /32s of their own, until one more bit remakes. */
	for (;;) {
		const struct cnf_v6dir *d;

		cnf_user_seed_random(SEED_CORE);
		r = pfx_prepared(_metadata, "v6 add: the directory remade", p,
				 n, NULL, 0);
		d = r->f[0]->v6dir;
		if (d && d->bits + 1 == d->grow_at)
			break;
		pfx_free(r);
		ASSERT_GT(ARRAY_SIZE(p), n);
		p[n] = pfx6((0x30010000ULL + n) << 32, 48);
		n++;
	}
	pfx_end(_metadata, r, pfx_change(r, &change, true), 0);
	EXPECT_EQ(1U, logged_at(&r->f[0]->v6dir));
	pfx_free(r);
}

/*
 * Adds at the memory limit, which fail at one step or another of theirs
 * (a table to make, to grow, a store entry), and must fail as if they had
 * not begun: every limit from what the filter uses to the least the add
 * succeeds with would take too long, so PFX_LIMITS of them are tried,
 * evenly spread, and the last that fails; a limit whose change stores
 * what the one before stored is not checked again.  The filter is made
 * the same way for each (the same seeds).
 */
#define PFX_LIMITS	24

/* The filters of a change at a limit, and the change. */
struct pfx_limited {
	const char *name;
	const struct cnf_key *setup[2];	/* of the set, of another set */
	unsigned int nsetup[2];
	struct cnf_key change;
	bool sets;		/* a set's change, its kind's union beside */
};

/*
 * The filters of @pl at @limit (0: none), in a budget of their own: the
 * set's, then the union, which holds both sets' prefixes.
 */
static struct pfx_run *pfx_limited_make(struct __test_metadata *_metadata,
					const struct pfx_limited *pl,
					struct cnf_budget *b, u64 limit)
{
	struct pfx_run *r = calloc(1, sizeof(*r));
	struct cnf_filter *other = NULL;
	unsigned int k;

	if (!r)
		abort();
	r->name = pl->name;
	cnf_user_seed_random(SEED_CORE);
	cnf_budget_init(b, NO_LIMIT);
	r->nf = 1 + pl->sets;
	for (k = 0; k < r->nf; k++) {
		r->f[k] = cnf_filter_create_in(64, b);
		if (!r->f[k])
			abort();
	}
	pfx_setup(_metadata, r, r->f[0], pl->setup[0], pl->nsetup[0]);
	if (pl->sets) {
		other = cnf_filter_create_in(64, b);
		if (!other)
			abort();
		pfx_setup(_metadata, r, other, pl->setup[1], pl->nsetup[1]);
		pfx_setup(_metadata, r, r->f[1], pl->setup[0], pl->nsetup[0]);
		for (k = 0; k < pl->nsetup[1]; k++)
			if (cnf_t_add(r->f[1], &pl->setup[1][k]))
				abort();
	}
	pfx_probes(r, &pl->change);
	if (limit && cnf_budget_set_limit(b, limit))
		abort();
	/* Its tables count against the budget, its lookups are not asked. */
	r->f[r->nf] = other;
	return r;
}

static void pfx_limited_free(struct pfx_run *r)
{
	cnf_filter_destroy(r->f[r->nf]);
	pfx_free(r);
}

/*
 * A set's add when its kind has a union (cnf_change_add()): both filters
 * locked, the set's nested outside, each add prepared before either is
 * committed, so that a failure leaves both as they were, unseen.
 */
static int pfx_set_add(struct cnf_filter *set, struct cnf_filter *u,
		       const struct cnf_key *p)
{
	bool in_union = false;
	int err;

	cnf_filter_lock(set);
	cnf_filter_lock_nested(u);
	err = cnf_filter_add_prepare(set, p);
	if (!err && !cnf_filter_has(u, p)) {
		err = cnf_filter_add_prepare(u, p);
		if (err)
			cnf_filter_add_abort(set, p);
		in_union = !err;
	}
	if (!err) {
		err = cnf_filter_add_commit(set, p);
		if (err && in_union)
			cnf_filter_add_abort(u, p);
	}
	if (!err && in_union) {
		err = cnf_filter_add_commit(u, p);
		if (err && cnf_filter_del(set, p))
			abort();
	}
	cnf_filter_unlock(u);
	cnf_filter_unlock(set);
	return err;
}

/* The change of @pl to @r's filters, logged or not. */
static int pfx_limited_run(const struct pfx_limited *pl, struct pfx_run *r,
			   bool logged)
{
	int err;

	if (logged)
		pfx_begin(r);
	if (pl->sets) {
		err = pfx_set_add(r->f[0], r->f[1], &pl->change);
	} else {
		cnf_filter_lock(r->f[0]);
		err = cnf_filter_add(r->f[0], &pl->change);
		cnf_filter_unlock(r->f[0]);
	}
	return err;
}

static int pfx_limited_try(struct __test_metadata *_metadata,
			   const struct pfx_limited *pl, u64 limit)
{
	struct cnf_budget b;
	struct pfx_run *r = pfx_limited_make(_metadata, pl, &b, limit);
	int err = pfx_limited_run(pl, r, false);

	pfx_limited_free(r);
	return err;
}

static void pfx_limited_sweep(struct __test_metadata *_metadata,
			      const struct pfx_limited *pl)
{
	u64 lo, hi, lim, mid, used;
	size_t last_stores = 0;
	unsigned int s, failed = 0, checked = 0;
	struct cnf_budget b;
	struct pfx_run *r;
	int last_err = 1;

	r = pfx_limited_make(_metadata, pl, &b, 0);
	used = cnf_budget_used(&b);
	pfx_limited_free(r);
	/* The least limit the add succeeds with: below, it fails. */
	lo = used;
	hi = used + (64ULL << 20);
	ASSERT_EQ(0, pfx_limited_try(_metadata, pl, hi));
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pfx_limited_try(_metadata, pl, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	ASSERT_LT(used, hi) TH_LOG("%s: fits at any limit", pl->name);
	for (s = 0; s <= PFX_LIMITS + 1; s++) {
		int err;

		lim = s <= PFX_LIMITS ?
		      used + (hi - 1 - used) * s / PFX_LIMITS : hi;
		r = pfx_limited_make(_metadata, pl, &b, lim);
		err = pfx_limited_run(pl, r, true);
		if (s <= PFX_LIMITS && err == last_err && lg.n == last_stores) {
			recording_stop();
			release_later();
			pfx_limited_free(r);
			continue;
		}
		ASSERT_TRUE(err == 0 || err == -ENOSPC) TH_LOG("%d", err);
		last_err = err;
		last_stores = lg.n;
		failed += err != 0;
		checked++;
		pfx_end(_metadata, r, err, s <= PFX_LIMITS ? err : 0);
		pfx_limited_free(r);
	}
	TH_LOG("%s: %llu bytes used, the add fits from %llu on; %u limits checked, %u of them failing",
	       pl->name, (unsigned long long)used, (unsigned long long)hi,
	       checked, failed);
	EXPECT_LT(0U, failed);
}

/*
 * 59 /24s of 11.0.0.0/18, and 11.0.71.0/24: a /21 over the last adds
 * seven keys to tier 24 (growing its table) and a store entry for the
 * /24 it now covers.
 */
static struct cnf_key limited4[60];

static unsigned int limited4_make(void)
{
	unsigned int i;

	for (i = 0; i < 59; i++)
		limited4[i] = pfx4(0x0b000000 | i << 8, 24);
	limited4[59] = pfx4(0x0b004700, 24);
	return 60;
}

/* The same in IPv6: /48s, and a /45 over the last. */
static struct cnf_key limited6[61];

static unsigned int limited6_make(void)
{
	unsigned int i;

	for (i = 0; i < 60; i++)
		limited6[i] = pfx6(0x20010db800000000ULL | (u64)i << 16, 48);
	limited6[60] = pfx6(0x20010db800470000ULL, 48);
	return 61;
}

TEST_F_TIMEOUT(prefix, limit_v4_expanded, INTERLEAVE_TIMEOUT)
{
	struct pfx_limited pl = { .name = "v4 /21 at the limit" };

	pl.setup[0] = limited4;
	pl.nsetup[0] = limited4_make();
	pl.change = pfx4(0x0b004000, 21);
	pfx_limited_sweep(_metadata, &pl);
}

TEST_F_TIMEOUT(prefix, limit_v6_expanded, INTERLEAVE_TIMEOUT)
{
	struct pfx_limited pl = { .name = "v6 /45 at the limit" };

	pl.setup[0] = limited6;
	pl.nsetup[0] = limited6_make();
	pl.change = pfx6(0x20010db800400000ULL, 45);
	pfx_limited_sweep(_metadata, &pl);
}

/*
 * A prefix of its tier's length, the first of its tier, and one of the /16
 * map.  (One that only fills its tier further fits at any limit: past the
 * load limit, it takes a free slot or the stash.)
 */
TEST_F_TIMEOUT(prefix, limit_v4_native_and_map, INTERLEAVE_TIMEOUT)
{
	struct pfx_limited pl = { .name = "v4 /20, the first of its tier, at the limit" };

	pl.setup[0] = limited4;
	pl.nsetup[0] = limited4_make();
	pl.change = pfx4(0x0b010000, 20);
	pfx_limited_sweep(_metadata, &pl);
	pl.name = "v4 /15, the first of the map, at the limit";
	pl.change = pfx4(0x0c000000, 15);
	pfx_limited_sweep(_metadata, &pl);
}

/*
 * A set's add beside another set of its kind: to the set and to the
 * union, both in one budget; the other set holds the /24 the union's /21
 * covers.  Readers of the set (counted matches) and of the union (the
 * verdict) must see nothing of a failed add.
 */
TEST_F_TIMEOUT(prefix, limit_set_and_union, INTERLEAVE_TIMEOUT)
{
	struct pfx_limited pl = { .name = "a set's /21 and its union's",
				  .sets = true };

	limited4_make();
	pl.setup[0] = limited4;
	pl.nsetup[0] = 30;
	pl.setup[1] = limited4 + 30;
	pl.nsetup[1] = 30;
	pl.change = pfx4(0x0b004000, 21);
	pfx_limited_sweep(_metadata, &pl);
	pl.name = "a set's /24 and its union's";
	pl.change = pfx4(0x0b00c800, 24);
	pfx_limited_sweep(_metadata, &pl);
}

/* ---- the long tiers' directory: what a lookup reads ---- */

static const struct cnf_filter *dir_f;
static unsigned int dir_long_loads;

/* A marked load in a long tier's summary: that tier was probed. */
static void dir_count_load(const void *addr, size_t size)
{
	const struct cnf_table *t;
	unsigned int tl;

	for (tl = 33; tl < CNF_V6_BITS; tl++) {
		t = dir_f->tier[CNF_V6][tl];
		if (t && t->summary && (const u32 *)addr >= t->summary &&
		    (const u32 *)addr <= t->summary + t->mask)
			dir_long_loads++;
	}
}

static unsigned int long_loads(const char *addr, bool *hit)
{
	struct in6_addr a;

	inet_pton(AF_INET6, addr, &a);
	dir_long_loads = 0;
	cnf_user_hooks.load = dir_count_load;
	*hit = cnf_filter_lookup6(dir_f, &a);
	cnf_user_hooks.load = NULL;
	return dir_long_loads;
}

/*
 * With four long tiers holding keys in one /32, an address of another /32
 * reads none of their summaries (the directory rules them out), and one of
 * that /32 reads each of them once; without the directory, both read all.
 */
TEST(directory_rules_out_long_tiers)
{
	static const char *const pfx[] = { "2001:db8::/40", "2001:db8:1::/48",
					   "2001:db8:2::/56", "2001:db8:3::/64",
					   "2001:db9::/32" };
	struct cnf_filter *f;
	struct cnf_key k;
	unsigned int i;
	bool hit;

	cnf_user_seed_random(SEED_CORE);
	f = cnf_filter_create(64, NO_LIMIT);
	ASSERT_NE(NULL, f);
	dir_f = f;
	for (i = 0; i < ARRAY_SIZE(pfx); i++) {
		k = pfx_parse(pfx[i]);
		ASSERT_EQ(0, cnf_t_add(f, &k));
	}
	ASSERT_NE(NULL, f->v6dir);
	ASSERT_EQ(0U, long_loads("3fff::1", &hit));
	ASSERT_FALSE(hit);
	ASSERT_EQ(0U, long_loads("2001:db9:5::1", &hit));
	ASSERT_TRUE(hit);
	ASSERT_EQ(4U, long_loads("2001:db8:100::1", &hit));
	ASSERT_FALSE(hit);
	ASSERT_LE(1U, long_loads("2001:db8:3:0:1::1", &hit));
	ASSERT_TRUE(hit);
	/* Without it, as with fewer than CNF_V6DIR_MIN_TIERS long tiers. */
	cnf_filter_lock(f);
	cnf_v6dir_publish(f, NULL);
	cnf_filter_unlock(f);
	ASSERT_EQ(4U, long_loads("3fff::1", &hit));
	ASSERT_FALSE(hit);
	cnf_filter_destroy(f);
}

TEST_HARNESS_MAIN
