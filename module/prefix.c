// SPDX-License-Identifier: GPL-2.0
/*
 * Prefixes: what a filter stores, and how the lookup tables follow it.
 *
 * The lookup tables (prefix.h) only say which keys are present; a key of
 * tier L may be a prefix of length L that was added (a native key), come
 * from shorter prefixes that expand into it (a derived key), or both.
 * Prefixes are kept as given, so deleting one must not remove a key that
 * another prefix still needs, and listing must give each prefix back once.
 *
 * The store holds what the tiers cannot tell:
 *  - every prefix shorter than its tier (each also expanded into its tier);
 *  - a native key that is also derived (else deleting the shorter prefix
 *    would not know to keep it);
 *  - every prefix of the /16 map: a bit does not say which prefixes set
 *    it, so deleting one clears only the bits no stored prefix of up to 16
 *    bits still covers.
 * A key of tier L is derived when the store holds a prefix of a length
 * that maps to L and covers it; it is native when it is not derived, or
 * when the store holds it too.  A set of addresses never touches the
 * store, and costs what it did before prefixes.
 *
 * The store is exact tables, by the width of their keys (cnf_store_key()):
 * one word, in 2- or 4-byte slots, for prefixes of either family shorter
 * than 32 bits, a table for each range of four lengths (so that its keys
 * are numbers of fewer bits, which take 2-byte slots from a smaller size
 * on: table.h); two words, in 6- or 8-byte slots, for IPv4 /32s and IPv6
 * prefixes shorter than /64; four, in 16-byte slots, for IPv6 ones from
 * /64 on.  What lists put there is mostly of the first two kinds (their
 * /64s and addresses are tier lengths).
 *
 * Changes add keys before they remove any, so a source that prefixes cover
 * before and after a change is matched throughout it.  An add does what
 * can fail first, where lookups do not look: the store, which only writers
 * read; tables made (empty) and grown (with the same keys); room in its
 * tier for every key it brings.  Only then do its keys go in, so a source
 * it does not cover is never matched, even while an add fails.  Should a
 * key still find no place (no cuckoo path, no memory to grow, a full
 * stash), the add undoes what it did with deletes, which cannot fail: the
 * filter is as before.
 */
#include "budget.h"
#include "filter.h"
#include "ftable.h"
#include "prefix.h"
#include "v6dir.h"

/* Prefix lengths that expand into the tier of length @tl: [floor, tl]. */
static unsigned int cnf_tier_floor(enum cnf_family fam, unsigned int tl)
{
	unsigned int len = tl;

	while (len && cnf_tier_of(fam, len - 1) == tl)
		len--;
	return len;
}

/* @p cut to its first @len bits. */
static void cnf_prefix_cut(const struct cnf_key *p, unsigned int len,
			   struct cnf_key *q)
{
	*q = *p;
	q->len = len;
	if (p->family == CNF_V4)
		q->v4 = len ? p->v4 & htonl(~0U << (32 - len)) : 0;
	else
		cnf_mask6(&q->v6, len);
}

/* First 32 bits of a prefix of either family, host order. */
static u32 cnf_prefix_top(const struct cnf_key *p)
{
	return ntohl(p->family == CNF_V4 ? p->v4 : p->v6.s6_addr32[0]);
}

/*
 * The key a prefix of its tier length @p->len has in its tier's table (see
 * prefix.h): its bits as a number, of one word or two, or the prefix's
 * address for tiers past 64 bits.
 */
static void cnf_table_key(const struct cnf_key *p, struct cnf_key *k)
{
	memset(k, 0, sizeof(*k));
	if (cnf_layout_words(cnf_tier_layout(p->len)) == 1) {
		k->family = CNF_V4;
		k->len = CNF_V4_BITS;
		k->v4 = cnf_tier_key32(cnf_prefix_top(p), p->len);
		return;
	}
	k->family = CNF_V6;
	k->len = CNF_V6_BITS;
	k->v6 = p->v6;
	if (cnf_layout_words(cnf_tier_layout(p->len)) == 2)
		k->v6.s6_addr32[1] = cnf_tier_key64(p->v6.s6_addr32[1], p->len);
}

/* Back from a key of the tier of length @tl to the prefix of family @fam. */
static void cnf_table_key_prefix(enum cnf_family fam, unsigned int tl,
				 const struct cnf_key *k, struct cnf_key *p)
{
	u32 top;

	memset(p, 0, sizeof(*p));
	p->family = fam;
	p->len = tl;
	if (cnf_layout_words(cnf_tier_layout(tl)) == 2) {
		p->v6 = k->v6;
		p->v6.s6_addr32[1] = htonl(ntohl(k->v6.s6_addr32[1]) <<
					   (64 - tl));
		return;
	}
	if (cnf_layout_words(cnf_tier_layout(tl)) == 4) {
		p->v6 = k->v6;
		return;
	}
	top = tl ? ntohl(k->v4) << (32 - tl) : 0;
	if (fam == CNF_V4)
		p->v4 = htonl(top);
	else
		p->v6.s6_addr32[0] = htonl(top);
}

/*
 * The store's key of @p.  A prefix of either family shorter than 32 bits
 * is one word: its @len bits as a number (as IPv4 tiers have their keys)
 * with bit @len set above them, which marks its length.  An IPv4 /32 is
 * two: 32, and the address, so that what varies between them fills the
 * low bits of the second word, those that pick a CNF_LAYOUT64 key's
 * bucket (cnf_locate()).  An IPv6 prefix of 32 bits or more (never /128: see
 * cnf_tier_of()) is the address with bit @len set, which marks where the
 * prefix ends: below /64 its last two words are zero, and the key fits in
 * two words too.
 */
