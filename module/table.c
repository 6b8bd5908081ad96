// SPDX-License-Identifier: GPL-2.0
/*
 * One table: allocation, inserts along cuckoo paths, deletes, the stash,
 * walking the keys back out, and finding a key.  Writers are under the
 * filter's lock, their slot and stash changes inside write sections, so
 * that readers, under RCU, stay exact (finding a key, below).
 *
 * Inserts never loop: a bounded breadth-first search (CNF_MAX_KICKS slots
 * visited) looks for a cuckoo path to a free slot without changing anything;
 * only a path that ends in a free slot is applied, from the free end
 * backwards.  When there is none, the filter grows the table (ftable.c);
 * past its memory limit the key goes to a small stash.
 */
#include "table.h"

/**
 * cnf_max_log - the largest table of a layout
 * @layout: the layout
 *
 * Its slots stay below INT_MAX bytes, which kvmalloc() refuses: 2^24
 * buckets for CNF_LAYOUT128 (1 GiB), 2^26 for CNF_LAYOUT64 (1.5 GiB), 2^27
 * for the one-word layouts (1 GiB).
 *
 * Return: log2 of its buckets.
 */
unsigned int cnf_max_log(enum cnf_layout layout)
{
	unsigned int log = CNF_MIN_BUCKETS_LOG;

	while (cnf_slots_bytes(layout, log + 1) < INT_MAX)
		log++;
	return log;
}

/**
 * cnf_summary_bytes - memory of a table's summary
 * @layout: the table's layout
 * @log: log2 of its buckets
 * @summary: as cnf_table_alloc() takes it
 *
 * Return: the bytes of a word per bucket, for IPv6 only; else 0.
 */
size_t cnf_summary_bytes(enum cnf_layout layout, unsigned int log,
			 bool summary)
{
	if (!summary || cnf_layout_words(layout) == 1)
		return 0;
	return sizeof(u32) << log;
}

/**
 * cnf_table_bytes - memory of a table
 * @layout: its layout
 * @log: log2 of its buckets
 * @summary: as cnf_table_alloc() takes it
 * @shared: it will share its filter's tabulation, which counts with the
 *	filter (cnf_table_alloc() with @thash4)
 *
 * Return: the bytes cnf_table_alloc() takes for it.
 */
size_t cnf_table_bytes(enum cnf_layout layout, unsigned int log,
		       bool summary, bool shared)
{
	size_t own = shared ? 0 : cnf_thash_entries(layout, log);

	return sizeof(struct cnf_table) + cnf_slots_bytes(layout, log) +
	       own * sizeof(u32) + cnf_summary_bytes(layout, log, summary);
}

/*
 * A tabulation for IPv4 tables of @width-byte slots: entry i is
 * jhash(chunk value, chunk index) under @seed.  Inputs are distinct: equal
 * entries in two chunks' tables would cancel out of H.
 */
static u32 *cnf_thash_alloc(unsigned int width, u32 seed)
{
	size_t i, entries = (size_t)cnf_thash_chunks(width) * CNF_THASH_ENTRIES;
	u32 *e = cnf_zalloc(entries * sizeof(u32));

	BUILD_BUG_ON(CNF_THASH_ENTRIES != 1U << CNF_THASH_BITS);
	BUILD_BUG_ON(2 * CNF_THASH_BITS < CNF_NARROW_R_BITS);
	BUILD_BUG_ON(4 * CNF_THASH_BITS < 32 - CNF_MIN_BUCKETS_LOG);
	for (i = 0; e && i < entries; i++)
		e[i] = jhash_2words(i % CNF_THASH_ENTRIES, i / CNF_THASH_ENTRIES,
				    seed);
	return e;
}

/* Memory of the tabulation a filter's IPv4 tables share (cnf_table_alloc()). */
size_t cnf_thash4_bytes(void)
{
	return cnf_thash_entries(CNF_LAYOUT32, CNF_MIN_BUCKETS_LOG) *
	       sizeof(u32);
}

