/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One exact cuckoo table: its buckets, its slot layouts, where a key lives,
 * and the bucket tests readers and writers share; table.c's functions.
 * Private to the core; users see filter.h.
 *
 * A table has 2^log buckets of CNF_BUCKET_SLOTS slots.  A slot holds what
 * the address does not give by its bucket (see cnf_locate()) plus two tag
 * bits: valid, and whether the slot sits in the key's home or alternate
 * bucket.
 * An empty slot is all zero.
 */
#ifndef _CNF_TABLE_H
#define _CNF_TABLE_H

#include "hash.h"
#include "types.h"

/*
 * What a table holds, and so its slot layouts, named by the bits its keys
 * have: up to 32, keys of one word (IPv4 addresses, and the keys of tiers
 * of L <= 32 bits: their first L bits as a number, below 2^L); 33 to 64,
 * keys of two words (the tiers of L bits, 33 to 64: the first 32 bits,
 * then the next L - 32 as a number; and the prefix store's keys of two
 * words, CNF_LAYOUT64); CNF_LAYOUT128, IPv6 keys.  A tier's table has its
 * tier length as its layout (cnf_tier_layout()).  The address tiers are
 * CNF_LAYOUT32 and CNF_LAYOUT128.
 */
enum cnf_layout {
	CNF_LAYOUT32 = 32,
	CNF_LAYOUT64 = 64,
	CNF_LAYOUT128 = 128,
};

/*
 * Slot widths in bytes.  A slot holds its key's words but the last as they
 * are (the upper words: none for IPv4), and the last word x encoded:
 * r = x >> log and the tag bits, its tag word.  Once r has at most
 * CNF_NARROW_R_BITS bits (32 - log, or fewer where the layout's keys are
 * smaller numbers) a tag word fits 16 bits; 16-byte slots keep 32-bit tag
 * words at every size.
 */
enum cnf_slot_width {
	CNF_SLOT_V4_NARROW = 2,
	CNF_SLOT_V4_WIDE = 4,
	CNF_SLOT_64_NARROW = 6,
	CNF_SLOT_64_WIDE = 8,
	CNF_SLOT_V6 = 16,
};

#define CNF_NARROW_R_BITS	14

/*
 * Code that touches slots takes the width as a parameter and is inlined.
 * An entry point (a lookup, an add, a prefetch) op() calls its inlined body
 * op_width() through one of these, which pass the width as a constant: each
 * copy compiles only its own layout, and the packet path runs straight code.
 */
#define cnf_for_v4_width(op, t, ...)					\
	({								\
		typeof(t) __t4 = (t);					\
		cnf_width(__t4) == CNF_SLOT_V4_NARROW ?			\
			op##_width(__t4, CNF_SLOT_V4_NARROW, __VA_ARGS__) :	\
			op##_width(__t4, CNF_SLOT_V4_WIDE, __VA_ARGS__);	\
	})

#define cnf_for_64_width(op, t, ...)					\
	({								\
		typeof(t) __t64 = (t);					\
		cnf_width(__t64) == CNF_SLOT_64_NARROW ?		\
			op##_width(__t64, CNF_SLOT_64_NARROW, __VA_ARGS__) :	\
			op##_width(__t64, CNF_SLOT_64_WIDE, __VA_ARGS__);	\
	})

/* The widths of IPv6 keys: CNF_LAYOUT64's and CNF_LAYOUT128's. */
#define cnf_for_v6_width(op, t, ...)					\
	({								\
		typeof(t) __t6 = (t);					\
		cnf_width(__t6) == CNF_SLOT_V6 ?			\
			op##_width(__t6, CNF_SLOT_V6, __VA_ARGS__) :	\
			cnf_for_64_width(op, __t6, __VA_ARGS__);	\
	})

#define cnf_for_width(op, t, ...)					\
	({								\
		typeof(t) __t = (t);					\
		cnf_width(__t) == CNF_SLOT_V4_NARROW ?			\
			op##_width(__t, CNF_SLOT_V4_NARROW, __VA_ARGS__) :	\
		cnf_width(__t) == CNF_SLOT_V4_WIDE ?			\
			op##_width(__t, CNF_SLOT_V4_WIDE, __VA_ARGS__) :	\
			cnf_for_v6_width(op, __t, __VA_ARGS__);		\
	})

#define CNF_TAG_VALID	1U
#define CNF_TAG_ALT	2U