static void cnf_store_key(const struct cnf_key *p, struct cnf_key *k)
{
	memset(k, 0, sizeof(*k));
	if (p->len < 32) {
		k->family = CNF_V4;
		k->len = CNF_V4_BITS;
		k->v4 = htonl(1U << p->len |
			      (p->len ? cnf_prefix_top(p) >> (32 - p->len) : 0));
		return;
	}
	k->family = CNF_V6;
	k->len = CNF_V6_BITS;
	if (p->family == CNF_V4) {
		k->v6.s6_addr32[0] = htonl(p->len);
		k->v6.s6_addr32[1] = p->v4;
		return;
	}
	k->v6 = p->v6;
	k->v6.s6_addr32[p->len / 32] |= htonl(0x80000000U >> (p->len % 32));
}

/* Back from store key @k, of a table of one, two or four words, to @p. */
static void cnf_store_key_prefix(enum cnf_family fam, const struct cnf_key *k,
				 struct cnf_key *p)
{
	u32 x, top;
	int w;

	memset(p, 0, sizeof(*p));
	p->family = fam;
	if (k->family == CNF_V4) {
		x = ntohl(k->v4);
		p->len = __fls(x);
		/* The marker, bit @len, shifts out. */
		top = p->len ? x << (32 - p->len) : 0;
		if (fam == CNF_V4)
			p->v4 = htonl(top);
		else
			p->v6.s6_addr32[0] = htonl(top);
		return;
	}
	if (fam == CNF_V4) {
		p->len = ntohl(k->v6.s6_addr32[0]);
		p->v4 = k->v6.s6_addr32[1];
		return;
	}
	p->v6 = k->v6;
	for (w = 3; w > 0 && !p->v6.s6_addr32[w]; w--)
		;
	/* The marker is the last bit set. */
	p->len = w * 32 + 31 - __ffs(ntohl(p->v6.s6_addr32[w]));
	p->v6.s6_addr32[w] &= ~htonl(0x80000000U >> (p->len % 32));
}

/* ---- the store ---- */

/*
 * The bits of @p's one-word store key (@p shorter than 32 bits): its @len
 * bits and the marker above them, rounded up to an IPv4 tier length or
 * the map's (cnf_tier_of()).  A store table takes the keys of one such
 * width: numbers below 2^16, 2^20, 2^24, 2^28 or 2^32, in 2-byte slots
 * from 2^2, 2^6, 2^10, 2^14 and 2^18 buckets on, where keys of one bit
 * more would need twice the buckets.
 */
static unsigned int cnf_store_key_bits(const struct cnf_key *p)
{
	return cnf_tier_of(CNF_V4, p->len + 1);
}

/*
 * Which store table of its family keeps @p: below 32 bits, that of the
 * one-word keys of its width; that of two-word keys for IPv4 /32s and
 * IPv6 below /64; that of four-word keys for IPv6 from /64 on, whose
 * marker bit is past the first 64.
 */
static unsigned int cnf_store_index(const struct cnf_key *p)
{
	if (p->len < 32)
		return (cnf_store_key_bits(p) - CNF_MAP_BITS) /
		       CNF_V4_TIER_STEP;
	return CNF_STORE_ONE_WORD + (p->family == CNF_V6 && p->len >= 64);
}

/* The layout of that table. */
static enum cnf_layout cnf_store_layout(const struct cnf_key *p)
{
	if (p->len < 32)
		return (enum cnf_layout)cnf_store_key_bits(p);
	if (cnf_store_index(p) == CNF_STORE_ONE_WORD)
		return CNF_LAYOUT64;
	return CNF_LAYOUT128;
}

/* The store table that keeps @p. */
static struct cnf_table __rcu **cnf_store_of(struct cnf_filter *f,
					     const struct cnf_key *p)
{
	return &f->store[p->family][cnf_store_index(p)];
}

static bool cnf_store_has(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_key k;

	cnf_store_key(p, &k);
	return cnf_tab_has(f, cnf_store_of(f, p), &k);
}

static int cnf_store_add(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_table __rcu **tp = cnf_store_of(f, p);
	struct cnf_key k;
	int err;

	err = cnf_tab_ensure(f, tp, cnf_store_layout(p));
	if (err)
		return err;
	cnf_store_key(p, &k);
	err = cnf_tab_add(f, tp, &k);
	cnf_tab_release(f, tp);
	return err;
}

static void cnf_store_del(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_table __rcu **tp = cnf_store_of(f, p);
	struct cnf_key k;

	cnf_store_key(p, &k);
	WARN_ON_ONCE(cnf_tab_del(f, tp, &k));
	cnf_tab_release(f, tp);
}

static void cnf_active_set(struct cnf_filter *f, enum cnf_family fam,
			   unsigned int tl, bool on)
{
	u64 *word = &f->active[fam][tl / 64], bit = 1ULL << (tl % 64);
	u16 dir_bit;

	/* Pairs with cnf_active(): a reader that sees the bit sees the table. */
	smp_store_release(word, on ? *word | bit : *word & ~bit);
	if (!cnf_tier_is_long(fam, tl))
		return;
	dir_bit = cnf_v6dir_bit(tl);
	/* Pairs with cnf_long_tiers(), as the store of @word does. */
	smp_store_release(&f->long_tiers, on ? f->long_tiers | dir_bit :
					       f->long_tiers & ~dir_bit);
}

/* ---- the /16 map ---- */

/* The first /16 of @p, a prefix of at most CNF_MAP_BITS bits. */
static u32 cnf_map_first(const struct cnf_key *p)
{
	return cnf_prefix_top(p) >> (32 - CNF_MAP_BITS);
}

/* The /16s of @p: [first, first + n). */
static u32 cnf_map_span(const struct cnf_key *p)
{
	return 1U << (CNF_MAP_BITS - p->len);
}

/* Bits [@i, @end) of the word of bit @i, @end at most the word's end. */
static u64 cnf_map_mask(u32 i, u32 end)
{
	u32 n = end - i;

	return (n == 64 ? ~0ULL : (1ULL << n) - 1) << (i % 64);
}

