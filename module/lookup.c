// SPDX-License-Identifier: GPL-2.0
/*
 * Lookups: the packet path.  Readers take no lock and never wait.
 *
 * A lookup probes each tier that holds keys (prefix.h) for the address cut
 * to the tier's length, but the long IPv6 tiers that the directory (table.h)
 * rules out.  Tables are published with RCU and freed after a grace period.
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
#include "prefix.h"

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

/*
 * A miss while the stash holds keys, or a pass a write overlapped: buckets
 * and stash again, in one read section, since a key can move between them.
 */
static noinline bool cnf_table_has_slow(const struct cnf_table *t,
					const void *addr)
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

/*
 * Takes the address by value, so that the fast path keeps it in a register
 * (no stack copy, no stack protector).
 */
static noinline bool cnf_table_has4_slow(const struct cnf_table *t,
					 __be32 addr)
{
	return cnf_table_has_slow(t, &addr);
}

/*
 * The fast path.  An IPv6 key whose bit its home bucket's summary lacks is
 * absent, buckets and stash alike.  The read section does not wait for a
 * writer (raw_seqcount_begin()): a write that overlapped it, like a key in
 * the stash, sends the lookup to the slow path, unless the answer is an
 * IPv4 hit, which stands.  Returns 1 (present), 0 (absent) or -EAGAIN (ask
 * the slow path).
 */