/* Most keys a table holds, in percent of its slots, before it grows. */
#define CNF_LOAD_MAX_PCT	96

/*
 * A bucket, CNF_BUCKET_SLOTS * width bytes: the tag words of its slots side
 * by side (2 or 4 bytes each, the first 8 or 16 bytes), so that every
 * lookup tests them 64 bits at a time, then the upper words of each slot in
 * turn (none for IPv4; one for CNF_LAYOUT64, three for CNF_LAYOUT128).  A
 * bucket of 16-byte slots is one cache line; 6-byte slots make 24-byte
 * buckets, which are not a power of two: see struct cnf_table's @slots.
 */

/*
 * A table.  Readers: under RCU, fields fixed at creation plus slots and stash
 * inside seqcount read sections.  Writers: under the filter's lock, slot and
 * stash changes inside write sections of @seq (cnf_write_begin()), but a
 * one-word slot filled or emptied in place (cnf_slot_begin()).
 */
struct cnf_table {
	seqcount_t seq;
	u8 family;
	u8 log;			/* 2^log buckets */
	u8 slot_bytes;		/* enum cnf_slot_width */
	u8 layout;		/* enum cnf_layout */
	bool shared_thash;	/* @thash is its filter's @thash4 */
	u32 mask;		/* buckets - 1 */
	u32 stash_n;
	/*
	 * The buckets, in an allocation of their own: kmalloc would round a
	 * header plus slots up to the next power of two.  Buckets of a power
	 * of two of bytes are aligned to at least a bucket, so they never span
	 * two cache lines.  24-byte buckets (CNF_SLOT_64_NARROW, 6 MiB and up:
	 * past kmalloc's largest size, so vmalloc'd, rounded to a page) are
	 * aligned to 8 bytes: their tag words, read first, never span two
	 * lines, but one bucket in four has its upper words (partly) on the
	 * next line, which a hit (and a rare false flag) reads as well.
	 */
	u8 *slots;
	/*
	 * IPv4 tables: the tabulation of H (see hash.h), the table's own or
	 * its filter's (@shared_thash).  NULL for IPv6.
	 */
	u32 *thash;
	/* IPv6 tables, both layouts: the multipliers and addend of H. */
	u64 mul6[CNF_MUL6_WORDS];
	/*
	 * IPv6 tables that lookups read: a word per bucket, with the bit
	 * cnf_summary_bit() of every key whose home bucket it is, so that
	 * most absent keys cost a lookup one word and no bucket.  A bit is
	 * set (WRITE_ONCE()) before its key goes in; deletes leave theirs,
	 * until a new summary of the keys replaces the whole
	 * (cnf_summary_refresh(), smp_store_release(); the old one is freed
	 * after a grace period): a clear bit means no such key.  Readers
	 * take the pointer with READ_ONCE() and a word with acquire, as a
	 * bucket's read section orders what follows it.  NULL for IPv4,
	 * whose buckets are a word or two already, and for the stores.  An
	 * allocation of its own, a power of two of bytes, as @slots.
	 */
	u32 *summary;
	struct cnf_key stash[CNF_STASH_SLOTS];
	u64 count;		/* writer only: keys, stash included */
	u64 limit;		/* writer only: cnf_table_limit(log) */
	u64 stale;		/* writer only: deletes since the summary */
	size_t bytes;
	/*
	 * Writer only.  @serial: which table of its filter it is, numbered
	 * as they are made (cnf_filter.serials), so that a walk over several
	 * holds of the filter's lock tells its table from one made since in
	 * its place.  @moves: the filter's record of keys moved, or NULL for
	 * a table of no filter.
	 */
	u32 serial;
	struct cnf_moves *moves;
	struct rcu_head rcu;
};

struct cnf_walk;

/*
 * Keys moved between their buckets, recorded while a walk of the filter
 * is under way (struct cnf_walk): a walk that steps over the buckets in
 * several holds of the filter's lock would miss a key that moved from a
 * bucket ahead of it into one behind it between two holds, so each hold
 * first scans again the buckets behind it that keys moved into.  Writer
 * only, under the filter's lock.
 * @n:     moves recorded since the filter was made.
 * @walks: the walks under way (linked by cnf_walk.next); @ring is there
 *         while there is one, and counts in the filter's memory.
 * @ring:  the last @mask + 1 moves, the one numbered i at i & @mask: the
 *         table's serial in the upper 32 bits, the bucket moved into in
 *         the lower.  A walk that fell further behind walks its table
 *         again.  Its size, a power of two, is set by the first walk
 *         (cnf_walk_begin()).
 */
