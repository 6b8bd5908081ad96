// SPDX-License-Identifier: GPL-2.0
/*
 * The IPv6 directory of a filter's long tiers (v6dir.h): made of the keys
 * there, marked before a long key goes in, made anew as it fills or a
 * batch announces long prefixes, published and retired under RCU.  All
 * under the filter's lock; lookups read a word (filter.c).
 */
#include "budget.h"
#include "ftable.h"
#include "v6dir.h"

/**
 * cnf_v6dir_deref - the directory of a filter's long tiers, to its writers
 * @f: the filter, under cnf_filter_lock()
 *
 * Return: the directory, or NULL.
 */
struct cnf_v6dir *cnf_v6dir_deref(const struct cnf_filter *f)
{
	return rcu_dereference_protected(f->v6dir, lockdep_is_held(&f->lock));
}

static size_t cnf_v6dir_bytes(unsigned int log)
{
	return sizeof(struct cnf_v6dir) + (sizeof(u16) << log);
}

/**
 * cnf_v6dir_free - free a directory no reader sees
 * @d: the directory, or NULL
 */
void cnf_v6dir_free(struct cnf_v6dir *d)
{
	if (!d)
		return;
	cnf_free(d->words);
	cnf_free(d);
}

static void cnf_v6dir_free_rcu(struct rcu_head *head)
{
	cnf_v6dir_free(container_of(head, struct cnf_v6dir, rcu));
}

/* Free @d, or NULL, once no reader can see it. */
static void cnf_v6dir_retire(struct cnf_v6dir *d)
{
	if (d)
		cnf_call_rcu(&d->rcu, cnf_v6dir_free_rcu);
}

/**
 * cnf_v6dir_alloc - an empty directory
 * @f: the filter it is for, under cnf_filter_lock()
 * @log: its size: 2^@log words, @log at least 1
 * @dp: the directory, on success
 *
 * Return: 0; -ENOSPC past the memory limit; -ENOMEM.
 */
static int cnf_v6dir_alloc(const struct cnf_filter *f, unsigned int log,
			   struct cnf_v6dir **dp)
{
	struct cnf_v6dir *d;

	if (!cnf_fits(f, cnf_v6dir_bytes(log)))
		return -ENOSPC;
	d = cnf_zalloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->words = cnf_zalloc(sizeof(u16) << log);
	if (!d->words) {
		cnf_free(d);
		return -ENOMEM;
	}
	d->mul = ((u64)get_random_u32() << 32 | get_random_u32()) | 1;
	d->log = log;
	d->grow_at = 1ULL << (log - 1);
	d->bytes = cnf_v6dir_bytes(log);
	*dp = d;
	return 0;
}

/**
 * cnf_v6dir_publish - make a directory the one lookups read
 * @f: the filter, under cnf_filter_lock()
 * @d: the directory, with the bits of every key of the long tiers; NULL
 *	once they hold none
 *
 * The one it replaces is freed after a grace period.
 */
void cnf_v6dir_publish(struct cnf_filter *f, struct cnf_v6dir *d)
{
	struct cnf_v6dir *old = cnf_v6dir_deref(f);

	rcu_assign_pointer(f->v6dir, d);
	cnf_v6dir_retire(old);
}

/* The smallest directory: 64 words. */
#define CNF_V6DIR_MIN_LOG		6

struct cnf_v6dir_fill {
	struct cnf_v6dir *d;
	u16 bit;
};

static int cnf_v6dir_fill_one(void *ctx, const struct cnf_key *key)
{
	struct cnf_v6dir_fill *df = ctx;
	u32 i = cnf_v6dir_index(df->d, ntohl(key->v6.s6_addr32[0]));

	df->d->bits += !(df->d->words[i] & df->bit);
	df->d->words[i] |= df->bit;
	return 0;
}

/* A directory of 2^@log words with the bits of the long tiers' keys. */
static int cnf_v6dir_fill(struct cnf_filter *f, unsigned int log,
			  struct cnf_v6dir **dp)
{
	struct cnf_v6dir_fill df;
	const struct cnf_table *t;
	unsigned int tl;
	int err;

	err = cnf_v6dir_alloc(f, log, &df.d);
	if (err)
		return err;
	for (tl = 33; tl < CNF_V6_BITS; tl++) {
		t = cnf_deref(f, &f->tier[CNF_V6][tl]);
		if (!t)
			continue;
		df.bit = cnf_v6dir_bit(tl);
		cnf_table_walk(t, cnf_v6dir_fill_one, &df);
	}
	*dp = df.d;
	return 0;
}

/* The smallest size at which @bits set fill at most a quarter of the words. */
static unsigned int cnf_v6dir_log_for(u64 bits)
{
	unsigned int log = CNF_V6DIR_MIN_LOG;

	while ((1ULL << log) < 4 * bits)
		log++;
	return log;
}