/* Does a stored prefix of at most CNF_MAP_BITS bits cover the /16 @i? */
static bool cnf_map_covered(struct cnf_filter *f, enum cnf_family fam, u32 i)
{
	struct cnf_key b = { .family = fam, .len = CNF_MAP_BITS }, q;
	unsigned int len;

	if (fam == CNF_V4)
		b.v4 = htonl(i << (32 - CNF_MAP_BITS));
	else
		b.v6.s6_addr32[0] = htonl(i << (32 - CNF_MAP_BITS));
	for (len = 0; len <= CNF_MAP_BITS; len++) {
		if (!f->nlen[fam][len])
			continue;
		cnf_prefix_cut(&b, len, &q);
		if (cnf_store_has(f, &q))
			return true;
	}
	return false;
}

/*
 * Set the bits of @p's /16s (@set), or clear those of them no stored
 * prefix covers any more: a word at a time, each store changing only bits
 * whose answer changes.
 */
static void cnf_map_change(struct cnf_filter *f, const struct cnf_key *p,
			   bool set)
{
	struct cnf_map *m = cnf_map_deref(f, p->family);
	u32 i = cnf_map_first(p), end = i + cnf_map_span(p), next, b;
	u64 w, mask, flip;

	for (; i < end; i = next) {
		next = min(end, (i | 63) + 1);
		w = m->words[i / 64];
		mask = cnf_map_mask(i, next);
		flip = set ? mask & ~w : 0;
		for (b = i; !set && b < next; b++)
			if ((w >> (b % 64) & 1) &&
			    !cnf_map_covered(f, p->family, b))
				flip |= 1ULL << (b % 64);
		WRITE_ONCE(m->words[i / 64], w ^ flip);
		m->bits = set ? m->bits + hweight64(flip) :
				m->bits - hweight64(flip);
		if (!(next & 0xfff))
			cond_resched();
	}
}

/*
 * What an add of @p, a prefix of the map, does before a bit changes: its
 * map made, its store entry kept.  Readers see nothing of it.
 */
static int cnf_map_prepare(struct cnf_filter *f, const struct cnf_key *p)
{
	int err;

	err = cnf_map_ensure(f, p->family);
	if (err)
		return err;
	err = cnf_store_add(f, p);
	if (err)
		cnf_map_release(f, p->family);
	return err;
}

/* Then its bits, which cannot fail. */
static void cnf_map_publish(struct cnf_filter *f, const struct cnf_key *p)
{
	if (!cnf_map_deref(f, p->family)->bits)
		cnf_active_set(f, p->family, CNF_MAP_BITS, true);
	cnf_map_change(f, p, true);
}

/* Or what cnf_map_prepare() did, undone. */
static void cnf_map_unprepare(struct cnf_filter *f, const struct cnf_key *p)
{
	cnf_store_del(f, p);
	cnf_map_release(f, p->family);
}

static void cnf_map_del(struct cnf_filter *f, const struct cnf_key *p)
{
	cnf_store_del(f, p);
	cnf_map_change(f, p, false);
	if (cnf_map_deref(f, p->family)->bits)
		return;
	cnf_active_set(f, p->family, CNF_MAP_BITS, false);
	cnf_map_release(f, p->family);
}

/* ---- the tiers ---- */

/* Is @p (a prefix of its tier's length) a key of its tier? */
static bool cnf_tier_has(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_key k;

	cnf_table_key(p, &k);
	return cnf_tab_has(f, &f->tier[p->family][p->len], &k);
}

/*
 * The table of tier @tl, made if need be, and marked active before a key
 * goes in: 0, or an errno (nothing changed).
 */
static int cnf_tier_open(struct cnf_filter *f, enum cnf_family fam,
			 unsigned int tl)
{
	struct cnf_table __rcu **tp = &f->tier[fam][tl];
	int err;

	err = cnf_tab_ensure(f, tp, cnf_tier_layout(tl));
	if (!err && !cnf_deref(f, tp)->count)
		cnf_active_set(f, fam, tl, true);
	return err;
}

/*
 * After adds to tier @tl that may all have failed, or a delete: an empty
 * one goes.
 */
static void cnf_tier_close(struct cnf_filter *f, enum cnf_family fam,
			   unsigned int tl)
{
	struct cnf_table __rcu **tp = &f->tier[fam][tl];
	const struct cnf_table *t = cnf_deref(f, tp);

	if (t && !t->count) {
		cnf_active_set(f, fam, tl, false);
		cnf_tab_release(f, tp);
		if (cnf_tier_is_long(fam, tl))
			cnf_v6dir_release(f);
	}
}

/*
 * @p, of its tier's length, into the tier's table, which is open; @tk is
 * its key there (cnf_table_key()).
 */
static int cnf_tier_put(struct cnf_filter *f, const struct cnf_key *p,
			const struct cnf_key *tk)
{
	return cnf_tab_add(f, &f->tier[p->family][p->len], tk);
}

/* 0, or -ENOENT when the tier does not have @p (unchanged). */
static int cnf_tier_del(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_table __rcu **tp = &f->tier[p->family][p->len];
	struct cnf_key k;
	int err;

	cnf_table_key(p, &k);
	err = cnf_tab_del(f, tp, &k);
	if (!err)
		cnf_tier_close(f, p->family, p->len);
	return err;
}

/*
 * No stored prefix expands into the tier of @p, a prefix of its tier's
 * length: every key there is native, and the tier alone answers.  The
 * case of every list of addresses.
 */
static bool cnf_tier_plain(const struct cnf_filter *f, const struct cnf_key *p)
{
	unsigned int len;

	for (len = cnf_tier_floor(p->family, p->len); len < p->len; len++)
		if (f->nlen[p->family][len])
			return false;
	return true;
}

/*
 * Is the key @k of its tier derived: covered by a stored prefix shorter
 * than it, of its tier, of another length than @skip?
 */