struct cnf_moves {
	u64 n;
	struct cnf_walk *walks;
	u64 *ring;
	u32 mask;
};

/* The most moves a ring holds, and the fewest. */
#define CNF_MOVES_RING		4096
#define CNF_MOVES_RING_MIN	64

/* A key of @t moved into @bucket: recorded if a walk is under way. */
static __always_inline void cnf_note_move(struct cnf_table *t, u32 bucket)
{
	struct cnf_moves *m = t->moves;

	if (unlikely(m && m->ring))
		m->ring[m->n++ & m->mask] = (u64)t->serial << 32 | bucket;
}

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
 * Where a key lives: its two buckets and its encoded slot (home tag).  The
 * slot words are the key's words, the last encoded (its tag word): w[0] of
 * IPv4, w[1] of CNF_LAYOUT64, w[3] of CNF_LAYOUT128; the rest zero.
 */
struct cnf_pos {
	u32 b[2];		/* [0] home, [1] alternate */
	u32 w[4];
};

static __always_inline unsigned int cnf_width(const struct cnf_table *t)
{
	return t->slot_bytes;
}

/* Words of a key, and of a slot, of @width-byte slots: 1, 2 or 4. */
static __always_inline unsigned int cnf_width_words(unsigned int width)
{
	return width <= CNF_SLOT_V4_WIDE ? 1 : width <= CNF_SLOT_64_WIDE ? 2 : 4;
}

/* Bytes of a tag word of @width-byte slots: 2 or 4. */
static __always_inline unsigned int cnf_tag_bytes(unsigned int width)
{
	return width == CNF_SLOT_V4_NARROW || width == CNF_SLOT_64_NARROW ? 2 : 4;
}

/* The family of a table of @width-byte slots, a constant where @width is. */
static __always_inline enum cnf_family cnf_width_family(unsigned int width)
{
	return width <= CNF_SLOT_V4_WIDE ? CNF_V4 : CNF_V6;
}

static inline enum cnf_layout cnf_table_layout(const struct cnf_table *t)
{
	return t->layout;
}

/* Words of a key of @layout: 1, 2 or 4. */
static inline unsigned int cnf_layout_words(enum cnf_layout layout)
{
	return layout <= CNF_LAYOUT32 ? 1 : layout <= CNF_LAYOUT64 ? 2 : 4;
}

/* The bits a key's last word of @layout has, as cnf_locate() reads it. */
static inline unsigned int cnf_layout_last_bits(enum cnf_layout layout)
{
	if (layout <= CNF_LAYOUT32)
		return layout;
	return layout <= CNF_LAYOUT64 ? layout - 32 : 32;
}

/* The layout of the address tier of @fam. */
static inline enum cnf_layout cnf_family_layout(enum cnf_family fam)
{
	return fam == CNF_V4 ? CNF_LAYOUT32 : CNF_LAYOUT128;
}

/* ---- sizes ---- */

static inline unsigned int cnf_slot_bytes(enum cnf_layout layout,
					  unsigned int log)
{
	bool narrow = log + CNF_NARROW_R_BITS >= cnf_layout_last_bits(layout);

	BUILD_BUG_ON(CNF_NARROW_R_BITS + 2 > 16);
	if (cnf_layout_words(layout) == 1)
		return narrow ? CNF_SLOT_V4_NARROW : CNF_SLOT_V4_WIDE;
	if (cnf_layout_words(layout) == 2)
		return narrow ? CNF_SLOT_64_NARROW : CNF_SLOT_64_WIDE;
	return CNF_SLOT_V6;
}

static inline size_t cnf_slots_bytes(enum cnf_layout layout, unsigned int log)
{
	return ((size_t)CNF_BUCKET_SLOTS << log) * cnf_slot_bytes(layout, log);
}

static inline u64 cnf_table_capacity(unsigned int log)
{
	return (u64)CNF_BUCKET_SLOTS << log;
}

/* The most keys a table of 2^@log buckets holds within the load limit. */
static inline u64 cnf_table_limit(unsigned int log)
{
	return cnf_table_capacity(log) * CNF_LOAD_MAX_PCT / 100;
}

