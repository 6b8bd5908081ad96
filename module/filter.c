// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo_nf filter core: an exact cuckoo filter (Fan et al., CoNEXT 2014).
 *
 * Layout.  A table has 2^k buckets of CNF_BUCKET_SLOTS slots.  An address's
 * low word x (host order) is split into r = x >> k and l = x & mask.  With
 * h = H(r), a hash keyed by a per-table random seed, its home bucket is
 * i1 = l ^ h and its alternate i2 = i1 ^ (rol32(h, 16) | 1): odd, so the
 * buckets always differ.  Outsiders cannot aim many addresses at one bucket
 * pair without the seed.  One hash per lookup: an IPv4 r has at most 32 - k
 * bits, so a second hash would add no pairs.  For IPv6, H is jhash2 of the
 * slot's words.  For IPv4, H is looked up in tables of jhash values (see
 * struct cnf_table), so that a lookup costs the same few loads at every
 * table size.  A slot stores r, one bit saying whether it sits in the home
 * or the alternate bucket, and a valid bit.  From a slot and its bucket the
 * address comes back exactly: i1 follows from the bucket and the bit,
 * l = i1 ^ H(r), x = r << k | l.  So a fingerprint hit is an exact match (no
 * false positives), duplicates and absent deletes are detected exactly, and
 * growth rebuilds a table twice the size from its own slots.
 *
 * IPv4 slots hold 32 - k + 2 bits: 16-bit slots from k = 18 on (about 2 to
 * 4 bytes per address), 32-bit below.  IPv6 slots keep the three upper words
 * of the address and the encoded low word: 16 bytes.
 *
 * Inserts never loop: a bounded breadth-first search (CNF_MAX_KICKS slots
 * visited) looks for a cuckoo path to a free slot without changing anything;
 * only a path that ends in a free slot is applied, from the free end
 * backwards.  When there is none the table grows; past the memory limit the
 * key goes to a small stash, and when that is full the add fails with the
 * filter unchanged.
 *
 * Readers (packet path) take no lock.  A table is published with RCU and
 * freed after a grace period.  Within a table every slot change happens in a
 * seqcount write section with bottom halves off, and a miss that overlaps
 * one is looked up again: a key moving from one bucket to the other may be
 * missed by a single pass (read i1, key moves i2 -> i1, read i2), never by a
 * validated one.  An IPv4 hit needs no validation: its slots change in one
 * store, so a slot holding the key's tag means the key was stored at that
 * moment.  An IPv6 slot takes four stores, and a reader between them can
 * see words of two keys that together match a third, absent one: IPv6 hits
 * are validated as misses are.  Write sections are a few slot stores long.
 */
#include "filter.h"

#define CNF_LOAD_MAX_PCT	96
#define CNF_V6_SLOT_BYTES	16

struct cnf_slot6 {
	u32 w[4];
};

/*
 * A table.  Readers: under RCU, fields fixed at creation plus slots and stash
 * inside seqcount read sections.  Writers: under the filter's lock, slot and
 * stash changes inside write sections of @seq.
 */
struct cnf_table {
	seqcount_t seq;
	u8 family;
	u8 log;			/* 2^log buckets */
	u8 slot_bytes;		/* 2 or 4 (IPv4), 16 (IPv6) */
	u32 mask;		/* buckets - 1 */
	u32 seed;
	u32 stash_n;
	struct cnf_key stash[CNF_STASH_SLOTS];
	u64 count;		/* writer only: keys, stash included */
	u64 limit;		/* writer only: cnf_table_limit(log) */
	size_t bytes;
	struct rcu_head rcu;
	/*
	 * The buckets, a power of two of bytes in an allocation of their own:
	 * kmalloc would round a header plus slots up to the next power of two.
	 * Aligned to at least a bucket, so a bucket never spans two lines.
	 */
	u8 *slots;
	/*
	 * IPv4 tables: H(r) by simple tabulation, r cut into chunks of
	 * cnf_tab_bits() bits and H(r) the xor of one entry per chunk, out of
	 * a table of jhash values per chunk under @seed; cuckoo hashing works
	 * with it as with a random function (Patrascu and Thorup, "The Power
	 * of Simple Tabulation Hashing", 2012).  Tables of 16-bit slots
	 * (log >= 18, r of at most 14 bits) take two chunks of 7 bits (1 KB),
	 * others three chunks of 10 bits (12 KB).  Two or three loads replace
	 * a jhash, so the packet path costs about the same at every table size.
	 * Written before the table is published, then read only.  NULL in
	 * IPv6 tables.
	 */
	u32 *hashes;
};

/*
 * A bucket the search for a cuckoo path reached: the key in slot @slot of
 * its parent's bucket would move into it.  The roots are the new key's
 * buckets.
 */
struct cnf_path_node {
	u32 bucket;
	u16 parent;		/* index in the path array, CNF_NO_PARENT */
	u8 slot;		/* in the parent's bucket */
};

/* The roots, then at most one node per slot visited. */
#define CNF_PATH_NODES	(2 + CNF_MAX_KICKS)

#define CNF_NO_PARENT	0xffff

/*
 * A filter: one table per family.  @tab is read under RCU and replaced under
 * @lock; everything else is writer only, under @lock.
 */
struct cnf_filter {
	struct cnf_table __rcu *tab[CNF_NFAMILIES];
	struct cnf_mutex lock;
	u64 mem_limit;
	u64 charged;		/* bytes held for the filter's users: dumps */
	u64 expect;		/* adds announced by cnf_filter_expect() */
	u64 grows[CNF_NFAMILIES];
	u8 initial_log;
	struct cnf_path_node path[CNF_PATH_NODES];
};

/* Where a key lives: its two buckets and its encoded slot (home tag). */
struct cnf_pos {
	u32 b[2];		/* [0] home, [1] alternate */
	u32 w[4];		/* slot words; IPv4 uses w[0] */
};

#define CNF_TAG_VALID	1U
#define CNF_TAG_ALT	2U

static struct cnf_table *cnf_tab(const struct cnf_filter *f,
				 enum cnf_family fam)
{
	return rcu_dereference_protected(f->tab[fam], lockdep_is_held(&f->lock));
}

