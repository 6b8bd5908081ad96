// SPDX-License-Identifier: GPL-2.0
/*
 * The prefix store: per family, the prefixes the lookup tables cannot
 * tell back (prefix.h, tier.c).
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
 */
#include "ftable.h"
#include "prefix.h"
#include "store.h"

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
void cnf_store_key_prefix(enum cnf_family fam, const struct cnf_key *k,
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
unsigned int cnf_store_index(const struct cnf_key *p)
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

bool cnf_store_has(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_key k;

	cnf_store_key(p, &k);
	return cnf_ftable_has(f, cnf_store_of(f, p), &k);
}

int cnf_store_add(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_table __rcu **tp = cnf_store_of(f, p);
	struct cnf_key k;
	int err;

	err = cnf_ftable_ensure(f, tp, cnf_store_layout(p));
	if (err)
		return err;
	cnf_store_key(p, &k);
	err = cnf_ftable_add(f, tp, &k);
	cnf_ftable_release(f, tp);
	return err;
}

void cnf_store_del(struct cnf_filter *f, const struct cnf_key *p)
{
	struct cnf_table __rcu **tp = cnf_store_of(f, p);
	struct cnf_key k;

	cnf_store_key(p, &k);
	WARN_ON_ONCE(cnf_ftable_del(f, tp, &k));
	cnf_ftable_release(f, tp);
}