/* ---- slot access ---- */

/* The tag word of slot words @w of @width-byte slots: their last. */
static __always_inline u32 *cnf_tag_word(unsigned int width, u32 *w)
{
	return &w[cnf_width_words(width) - 1];
}

static __always_inline u8 *cnf_bucket(const struct cnf_table *t,
				      unsigned int width, u32 bucket)
{
	return t->slots + (size_t)bucket * CNF_BUCKET_SLOTS * width;
}

/* The upper words of slot @s of bucket @b (see the layout above). */
static __always_inline u32 *cnf_slot_up(u8 *b, unsigned int width,
					unsigned int s)
{
	return (u32 *)(b + CNF_BUCKET_SLOTS * cnf_tag_bytes(width)) +
	       s * (cnf_width_words(width) - 1);
}

/* The tag word of slot @s of bucket @b. */
static __always_inline u32 cnf_slot_tag(const u8 *b, unsigned int width,
					unsigned int s)
{
	if (cnf_tag_bytes(width) == 2)
		return READ_ONCE(((const u16 *)b)[s]);
	return READ_ONCE(((const u32 *)b)[s]);
}

static __always_inline void cnf_slot_read(const struct cnf_table *t,
					  unsigned int width, u32 bucket,
					  unsigned int s, u32 *w)
{
	const unsigned int n = cnf_width_words(width);
	u8 *b = cnf_bucket(t, width, bucket);
	const u32 *up = cnf_slot_up(b, width, s);

	w[0] = n > 1 ? READ_ONCE(up[0]) : 0;
	w[1] = n > 2 ? READ_ONCE(up[1]) : 0;
	w[2] = n > 2 ? READ_ONCE(up[2]) : 0;
	w[3] = 0;
	w[n - 1] = cnf_slot_tag(b, width, s);
}

/*
 * Inside a write section: a slot with upper words changes in two to four
 * stores, its tag word last.
 */
static __always_inline void cnf_slot_write(struct cnf_table *t,
					   unsigned int width, u32 bucket,
					   unsigned int s, const u32 *w)
{
	const unsigned int n = cnf_width_words(width);
	u8 *b = cnf_bucket(t, width, bucket);
	u32 *up = cnf_slot_up(b, width, s);
	unsigned int i;

	for (i = 0; i + 1 < n; i++)
		WRITE_ONCE(up[i], w[i]);
	if (cnf_tag_bytes(width) == 2)
		WRITE_ONCE(((u16 *)b)[s], (u16)w[n - 1]);
	else
		WRITE_ONCE(((u32 *)b)[s], w[n - 1]);
}

/* ---- bucket tests ---- */

/*
 * Tag words are tested 64 bits at a time.  These return the top bit of
 * every zero lane of @x: (x - 1) & ~x per lane.  A borrow can also flag a
 * lane above a zero lane, never one below: the lowest flag is exact, and so
 * is "some lane is zero".
 */
static __always_inline u64 cnf_zero_lanes16(u64 x)
{
	const u64 ones = 0x0001000100010001ULL;

	return (x - ones) & ~x & (ones << 15);
}

#define CNF_LANES32_ONES	0x0000000100000001ULL
#define CNF_LANES32_TOP		(CNF_LANES32_ONES << 31)

/*
 * 4-byte tag words hold at most 32 - CNF_MIN_BUCKETS_LOG + 2 bits, so no
 * lane of a bucket word, or of one xor a tag, has its top bit set: (x - 1)
 * alone sets it in a zero lane (or, through the borrow, in the lane above
 * one), and the ~x of 2-byte lanes can go.  Masked with CNF_LANES32_TOP,
 * these borrows are the zero lanes; the borrows of several words can be
 * ored and masked once.
 */
static __always_inline u64 cnf_borrow_lanes32(u64 x)
{
	BUILD_BUG_ON(32 - CNF_MIN_BUCKETS_LOG + 2 > 31);
	return x - CNF_LANES32_ONES;
}

static __always_inline u64 cnf_zero_lanes32(u64 x)
{
	return cnf_borrow_lanes32(x) & CNF_LANES32_TOP;
}

/*
 * @v in every lane of a 64-bit word of @width-byte slots' tag words.  A
 * variable @v takes one multiply: hidden from the compiler, the constant is
 * not turned into a chain of shifts and adds, a longer path for a lookup.
 */