static size_t cnf_slot_bytes(enum cnf_family fam, unsigned int log)
{
	if (fam == CNF_V6)
		return CNF_V6_SLOT_BYTES;
	return 32 - log + 2 <= 16 ? 2 : 4;
}

static size_t cnf_slots_bytes(enum cnf_family fam, unsigned int log)
{
	return ((size_t)CNF_BUCKET_SLOTS << log) * cnf_slot_bytes(fam, log);
}

/*
 * The largest table of a family: its slots stay below INT_MAX bytes, which
 * kvmalloc() refuses.  2^24 buckets for IPv6 (1 GiB), 2^27 for IPv4.
 */
static unsigned int cnf_max_log(enum cnf_family fam)
{
	unsigned int log = CNF_MIN_BUCKETS_LOG;

	while (cnf_slots_bytes(fam, log + 1) < INT_MAX)
		log++;
	return log;
}

/* Simple tabulation of IPv4 r (see struct cnf_table): bits per chunk. */
#define CNF_TAB16_BITS		7	/* two chunks: r of 14 bits at most */
#define CNF_TAB32_BITS		10	/* three chunks: 30 bits at most */

static unsigned int cnf_tab_bits(unsigned int width)
{
	return width == 2 ? CNF_TAB16_BITS : CNF_TAB32_BITS;
}

static unsigned int cnf_tab_chunks(unsigned int width)
{
	return width == 2 ? 2 : 3;
}

static size_t cnf_hashes_entries(enum cnf_family fam, unsigned int log)
{
	unsigned int width = cnf_slot_bytes(fam, log);

	if (fam != CNF_V4)
		return 0;
	return (size_t)cnf_tab_chunks(width) << cnf_tab_bits(width);
}

static size_t cnf_table_bytes(enum cnf_family fam, unsigned int log)
{
	return sizeof(struct cnf_table) + cnf_slots_bytes(fam, log) +
	       cnf_hashes_entries(fam, log) * sizeof(u32);
}

static u64 cnf_table_capacity(unsigned int log)
{
	return (u64)CNF_BUCKET_SLOTS << log;
}

/* The most keys a table of 2^@log buckets holds within the load limit. */
static u64 cnf_table_limit(unsigned int log)
{
	return cnf_table_capacity(log) * CNF_LOAD_MAX_PCT / 100;
}

/* ---- hashing: everything a slot needs comes from r = x >> log ---- */

/*
 * H(r) of an IPv4 table of @width-byte slots.  The top chunk needs no mask:
 * its bits are all the bits r has (see cnf_hashes_fill()).
 */
static __always_inline u32 cnf_hash4(const struct cnf_table *t,
				     unsigned int width, u32 r)
{
	const unsigned int bits = cnf_tab_bits(width);
	const u32 *tab = t->hashes, mask = (1U << bits) - 1;
	/* Per-chunk tables: their offsets fold into the loads. */
	const u32 *tab1 = tab + (1U << bits), *tab2 = tab + (2U << bits);

	if (width == 2)
		return tab[r & mask] ^ tab1[r >> bits];
	return tab[r & mask] ^ tab1[r >> bits & mask] ^ tab2[r >> 2 * bits];
}

/*
 * H(r), r being the part of the key the slot stores; tag bits excluded.
 * @width is t->slot_bytes (which also tells the family).  Writers and
 * readers pass it as a constant where they can, so that each inlined copy
 * compiles only its own layout; slow paths pass t->slot_bytes.
 */
static __always_inline u32 cnf_hash(const struct cnf_table *t,
				    unsigned int width, const u32 *w)
{
	u32 r[4];

	if (width != CNF_V6_SLOT_BYTES)
		return cnf_hash4(t, width, w[0] >> 2);
	r[0] = w[0];
	r[1] = w[1];
	r[2] = w[2];
	r[3] = w[3] >> 2;
	return jhash2(r, 4, t->seed);
}

static __always_inline u32 cnf_alt_offset(const struct cnf_table *t, u32 h)
{
	return (rol32(h, 16) | 1) & t->mask;
}

/*
 * Encode address @addr of family @fam (a __be32 or a struct in6_addr) for
 * table @t of @width-byte slots: its slot (home tag) and its two buckets.
 */
static __always_inline void cnf_locate_as(const struct cnf_table *t,
					  enum cnf_family fam,
					  unsigned int width, const void *addr,
					  struct cnf_pos *p)
{
	const __be32 *a = addr;
	u32 x, h, *w = p->w;

	x = ntohl(a[fam == CNF_V4 ? 0 : 3]);
	if (fam == CNF_V4) {
		w[0] = (x >> t->log) << 2 | CNF_TAG_VALID;
		w[1] = 0;
		w[2] = 0;
		w[3] = 0;
	} else {
		w[0] = (__force u32)a[0];
		w[1] = (__force u32)a[1];
		w[2] = (__force u32)a[2];
		w[3] = (x >> t->log) << 2 | CNF_TAG_VALID;
	}
	h = cnf_hash(t, width, w);
	p->b[0] = (x ^ h) & t->mask;
	p->b[1] = p->b[0] ^ cnf_alt_offset(t, h);
}

static __always_inline void cnf_locate(const struct cnf_table *t,
				       enum cnf_family fam, const void *addr,
				       struct cnf_pos *p)
{
	cnf_locate_as(t, fam, t->slot_bytes, addr, p);
}

/* The tag word of @width-byte slots: w[0] for IPv4, w[3] for IPv6. */
static __always_inline u32 *cnf_tag_word(unsigned int width, u32 *w)
{
	return width == CNF_V6_SLOT_BYTES ? &w[3] : &w[0];
}

/* Decode slot words @w found in bucket @bucket back into the address. */
static void cnf_decode(const struct cnf_table *t, const u32 *w, u32 bucket,
		       struct cnf_key *key)
{
	u32 tag = t->family == CNF_V4 ? w[0] : w[3];
	u32 h = cnf_hash(t, t->slot_bytes, w), home = bucket, x;

