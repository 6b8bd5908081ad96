// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's baseline: the plain cuckoo filter of Fan et al. as the
 * paper's reference implementation configures it for its figures, written
 * here from the paper: 4 slots of 12-bit fingerprints a bucket, packed in 6
 * bytes, i2 = i1 ^ hash(fp), random-walk kicks, and one 64x64-bit multiply
 * to hash (a multiply-shift of the 32-bit key alone tied fingerprints to
 * buckets: half the theoretical false-positive rate came out).
 * Probabilistic (no exact check), single-threaded (no seqcount, no RCU),
 * IPv4 keys only.  bench_core times it on the same keys, tables of the same
 * bucket count and the same call per lookup as cuckoo_nf's core, so that
 * the goals stated as the reference's figures on this machine are
 * checked side by side in one run.
 */
#include <stdlib.h>
#include <string.h>

#include "ref12.h"

#define REF_BUCKET_BYTES	6
#define REF_MAX_KICKS		500
#define REF_LANES		0x001001001001ULL
#define REF_HIGH		0x800800800800ULL

struct ref12 {
	u8 *buckets;		/* 6 bytes a bucket, 8 bytes of tail padding */
	u64 mask;
	u64 mul, add;		/* the hash: both halves of mul * (key ^ add) */
	u64 rng;
};

struct ref12 *ref12_create(unsigned int log, u64 seed)
{
	struct ref12 *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->buckets = calloc(((size_t)REF_BUCKET_BYTES << log) + 8, 1);
	if (!r->buckets) {
		free(r);
		return NULL;
	}
	r->mask = (1ULL << log) - 1;
	r->mul = seed * 0x9e3779b97f4a7c15ULL | 1;
	r->add = seed ^ 0xc2b2ae3d27d4eb4fULL;
	r->rng = seed | 1;
	return r;
}

void ref12_destroy(struct ref12 *r)
{
	free(r->buckets);
	free(r);
}

static u64 ref12_word(const struct ref12 *r, u64 i)
{
	u64 w;

	memcpy(&w, r->buckets + REF_BUCKET_BYTES * i, sizeof(w));
	return w;
}

static void ref12_set(struct ref12 *r, u64 i, unsigned int s, u32 fp)
{
	u64 w = ref12_word(r, i);

	w &= ~(0xfffULL << (12 * s));
	w |= (u64)fp << (12 * s);
	memcpy(r->buckets + REF_BUCKET_BYTES * i, &w, REF_BUCKET_BYTES);
}

static u32 ref12_get(const struct ref12 *r, u64 i, unsigned int s)
{
	return (ref12_word(r, i) >> (12 * s)) & 0xfff;
}

/* Home bucket and fingerprint (never 0: 0 marks an empty slot). */
static void ref12_hash(const struct ref12 *r, u32 key, u64 *i, u32 *fp)
{
	unsigned __int128 p = (unsigned __int128)r->mul * (key ^ r->add);
	u64 h = (u64)p ^ (u64)(p >> 64);

	*i = (h >> 32) & r->mask;
	*fp = h & 0xfff;
	*fp += !*fp;
}

static u64 ref12_alt(const struct ref12 *r, u64 i, u32 fp)
{
	return (i ^ (fp * 0x5bd1e995ULL)) & r->mask;
}

static int ref12_put(struct ref12 *r, u64 i, u32 fp)
{
	unsigned int s;

	for (s = 0; s < 4; s++) {
		if (!ref12_get(r, i, s)) {
			ref12_set(r, i, s, fp);
			return 0;
		}
	}
	return -1;
}

static u64 ref12_random(struct ref12 *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

int ref12_add(struct ref12 *r, u32 key)
{
	unsigned int k, s;
	u32 fp, victim;
	u64 i;

	ref12_hash(r, key, &i, &fp);
	if (!ref12_put(r, i, fp) || !ref12_put(r, ref12_alt(r, i, fp), fp))
		return 0;
	if (ref12_random(r) & 4)
		i = ref12_alt(r, i, fp);
	for (k = 0; k < REF_MAX_KICKS; k++) {
		s = ref12_random(r) & 3;
		victim = ref12_get(r, i, s);
		ref12_set(r, i, s, fp);
		fp = victim;
		i = ref12_alt(r, i, fp);
		if (!ref12_put(r, i, fp))
			return 0;
	}
	return -1;	/* the last victim is lost: the table is too full */
}

/* A lane of 12 bits that is zero, as cnf_zero_lanes16() in the core. */
static int ref12_in(u64 w, u32 fp)
{
	w ^= fp * REF_LANES;
	return ((w - REF_LANES) & ~w & REF_HIGH) != 0;
}

bool ref12_lookup(const struct ref12 *r, u32 key)
{
	u32 fp;
	u64 i;

	ref12_hash(r, key, &i, &fp);
	return ref12_in(ref12_word(r, i), fp) |
	       ref12_in(ref12_word(r, ref12_alt(r, i, fp)), fp);
}