static __always_inline u64 cnf_lanes(unsigned int width, u32 v)
{
	u64 ones = cnf_tag_bytes(width) == 2 ? 0x0001000100010001ULL :
					       0x0000000100000001ULL;

	if (!__builtin_constant_p(v))
		OPTIMIZER_HIDE_VAR(ones);
	return v * ones;
}

/* Bucket @bucket of a table of @width-byte slots, as 64-bit words. */
static __always_inline const u64 *cnf_bucket_words(const struct cnf_table *t,
						   unsigned int width,
						   u32 bucket)
{
	return (const u64 *)cnf_bucket(t, width, bucket);
}

/*
 * The IPv4 bucket tests return the zero-lane mask of the bucket xor @lanes:
 * non-zero when a slot holds the tag that @lanes repeats.
 */
static __always_inline u64 cnf_bucket16_match(const u64 *b, u64 lanes)
{
	return cnf_zero_lanes16(READ_ONCE(b[0]) ^ lanes);
}

/*
 * Is the key of slot words @w (home tag), of a layout with upper words, in
 * bucket @i0 or, with CNF_TAG_ALT, in @i1?  Both buckets' tag words are
 * tested 64 bits at a time, without branching, as for IPv4; only the slots
 * flagged, the key's own and rarely another, have their upper words
 * compared.  A flag's bit p of the mask says bucket p & 1, and slot p >> 4
 * (2-byte tags) or (p & 2) | (p >> 5 & 1) (4-byte tags); a borrow can flag
 * a slot whose tag differs, so the whole slot is compared.
 */
static __always_inline bool cnf_probe_up(const struct cnf_table *t,
					 unsigned int width, u32 i0, u32 i1,
					 const u32 *w)
{
	const unsigned int n = cnf_width_words(width);
	u8 *b[2] = { cnf_bucket(t, width, i0), cnf_bucket(t, width, i1) };
	const u64 *t0 = (const u64 *)b[0], *t1 = (const u64 *)b[1];
	u64 home = cnf_lanes(width, w[n - 1]);
	u64 alt = home | cnf_lanes(width, CNF_TAG_ALT);
	u64 m;

	if (cnf_tag_bytes(width) == 2)
		m = cnf_zero_lanes16(READ_ONCE(t0[0]) ^ home) >> 15 |
		    cnf_zero_lanes16(READ_ONCE(t1[0]) ^ alt) >> 14;
	else
		m = cnf_zero_lanes32(READ_ONCE(t0[0]) ^ home) >> 31 |
		    cnf_zero_lanes32(READ_ONCE(t0[1]) ^ home) >> 29 |
		    cnf_zero_lanes32(READ_ONCE(t1[0]) ^ alt) >> 30 |
		    cnf_zero_lanes32(READ_ONCE(t1[1]) ^ alt) >> 28;
	for (; m; m &= m - 1) {
		unsigned int p = __ffs64(m);
		unsigned int s = cnf_tag_bytes(width) == 2 ? p >> 4 :
				 (p & 2) | (p >> 5 & 1);
		const u32 *up = cnf_slot_up(b[p & 1], width, s);

		if (cnf_slot_tag(b[p & 1], width, s) ==
		    (w[n - 1] | (p & 1 ? CNF_TAG_ALT : 0)) &&
		    READ_ONCE(up[0]) == w[0] &&
		    (n == 2 || (READ_ONCE(up[1]) == w[1] &&
				READ_ONCE(up[2]) == w[2])))
			return true;
	}
	return false;
}

/*
 * Is IPv4 home tag @tag in bucket @b0 or, with CNF_TAG_ALT, in @b1?  Both
 * are tested without branching: whether a key sits in its home or alternate
 * bucket is a coin flip that the branch predictor would lose.  The four
 * words of wide buckets are ored one at a time and masked once: so few
 * values are live that the packet path saves and restores no register.
 */
static __always_inline bool cnf_probe4(unsigned int width, const u64 *b0,
				       const u64 *b1, u32 tag)
{
	u64 home = cnf_lanes(width, tag);
	u64 alt = home | cnf_lanes(width, CNF_TAG_ALT);
	u64 m;

	if (width == CNF_SLOT_V4_NARROW)
		return (cnf_bucket16_match(b0, home) |
			cnf_bucket16_match(b1, alt)) != 0;
	m = cnf_borrow_lanes32(READ_ONCE(b0[0]) ^ home);
	m |= cnf_borrow_lanes32(READ_ONCE(b0[1]) ^ home);
	m |= cnf_borrow_lanes32(READ_ONCE(b1[0]) ^ alt);
	m |= cnf_borrow_lanes32(READ_ONCE(b1[1]) ^ alt);
	return (m & CNF_LANES32_TOP) != 0;
}