/**
 * cnf_table_alloc - a new, empty table
 * @layout: its layout
 * @log: log2 of its buckets, at most cnf_max_log(@layout)
 * @summary: lookups will read it: an IPv6 table gets a summary (table.h)
 * @thash4: where the tabulation IPv4 tables share is, made of this table's
 *	seed if there is none yet; it must outlive the tables that share it.
 *	NULL: new seeds of its own.
 *
 * A tabulation of its own costs a small table more to make than its slots
 * (1,024 jhashes) and takes 4 KB: a filter's tables share one
 * (cnf_filter.thash4).  Narrow slots read only its first 512 entries.
 *
 * Return: the table, not yet visible to readers; NULL when memory is short.
 */
struct cnf_table *cnf_table_alloc(enum cnf_layout layout, unsigned int log,
				  bool summary, u32 **thash4)
{
	enum cnf_family fam = cnf_width_family(cnf_slot_bytes(layout, log));
	struct cnf_table *t = cnf_zalloc(sizeof(*t));
	unsigned int i;
	size_t entries;

	if (!t)
		return NULL;
	t->slots = cnf_zalloc(cnf_slots_bytes(layout, log));
	if (!t->slots)
		goto err_table;
	for (i = 0; fam == CNF_V6 && i < CNF_MUL6_WORDS; i++)
		t->mul6[i] = (u64)get_random_u32() << 32 | get_random_u32();
	t->slot_bytes = cnf_slot_bytes(layout, log);
	t->layout = layout;
	t->bytes = cnf_table_bytes(layout, log, summary, thash4);
	entries = cnf_thash_entries(layout, log);
	if (entries && thash4) {
		if (!*thash4)
			*thash4 = cnf_thash_alloc(CNF_SLOT_V4_WIDE,
						  get_random_u32());
		if (!*thash4)
			goto err_slots;
		t->thash = *thash4;
		t->shared_thash = true;
	} else if (entries) {
		t->thash = cnf_thash_alloc(t->slot_bytes, get_random_u32());
		if (!t->thash)
			goto err_slots;
	}
	if (cnf_summary_bytes(layout, log, summary)) {
		t->summary = cnf_zalloc(cnf_summary_bytes(layout, log, summary));
		if (!t->summary)
			goto err_thash;
	}
	seqcount_init(&t->seq);
	t->family = fam;
	t->log = log;
	t->mask = (1U << log) - 1;
	t->limit = cnf_table_limit(log);
	return t;

err_thash:
	if (!t->shared_thash)
		cnf_free(t->thash);
err_slots:
	cnf_free(t->slots);
err_table:
	cnf_free(t);
	return NULL;
}

/**
 * cnf_table_free - free a table no reader can see
 * @t: the table, or NULL
 */
void cnf_table_free(struct cnf_table *t)
{
	if (!t)
		return;
	cnf_free(t->summary);
	if (!t->shared_thash)
		cnf_free(t->thash);
	cnf_free(t->slots);
	cnf_free(t);
}

static void cnf_table_free_rcu(struct rcu_head *head)
{
	cnf_table_free(container_of(head, struct cnf_table, rcu));
}

/**
 * cnf_table_retire - free a table once no reader can see it
 * @t: a table just unpublished
 *
 * Module exit waits for it with rcu_barrier().
 */
void cnf_table_retire(struct cnf_table *t)
{
	cnf_call_rcu(&t->rcu, cnf_table_free_rcu);
}

/* ---- the summary ---- */

/* A replaced summary, until no reader can see it. */
struct cnf_summary_old {
	struct rcu_head rcu;
	u32 *words;
};

static void cnf_summary_old_free_rcu(struct rcu_head *head)
{
	struct cnf_summary_old *old = container_of(head, typeof(*old), rcu);

	cnf_free(old->words);
	cnf_free(old);
}

struct cnf_summary_fill {
	const struct cnf_table *t;
	u32 *words;
};