static __always_inline int cnf_table_has_width(const struct cnf_table *t,
					       unsigned int width,
					       const void *addr)
{
	struct cnf_pos p;
	unsigned int seq;
	bool hit, slow;
	u32 h;

	h = cnf_locate(t, width, addr, &p);
	if (cnf_width_words(width) > 1 && !cnf_summary_has(t, p.b[0], h))
		return 0;
	seq = raw_seqcount_begin(&t->seq);
	hit = cnf_table_probe(t, width, &p);
	if (hit && cnf_width_words(width) == 1)
		return 1;
	slow = !hit && READ_ONCE(t->stash_n) != 0;
	slow |= read_seqcount_retry(&t->seq, seq);
	return unlikely(slow) ? -EAGAIN : hit;
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

/* Is @key, of an IPv4-layout table, in @t? */
static __always_inline bool cnf_table_has4(const struct cnf_table *t,
					   __be32 key)
{
	int ret = cnf_for_v4_width(cnf_table_has, t, &key);

	return likely(ret >= 0) ? ret : cnf_table_has4_slow(t, key);
}

/* The tiers of @fam that hold keys, @word'th 64 of them. */
static __always_inline u64 cnf_active(const struct cnf_filter *f,
				      enum cnf_family fam, unsigned int word)
{
	/* Pairs with cnf_active_set(): a tier seen has its table published. */
	return smp_load_acquire(&f->active[fam][word]);
}

/*
 * Is the /16 of an address whose first 32 bits are @top (host order) set
 * in map @m?  NULL: emptied since the tiers were read.
 */
static __always_inline bool cnf_map_has(const struct cnf_map *m, u32 top)
{
	u32 i = top >> (32 - CNF_MAP_BITS);

	return m && (READ_ONCE(m->words[i / 64]) >> (i % 64) & 1);
}

/*
 * Is the address whose first 32 bits are @top (host order) covered by
 * @fam's map or a key of its tiers of the IPv4 layout, those of @tiers?
 * The map first, then the tables: the loop tests no tier for the map.
 */
static __always_inline bool cnf_tiers32_have(const struct cnf_filter *f,
					     enum cnf_family fam, u64 tiers,
					     u32 top)
{
	const struct cnf_table *t;
	unsigned int tl;

	if ((tiers & BIT_ULL(CNF_MAP_BITS)) &&
	    cnf_map_has(rcu_dereference(f->map[fam]), top))
		return true;
	for (tiers &= ~BIT_ULL(CNF_MAP_BITS); tiers; tiers &= tiers - 1) {
		tl = __ffs64(tiers);
		t = rcu_dereference(f->tier[fam][tl]);
		/* NULL: emptied since the tiers were read. */
		if (t && cnf_table_has4(t, cnf_tier_key32(top, tl)))
			return true;
	}
	return false;
}

/* Every tier in @tiers, for a set with prefixes. */
static noinline bool cnf_lookup4_tiers(const struct cnf_filter *f,
				       __be32 addr, u64 tiers)
{
	return cnf_tiers32_have(f, CNF_V4, tiers, ntohl(addr));
}

/**
 * cnf_filter_lookup4 - does a stored prefix cover an IPv4 address
 * @f: the filter
 * @addr: the address, network byte order
 *
 * Under rcu_read_lock(), from any context; takes no lock.  Exact: true
 * only when a prefix added and not deleted covers @addr, whatever writers
 * do meanwhile.  One probe per tier that holds keys: at most four, and a
 * read of the /16 map.
 *
 * Return: true if a prefix of @f covers @addr.
 */
bool cnf_filter_lookup4(const struct cnf_filter *f, __be32 addr)
{
	u64 tiers = cnf_active(f, CNF_V4, 0);

	/* Addresses only: one table, the address tier, always there. */
	if (likely(tiers == BIT_ULL(CNF_V4_BITS)))
		return cnf_table_has4(rcu_dereference(f->tier[CNF_V4][CNF_V4_BITS]),
				      addr);
	return cnf_lookup4_tiers(f, addr, tiers);
}

/* Is @addr a key of @t, a table of 16-byte slots? */
static __always_inline bool cnf_table_has6(const struct cnf_table *t,
					   const struct in6_addr *addr)
{
	int ret = cnf_table_has_width(t, CNF_SLOT_V6, addr);

	return likely(ret >= 0) ? ret : cnf_table_has_slow(t, addr);
}

/*
 * Is @addr, cut to the tier length @tl, a key of IPv6 tier table @t, of a
 * tier past 32 bits?  A table of two-word keys reads only those (prefix.h).
 */
static bool cnf_tier_has6(const struct cnf_table *t, unsigned int tl,
			  const struct in6_addr *addr)
{
	struct in6_addr cut;
	__be32 key[2];
	int ret;

	if (cnf_layout_words(cnf_tier_layout(tl)) == 2) {
		key[0] = addr->s6_addr32[0];
		key[1] = cnf_tier_key64(addr->s6_addr32[1], tl);
		ret = cnf_for_64_width(cnf_table_has, t, key);
		return likely(ret >= 0) ? ret : cnf_table_has_slow(t, key);
	}
	if (tl < CNF_V6_BITS) {
		cut = *addr;
		cnf_mask6(&cut, tl);
		addr = &cut;
	}
	return cnf_table_has6(t, addr);
}

/* Is @addr, cut to the tier length @tl, in IPv6 tier @tl, if it has keys? */
static bool cnf_tier_probe6(const struct cnf_filter *f, unsigned int tl,
			    const struct in6_addr *addr)
{
	const struct cnf_table *t = rcu_dereference(f->tier[CNF_V6][tl]);

	return t && cnf_tier_has6(t, tl, addr);
}

/*
 * The long tiers that may hold keys under an address whose first 32 bits
 * are @top, as directory bits: those its word in the directory names, or
 * without one, every long tier with keys.
 */
static __always_inline u32 cnf_long_tiers(const struct cnf_filter *f,
					  u32 top)
{
	const struct cnf_v6dir *d = rcu_dereference(f->v6dir);

	if (d) {
		/* Acquire: the tiers' reads come after, as after a probe. */
		return smp_load_acquire(&d->words[cnf_v6dir_index(d, top)]);
	}
	/* Pairs with cnf_active_set(), as cnf_active()'s read does. */
	return smp_load_acquire(&f->long_tiers);
}

/*
 * The tiers of up to 32 bits that hold keys, the long tiers that
 * cnf_long_tiers() names for @addr, and the /128 tier, for a set with
 * prefixes.  @low and @high: the first and last words of @active, as
 * cnf_filter_lookup6() read them.
 */
static noinline bool cnf_lookup6_tiers(const struct cnf_filter *f,
				       const struct in6_addr *addr,
				       u64 low, u64 high)
{
	u32 top = ntohl(addr->s6_addr32[0]), tiers;

	if (cnf_tiers32_have(f, CNF_V6, low & (BIT_ULL(33) - 1), top))
		return true;
	for (tiers = cnf_long_tiers(f, top); tiers; tiers &= tiers - 1)
		if (cnf_tier_probe6(f, cnf_v6dir_tier(__ffs(tiers)), addr))
			return true;
	return high && cnf_tier_probe6(f, CNF_V6_BITS, addr);
}

/**
 * cnf_filter_lookup6 - does a stored prefix cover an IPv6 address
 * @f: the filter
 * @addr: the address
 *
 * As cnf_filter_lookup4(); one probe per tier that holds keys, but the
 * long tiers the directory rules out for @addr (prefix.h).
 *
 * Return: true if a prefix of @f covers @addr.
 */
bool cnf_filter_lookup6(const struct cnf_filter *f, const struct in6_addr *addr)
{
	u64 low = cnf_active(f, CNF_V6, 0), high = cnf_active(f, CNF_V6, 2);

	BUILD_BUG_ON(CNF_V6_BITS / 64 != 2 || CNF_ACTIVE_WORDS != 3);
	/* Addresses only: the address tier alone, as for IPv4. */
	if (likely(!low && !cnf_active(f, CNF_V6, 1) &&
		   high == BIT_ULL(CNF_V6_BITS % 64)))
		return cnf_table_has6(rcu_dereference(f->tier[CNF_V6][CNF_V6_BITS]),
				      addr);
	return cnf_lookup6_tiers(f, addr, low, high);
}

/**
 * cnf_filter_contains - does a stored prefix cover an address
 * @f: the filter
 * @key: an address of either family (its length is not read)
 *
 * As cnf_filter_lookup4().
 *
 * Return: true if a prefix of @f covers @key; false for an unknown family.
 */
bool cnf_filter_contains(const struct cnf_filter *f, const struct cnf_key *key)
{
	if (key->family == CNF_V4)
		return cnf_filter_lookup4(f, key->v4);
	if (key->family == CNF_V6)
		return cnf_filter_lookup6(f, &key->v6);
	return false;
}

/* ---- batched IPv4 lookups ---- */

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
		cnf_locate(t, width, &addrs[i], &p);
		q[i].b[0] = cnf_bucket_words(t, width, p.b[0]);
		q[i].b[1] = cnf_bucket_words(t, width, p.b[1]);
		q[i].tag = p.w[0];
		prefetch(q[i].b[0]);
		prefetch(q[i].b[1]);
	}
}