/* Is the key located at @p in one of its buckets? */
static __always_inline bool cnf_table_probe(const struct cnf_table *t,
					    unsigned int width,
					    const struct cnf_pos *p)
{
	if (cnf_width_words(width) > 1)
		return cnf_probe_up(t, width, p->b[0], p->b[1], p->w);
	return cnf_probe4(width, cnf_bucket_words(t, width, p->b[0]),
			  cnf_bucket_words(t, width, p->b[1]), p->w[0]);
}

/* ---- the summary of an IPv6 table ---- */

/*
 * A key's bit in its home bucket's summary word: the top five bits of H,
 * which the home bucket never comes from (the largest table has 2^26
 * buckets).  Keys of one home bucket differ in H (the bucket and H give
 * the key back), so at the load limit the bits of a bucket's 3.8 keys flag
 * about an eighth of the absent keys that bucket is home to.  @h: H, as
 * cnf_locate() returns it.
 */
static __always_inline u32 cnf_summary_bit(u32 h)
{
	return 1U << (h >> 27);
}

/*
 * May @t, an IPv6 table, hold the key of home bucket @home and hash @h?
 * False: it does not.  A table without a summary (a store) may hold any.
 */
static __always_inline bool cnf_summary_has(const struct cnf_table *t,
					    u32 home, u32 h)
{
	const u32 *s = READ_ONCE(t->summary);

	if (!s)
		return true;
	/* Acquire: the next tier's reads come after, as after a probe. */
	return smp_load_acquire(&s[home]) & cnf_summary_bit(h);
}

/* Before the key of home bucket @home and hash @h goes into @t. */
static __always_inline void cnf_summary_mark(struct cnf_table *t, u32 home,
					     u32 h)
{
	u32 *word;

	if (!t->summary)
		return;
	word = &t->summary[home];
	if (!(*word & cnf_summary_bit(h)))
		WRITE_ONCE(*word, *word | cnf_summary_bit(h));
}

/* First empty slot of @bucket, or -1: the first zero tag word. */
static __always_inline int cnf_bucket_free_slot(const struct cnf_table *t,
						unsigned int width, u32 bucket)
{
	const u64 *word = cnf_bucket_words(t, width, bucket);
	u64 m;

	if (cnf_tag_bytes(width) == 2) {
		m = cnf_zero_lanes16(word[0]);
		return m ? (int)(__ffs64(m) / 16) : -1;
	}
	m = cnf_zero_lanes32(word[0]);
	if (m)
		return __ffs64(m) / 32;
	m = cnf_zero_lanes32(word[1]);
	return m ? (int)(2 + __ffs64(m) / 32) : -1;
}

/* ---- write sections ---- */

/*
 * A reader must not spin on a writer that cannot run: softirqs of this CPU
 * are kept out, and the writer is not preempted.  Without PREEMPT_RT the
 * first implies the second; with it, local_bh_disable() only serialises
 * with this CPU's softirq threads, and write_seqcount_begin() on a plain
 * seqcount_t expects preemption off.
 */
static inline void cnf_write_begin(struct cnf_table *t)
{
	local_bh_disable();
	preempt_disable();
	write_seqcount_begin(&t->seq);
}

static inline void cnf_write_end(struct cnf_table *t)
{
	write_seqcount_end(&t->seq);
	preempt_enable();
	local_bh_enable();
}

/*
 * Around a slot filled or emptied in place, no key moving: a write section
 * for slots of more than one word.  A one-word slot changes in one store,
 * which a reader sees whole or not at all, the key there or not, both
 * right for a lookup that overlaps the change (table.c).
 */
static __always_inline void cnf_slot_begin(struct cnf_table *t,
					   unsigned int width)
{
	if (cnf_width_words(width) > 1)
		cnf_write_begin(t);
}

static __always_inline void cnf_slot_end(struct cnf_table *t,
					 unsigned int width)
{
	if (cnf_width_words(width) > 1)
		cnf_write_end(t);
}