static int cnf_summary_fill_one(void *ctx, const struct cnf_key *key)
{
	struct cnf_summary_fill *sf = ctx;
	struct cnf_pos p;
	u32 h = cnf_locate(sf->t, cnf_width(sf->t), &key->v6, &p);

	sf->words[p.b[0]] |= cnf_summary_bit(h);
	return 0;
}

/**
 * cnf_summary_refresh - replace a table's summary by one of its keys alone
 * @t: a table with a summary, under the lock of its filter
 *
 * The bits deletes left go.  The old summary is freed after a grace
 * period; the new one takes as much memory.
 *
 * Return: 0, or -ENOMEM (the old summary stays).
 */
int cnf_summary_refresh(struct cnf_table *t)
{
	struct cnf_summary_fill sf = { .t = t };
	struct cnf_summary_old *old = cnf_zalloc(sizeof(*old));

	sf.words = cnf_zalloc(cnf_summary_bytes(cnf_table_layout(t), t->log,
						true));
	if (!old || !sf.words)
		goto err_alloc;
	cnf_table_walk(t, cnf_summary_fill_one, &sf);
	old->words = t->summary;
	/* Release: readers that see the new summary see its bits. */
	smp_store_release(&t->summary, sf.words);
	t->stale = 0;
	cnf_call_rcu(&old->rcu, cnf_summary_old_free_rcu);
	return 0;

err_alloc:
	cnf_free(sf.words);
	cnf_free(old);
	return -ENOMEM;
}

/* ---- finding a key ---- */

/*
 * Decode slot words @w found in bucket @bucket back into the key: the
 * words the slot holds as they are, then the last (an IPv4 key's only one,
 * which @key->v4 shares with @key->v6's first), the rest zero.
 */
static void cnf_decode(const struct cnf_table *t, u32 *w, u32 bucket,
		       struct cnf_key *key)
{
	unsigned int i, n = cnf_width_words(cnf_width(t));
	u32 tag = *cnf_tag_word(cnf_width(t), w);
	u32 r = cnf_slot_r(cnf_width(t), w);
	u32 h = cnf_hash_r(t, cnf_width(t), w, r), home = bucket, x;

	if (tag & CNF_TAG_ALT)
		home ^= cnf_alt_offset(t, h);
	x = r << t->log | ((home ^ h) & t->mask);
	memset(key, 0, sizeof(*key));
	key->family = t->family;
	for (i = 0; i + 1 < n; i++)
		key->v6.s6_addr32[i] = (__force __be32)w[i];
	key->v6.s6_addr32[n - 1] = htonl(x);
}