/*
 * What cnf_table_has_width() does, for a group: the hits stand, and the
 * misses go to the slow path if a write overlapped the group's read section
 * or the stash holds keys.
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
static __always_inline void
cnf_table_has4_batch_width(const struct cnf_table *t, unsigned int width,
			   const __be32 *addrs, unsigned int n, bool *hits)
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

/*
 * Does IPv4 tier @tl (the map, or a table) cover each of @n addresses?
 * Or-ed into @hits: the tier is looked up once for them all.
 */
static void cnf_tier_has32_batch(const struct cnf_filter *f, unsigned int tl,
				 const __be32 *addrs, unsigned int n,
				 bool *hits)
{
	const struct cnf_table *t;
	const struct cnf_map *m;
	unsigned int i;

	if (tl == CNF_MAP_BITS) {
		m = rcu_dereference(f->map[CNF_V4]);
		for (i = 0; i < n; i++)
			hits[i] = hits[i] || cnf_map_has(m, ntohl(addrs[i]));
		return;
	}
	t = rcu_dereference(f->tier[CNF_V4][tl]);
	/* NULL: emptied since the tiers were read. */
	for (i = 0; t && i < n; i++)
		hits[i] = hits[i] ||
			  cnf_table_has4(t, cnf_tier_key32(ntohl(addrs[i]), tl));
}

/**
 * cnf_filter_lookup4_batch - many IPv4 lookups at once
 * @f: the filter
 * @addrs: @n addresses, network byte order
 * @n: how many
 * @hits: @n results: hits[i] for addrs[i]
 *
 * As cnf_filter_lookup4() for each address.  In the address tier, keys go
 * in groups of CNF_LOOKUP_BATCH, each prefetched while the group before is
 * probed, so that the cache misses of tables larger than the caches
 * overlap; the other tiers are probed one address at a time.
 */
void cnf_filter_lookup4_batch(const struct cnf_filter *f, const __be32 *addrs,
			      unsigned int n, bool *hits)
{
	u64 tiers = cnf_active(f, CNF_V4, 0);
	const struct cnf_table *t;

	memset(hits, 0, n * sizeof(*hits));
	t = rcu_dereference(f->tier[CNF_V4][CNF_V4_BITS]);
	if (t && (tiers & (1ULL << CNF_V4_BITS)))
		cnf_for_v4_width(cnf_table_has4_batch, t, addrs, n, hits);
	tiers &= ~(1ULL << CNF_V4_BITS);
	for (; tiers; tiers &= tiers - 1)
		cnf_tier_has32_batch(f, __ffs64(tiers), addrs, n, hits);
}