/* ---- where a key lives ---- */

/*
 * Where a key lives: its two buckets and its slot, and back.
 *
 * A key's last word x (host order: an IPv4 address, the second word of a
 * CNF_LAYOUT64 key, the fourth of an IPv6 address) is split into
 * r = x >> log and l = x & mask; the words before it join r.  With
 * h = H(r), a hash keyed by a per-table random seed, its home bucket is
 * i1 = l ^ h and its alternate i2 = i1 ^ (rol32(h, 16) | 1): odd, so the
 * buckets always differ, and either bucket with the slot gives the other
 * (partial-key cuckoo hashing).  Outsiders cannot aim many
 * addresses at one bucket pair without the seed.  One hash per lookup: an
 * IPv4 r has at most 32 - log bits, so a second hash would add no pairs.
 *
 * A slot stores r (the upper words as they are, and x >> log, for two-word
 * keys xored with bits of the upper word: cnf_tag_mix()), the tag bits,
 * and nothing else: i1 follows from the bucket and the alternate
 * bit, l = i1 ^ H(r), x = (x >> log) << log | l.  So the key comes back
 * exactly from a slot and its bucket, a fingerprint hit is an exact match
 * (no false positives), and growth rebuilds a table from its own slots.
 *
 */

/* Chunks of r: 14 bits at most in narrow slots, 29 in wide ones. */
static inline unsigned int cnf_thash_chunks(unsigned int width)
{
	return width == CNF_SLOT_V4_NARROW ? 2 : 4;
}

/* Entries of the tabulation of a table of @fam, 2^@log buckets; 0: none. */
static inline size_t cnf_thash_entries(enum cnf_layout layout,
				       unsigned int log)
{
	unsigned int width = cnf_slot_bytes(layout, log);

	if (cnf_layout_words(layout) != 1)
		return 0;
	return (size_t)cnf_thash_chunks(width) * CNF_THASH_ENTRIES;
}

/*
 * What a two-word key's tag word holds is r xor bits of the upper word, of
 * the slot words @w: the keys of a tier of 33 to 64 bits are numbers below
 * 2^(L - 32) after their /32 (prefix.h), whose r has few bits or none, and
 * keys sharing a bucket would share a tag.  Mixed, their tags differ with
 * their /32s, and a probe's tag test flags little but the key's own slot.
 * The upper word is in the slot: r comes back.  Fits a narrow tag word.
 */
static __always_inline u32 cnf_tag_mix(unsigned int width, const u32 *w)
{
	if (cnf_width_words(width) != 2)
		return 0;
	return (w[0] ^ w[0] >> 16) & ((1U << CNF_NARROW_R_BITS) - 1);
}

/* r of slot words @w: their tag word without the tag bits, unmixed. */
static __always_inline u32 cnf_slot_r(unsigned int width, const u32 *w)
{
	return (w[cnf_width_words(width) - 1] >> 2) ^ cnf_tag_mix(width, w);
}

/* H of slot words @w: their upper words, and @r, the last word's part. */
static __always_inline u32 cnf_hash_r(const struct cnf_table *t,
				      unsigned int width, const u32 *w, u32 r)
{
	const unsigned int n = cnf_width_words(width);
	u32 k[4] = { w[0], w[1], w[2], w[3] };

	if (n == 1)
		return cnf_thash4(t->thash, cnf_thash_chunks(width), r);
	k[n - 1] = r;
	return cnf_hash6(t->mul6, k, n);
}

/* H(r), r being the part of the key slot words @w store; tags excluded. */
static __always_inline u32 cnf_hash(const struct cnf_table *t,
				    unsigned int width, const u32 *w)
{
	return cnf_hash_r(t, width, w, cnf_slot_r(width, w));
}

static __always_inline u32 cnf_alt_offset(const struct cnf_table *t, u32 h)
{
	return (rol32(h, 16) | 1) & t->mask;
}

/*
 * Encode @addr for @t, its cnf_width_words() words (a __be32 for IPv4
 * tables, the first two words of a struct in6_addr for CNF_LAYOUT64, all
 * four for CNF_LAYOUT128; no word past them is read): its slot words (home
 * tag) and its two buckets.  Returns H, which an IPv6 table's summary
 * takes (table.h).
 */
