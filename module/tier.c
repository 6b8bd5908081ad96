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
#include "ftable.h"
#include "prefix.h"
#include "store.h"
#include "tier.h"
#include "v6dir.h"

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
void cnf_table_key_prefix(enum cnf_family fam, unsigned int tl,
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
void cnf_map_unprepare(struct cnf_filter *f, const struct cnf_key *p)
{
	cnf_store_del(f, p);
	cnf_map_release(f, p->family);
}

void cnf_map_del(struct cnf_filter *f, const struct cnf_key *p)
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
	return cnf_ftable_has(f, &f->tier[p->family][p->len], &k);
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

	err = cnf_ftable_ensure(f, tp, cnf_tier_layout(tl));
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
		cnf_ftable_release(f, tp);
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
	return cnf_ftable_add(f, &f->tier[p->family][p->len], tk);
}

/* 0, or -ENOENT when the tier does not have @p (unchanged). */
int cnf_tier_del(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_table __rcu **tp = &f->tier[p->family][p->len];
	struct cnf_key k;
	int err;

	cnf_table_key(p, &k);
	err = cnf_ftable_del(f, tp, &k);
	if (!err)
		cnf_tier_close(f, p->family, p->len);
	return err;
}

/*
 * No stored prefix expands into the tier of @p, a prefix of its tier's
 * length: every key there is native, and the tier alone answers.  The
 * case of every list of addresses.
 */
bool cnf_tier_plain(const struct cnf_filter *f, const struct cnf_key *p)
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
bool cnf_derived(struct cnf_filter *f, const struct cnf_key *k,
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

bool cnf_stored(struct cnf_filter *f, const struct cnf_key *p)
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
	int err = cnf_ftable_reserve(f, &f->tier[fam][tl], n);

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
void cnf_native_unprepare(struct cnf_filter *f, const struct cnf_key *p)
{
	if (!cnf_tier_plain(f, p) && cnf_tier_has(f, p))
		cnf_store_del(f, p);
	else
		cnf_tier_close(f, p->family, p->len);
}

void cnf_del_native(struct cnf_filter *f, const struct cnf_key *p)
{
	if (cnf_derived(f, p, CNF_TIERS))
		cnf_store_del(f, p);
	else
		WARN_ON_ONCE(cnf_tier_del(f, p));
}

void cnf_uncover_all(struct cnf_filter *f, const struct cnf_key *p,
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
		if (!cnf_ftable_has(f, tp, &tk))
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
void cnf_expanded_unprepare(struct cnf_filter *f,
			    const struct cnf_key *p)
{
	cnf_expanded_undo(f, p, cnf_tier_of(p->family, p->len), 0);
	cnf_store_del(f, p);
}

/*
 * Everything an add of @key, valid, does that can fail, and nothing
 * lookups see: what it needs made, reserved or kept aside (the tables it
 * replaces: cnf_undo_begin()).  @strict: room for a single key too.
 */
int cnf_tier_prepare(struct cnf_filter *f, const struct cnf_key *key,
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
int cnf_tier_publish(struct cnf_filter *f, const struct cnf_key *key)
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