static bool cnf_derived(struct cnf_filter *f, const struct cnf_key *k,
			unsigned int skip)
{
	unsigned int len;
	struct cnf_key q;

	for (len = cnf_tier_floor(k->family, k->len); len < k->len; len++) {
		if (len == skip || !f->nlen[k->family][len])
			continue;
		cnf_prefix_cut(k, len, &q);
		if (cnf_store_has(f, &q))
			return true;
	}
	return false;
}

/* The shorter prefix of length @len that covered @k is going. */
static void cnf_uncover(struct cnf_filter *f, const struct cnf_key *k,
			unsigned int len)
{
	if (cnf_derived(f, k, len))
		return;
	if (cnf_store_has(f, k))
		cnf_store_del(f, k);	/* native again, as the tier says */
	else
		WARN_ON_ONCE(cnf_tier_del(f, k));
}

/*
 * The first of the keys @p expands into in tier @tl, and from one to the
 * next, both as prefixes and as their tier's table keys.  Their bits that
 * vary, from @p->len to @tl, never cross a word: tiers past 16 bits are
 * multiples of 8, and hold lengths from 7 below.
 */
static void cnf_expand_first(const struct cnf_key *p, unsigned int tl,
			     struct cnf_key *k, struct cnf_key *tk)
{
	*k = *p;
	k->len = tl;
	cnf_table_key(k, tk);
}

/* Add one to @k's last bit of @bits (of its only word, for IPv4). */
static void cnf_key_step(struct cnf_key *k, unsigned int bits)
{
	__be32 *w = k->family == CNF_V4 ? &k->v4 :
					   &k->v6.s6_addr32[(bits - 1) / 32];

	*w = htonl(ntohl(*w) + (1U << (31 - (bits - 1) % 32)));
}

static void cnf_expand_next(struct cnf_key *k, struct cnf_key *tk)
{
	unsigned int words = cnf_layout_words(cnf_tier_layout(k->len));

	cnf_key_step(k, k->len);
	/* Keys of one or two words end in the prefix's bits, right-aligned. */
	cnf_key_step(tk, words < 4 ? 32 * words : k->len);
}

static bool cnf_stored(struct cnf_filter *f, const struct cnf_key *p)
{
	if (cnf_tier_of(p->family, p->len) != p->len || p->len == CNF_MAP_BITS)
		return cnf_store_has(f, p);
	return cnf_tier_has(f, p) &&
	       (!cnf_derived(f, p, CNF_TIERS) || cnf_store_has(f, p));
}

/*
 * Room in tier @tl of @fam, open, for @n keys more within its load limit,
 * made before the first goes in: then putting them moves keys at most (a
 * cuckoo path, a growth), which lookups follow exactly.  A single key may
 * do without (not @strict): past the limit it still finds a free slot or
 * the stash, and if it does not, its put fails before anything is seen.
 */
static int cnf_tier_room(struct cnf_filter *f, enum cnf_family fam,
			 unsigned int tl, u64 n, bool strict)
{
	int err = cnf_tab_reserve(f, &f->tier[fam][tl], n);

	return strict || n > 1 ? err : 0;
}

/*
 * A prefix of its tier's length, before its key goes in: its tier open,
 * and, when shorter prefixes put the key there already, its store entry,
 * which is all the add does.  -EEXIST: stored already.  Where no shorter
 * prefix expands into the tier, the put alone says whether it is there.
 */
static int cnf_native_prepare(struct cnf_filter *f, const struct cnf_key *p,
			      bool strict)
{
	int err;

	err = cnf_tier_open(f, p->family, p->len);
	if (err)
		return err;
	if (!cnf_tier_plain(f, p) && cnf_tier_has(f, p)) {
		/* Derived already: only the store can say it was added too. */
		if (!cnf_derived(f, p, CNF_TIERS))
			return -EEXIST;
		return cnf_store_add(f, p);
	}
	err = cnf_tier_room(f, p->family, p->len, 1, strict);
	if (err)
		cnf_tier_close(f, p->family, p->len);
	return err;
}

/*
 * Then its key: 0, or an errno with nothing changed.  A key there already
 * is the derived one whose store entry the preparation made, but in a
 * tier no shorter prefix expands into: there, @p was stored (-EEXIST).
 */
static int cnf_native_publish(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_key k;
	int err;

	cnf_v6dir_mark(f, p, p->len);
	cnf_table_key(p, &k);
	err = cnf_tier_put(f, p, &k);
	if (err == -EEXIST && !cnf_tier_plain(f, p))
		return 0;
	if (err)
		cnf_tier_close(f, p->family, p->len);
	return err;
}

/* What cnf_native_prepare() did, undone. */
static void cnf_native_unprepare(struct cnf_filter *f, const struct cnf_key *p)
{
	if (!cnf_tier_plain(f, p) && cnf_tier_has(f, p))
		cnf_store_del(f, p);
	else
		cnf_tier_close(f, p->family, p->len);
}

static void cnf_del_native(struct cnf_filter *f, const struct cnf_key *p)
{
	if (cnf_derived(f, p, CNF_TIERS))
		cnf_store_del(f, p);
	else
		WARN_ON_ONCE(cnf_tier_del(f, p));
}

static void cnf_uncover_all(struct cnf_filter *f, const struct cnf_key *p,
			    unsigned int tl, u32 n)
{
	struct cnf_key k, tk;
	u32 i;

	cnf_expand_first(p, tl, &k, &tk);
	for (i = 0; i < n; i++, cnf_expand_next(&k, &tk))
		cnf_uncover(f, &k, p->len);
}

/*
 * Undo an expanded add of @p into tier @tl whose first @put keys went in:
 * those it put there go, and so do the store entries it gave keys that
 * were there, native, and that only @p derives (a native key that another
 * prefix derives had its entry before).  Its tier is closed if emptied.
 */