static __always_inline u32 cnf_locate(const struct cnf_table *t,
				      unsigned int width, const void *addr,
				      struct cnf_pos *p)
{
	const unsigned int n = cnf_width_words(width);
	const __be32 *a = addr;
	u32 x, h, *w = p->w;

	w[0] = n > 1 ? (__force u32)a[0] : 0;
	w[1] = n > 2 ? (__force u32)a[1] : 0;
	w[2] = n > 2 ? (__force u32)a[2] : 0;
	w[3] = 0;
	x = ntohl(a[n - 1]);
	w[n - 1] = ((x >> t->log) ^ cnf_tag_mix(width, w)) << 2 | CNF_TAG_VALID;
	h = cnf_hash_r(t, width, w, x >> t->log);
	p->b[0] = (x ^ h) & t->mask;
	p->b[1] = p->b[0] ^ cnf_alt_offset(t, h);
	return h;
}

/* The bucket the key in (bucket, slot) would move to; @w: its new slot. */
static __always_inline u32 cnf_slot_other(const struct cnf_table *t,
					  unsigned int width, u32 bucket,
					  unsigned int s, u32 *w)
{
	cnf_slot_read(t, width, bucket, s, w);
	*cnf_tag_word(width, w) ^= CNF_TAG_ALT;
	return bucket ^ cnf_alt_offset(t, cnf_hash(t, width, w));
}

/* ---- table.c: one table's writers (under the filter's lock) ---- */

unsigned int cnf_max_log(enum cnf_layout layout);
size_t cnf_table_bytes(enum cnf_layout layout, unsigned int log,
		       bool summary, bool shared);
size_t cnf_summary_bytes(enum cnf_layout layout, unsigned int log,
			 bool summary);
int cnf_summary_refresh(struct cnf_table *t);
size_t cnf_thash4_bytes(void);
struct cnf_table *cnf_table_alloc(enum cnf_layout layout, unsigned int log,
				  bool summary, u32 **thash4);
void cnf_table_free(struct cnf_table *t);
void cnf_table_retire(struct cnf_table *t);
int cnf_table_add(struct cnf_table *t, struct cnf_path_node *path,
		  const struct cnf_key *key);
int cnf_table_insert(struct cnf_table *t, struct cnf_path_node *path,
		     const struct cnf_key *key);
int cnf_table_del(struct cnf_table *t, struct cnf_path_node *path,
		  const struct cnf_key *key);
bool cnf_stash_put(struct cnf_table *t, const struct cnf_key *key);
void cnf_table_prefetch(struct cnf_table *t, const struct cnf_key *key);
int cnf_table_walk(const struct cnf_table *t,
		   int (*fn)(void *ctx, const struct cnf_key *key), void *ctx);
int cnf_table_walk_buckets(const struct cnf_table *t, u32 from, u32 to,
			   int (*fn)(void *ctx, const struct cnf_key *key),
			   void *ctx);
int cnf_table_walk_stash(const struct cnf_table *t,
			 int (*fn)(void *ctx, const struct cnf_key *key),
			 void *ctx);
void cnf_table_prune(struct cnf_table *t, struct cnf_path_node *path,
		     bool (*keep)(void *ctx, const struct cnf_key *key),
		     void *ctx);

/* ---- table.c: finding a key, for readers, also used by writers ---- */

bool cnf_stash_has(const struct cnf_table *t, const void *addr);
bool cnf_table_has_slow(const struct cnf_table *t, const void *addr);
bool cnf_table_has4_slow(const struct cnf_table *t, __be32 addr);
bool cnf_table_contains(const struct cnf_table *t, const struct cnf_key *key);

/* ---- the fast path of a lookup in one table ---- */

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

/* Is @key, of an IPv4-layout table, in @t? */
static __always_inline bool cnf_table_has4(const struct cnf_table *t,
					   __be32 key)
{
	int ret = cnf_for_v4_width(cnf_table_has, t, &key);

	return likely(ret >= 0) ? ret : cnf_table_has4_slow(t, key);
}

/* Is @addr a key of @t, a table of 16-byte slots? */
static __always_inline bool cnf_table_has6(const struct cnf_table *t,
					   const struct in6_addr *addr)
{
	int ret = cnf_table_has_width(t, CNF_SLOT_V6, addr);

	return likely(ret >= 0) ? ret : cnf_table_has_slow(t, addr);
}

#endif /* _CNF_TABLE_H */