/*
 * Publish a new directory, for @bits set and @more to come.  Those set may
 * be mostly stale, left by deletes: a directory four times larger than its
 * keys and @more need is made anew at their size, so that churn does not
 * grow it.  Best effort: when none can be made, the one there stays.
 */
static void cnf_v6dir_remake(struct cnf_filter *f, u64 bits, u64 more)
{
	struct cnf_v6dir *d, *fit;

	if (cnf_v6dir_fill(f, cnf_v6dir_log_for(bits + more), &d))
		return;
	/* The larger one does if no smaller can be made. */
	if (cnf_v6dir_log_for(d->bits + more) + 2 <= d->log &&
	    !cnf_v6dir_fill(f, cnf_v6dir_log_for(d->bits + more), &fit)) {
		cnf_v6dir_free(d);
		d = fit;
	}
	cnf_v6dir_publish(f, d);
}

/*
 * The long prefixes a batch's tally lets a directory of @bits bits set
 * make room for, beyond them: as a table, it grows for the tally as they
 * land (cnf_tally_step(); in steps with @copies), each setting at most a
 * bit, those set since the tally came (@v6dir_base) counted among the
 * tally's.
 */
static u64 cnf_v6dir_more(const struct cnf_filter *f, u64 bits, bool copies)
{
	u64 landed = bits - min(bits, f->v6dir_base), room;

	if (!f->tally)
		return 0;
	room = f->v6dir_base + cnf_tally_step(f->tally->long_prefixes,
					    landed + 1, copies);
	return room - min(room, bits);
}

/**
 * cnf_v6dir_maintain - after an add that stands
 * @f: the filter, under cnf_filter_lock()
 *
 * A directory for the long tiers once they are
 * CNF_V6DIR_MIN_TIERS with keys, a larger one once the adds have set its
 * grow_at bits; during a batch, large enough for more of the long
 * prefixes it brings (cnf_v6dir_more()), so that it is made in few steps.
 * Best effort: without one, lookups probe every long tier with keys, and
 * a full one is as exact, only slower.  Its allocation fails before it
 * walks a key, so the next add tries again at no cost.
 */
void cnf_v6dir_maintain(struct cnf_filter *f)
{
	struct cnf_v6dir *d = cnf_v6dir_deref(f);
	u64 bits = d ? d->bits : 1;

	if (d ? d->bits < d->grow_at :
		hweight16(f->long_tiers) < CNF_V6DIR_MIN_TIERS)
		return;
	cnf_v6dir_remake(f, bits, cnf_v6dir_more(f, bits, f->expect_dups));
}

/**
 * cnf_v6dir_mark - before the keys of a prefix go into a tier
 * @f: the filter, under cnf_filter_lock()
 * @p: the prefix
 * @tl: the tier
 *
 * Their bit in the directory, if @tl is a long tier.  Keys of a long tier,
 * expanded or not, share their prefix's first 32 bits: one bit for them
 * all.
 */
void cnf_v6dir_mark(struct cnf_filter *f, const struct cnf_key *p,
		    unsigned int tl)
{
	struct cnf_v6dir *d = cnf_v6dir_deref(f);
	u16 bit, *w;

	if (!d || !cnf_tier_is_long(p->family, tl))
		return;
	bit = cnf_v6dir_bit(tl);
	w = &d->words[cnf_v6dir_index(d, ntohl(p->v6.s6_addr32[0]))];
	if (!(*w & bit)) {
		WRITE_ONCE(*w, *w | bit);
		d->bits++;
	}
}

/**
 * cnf_v6dir_expect - a batch's long prefixes are coming
 * @f: the filter, under cnf_filter_lock()
 *
 * Nothing is made now: the tally may be copies of a few prefixes.  The
 * directory is made, or made anew, as the batch's long prefixes land
 * (cnf_v6dir_maintain()), then for the tally's (cnf_v6dir_more()); the bits
 * set now are the batch's start.
 */
void cnf_v6dir_expect(struct cnf_filter *f)
{
	struct cnf_v6dir *d = cnf_v6dir_deref(f);

	f->v6dir_base = d ? d->bits : 0;
}

/**
 * cnf_v6dir_fit - the end of a batch: a directory its copies left too large
 * @f: the filter, under cnf_filter_lock()
 *
 * One four times larger than its bits need (stale ones included) is made
 * anew at their size, as deletes leave it (cnf_v6dir_remake()).  Best
 * effort.
 */
void cnf_v6dir_fit(struct cnf_filter *f)
{
	struct cnf_v6dir *d = cnf_v6dir_deref(f);

	if (d && cnf_v6dir_log_for(d->bits) + 2 <= d->log)
		cnf_v6dir_remake(f, d->bits, 0);
}

/**
 * cnf_v6dir_release - after a long tier's last key went
 * @f: the filter, under cnf_filter_lock()
 *
 * The directory goes with the last long tier.
 */
void cnf_v6dir_release(struct cnf_filter *f)
{
	if (!f->long_tiers && cnf_v6dir_deref(f))
		cnf_v6dir_publish(f, NULL);
}