static void cnf_expanded_undo(struct cnf_filter *f, const struct cnf_key *p,
			      unsigned int tl, u32 put)
{
	struct cnf_key k, tk;
	u32 i;

	cnf_expand_first(p, tl, &k, &tk);
	for (i = 0; i < 1U << (tl - p->len); i++, cnf_expand_next(&k, &tk)) {
		if (cnf_derived(f, &k, p->len))
			continue;
		if (cnf_store_has(f, &k))
			cnf_store_del(f, &k);
		else if (i < put)
			WARN_ON_ONCE(cnf_tier_del(f, &k));
	}
	cnf_tier_close(f, p->family, tl);
}

/*
 * A prefix shorter than its tier, before any of its keys goes in: its
 * store entry; the entries of the keys of its tier that are there, native,
 * and now derived (else deleting @p would take them); and room in the tier
 * for those that are not.  Everything that can fail, and nothing readers
 * see: the tier opened, if empty, holds no key, so lookups answer as
 * before.  The tier's table is opened once for the keys, not per key.
 */
static int cnf_expanded_prepare(struct cnf_filter *f, const struct cnf_key *p)
{
	unsigned int tl = cnf_tier_of(p->family, p->len);
	struct cnf_table __rcu **tp = &f->tier[p->family][tl];
	struct cnf_key k, tk;
	u64 absent = 0;
	int err;
	u32 i;

	err = cnf_store_add(f, p);
	if (err)
		return err;
	err = cnf_tier_open(f, p->family, tl);
	if (err)
		goto err_store;
	cnf_expand_first(p, tl, &k, &tk);
	for (i = 0; i < 1U << (tl - p->len); i++, cnf_expand_next(&k, &tk)) {
		if (!cnf_tab_has(f, tp, &tk))
			absent++;
		else if (!cnf_derived(f, &k, p->len) && !cnf_store_has(f, &k))
			err = cnf_store_add(f, &k);
		if (err)
			goto err_keys;
		if (!(i & 0xfff))
			cond_resched();
	}
	err = cnf_tier_room(f, p->family, tl, absent, true);
	if (err)
		goto err_keys;
	return 0;

err_keys:
	cnf_expanded_undo(f, p, tl, 0);
err_store:
	cnf_store_del(f, p);
	return err;
}

/*
 * Then its keys, those the tier lacks: readers see the prefix from the
 * first on.  Prepared, a put fails only when no cuckoo path takes its key,
 * the table cannot grow (the memory limit) and its stash is full; the
 * keys put go again then.
 */
static int cnf_expanded_publish(struct cnf_filter *f, const struct cnf_key *p)
{
	unsigned int tl = cnf_tier_of(p->family, p->len);
	struct cnf_key k, tk;
	int err;
	u32 i;

	cnf_v6dir_mark(f, p, tl);
	cnf_expand_first(p, tl, &k, &tk);
	for (i = 0; i < 1U << (tl - p->len); i++, cnf_expand_next(&k, &tk)) {
		err = cnf_tier_put(f, &k, &tk);
		if (err && err != -EEXIST)
			goto err_put;
		if (!(i & 0xfff))
			cond_resched();
	}
	return 0;

err_put:
	cnf_expanded_undo(f, p, tl, i);
	cnf_store_del(f, p);
	return err;
}

/* What cnf_expanded_prepare() did, undone. */
static void cnf_expanded_unprepare(struct cnf_filter *f,
				   const struct cnf_key *p)
{
	cnf_expanded_undo(f, p, cnf_tier_of(p->family, p->len), 0);
	cnf_store_del(f, p);
}

/* Is a bit of @p past its length set?  Read in place: once per add. */
static bool cnf_host_bits(const struct cnf_key *p)
{
	unsigned int w;

	if (p->family == CNF_V4)
		return p->len < 32 && ntohl(p->v4) & (~0U >> p->len);
	for (w = p->len / 32; w < 4; w++)
		if (ntohl(p->v6.s6_addr32[w]) &
		    (w == p->len / 32 ? ~0U >> p->len % 32 : ~0U))
			return true;
	return false;
}

static int cnf_prefix_check(const struct cnf_key *p)
{
	if (p->family >= CNF_NFAMILIES || p->len > cnf_family_bits(p->family) ||
	    cnf_host_bits(p))
		return -EINVAL;
	return 0;
}

/**
 * cnf_tally_add - count the keys a prefix will bring to its tables
 * @tally: the batch's tally
 * @key: a prefix the batch adds; an invalid one counts nothing
 *
 * A prefix of the /16 map brings no key (the map does not grow), but an
 * entry of the store, as a prefix shorter than its tier does.
 */
void cnf_tally_add(struct cnf_tally *tally, const struct cnf_key *key)
{
	unsigned int tl;

	if (cnf_prefix_check(key))
		return;
	tl = cnf_tier_of(key->family, key->len);
	if (tl != CNF_MAP_BITS)
		tally->keys[key->family][tl] += 1ULL << (tl - key->len);
	if (tl != key->len || tl == CNF_MAP_BITS)
		tally->stored[key->family][cnf_store_index(key)]++;
	tally->long_prefixes += cnf_tier_is_long(key->family, tl);
}

/*
 * Everything an add of @key, valid, does that can fail, and nothing
 * lookups see: what it needs made, reserved or kept aside (the tables it
 * replaces: cnf_undo_begin()).  @strict: room for a single key too.
 */
static int cnf_prepare(struct cnf_filter *f, const struct cnf_key *key,
		       bool strict)
{
	unsigned int tl = cnf_tier_of(key->family, key->len);
	int err;

	cnf_undo_begin(f);
	/* Both start with the store's add, which refuses a stored prefix. */
	if (tl == CNF_MAP_BITS)
		err = cnf_map_prepare(f, key);
	else if (tl != key->len)
		err = cnf_expanded_prepare(f, key);
	else
		err = cnf_native_prepare(f, key, strict);
	if (err)
		cnf_undo_rollback(f);
	return err;
}