	if (tag & CNF_TAG_ALT)
		home ^= cnf_alt_offset(t, h);
	x = (tag >> 2) << t->log | ((home ^ h) & t->mask);
	key->family = t->family;
	if (t->family == CNF_V4) {
		key->v4 = htonl(x);
		return;
	}
	key->v6.s6_addr32[0] = (__force __be32)w[0];
	key->v6.s6_addr32[1] = (__force __be32)w[1];
	key->v6.s6_addr32[2] = (__force __be32)w[2];
	key->v6.s6_addr32[3] = htonl(x);
}

/* ---- slot access ---- */

/* Slot accessors take the slot width like cnf_hash(). */
static __always_inline void cnf_slot_read(const struct cnf_table *t,
					  unsigned int width, u32 bucket,
					  unsigned int s, u32 *w)
{
	size_t i = (size_t)bucket * CNF_BUCKET_SLOTS + s;

	w[1] = 0;
	w[2] = 0;
	w[3] = 0;
	switch (width) {
	case 2:
		w[0] = READ_ONCE(((const u16 *)t->slots)[i]);
		break;
	case 4:
		w[0] = READ_ONCE(((const u32 *)t->slots)[i]);
		break;
	default: {
		const struct cnf_slot6 *s6 = (const struct cnf_slot6 *)t->slots;

		w[0] = READ_ONCE(s6[i].w[0]);
		w[1] = READ_ONCE(s6[i].w[1]);
		w[2] = READ_ONCE(s6[i].w[2]);
		w[3] = READ_ONCE(s6[i].w[3]);
	}
	}
}

static __always_inline void cnf_slot_write(struct cnf_table *t,
					   unsigned int width, u32 bucket,
					   unsigned int s, const u32 *w)
{
	size_t i = (size_t)bucket * CNF_BUCKET_SLOTS + s;

	switch (width) {
	case 2:
		WRITE_ONCE(((u16 *)t->slots)[i], (u16)w[0]);
		break;
	case 4:
		WRITE_ONCE(((u32 *)t->slots)[i], w[0]);
		break;
	default: {
		struct cnf_slot6 *s6 = (struct cnf_slot6 *)t->slots;

		WRITE_ONCE(s6[i].w[0], w[0]);
		WRITE_ONCE(s6[i].w[1], w[1]);
		WRITE_ONCE(s6[i].w[2], w[2]);
		WRITE_ONCE(s6[i].w[3], w[3]);
	}
	}
}