/* Slot words past a layout's own are zero: all four compare. */
static bool cnf_slot_equal(const u32 *a, const u32 *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* Slot of bucket @bucket holding @w, or -1. */
static int cnf_bucket_find(const struct cnf_table *t, u32 bucket, const u32 *w)
{
	unsigned int s;
	u32 cur[4] = { 0 };

	for (s = 0; s < CNF_BUCKET_SLOTS; s++) {
		cnf_slot_read(t, cnf_width(t), bucket, s, cur);
		if (cnf_slot_equal(cur, w))
			return s;
	}
	return -1;
}

static bool cnf_key_equal(const struct cnf_key *a, const struct cnf_key *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == CNF_V4)
		return a->v4 == b->v4;
	return !memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

/* Position of a key in a table: bucket and slot, or stash index. */
struct cnf_found {
	bool in_stash;
	u32 bucket;
	int slot;		/* slot in bucket, or stash index */
};

/* Where @key is in @t; false if absent. */
static bool cnf_table_find(const struct cnf_table *t, const struct cnf_key *key,
			   struct cnf_found *at)
{
	struct cnf_pos p;
	unsigned int i;

	cnf_locate(t, cnf_width(t), &key->v6, &p);
	for (i = 0; i < 2; i++) {
		*cnf_tag_word(cnf_width(t), p.w) |= i ? CNF_TAG_ALT : 0;
		at->slot = cnf_bucket_find(t, p.b[i], p.w);
		if (at->slot >= 0) {
			at->in_stash = false;
			at->bucket = p.b[i];
			return true;
		}
	}
	for (i = 0; i < t->stash_n; i++) {
		if (cnf_key_equal(&t->stash[i], key)) {
			at->in_stash = true;
			at->slot = i;
			return true;
		}
	}
	return false;
}

/* ---- cuckoo paths ---- */

static bool cnf_path_has_bucket(const struct cnf_path_node *path, u16 n,
				u32 bucket)
{
	for (; n != CNF_NO_PARENT; n = path[n].parent)
		if (path[n].bucket == bucket)
			return true;
	return false;
}

/*
 * Breadth-first search for a cuckoo path from a slot of the key's buckets to
 * a free slot, visiting at most CNF_MAX_KICKS slots.  It only reads: a search
 * that fails changes nothing.  Buckets on one path are distinct, so the keys
 * the search saw are the keys that will move.  Returns the node whose key in
 * slot *@slot moves into slot *@free_slot of its other bucket, or -1.
 */
static __always_inline int cnf_path_find(const struct cnf_table *t,
					 unsigned int width,
					 struct cnf_path_node *path,
					 const struct cnf_pos *p,
					 unsigned int *slot, int *free_slot)
{
	unsigned int head, tail = 2, visited = 0, s;

	path[0] = (struct cnf_path_node){ .bucket = p->b[0],
					  .parent = CNF_NO_PARENT };
	path[1] = (struct cnf_path_node){ .bucket = p->b[1],
					  .parent = CNF_NO_PARENT };
	for (head = 0; head < tail; head++) {
		for (s = 0; s < CNF_BUCKET_SLOTS; s++) {
			u32 w[4], next;

			if (visited++ == CNF_MAX_KICKS)
				return -1;
			next = cnf_slot_other(t, width, path[head].bucket, s, w);
			*free_slot = cnf_bucket_free_slot(t, width, next);
			if (*free_slot >= 0) {
				*slot = s;
				return head;
			}
			if (!cnf_path_has_bucket(path, head, next))
				path[tail++] = (struct cnf_path_node){
					.bucket = next, .parent = head,
					.slot = s };
		}
	}
	return -1;
}

/*
 * Move every key on the path ending at node @n, slot @s, one bucket over,
 * free end first: each key is written to its new slot before its old slot
 * is reused, so it is always in one of its buckets.  Returns the root node;
 * *@s is then its free slot.  Inside a write section: a reader that missed
 * a key because it left the bucket the reader had not read yet looks again.
 */
static __always_inline u16 cnf_path_apply(struct cnf_table *t,
					  unsigned int width,
					  const struct cnf_path_node *path,
					  u16 n, unsigned int *s, int free_slot)
{
	unsigned int to_slot = free_slot;
	u32 to_bucket, w[4];

	for (;;) {
		to_bucket = cnf_slot_other(t, width, path[n].bucket, *s, w);
		cnf_slot_write(t, width, to_bucket, to_slot, w);
		cnf_note_move(t, to_bucket);
		to_slot = *s;
		if (path[n].parent == CNF_NO_PARENT)
			return n;
		*s = path[n].slot;
		n = path[n].parent;
	}
}

/* ---- inserts ---- */

/* Store the key located at @p in slot @s of @bucket, one of its two. */
static __always_inline void cnf_table_put(struct cnf_table *t,
					  unsigned int width, u32 bucket,
					  unsigned int s, struct cnf_pos *p)
{
	if (bucket == p->b[1])
		*cnf_tag_word(width, p->w) |= CNF_TAG_ALT;
	cnf_slot_write(t, width, bucket, s, p->w);
	t->count++;
}

/* Both buckets are full: move keys along a cuckoo path to make room. */
static __always_inline int
cnf_table_insert_far_width(struct cnf_table *t, unsigned int width,
			   struct cnf_path_node *path, struct cnf_pos *p)
{
	unsigned int slot;
	int leaf, free_slot;
	u16 root;

	leaf = cnf_path_find(t, width, path, p, &slot, &free_slot);
	if (leaf < 0)
		return -ENOSPC;
	cnf_write_begin(t);
	root = cnf_path_apply(t, width, path, leaf, &slot, free_slot);
	cnf_table_put(t, width, path[root].bucket, slot, p);
	cnf_write_end(t);
	return 0;
}

/*
 * Out of line, so that an add that finds a free slot in its own buckets,
 * the common case, needs few registers.
 */
static noinline int cnf_table_insert_far(struct cnf_table *t,
					 struct cnf_path_node *path,
					 struct cnf_pos *p)
{
	return cnf_for_width(cnf_table_insert_far, t, path, p);
}

/*
 * Put an absent key, located at @p with hash @h, into @t; -ENOSPC when no
 * path frees a slot.
 */
static __always_inline int cnf_table_insert_at(struct cnf_table *t,
					       unsigned int width,
					       struct cnf_path_node *path,
					       struct cnf_pos *p, u32 h)
{
	u32 bucket = p->b[0];
	int s = cnf_bucket_free_slot(t, width, bucket);

	if (cnf_width_words(width) > 1)
		cnf_summary_mark(t, p->b[0], h);
	if (s < 0) {
		bucket = p->b[1];
		s = cnf_bucket_free_slot(t, width, bucket);
		if (s < 0)
			return cnf_table_insert_far(t, path, p);
	}
	cnf_slot_begin(t, width);
	cnf_table_put(t, width, bucket, s, p);
	cnf_slot_end(t, width);
	return 0;
}

/**
 * cnf_table_insert - put an absent key into a table's buckets
 * @t: the table
 * @path: CNF_PATH_NODES nodes of scratch space
 * @key: a key of @t's family that @t does not hold
 *
 * Return: 0, or -ENOSPC when no cuckoo path frees a slot (@t unchanged).
 */
int cnf_table_insert(struct cnf_table *t, struct cnf_path_node *path,
		     const struct cnf_key *key)
{
	struct cnf_pos p;
	u32 h = cnf_locate(t, cnf_width(t), &key->v6, &p);

	return cnf_table_insert_at(t, cnf_width(t), path, &p, h);
}

static __always_inline int cnf_table_add_width(struct cnf_table *t,
					       unsigned int width,
					       struct cnf_path_node *path,
					       const struct cnf_key *key)
{
	struct cnf_pos p;
	u32 h = cnf_locate(t, width, &key->v6, &p);

	if (cnf_table_probe(t, width, &p) ||
	    (t->stash_n && cnf_stash_has(t, &key->v6)))
		return -EEXIST;
	if (t->count + 1 > t->limit)
		return -E2BIG;
	return cnf_table_insert_at(t, width, path, &p, h);
}

/* Out of line, so that IPv6's hashing does not weigh on IPv4's registers. */
static noinline int cnf_table_add6(struct cnf_table *t,
				   struct cnf_path_node *path,
				   const struct cnf_key *key)
{
	return cnf_for_v6_width(cnf_table_add, t, path, key);
}

/**
 * cnf_table_add - add a key unless the table is full
 * @t: the table
 * @path: CNF_PATH_NODES nodes of scratch space
 * @key: a key of @t's family
 *
 * Return: 0; -EEXIST if @t holds @key; -E2BIG if @t is at its load limit;
 * -ENOSPC if no cuckoo path frees a slot.  On error @t is unchanged.
 */
int cnf_table_add(struct cnf_table *t, struct cnf_path_node *path,
		  const struct cnf_key *key)
{
	if (cnf_width_family(cnf_width(t)) == CNF_V6)
		return cnf_table_add6(t, path, key);
	return cnf_for_v4_width(cnf_table_add, t, path, key);
}

static __always_inline void cnf_table_prefetch_width(struct cnf_table *t,
						     unsigned int width,
						     const struct cnf_key *key)
{
	struct cnf_pos p;

	cnf_locate(t, width, &key->v6, &p);
	prefetchw(cnf_bucket_words(t, width, p.b[0]));
	prefetchw(cnf_bucket_words(t, width, p.b[1]));
}

/**
 * cnf_table_prefetch - start loading a key's buckets into the cache
 * @t: the table
 * @key: a key of @t's family
 */
void cnf_table_prefetch(struct cnf_table *t, const struct cnf_key *key)
{
	cnf_for_width(cnf_table_prefetch, t, key);
}

/* ---- the stash ---- */

/* Stash entries have the table's key words; the rest is zero. */
static void cnf_stash_get(const struct cnf_table *t, unsigned int i,
			  struct cnf_key *key)
{
	unsigned int w, words = cnf_width_words(cnf_width(t));

	memset(key, 0, sizeof(*key));
	key->family = t->family;
	for (w = 0; w < words; w++)
		key->v6.s6_addr32[w] = READ_ONCE(t->stash[i].v6.s6_addr32[w]);
}

/* Inside a write section: see cnf_stash_has(). */
static void cnf_stash_set(struct cnf_table *t, unsigned int i,
			  const struct cnf_key *key)
{
	unsigned int w, words = cnf_width_words(cnf_width(t));

	t->stash[i].family = key->family;
	for (w = 0; w < words; w++)
		WRITE_ONCE(t->stash[i].v6.s6_addr32[w], key->v6.s6_addr32[w]);
}

/**
 * cnf_stash_put - keep an absent key in the stash
 * @t: the table
 * @key: a key of @t's family that @t does not hold
 *
 * Return: true, or false when the stash is full (@t unchanged).
 */
bool cnf_stash_put(struct cnf_table *t, const struct cnf_key *key)
{
	struct cnf_pos p;
	u32 h;

	if (t->stash_n == CNF_STASH_SLOTS)
		return false;
	if (t->summary) {
		h = cnf_locate(t, cnf_width(t), &key->v6, &p);
		cnf_summary_mark(t, p.b[0], h);
	}
	cnf_write_begin(t);
	cnf_stash_set(t, t->stash_n, key);
	WRITE_ONCE(t->stash_n, t->stash_n + 1);
	cnf_write_end(t);
	t->count++;
	return true;
}

static void cnf_stash_remove(struct cnf_table *t, unsigned int i)
{
	cnf_write_begin(t);
	cnf_stash_set(t, i, &t->stash[t->stash_n - 1]);
	WRITE_ONCE(t->stash_n, t->stash_n - 1);
	cnf_write_end(t);
	t->count--;
}

/* After a delete freed a slot, move stashed keys back into the buckets. */
static void cnf_stash_drain(struct cnf_table *t, struct cnf_path_node *path)
{
	unsigned int i = 0;

	while (i < t->stash_n) {
		struct cnf_key key = t->stash[i];

		/* Present in both places for a moment, never in neither. */
		if (cnf_table_insert(t, path, &key))
			i++;
		else
			cnf_stash_remove(t, i);
	}
}

/* ---- deletes and walks ---- */

static void cnf_slot_clear(struct cnf_table *t, u32 bucket, unsigned int s)
{
	static const u32 zero[4];

	cnf_slot_begin(t, cnf_width(t));
	cnf_slot_write(t, cnf_width(t), bucket, s, zero);
	cnf_slot_end(t, cnf_width(t));
	t->count--;
}

/**
 * cnf_table_del - remove a key
 * @t: the table
 * @path: CNF_PATH_NODES nodes of scratch space
 * @key: a key of @t's family
 *
 * A slot freed in the buckets takes back what it can from the stash.
 *
 * Return: 0, or -ENOENT if @t does not hold @key (@t unchanged).
 */
int cnf_table_del(struct cnf_table *t, struct cnf_path_node *path,
		  const struct cnf_key *key)
{
	struct cnf_found at;

	if (!cnf_table_find(t, key, &at))
		return -ENOENT;
	t->stale++;
	if (at.in_stash) {
		cnf_stash_remove(t, at.slot);
		return 0;
	}
	cnf_slot_clear(t, at.bucket, at.slot);
	if (t->stash_n)
		cnf_stash_drain(t, path);
	return 0;
}

/* The key in slot @s of bucket @b, if the slot holds one. */
static bool cnf_slot_key(const struct cnf_table *t, u32 b, unsigned int s,
			 struct cnf_key *key)
{
	u32 w[4];

	cnf_slot_read(t, cnf_width(t), b, s, w);
	if (!(*cnf_tag_word(cnf_width(t), w) & CNF_TAG_VALID))
		return false;
	cnf_decode(t, w, b, key);
	return true;
}

/**
 * cnf_table_prune - remove the keys of a table that a test rejects
 * @t: the table
 * @path: CNF_PATH_NODES nodes of scratch space
 * @keep: called with @ctx and each key; false removes the key
 * @ctx: passed to @keep
 *
 * One pass over the buckets and the stash (last to first, so a removal
 * moves only keys already seen); the freed slots then take back what
 * they can from the stash.
 */
void cnf_table_prune(struct cnf_table *t, struct cnf_path_node *path,
		     bool (*keep)(void *ctx, const struct cnf_key *key),
		     void *ctx)
{
	struct cnf_key key;
	unsigned int s, i;
	u32 b;

	for (b = 0; b <= t->mask; b++) {
		for (s = 0; s < CNF_BUCKET_SLOTS; s++)
			if (cnf_slot_key(t, b, s, &key) && !keep(ctx, &key))
				cnf_slot_clear(t, b, s);
		if (!(b & 0xffff))
			cond_resched();
	}
	for (i = t->stash_n; i-- > 0;) {
		cnf_stash_get(t, i, &key);
		if (!keep(ctx, &key))
			cnf_stash_remove(t, i);
	}
	if (t->stash_n)
		cnf_stash_drain(t, path);
}

/**
 * cnf_table_walk_buckets - call a function for every key of some buckets
 * @t: the table
 * @from: the first bucket
 * @to: the bucket after the last, at most @t->mask + 1
 * @fn: called with @ctx and each key
 * @ctx: passed to @fn
 *
 * Return: 0, or @fn's first non-zero return, which stops the walk.
 */
int cnf_table_walk_buckets(const struct cnf_table *t, u32 from, u32 to,
			   int (*fn)(void *ctx, const struct cnf_key *key),
			   void *ctx)
{
	struct cnf_key key;
	unsigned int s;
	u32 b;
	int err;

	for (b = from; b < to; b++) {
		for (s = 0; s < CNF_BUCKET_SLOTS; s++) {
			if (!cnf_slot_key(t, b, s, &key))
				continue;
			err = fn(ctx, &key);
			if (err)
				return err;
		}
		if (!(b & 0xffff))
			cond_resched();
	}
	return 0;
}

/**
 * cnf_table_walk_stash - call a function for every key of a table's stash
 * @t: the table
 * @fn: called with @ctx and each key
 * @ctx: passed to @fn
 *
 * Return: 0, or @fn's first non-zero return, which stops the walk.
 */
int cnf_table_walk_stash(const struct cnf_table *t,
			 int (*fn)(void *ctx, const struct cnf_key *key),
			 void *ctx)
{
	struct cnf_key key;
	unsigned int i;
	int err;

	for (i = 0; i < t->stash_n; i++) {
		cnf_stash_get(t, i, &key);
		err = fn(ctx, &key);
		if (err)
			return err;
	}
	return 0;
}

/**
 * cnf_table_walk - call a function for every key of a table
 * @t: the table
 * @fn: called with @ctx and each key
 * @ctx: passed to @fn
 *
 * Return: 0, or @fn's first non-zero return, which stops the walk.
 */
int cnf_table_walk(const struct cnf_table *t,
		   int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	return cnf_table_walk_buckets(t, 0, t->mask + 1, fn, ctx) ?:
	       cnf_table_walk_stash(t, fn, ctx);
}

/* ---- finding a key, for readers ---- */

/*
 * Within a table every key that moves, and every change of the stash or
 * of a slot of more than one word, does so in a seqcount write section
 * (table.h), and a miss that overlaps one is looked up again: a key moving
 * from one bucket to the other may be missed by a single pass (read i1,
 * key moves i2 -> i1, read i2), never by a validated one.  An IPv4 hit
 * needs no validation: its slots change in one store, so a slot holding
 * the key's tag means the key was stored at that moment; a key added to a
 * free slot, or deleted, in one store needs no write section either (the
 * lookup it overlaps may answer either way).  An IPv6 slot takes two
 * stores (CNF_LAYOUT64) or four, and a reader between them can see words
 * of two keys that together match a third, absent one: IPv6 hits are
 * validated as misses are.  Write sections are a few slot stores long.
 */

/**
 * cnf_stash_has - is a key in a table's stash
 * @t: the table
 * @addr: the key's words, as cnf_locate() takes them
 *
 * Lookups read stash entries while a writer may change them, inside read
 * sections that catch it: every word is a marked access.
 *
 * Return: true if the stash holds @addr.
 */
bool cnf_stash_has(const struct cnf_table *t, const void *addr)
{
	unsigned int i, w, words = cnf_width_words(cnf_width(t));
	u32 n = READ_ONCE(t->stash_n);
	const __be32 *a = addr;

	for (i = 0; i < n && i < CNF_STASH_SLOTS; i++) {
		const struct in6_addr *s = &t->stash[i].v6;

		for (w = 0; w < words; w++)
			if (READ_ONCE(s->s6_addr32[w]) != a[w])
				break;
		if (w == words)
			return true;
	}
	return false;
}

/**
 * cnf_table_has_slow - is a key in a table, the slow path
 * @t: the table
 * @addr: the key's words, as cnf_locate() takes them
 *
 * A miss while the stash holds keys, or a pass a write overlapped: buckets
 * and stash again, in one read section, since a key can move between them.
 * Under rcu_read_lock() or the filter's lock.
 *
 * Return: true if @t holds @addr.
 */
noinline bool cnf_table_has_slow(const struct cnf_table *t, const void *addr)
{
	struct cnf_pos p;
	unsigned int seq;
	bool hit;

	cnf_locate(t, cnf_width(t), addr, &p);
	do {
		seq = read_seqcount_begin(&t->seq);
		hit = cnf_table_probe(t, cnf_width(t), &p) ||
		      cnf_stash_has(t, addr);
	} while (read_seqcount_retry(&t->seq, seq));
	return hit;
}

/**
 * cnf_table_has4_slow - cnf_table_has_slow() of an IPv4-layout key
 * @t: the table
 * @addr: the key
 *
 * Takes the address by value, so that the fast path keeps it in a register
 * (no stack copy, no stack protector).
 *
 * Return: true if @t holds @addr.
 */
noinline bool cnf_table_has4_slow(const struct cnf_table *t, __be32 addr)
{
	return cnf_table_has_slow(t, &addr);
}

/**
 * cnf_table_contains - is a key in a table
 * @t: the table
 * @key: a key of @t's layout
 *
 * Under rcu_read_lock() or the filter's lock.  Exact, as
 * cnf_filter_lookup4().
 *
 * Return: true if @t holds @key.
 */
bool cnf_table_contains(const struct cnf_table *t, const struct cnf_key *key)
{
	int ret = cnf_for_width(cnf_table_has, t, &key->v6);

	return likely(ret >= 0) ? ret : cnf_table_has_slow(t, &key->v6);
}