/* The prepared add, made what lookups see: 0, or undone with an errno. */
static int cnf_publish(struct cnf_filter *f, const struct cnf_key *key)
{
	unsigned int tl = cnf_tier_of(key->family, key->len);
	int err = 0;

	if (tl == CNF_MAP_BITS)
		cnf_map_publish(f, key);
	else if (tl != key->len)
		err = cnf_expanded_publish(f, key);
	else
		err = cnf_native_publish(f, key);
	if (err) {
		/* Its keys are out again; its tables go back as they were. */
		cnf_undo_rollback(f);
		return err;
	}
	cnf_undo_commit(f);
	f->nlen[key->family][key->len]++;
	f->prefixes[key->family]++;
	if (key->family == CNF_V6)
		cnf_v6dir_maintain(f);
	return 0;
}

/**
 * cnf_filter_add - add a prefix
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix; bits past @key->len must be zero
 *
 * Overlapping prefixes are separate entries.  Tables grow when full; past
 * the memory limit keys go to the tables' stashes.  What can fail is done
 * before lookups see any of the prefix (cnf_filter_add_prepare()): a
 * prefix that expands into several keys either has room for all of them
 * in its tier, or is refused.
 *
 * Return: 0; -EEXIST if @f holds this prefix; -ENOSPC past the memory
 * limit or the largest table; -ENOMEM; -EINVAL for an unknown family, a
 * length past the family's width, or bits set past it.  On error @f is
 * exactly as before.
 */
int cnf_filter_add(struct cnf_filter *f, const struct cnf_key *key)
{
	int err;

	cnf_assert_held(&f->lock);
	f->expect_adds++;
	err = cnf_prefix_check(key);
	if (!err)
		err = cnf_prepare(f, key, false);
	if (!err)
		err = cnf_publish(f, key);
	/* A copy: the batch's tally is an upper bound (cnf_tally_step()). */
	f->expect_dups += err == -EEXIST && f->tally;
	return err;
}

/**
 * cnf_filter_add_prepare - the first step of an add made in two
 * @f: the filter, under cnf_filter_lock() until the second step
 * @key: the prefix, as for cnf_filter_add()
 *
 * For a change that adds a prefix to two filters, both seen by lookups:
 * each is prepared, then each committed.  What can fail is done here, and
 * nothing lookups see: the prefix's store entries, its tables made, and
 * room in its lookup table for all its keys, a single one included.  The
 * next change of @f is cnf_filter_add_commit() or cnf_filter_add_abort()
 * of @key.
 *
 * Return: as cnf_filter_add(); on error @f is as before, and there is no
 * second step.
 */
int cnf_filter_add_prepare(struct cnf_filter *f, const struct cnf_key *key)
{
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_prefix_check(key);
	return err ?: cnf_prepare(f, key, true);
}

/**
 * cnf_filter_add_commit - the second step: the prepared prefix is added
 * @f: the filter, under the cnf_filter_lock() of the first step
 * @key: the prefix prepared
 *
 * Its keys take the room reserved for them: this fails only when one finds
 * no cuckoo path, its table cannot grow (the memory limit) and its stash
 * is full.
 *
 * Return: 0; -ENOSPC, -ENOMEM with @f as before the first step.
 */
int cnf_filter_add_commit(struct cnf_filter *f, const struct cnf_key *key)
{
	cnf_assert_held(&f->lock);
	return cnf_publish(f, key);
}

/**
 * cnf_filter_add_abort - the second step: the prepared add is given up
 * @f: the filter, under the cnf_filter_lock() of the first step
 * @key: the prefix prepared
 *
 * @f is as before the first step, its memory included.
 */
void cnf_filter_add_abort(struct cnf_filter *f, const struct cnf_key *key)
{
	unsigned int tl = cnf_tier_of(key->family, key->len);

	cnf_assert_held(&f->lock);
	if (tl == CNF_MAP_BITS)
		cnf_map_unprepare(f, key);
	else if (tl != key->len)
		cnf_expanded_unprepare(f, key);
	else
		cnf_native_unprepare(f, key);
	cnf_undo_rollback(f);
}

/**
 * cnf_filter_del - delete a prefix
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix, as added
 *
 * Exactly that prefix goes: others that cover it, or that it covers, stay.
 * Tables that deletes leave mostly empty shrink.
 *
 * Return: 0; -ENOENT if @f does not hold this prefix; -EINVAL as for
 * cnf_filter_add().  On error @f is unchanged.
 */
int cnf_filter_del(struct cnf_filter *f, const struct cnf_key *key)
{
	unsigned int tl;
	int err;

	cnf_assert_held(&f->lock);
	err = cnf_prefix_check(key);
	if (err)
		return err;
	tl = cnf_tier_of(key->family, key->len);
	if (tl == CNF_MAP_BITS) {
		if (!cnf_store_has(f, key))
			return -ENOENT;
		cnf_map_del(f, key);
	} else if (tl == key->len && cnf_tier_plain(f, key)) {
		err = cnf_tier_del(f, key);
		if (err)
			return err;
	} else if (!cnf_stored(f, key)) {
		return -ENOENT;
	} else if (tl == key->len) {
		cnf_del_native(f, key);
	} else {
		cnf_uncover_all(f, key, tl, 1U << (tl - key->len));
		cnf_store_del(f, key);
	}
	f->nlen[key->family][key->len]--;
	f->prefixes[key->family]--;
	return 0;
}

/**
 * cnf_filter_has - is a prefix stored
 * @f: the filter, under cnf_filter_lock()
 * @key: the prefix
 *
 * Return: true if @key was added (and not deleted) as it is; false also
 * for an invalid prefix.
 */
bool cnf_filter_has(struct cnf_filter *f, const struct cnf_key *key)
{
	cnf_assert_held(&f->lock);
	return !cnf_prefix_check(key) && cnf_stored(f, key);
}

/**
 * cnf_filter_match - the longest stored prefix covering a prefix
 * @f: the filter, under cnf_filter_lock()
 * @key: a prefix (an address: a prefix of the family's width)
 * @match: out: the stored prefix
 *
 * Return: 0; -ENOENT when no stored prefix covers @key; -EINVAL as for
 * cnf_filter_add().
 */