static bool cnf_slot_equal(const struct cnf_table *t, const u32 *a,
			   const u32 *b)
{
	if (t->family == CNF_V4)
		return a[0] == b[0];
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* Slot of bucket @bucket holding @w, or -1. */
static int cnf_bucket_find(const struct cnf_table *t, u32 bucket, const u32 *w)
{
	unsigned int s;
	u32 cur[4] = { 0 };

	for (s = 0; s < CNF_BUCKET_SLOTS; s++) {
		cnf_slot_read(t, t->slot_bytes, bucket, s, cur);
		if (cnf_slot_equal(t, cur, w))
			return s;
	}
	return -1;
}

/*
 * Buckets of 2- or 4-byte slots are tested 64 bits at a time.  These return
 * the top bit of every zero lane of @x: (x - 1) & ~x per lane.  A borrow can
 * also flag a lane above a zero lane, never one below: the lowest flag is
 * exact, and so is "some lane is zero".
 */
static __always_inline u64 cnf_zero_lanes16(u64 x)
{
	const u64 ones = 0x0001000100010001ULL;

	return (x - ones) & ~x & (ones << 15);
}

/*
 * 4-byte slots hold at most 32 - CNF_MIN_BUCKETS_LOG + 2 bits, so no lane of
 * a bucket word, or of one xor a tag, has its top bit set: (x - 1) alone
 * sets it in a zero lane (or, through the borrow, in the lane above one),
 * and the ~x of 2-byte lanes can go.
 */
static __always_inline u64 cnf_zero_lanes32(u64 x)
{
	const u64 ones = 0x0000000100000001ULL;

	BUILD_BUG_ON(32 - CNF_MIN_BUCKETS_LOG + 2 > 31);
	return (x - ones) & (ones << 31);
}

/* First empty slot of @bucket, or -1.  Empty slots are all zero. */
static __always_inline int cnf_bucket_free_slot(const struct cnf_table *t,
						unsigned int width, u32 bucket)
{
	const u64 *word = (const u64 *)t->slots;
	unsigned int s;
	u32 w[4];
	u64 m;

	switch (width) {
	case 2:
		m = cnf_zero_lanes16(word[bucket]);
		return m ? (int)(__ffs64(m) / 16) : -1;
	case 4:
		m = cnf_zero_lanes32(word[2 * (size_t)bucket]);
		if (m)
			return __ffs64(m) / 32;
		m = cnf_zero_lanes32(word[2 * (size_t)bucket + 1]);
		return m ? (int)(2 + __ffs64(m) / 32) : -1;
	}
	for (s = 0; s < CNF_BUCKET_SLOTS; s++) {
		cnf_slot_read(t, width, bucket, s, w);
		if (!(*cnf_tag_word(width, w) & CNF_TAG_VALID))
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

/* ---- write sections ---- */

static void cnf_write_begin(struct cnf_table *t)
{
	/* A softirq reader on this CPU must not spin on a preempted writer. */
	local_bh_disable();
	write_seqcount_begin(&t->seq);
}

static void cnf_write_end(struct cnf_table *t)
{
	write_seqcount_end(&t->seq);
	local_bh_enable();
}

/* ---- lookup (readers) ---- */

/* @v in every lane of a 64-bit word of @width-byte slots. */
static __always_inline u64 cnf_lanes(unsigned int width, u32 v)
{
	return v * (width == 2 ? 0x0001000100010001ULL : 0x0000000100000001ULL);
}

/* Bucket @bucket of a table of @width-byte slots, as 64-bit words. */
static __always_inline const u64 *cnf_bucket_words(const struct cnf_table *t,
						   unsigned int width,
						   u32 bucket)
{
	return (const u64 *)(t->slots +
			     (size_t)bucket * CNF_BUCKET_SLOTS * width);
}

/*
 * Bucket tests of the readers, one per slot layout.  The IPv4 ones return
 * the zero-lane mask of the bucket xor @lanes: non-zero when a slot holds
 * the tag that @lanes repeats.
 */
static __always_inline u64 cnf_bucket16_match(const u64 *b, u64 lanes)
{
	return cnf_zero_lanes16(READ_ONCE(b[0]) ^ lanes);
}

static __always_inline u64 cnf_bucket32_match(const u64 *b, u64 lanes)
{
	return cnf_zero_lanes32(READ_ONCE(b[0]) ^ lanes) |
	       cnf_zero_lanes32(READ_ONCE(b[1]) ^ lanes);
}

static __always_inline bool cnf_bucket6_has(const struct cnf_table *t,
					    u32 bucket, const u32 *w, u32 tag)
{
	const struct cnf_slot6 *s6 = (const struct cnf_slot6 *)t->slots +
				     (size_t)bucket * CNF_BUCKET_SLOTS;
	unsigned int s;

	for (s = 0; s < CNF_BUCKET_SLOTS; s++)
		if (READ_ONCE(s6[s].w[3]) == (w[3] | tag) &&
		    READ_ONCE(s6[s].w[0]) == w[0] &&
		    READ_ONCE(s6[s].w[1]) == w[1] &&
		    READ_ONCE(s6[s].w[2]) == w[2])
			return true;
	return false;
}

/*
 * Is IPv4 home tag @tag in bucket @b0 or, with CNF_TAG_ALT, in @b1 (both of
 * @width-byte slots)?  Both are tested without branching: whether a key sits
 * in its home or alternate bucket is a coin flip that the branch predictor
 * would lose.
 */
static __always_inline bool cnf_probe4(unsigned int width, const u64 *b0,
				       const u64 *b1, u32 tag)
{
	u64 home = cnf_lanes(width, tag);
	u64 alt = home | cnf_lanes(width, CNF_TAG_ALT);

	if (width == 2)
		return (cnf_bucket16_match(b0, home) |
			cnf_bucket16_match(b1, alt)) != 0;
	return (cnf_bucket32_match(b0, home) |
		cnf_bucket32_match(b1, alt)) != 0;
}

/* @width is t->slot_bytes, a constant in the readers' inlined copies. */
static __always_inline bool cnf_table_probe(const struct cnf_table *t,
					    unsigned int width,
					    const struct cnf_pos *p)
{
	if (width == CNF_V6_SLOT_BYTES)
		return cnf_bucket6_has(t, p->b[0], p->w, 0) ||
		       cnf_bucket6_has(t, p->b[1], p->w, CNF_TAG_ALT);
	return cnf_probe4(width, cnf_bucket_words(t, width, p->b[0]),
			  cnf_bucket_words(t, width, p->b[1]), p->w[0]);
}

/* Words of an address of family @fam, as the stash compares them. */
static unsigned int cnf_key_words(enum cnf_family fam)
{
	return fam == CNF_V4 ? 1 : 4;
}

/*
 * Lookups read stash entries while a writer may change them, inside read
 * sections that catch it: every word is a marked access.
 */
static bool cnf_stash_has(const struct cnf_table *t, enum cnf_family fam,
			  const void *addr)
{
	unsigned int i, w, words = cnf_key_words(fam);
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

/*
 * A miss while the stash holds keys: buckets and stash again, in one read
 * section, since a key can move between them.  Rare: the stash only fills
 * when the memory limit stops growth.
 */
static noinline bool cnf_table_has_slow(const struct cnf_table *t,
					enum cnf_family fam, const void *addr)
{
	struct cnf_pos p;
	unsigned int seq;
	bool hit;

	cnf_locate(t, fam, addr, &p);
	do {
		seq = read_seqcount_begin(&t->seq);
		hit = cnf_table_probe(t, t->slot_bytes, &p) ||
		      cnf_stash_has(t, fam, addr);
	} while (read_seqcount_retry(&t->seq, seq));
	return hit;
}

/*
 * Takes the address by value, so that the fast path keeps it in a register
 * (no stack copy, no stack protector).
 */
static noinline bool cnf_table_has4_slow(const struct cnf_table *t,
					 __be32 addr)
{
	return cnf_table_has_slow(t, CNF_V4, &addr);
}

/*
 * One copy per family and slot width, so that the packet path runs straight
 * code: the branches are taken once, before the hashing.  The read section
 * does not wait for a writer (raw_seqcount_begin()): a write that overlapped
 * it, like a key in the stash, sends the lookup to the slow path, unless the
 * answer is an IPv4 hit, which stands (see the top of this file).  Returns
 * 1 (present), 0 (absent) or -EAGAIN (ask the slow path).
 */
static __always_inline int cnf_table_has_as(const struct cnf_table *t,
					    enum cnf_family fam,
					    unsigned int width,
					    const void *addr)
{
	struct cnf_pos p;
	unsigned int seq;
	bool hit, slow;

	cnf_locate_as(t, fam, width, addr, &p);
	seq = raw_seqcount_begin(&t->seq);
	hit = cnf_table_probe(t, width, &p);
	if (hit && width != CNF_V6_SLOT_BYTES)
		return 1;
	slow = !hit && READ_ONCE(t->stash_n) != 0;
	slow |= read_seqcount_retry(&t->seq, seq);
	return unlikely(slow) ? -EAGAIN : hit;
}

bool cnf_filter_lookup4(const struct cnf_filter *f, __be32 addr)
{
	const struct cnf_table *t = rcu_dereference(f->tab[CNF_V4]);
	int ret;

	if (t->slot_bytes == 2)
		ret = cnf_table_has_as(t, CNF_V4, 2, &addr);
	else
		ret = cnf_table_has_as(t, CNF_V4, 4, &addr);
	return likely(ret >= 0) ? ret : cnf_table_has4_slow(t, addr);
}

bool cnf_filter_lookup6(const struct cnf_filter *f, const struct in6_addr *addr)
{
	const struct cnf_table *t = rcu_dereference(f->tab[CNF_V6]);
	int ret = cnf_table_has_as(t, CNF_V6, CNF_V6_SLOT_BYTES, addr);

	return likely(ret >= 0) ? ret : cnf_table_has_slow(t, CNF_V6, addr);
}

bool cnf_filter_contains(const struct cnf_filter *f, const struct cnf_key *key)
{
	if (key->family == CNF_V4)
		return cnf_filter_lookup4(f, key->v4);
	if (key->family == CNF_V6)
		return cnf_filter_lookup6(f, &key->v6);
	return false;
}

/* ---- batched IPv4 lookup (readers) ---- */

/* What a batched probe needs of an IPv4 key: its buckets and home tag. */
struct cnf_pos4 {
	const u64 *b[2];
	u32 tag;
};

static __always_inline void cnf_locate4_group(const struct cnf_table *t,
					      unsigned int width,
					      const __be32 *addrs,
					      unsigned int n,
					      struct cnf_pos4 *q)
{
	struct cnf_pos p;
	unsigned int i;

	for (i = 0; i < n; i++) {
		cnf_locate_as(t, CNF_V4, width, &addrs[i], &p);
		q[i].b[0] = cnf_bucket_words(t, width, p.b[0]);
		q[i].b[1] = cnf_bucket_words(t, width, p.b[1]);
		q[i].tag = p.w[0];
		prefetch(q[i].b[0]);
		prefetch(q[i].b[1]);
	}
}

/*
 * What cnf_table_has_as() does, for a group: the hits stand, and the misses
 * go to the slow path if a write overlapped the group's read section or the
 * stash holds keys.
 */
static __always_inline void cnf_probe4_group(const struct cnf_table *t,
					     unsigned int width,
					     const __be32 *addrs,
					     const struct cnf_pos4 *q,
					     unsigned int n, bool *hits)
{
	unsigned int i, seq;
	bool slow;

	seq = raw_seqcount_begin(&t->seq);
	for (i = 0; i < n; i++)
		hits[i] = cnf_probe4(width, q[i].b[0], q[i].b[1], q[i].tag);
	slow = READ_ONCE(t->stash_n) != 0;
	slow |= read_seqcount_retry(&t->seq, seq);
	if (unlikely(slow))
		for (i = 0; i < n; i++)
			if (!hits[i])
				hits[i] = cnf_table_has4_slow(t, addrs[i]);
}

/*
 * Groups of CNF_LOOKUP_BATCH keys are located and their buckets prefetched
 * one group ahead of their probe, so that the cache misses of a large table
 * overlap with the work on the group before.
 */
static __always_inline void cnf_lookup4_batch_as(const struct cnf_table *t,
						 unsigned int width,
						 const __be32 *addrs,
						 unsigned int n, bool *hits)
{
	struct cnf_pos4 q[2][CNF_LOOKUP_BATCH];
	unsigned int i, len, next, cur = 0;

	len = min_t(unsigned int, n, CNF_LOOKUP_BATCH);
	cnf_locate4_group(t, width, addrs, len, q[0]);
	for (i = 0; i < n; i += len, len = next, cur ^= 1) {
		next = min_t(unsigned int, n - i - len, CNF_LOOKUP_BATCH);
		cnf_locate4_group(t, width, addrs + i + len, next, q[cur ^ 1]);
		cnf_probe4_group(t, width, addrs + i, q[cur], len, hits + i);
	}
}

void cnf_filter_lookup4_batch(const struct cnf_filter *f, const __be32 *addrs,
			      unsigned int n, bool *hits)
{
	const struct cnf_table *t = rcu_dereference(f->tab[CNF_V4]);

	if (t->slot_bytes == 2)
		cnf_lookup4_batch_as(t, 2, addrs, n, hits);
	else
		cnf_lookup4_batch_as(t, 4, addrs, n, hits);
}

/* ---- tables (writers) ---- */

/*
 * The tabulation of an IPv4 table: entry i is jhash(chunk value, chunk
 * index).  Inputs are distinct: equal entries in two chunks' tables would
 * cancel out of H.
 */
static void cnf_hashes_fill(struct cnf_table *t, size_t entries)
{
	unsigned int bits = cnf_tab_bits(t->slot_bytes);
	u32 i;

	BUILD_BUG_ON(2 * CNF_TAB16_BITS < 16 - 2);
	BUILD_BUG_ON(3 * CNF_TAB32_BITS < 32 - CNF_MIN_BUCKETS_LOG);
	for (i = 0; i < entries; i++)
		t->hashes[i] = jhash_2words(i & ((1U << bits) - 1), i >> bits,
					    t->seed);
}

static struct cnf_table *cnf_table_alloc(enum cnf_family fam, unsigned int log)
{
	struct cnf_table *t = cnf_zalloc(sizeof(*t));
	size_t entries;

	if (!t)
		return NULL;
	t->slots = cnf_zalloc(cnf_slots_bytes(fam, log));
	if (!t->slots)
		goto err_table;
	t->seed = get_random_u32();
	t->slot_bytes = cnf_slot_bytes(fam, log);
	entries = cnf_hashes_entries(fam, log);
	if (entries) {
		t->hashes = cnf_zalloc(entries * sizeof(u32));
		if (!t->hashes)
			goto err_slots;
		cnf_hashes_fill(t, entries);
	}
	seqcount_init(&t->seq);
	t->family = fam;
	t->log = log;
	t->mask = (1U << log) - 1;
	t->limit = cnf_table_limit(log);
	t->bytes = cnf_table_bytes(fam, log);
	return t;

err_slots:
	cnf_free(t->slots);
err_table:
	cnf_free(t);
	return NULL;
}

static void cnf_table_free(struct cnf_table *t)
{
	if (!t)
		return;
	cnf_free(t->hashes);
	cnf_free(t->slots);
	cnf_free(t);
}

static void cnf_table_free_rcu(struct rcu_head *head)
{
	cnf_table_free(container_of(head, struct cnf_table, rcu));
}

/* Free @t once no reader can see it; module exit waits with rcu_barrier(). */
static void cnf_table_retire(struct cnf_table *t)
{
	cnf_call_rcu(&t->rcu, cnf_table_free_rcu);
}

/* Position of @key in @t: bucket and slot, or stash index; false if absent. */
struct cnf_found {
	bool in_stash;
	u32 bucket;
	int slot;		/* slot in bucket, or stash index */
};

static bool cnf_table_find(const struct cnf_table *t, const struct cnf_key *key,
			   struct cnf_found *at)
{
	struct cnf_pos p;
	unsigned int i;

	cnf_locate(t, key->family, &key->v6, &p);
	for (i = 0; i < 2; i++) {
		*cnf_tag_word(t->slot_bytes, p.w) |= i ? CNF_TAG_ALT : 0;
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

/* The bucket the key in (bucket, slot) would move to, and its new slot. */
static __always_inline u32 cnf_slot_other(const struct cnf_table *t,
					  unsigned int width, u32 bucket,
					  unsigned int s, u32 *w)
{
	cnf_slot_read(t, width, bucket, s, w);
	*cnf_tag_word(width, w) ^= CNF_TAG_ALT;
	return bucket ^ cnf_alt_offset(t, cnf_hash(t, width, w));
}

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
		to_slot = *s;
		if (path[n].parent == CNF_NO_PARENT)
			return n;
		*s = path[n].slot;
		n = path[n].parent;
	}
}

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
static __always_inline int cnf_table_insert_far_as(struct cnf_table *t,
						   unsigned int width,
						   struct cnf_path_node *path,
						   struct cnf_pos *p)
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
 * the common case, needs few registers; still one copy per width.
 */
static noinline int cnf_table_insert_far(struct cnf_table *t,
					 unsigned int width,
					 struct cnf_path_node *path,
					 struct cnf_pos *p)
{
	switch (width) {
	case 2:
		return cnf_table_insert_far_as(t, 2, path, p);
	case 4:
		return cnf_table_insert_far_as(t, 4, path, p);
	}
	return cnf_table_insert_far_as(t, CNF_V6_SLOT_BYTES, path, p);
}

/*
 * Put an absent key, located at @p, into @t's buckets; -ENOSPC when no path
 * frees a slot.
 */
static __always_inline int cnf_table_insert_at(struct cnf_table *t,
					       unsigned int width,
					       struct cnf_path_node *path,
					       struct cnf_pos *p)
{
	u32 bucket = p->b[0];
	int s = cnf_bucket_free_slot(t, width, bucket);

	if (s < 0) {
		bucket = p->b[1];
		s = cnf_bucket_free_slot(t, width, bucket);
		if (s < 0)
			return cnf_table_insert_far(t, width, path, p);
	}
	cnf_write_begin(t);
	cnf_table_put(t, width, bucket, s, p);
	cnf_write_end(t);
	return 0;
}

static int cnf_table_insert(struct cnf_table *t, struct cnf_path_node *path,
			    const struct cnf_key *key)
{
	struct cnf_pos p;

	cnf_locate(t, key->family, &key->v6, &p);
	return cnf_table_insert_at(t, t->slot_bytes, path, &p);
}

/* Writer side: is @key, located at @p, in @t of @width-byte slots? */
static __always_inline bool cnf_table_holds(const struct cnf_table *t,
					    unsigned int width,
					    const struct cnf_pos *p,
					    const struct cnf_key *key)
{
	return cnf_table_probe(t, width, p) ||
	       (t->stash_n && cnf_stash_has(t, key->family, &key->v6));
}

static void cnf_stash_get(const struct cnf_table *t, unsigned int i,
			  struct cnf_key *key)
{
	unsigned int w, words = cnf_key_words(t->family);

	memset(key, 0, sizeof(*key));
	key->family = t->family;
	for (w = 0; w < words; w++)
		key->v6.s6_addr32[w] = READ_ONCE(t->stash[i].v6.s6_addr32[w]);
}

/* Inside a write section: see cnf_stash_has(). */
static void cnf_stash_set(struct cnf_table *t, unsigned int i,
			  const struct cnf_key *key)
{
	unsigned int w, words = cnf_key_words(key->family);

	t->stash[i].family = key->family;
	for (w = 0; w < words; w++)
		WRITE_ONCE(t->stash[i].v6.s6_addr32[w], key->v6.s6_addr32[w]);
}

static bool cnf_stash_put(struct cnf_table *t, const struct cnf_key *key)
{
	if (t->stash_n == CNF_STASH_SLOTS)
		return false;
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

static void cnf_slot_clear(struct cnf_table *t, u32 bucket, unsigned int s)
{
	static const u32 zero[4];

	cnf_write_begin(t);
	cnf_slot_write(t, t->slot_bytes, bucket, s, zero);
	cnf_write_end(t);
	t->count--;
}

/* Calls @fn for every key of @t; stops at @fn's first non-zero return. */
static int cnf_table_walk(const struct cnf_table *t,
			  int (*fn)(void *ctx, const struct cnf_key *key),
			  void *ctx)
{
	struct cnf_key key;
	unsigned int s, i;
	u32 b, w[4];
	int err;

	for (b = 0; b <= t->mask; b++) {
		for (s = 0; s < CNF_BUCKET_SLOTS; s++) {
			cnf_slot_read(t, t->slot_bytes, b, s, w);
			if (!(*cnf_tag_word(t->slot_bytes, w) & CNF_TAG_VALID))
				continue;
			cnf_decode(t, w, b, &key);
			err = fn(ctx, &key);
			if (err)
				return err;
		}
		if (!(b & 0xffff))
			cond_resched();
	}
	for (i = 0; i < t->stash_n; i++) {
		cnf_stash_get(t, i, &key);
		err = fn(ctx, &key);
		if (err)
			return err;
	}
	return 0;
}

/* ---- growth ---- */

struct cnf_rebuild {
	struct cnf_table *t;
	struct cnf_path_node *path;
};

/* Into the buckets, else the stash: 0 or -ENOSPC. */
static int cnf_table_place(struct cnf_table *t, struct cnf_path_node *path,
			   const struct cnf_key *key)
{
	if (!cnf_table_insert(t, path, key) || cnf_stash_put(t, key))
		return 0;
	return -ENOSPC;
}

static int cnf_rebuild_one(void *ctx, const struct cnf_key *key)
{
	struct cnf_rebuild *rb = ctx;

	return cnf_table_place(rb->t, rb->path, key);
}

/* What counts against the memory limit: the tables and the charges. */
static u64 cnf_filter_bytes(const struct cnf_filter *f)
{
	u64 bytes = f->charged;
	unsigned int fam;

	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		bytes += cnf_tab(f, fam)->bytes;
	return bytes;
}

/*
 * Smallest log of @fam whose table holds @entries within the load limit,
 * at least @min_log; past the family's largest table, that one.
 */
static unsigned int cnf_log_for(enum cnf_family fam, u64 entries,
				unsigned int min_log)
{
	unsigned int log = min_log, max = cnf_max_log(fam);

	while (log < max && cnf_table_limit(log) < entries)
		log++;
	return log;
}

/*
 * Replace @fam's table by one of at least 2^@log buckets holding the same
 * keys; a size whose rebuild does not fit is retried one size up.  New seeds
 * each time: an unlucky (or crafted) key set does not stay unlucky.  The old
 * table stays in use until the new one is complete, and is freed after a
 * grace period: both count against the memory limit.  Fails with -ENOSPC
 * beyond the memory limit or the family's largest table, -ENOMEM.
 */
static int cnf_filter_rebuild(struct cnf_filter *f, enum cnf_family fam,
			      unsigned int log)
{
	struct cnf_table *old = cnf_tab(f, fam);
	u64 in_use = cnf_filter_bytes(f);
	struct cnf_rebuild rb = { .path = f->path };

	for (; log <= cnf_max_log(fam); log++) {
		if (in_use + cnf_table_bytes(fam, log) > f->mem_limit)
			return -ENOSPC;
		rb.t = cnf_table_alloc(fam, log);
		if (!rb.t)
			return -ENOMEM;
		if (!cnf_table_walk(old, cnf_rebuild_one, &rb))
			break;
		cnf_table_free(rb.t);
		rb.t = NULL;
	}
	if (!rb.t)
		return -ENOSPC;
	rcu_assign_pointer(f->tab[fam], rb.t);
	cnf_table_retire(old);
	return 0;
}

static int cnf_filter_grow(struct cnf_filter *f, enum cnf_family fam,
			   unsigned int log)
{
	int err = cnf_filter_rebuild(f, fam, log);

	if (!err)
		f->grows[fam]++;
	return err;
}

static bool cnf_needs_growth(const struct cnf_table *t, u64 entries)
{
	return entries > t->limit;
}

/*
 * The size to grow @t to: twice as large, or large enough for the adds a
 * batch announced (cnf_filter_expect()), but never more than 8 times its
 * size in one step: announced adds may be duplicates, or fail.
 */
static unsigned int cnf_grow_log(const struct cnf_filter *f,
				 const struct cnf_table *t)
{
	u64 want = t->count + 1 + f->expect;

	want = min_t(u64, want, 8 * t->limit);
	return cnf_log_for(t->family, want, t->log + 1);
}

/*
 * A table that deletes left mostly empty (a sixteenth of its slots in use)
 * is rebuilt at a size it fills to half, not below the initial size.  Best
 * effort: a failure keeps the larger table.
 */
static void cnf_maybe_shrink(struct cnf_filter *f, enum cnf_family fam)
{
	const struct cnf_table *t = cnf_tab(f, fam);
	unsigned int log;

	if (t->log <= f->initial_log ||
	    t->count >= cnf_table_capacity(t->log) / 16)
		return;
	log = cnf_log_for(fam, 2 * t->count, f->initial_log);
	if (log < t->log)
		cnf_filter_rebuild(f, fam, log);
}

/* ---- filter ---- */

static int cnf_family_check(const struct cnf_key *key)
{
	return key->family < CNF_NFAMILIES ? 0 : -EINVAL;
}

/*
 * An absent key that @f's table has no room for: past its load limit
 * (@grow_first), or without a cuckoo path.
 */
static noinline int cnf_add_slow(struct cnf_filter *f,
				 const struct cnf_key *key, bool grow_first)
{
	struct cnf_table *t = cnf_tab(f, key->family);
	int err;

	/* Past the load limit, grow first; if that fails, any room will do. */
	if (grow_first) {
		if (!cnf_filter_grow(f, key->family, cnf_grow_log(f, t)))
			t = cnf_tab(f, key->family);
		if (!cnf_table_insert(t, f->path, key))
			return 0;
	}
	err = cnf_filter_grow(f, key->family, t->log + 1);
	if (!err)
		return cnf_table_place(cnf_tab(f, key->family), f->path, key);
	return cnf_stash_put(t, key) ? 0 : err;
}

/* The family of a table of @width-byte slots, a constant where @width is. */
static __always_inline enum cnf_family cnf_width_family(unsigned int width)
{
	return width == CNF_V6_SLOT_BYTES ? CNF_V6 : CNF_V4;
}

/* Add to @t of @width-byte slots: one copy per width, like the readers. */
static __always_inline int cnf_add_as(struct cnf_filter *f,
				      struct cnf_table *t, unsigned int width,
				      const struct cnf_key *key)
{
	struct cnf_pos p;

	cnf_locate_as(t, cnf_width_family(width), width, &key->v6, &p);
	if (cnf_table_holds(t, width, &p, key))
		return -EEXIST;
	if (cnf_needs_growth(t, t->count + 1))
		return cnf_add_slow(f, key, true);
	if (cnf_table_insert_at(t, width, f->path, &p))
		return cnf_add_slow(f, key, false);
	return 0;
}

/* Out of line, so that IPv6's hashing does not weigh on IPv4's registers. */
static noinline int cnf_add6(struct cnf_filter *f, struct cnf_table *t,
			     const struct cnf_key *key)
{
	return cnf_add_as(f, t, CNF_V6_SLOT_BYTES, key);
}

int cnf_filter_add(struct cnf_filter *f, const struct cnf_key *key)
{
	struct cnf_table *t;
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_family_check(key);
	if (err)
		return err;
	t = cnf_tab(f, key->family);
	switch (t->slot_bytes) {
	case 2:
		return cnf_add_as(f, t, 2, key);
	case 4:
		return cnf_add_as(f, t, 4, key);
	}
	return cnf_add6(f, t, key);
}

static __always_inline void cnf_prefetch_as(struct cnf_table *t,
					    unsigned int width,
					    const struct cnf_key *key)
{
	struct cnf_pos p;

	cnf_locate_as(t, cnf_width_family(width), width, &key->v6, &p);
	prefetchw(cnf_bucket_words(t, width, p.b[0]));
	prefetchw(cnf_bucket_words(t, width, p.b[1]));
}

void cnf_filter_prefetch(struct cnf_filter *f, const struct cnf_key *key)
{
	struct cnf_table *t;

	cnf_assert_held(&f->lock);
	if (cnf_family_check(key))
		return;
	t = cnf_tab(f, key->family);
	switch (t->slot_bytes) {
	case 2:
		cnf_prefetch_as(t, 2, key);
		break;
	case 4:
		cnf_prefetch_as(t, 4, key);
		break;
	default:
		cnf_prefetch_as(t, CNF_V6_SLOT_BYTES, key);
	}
}

int cnf_filter_del(struct cnf_filter *f, const struct cnf_key *key)
{
	struct cnf_found at;
	struct cnf_table *t;
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_family_check(key);
	if (err)
		return err;
	t = cnf_tab(f, key->family);
	if (!cnf_table_find(t, key, &at))
		return -ENOENT;
	if (at.in_stash) {
		cnf_stash_remove(t, at.slot);
		return 0;
	}
	cnf_slot_clear(t, at.bucket, at.slot);
	if (t->stash_n)
		cnf_stash_drain(t, f->path);
	else
		cnf_maybe_shrink(f, key->family);
	return 0;
}

int cnf_filter_reserve(struct cnf_filter *f, enum cnf_family fam, u64 entries)
{
	struct cnf_table *t;
	unsigned int log;

	cnf_assert_held(&f->lock);
	if (fam >= CNF_NFAMILIES)
		return -EINVAL;
	t = cnf_tab(f, fam);
	log = cnf_log_for(fam, entries, t->log);
	if (log == t->log)
		return 0;
	if (cnf_table_limit(cnf_max_log(fam)) < entries)
		return -ENOSPC;
	return cnf_filter_grow(f, fam, log);
}

void cnf_filter_expect(struct cnf_filter *f, u64 adds)
{
	cnf_assert_held(&f->lock);
	f->expect = adds;
}

int cnf_filter_charge(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	if (cnf_filter_bytes(f) + bytes > f->mem_limit)
		return -ENOSPC;
	f->charged += bytes;
	return 0;
}

void cnf_filter_uncharge(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	f->charged -= min(bytes, f->charged);
}

int cnf_filter_flush(struct cnf_filter *f)
{
	struct cnf_table *fresh[CNF_NFAMILIES] = { NULL };
	unsigned int fam;

	cnf_assert_held(&f->lock);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		fresh[fam] = cnf_table_alloc(fam, f->initial_log);
		if (!fresh[fam])
			goto err_alloc;
	}
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_table *old = cnf_tab(f, fam);

		rcu_assign_pointer(f->tab[fam], fresh[fam]);
		cnf_table_retire(old);
	}
	return 0;

err_alloc:
	while (fam--)
		cnf_table_free(fresh[fam]);
	return -ENOMEM;
}

int cnf_filter_set_limit(struct cnf_filter *f, u64 bytes)
{
	cnf_assert_held(&f->lock);
	if (bytes < cnf_filter_bytes(f))
		return -EINVAL;
	f->mem_limit = bytes;
	return 0;
}

int cnf_filter_walk(struct cnf_filter *f,
		    int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	unsigned int fam;
	int err;

	cnf_assert_held(&f->lock);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		err = cnf_table_walk(cnf_tab(f, fam), fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

u64 cnf_filter_count(struct cnf_filter *f, enum cnf_family fam)
{
	cnf_assert_held(&f->lock);
	return fam < CNF_NFAMILIES ? cnf_tab(f, fam)->count : 0;
}

void cnf_filter_stats(struct cnf_filter *f, struct cnf_filter_stats *st)
{
	unsigned int fam;

	cnf_assert_held(&f->lock);
	memset(st, 0, sizeof(*st));
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		const struct cnf_table *t = cnf_tab(f, fam);
		struct cnf_table_stats *ts = &st->fam[fam];

		ts->entries = t->count;
		ts->capacity = cnf_table_capacity(t->log);
		ts->bytes = t->bytes;
		ts->grows = f->grows[fam];
		ts->stashed = t->stash_n;
	}
	st->mem_limit = f->mem_limit;
}

void cnf_filter_lock(struct cnf_filter *f)
{
	cnf_mutex_lock(&f->lock);
}

int cnf_filter_lock_killable(struct cnf_filter *f)
{
	return cnf_mutex_lock_killable(&f->lock);
}

void cnf_filter_unlock(struct cnf_filter *f)
{
	cnf_mutex_unlock(&f->lock);
}

u64 cnf_filter_max_capacity(void)
{
	return cnf_table_limit(min(cnf_max_log(CNF_V4), cnf_max_log(CNF_V6)));
}

struct cnf_filter *cnf_filter_create(u64 initial_capacity, u64 mem_limit)
{
	struct cnf_filter *f = cnf_zalloc(sizeof(*f));
	unsigned int fam;

	if (!f)
		return NULL;
	cnf_mutex_init(&f->lock);
	f->initial_log = cnf_log_for(CNF_V6, initial_capacity,
				     CNF_MIN_BUCKETS_LOG);
	f->mem_limit = mem_limit;
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		struct cnf_table *t = cnf_table_alloc(fam, f->initial_log);

		if (!t)
			goto err_alloc;
		RCU_INIT_POINTER(f->tab[fam], t);
	}
	return f;

err_alloc:
	cnf_filter_destroy(f);
	return NULL;
}

void cnf_filter_destroy(struct cnf_filter *f)
{
	unsigned int fam;

	if (!f)
		return;
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		cnf_table_free(rcu_dereference_protected(f->tab[fam], 1));
	cnf_mutex_destroy(&f->lock);
	cnf_free(f);
}