int cnf_filter_match(struct cnf_filter *f, const struct cnf_key *key,
		     struct cnf_key *match)
{
	int len, err;

	cnf_assert_held(&f->lock);
	err = cnf_prefix_check(key);
	if (err)
		return err;
	for (len = key->len; len >= 0; len--) {
		if (!f->nlen[key->family][len])
			continue;
		cnf_prefix_cut(key, len, match);
		if (cnf_stored(f, match))
			return 0;
	}
	return -ENOENT;
}

/* ---- walking the prefixes ---- */

struct cnf_prefix_walk {
	struct cnf_filter *f;
	enum cnf_family fam;
	unsigned int tl;
	int (*fn)(void *ctx, const struct cnf_key *key);
	void *ctx;
};

/* A key of a tier stands for a prefix of its length when it is native. */
static int cnf_walk_tier_key(void *ctx, const struct cnf_key *k)
{
	struct cnf_prefix_walk *w = ctx;
	struct cnf_key p;

	cnf_table_key_prefix(w->fam, w->tl, k, &p);
	if (cnf_derived(w->f, &p, CNF_TIERS))
		return 0;	/* the store has it if it was added */
	return w->fn(w->ctx, &p);
}

static int cnf_walk_store_key(void *ctx, const struct cnf_key *k)
{
	struct cnf_prefix_walk *w = ctx;
	struct cnf_key p;

	cnf_store_key_prefix(w->fam, k, &p);
	return w->fn(w->ctx, &p);
}

/**
 * cnf_filter_walk - call a function for every prefix
 * @f: the filter, under cnf_filter_lock()
 * @fn: called with @ctx and each prefix, IPv4 first, each once
 * @ctx: passed to @fn
 *
 * Return: 0, or @fn's first non-zero return, which stops the walk.
 */
int cnf_filter_walk(struct cnf_filter *f,
		    int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	struct cnf_prefix_walk w = { .f = f, .fn = fn, .ctx = ctx };
	const struct cnf_table *t;
	unsigned int i;
	int err;

	cnf_assert_held(&f->lock);
	for (w.fam = 0; w.fam < CNF_NFAMILIES; w.fam++) {
		for (w.tl = 0; w.tl < CNF_TIERS; w.tl++) {
			t = cnf_deref(f, &f->tier[w.fam][w.tl]);
			if (!t)
				continue;
			err = cnf_table_walk(t, cnf_walk_tier_key, &w);
			if (err)
				return err;
		}
		for (i = 0; i < CNF_STORE_TABLES; i++) {
			t = cnf_deref(f, &f->store[w.fam][i]);
			if (!t)
				continue;
			err = cnf_table_walk(t, cnf_walk_store_key, &w);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- walking the prefixes in steps ---- */

/*
 * Why a walk in steps gives every prefix stored throughout it, and only
 * prefixes stored when they are given.  Each step runs under the filter's
 * lock and gives prefixes stored then.  A key stays in its table (the
 * tier of its length, or its store table) for as long as it is stored,
 * but moves between its two buckets (cuckoo paths), into a new table in
 * its place (growth, shrinking, a flush, a failed add put back) and out
 * of the stash.  The prefixes of tier lengths are given from their tiers
 * only, the others from the store only (cnf_walk_key()), whichever place
 * the store keeps them: whether a shorter prefix covers one changes only
 * where a prefix is kept, never where it is given.  So a prefix stored
 * throughout is missed only if its key moved from a bucket the walk had
 * not reached into one it had passed, between two steps.  Every step
 * therefore first walks again the buckets behind it that keys moved into
 * since the last (the filter's moves, struct cnf_moves), or, if more moved
 * than were recorded, or the table is another one, the table from its
 * first bucket; and it walks the stash, whose keys leave it for any
 * bucket, every time.  A prefix may so be given more than once
 * (cnf_walk.again).  Walking a table again costs a step more; one walked
 * again CNF_WALK_REWINDS times is walked to its end in one step, so that
 * changes of the filter between steps cannot keep a walk from ending.
 */

#define CNF_WALK_REWINDS	4
#define CNF_WALK_PARTS		(CNF_TIERS + CNF_STORE_TABLES)

/* What a step gives a key of a table as, see cnf_walk_key(). */
struct cnf_walk_ctx {
	struct cnf_filter *f;
	enum cnf_family fam;
	unsigned int tl;	/* the tier's length, or CNF_TIERS: a store */
	int (*fn)(void *ctx, const struct cnf_key *key);
	void *ctx;
};

/*
 * A prefix of a tier length from its tier, where its key is for as long
 * as it is stored, unless the key is only derived; any other from the
 * store.
 */
static int cnf_walk_key(void *ctx, const struct cnf_key *k)
{
	struct cnf_walk_ctx *c = ctx;
	struct cnf_key p;

	if (c->tl == CNF_TIERS) {
		cnf_store_key_prefix(c->fam, k, &p);
		if (cnf_tier_of(p.family, p.len) == p.len &&
		    p.len != CNF_MAP_BITS)
			return 0;	/* its tier gives it */
	} else {
		cnf_table_key_prefix(c->fam, c->tl, k, &p);
		if (cnf_derived(c->f, &p, CNF_TIERS) &&
		    !cnf_store_has(c->f, &p))
			return 0;
	}
	return c->fn(c->ctx, &p);
}

/* The table of part @part of @f, and how its keys are given. */
static struct cnf_table *cnf_walk_table(struct cnf_filter *f, u32 part,
					struct cnf_walk_ctx *c)
{
	unsigned int i = part % CNF_WALK_PARTS;

	c->fam = part / CNF_WALK_PARTS;
	c->tl = min_t(unsigned int, i, CNF_TIERS);
	if (i < CNF_TIERS)
		return cnf_deref(f, &f->tier[c->fam][i]);
	return cnf_deref(f, &f->store[c->fam][i - CNF_TIERS]);
}

/*
 * Moves a walk of @f records: one for every 64 prefixes, so that a small
 * filter, walked in a step or two, spends little on it, but at least
 * CNF_MOVES_RING_MIN and at most CNF_MOVES_RING, a power of two.
 */
static u32 cnf_moves_size(struct cnf_filter *f)
{
	u64 n = cnf_filter_count(f, CNF_V4) + cnf_filter_count(f, CNF_V6);
	u32 size = CNF_MOVES_RING_MIN;

	while (size < CNF_MOVES_RING && size < n / 64)
		size *= 2;
	return size;
}

/**
 * cnf_walk_begin - start walking a filter's prefixes in steps
 * @f: the filter, under cnf_filter_lock()
 * @w: the walk
 *
 * Until cnf_walk_end(), @f records where its keys move: up to
 * CNF_MOVES_RING words, counted in its memory while it has walks.
 *
 * Return: 0; -ENOSPC past the memory limit; -ENOMEM.
 */
int cnf_walk_begin(struct cnf_filter *f, struct cnf_walk *w)
{
	u32 size;

	cnf_assert_held(&f->lock);
	memset(w, 0, sizeof(*w));
	if (!f->moves.walks) {
		size = cnf_moves_size(f);
		if (!cnf_fits(f, size * sizeof(u64)))
			return -ENOSPC;
		f->moves.ring = cnf_zalloc(size * sizeof(u64));
		if (!f->moves.ring)
			return -ENOMEM;
		f->moves.mask = size - 1;
	}
	w->f = f;
	w->next = f->moves.walks;
	f->moves.walks = w;
	w->seen = f->moves.n;
	return 0;
}

/**
 * cnf_walk_end - stop a walk, done or not
 * @w: the walk, begun; under its filter's cnf_filter_lock(), if the
 *     filter is still there (@w->f)
 */
void cnf_walk_end(struct cnf_walk *w)
{
	struct cnf_filter *f = w->f;
	struct cnf_walk **pp;

	if (!f)
		return;
	cnf_assert_held(&f->lock);
	for (pp = &f->moves.walks; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	if (!f->moves.walks) {
		cnf_free(f->moves.ring);
		f->moves.ring = NULL;
	}
	w->f = NULL;
}

/*
 * The buckets behind the walk in its table @t that keys moved into since
 * its last step, walked again; false when more moved than the filter
 * recorded: the table must be walked again from its first bucket.
 */
static int cnf_walk_moved(struct cnf_walk *w, const struct cnf_table *t,
			  struct cnf_walk_ctx *c, bool *lost)
{
	const struct cnf_moves *m = &w->f->moves;
	u64 i, e;
	int err;

	*lost = m->n - w->seen > (u64)m->mask + 1;
	for (i = w->seen; i < m->n && !*lost; i++) {
		e = m->ring[i & m->mask];
		if (e >> 32 != t->serial)
			continue;
		/* Behind the walk it comes again, ahead of it maybe too. */
		w->again = true;
		if ((u32)e >= w->bucket)
			continue;
		err = cnf_table_walk_buckets(t, (u32)e, (u32)e + 1,
					     cnf_walk_key, c);
		if (err)
			return err;
	}
	return 0;
}

/**
 * cnf_walk_step - give the prefixes of some more of a filter's buckets
 * @w: the walk, begun, under its filter's cnf_filter_lock(); its filter
 *     is still there (@w->f)
 * @buckets: how many buckets to walk at most (but see below)
 * @fn: called with @ctx and each prefix, IPv4 first
 * @ctx: passed to @fn
 *
 * Every prefix stored from the walk's beginning to its end is given at
 * least once, and a prefix is given only while it is stored, in the step
 * that gives it (the comment above argues why).  A step walks again up to
 * CNF_MOVES_RING buckets that keys moved into, and the stash, besides
 * @buckets; and the rest of a table walked again too often.  @w->done
 * says when the walk is over.
 *
 * Return: 0, or @fn's first non-zero return: then the step gave some of
 * its prefixes but counts as not taken, and @w->again is set.
 */
int cnf_walk_step(struct cnf_walk *w, u32 buckets,
		  int (*fn)(void *ctx, const struct cnf_key *key), void *ctx)
{
	struct cnf_walk_ctx c = { .f = w->f, .fn = fn, .ctx = ctx };
	const struct cnf_table *t;
	u32 from, end;
	bool lost;
	int err;

	cnf_assert_held(&w->f->lock);
	while (!w->done) {
		t = cnf_walk_table(w->f, w->part, &c);
		if (!t) {
			w->serial = 0;
			w->bucket = 0;
			w->rewinds = 0;
			w->done = ++w->part == CNF_NFAMILIES * CNF_WALK_PARTS;
			continue;
		}
		lost = false;
		err = 0;
		if (t->serial == w->serial)
			err = cnf_walk_moved(w, t, &c, &lost);
		else
			lost = w->serial;
		from = lost || t->serial != w->serial ? 0 : w->bucket;
		if (!err && lost && w->rewinds++ >= CNF_WALK_REWINDS)
			buckets = t->mask + 1;
		/* A key can leave the stash for a bucket behind the walk. */
		if (!err && t->stash_n) {
			w->again |= from > 0;
			err = cnf_table_walk_stash(t, cnf_walk_key, &c);
		}
		end = from + min_t(u32, buckets, t->mask + 1 - from);
		if (!err)
			err = cnf_table_walk_buckets(t, from, end, cnf_walk_key,
						     &c);
		if (err) {
			w->again = true;
			return err;
		}
		w->again |= lost;
		w->seen = w->f->moves.n;
		w->serial = t->serial;
		w->bucket = end;
		buckets -= end - from;
		if (end <= t->mask)
			return 0;
		w->serial = 0;
		w->bucket = 0;
		w->rewinds = 0;
		w->done = ++w->part == CNF_NFAMILIES * CNF_WALK_PARTS;
		if (!buckets)
			return 0;
	}
	return 0;
}
