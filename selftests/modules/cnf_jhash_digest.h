/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The jhash digest computed on both sides of selftests/jhash.sh: in the
 * kernel by cnf_jhash_test.ko with <linux/jhash.h>, in userspace by
 * selftests/jhash_digest.c with userspace/lib/compat_user.h.  Equal digests
 * over the same pseudo-random inputs show that both jhash implementations
 * return the same values.
 *
 * The includer provides u8, u32, u64, jhash(), jhash2(), jhash_1word(),
 * jhash_2words() and jhash_3words().
 */
#ifndef _CNF_JHASH_DIGEST_H
#define _CNF_JHASH_DIGEST_H

#define CNF_JHASH_MAX_LEN	64	/* bytes hashed by jhash(), 0..64 */
#define CNF_JHASH_ROUNDS	512	/* an initval per round */

/* splitmix64: the inputs and the initvals. */
static inline u64 cnf_jhash_rand(u64 *state)
{
	u64 z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* FNV-1a over 32-bit words: any differing hash changes the digest. */
static inline u64 cnf_jhash_fold(u64 digest, u32 hash)
{
	return (digest ^ hash) * 0x100000001b3ULL;
}

/*
 * Hash every length 0..CNF_JHASH_MAX_LEN at every alignment of the key
 * (jhash reads unaligned words), jhash2() over 0..16 words and the
 * 1/2/3-word variants, CNF_JHASH_ROUNDS times with random initvals (and the
 * edge values 0 and ~0).  Returns the digest, and the hashes in *@count.
 */
static inline u64 cnf_jhash_digest(u32 seed, u32 *count)
{
	u8 bytes[CNF_JHASH_MAX_LEN + 8];
	u32 words[CNF_JHASH_MAX_LEN / 4];
	u64 state = seed, digest = 0xcbf29ce484222325ULL;
	u32 round, len, i, n = 0;

	for (round = 0; round < CNF_JHASH_ROUNDS; round++) {
		u32 initval = (u32)cnf_jhash_rand(&state);
		u32 a, b, c;

		if (round == 0)
			initval = 0;
		else if (round == 1)
			initval = ~0U;
		for (len = 0; len <= CNF_JHASH_MAX_LEN; len++) {
			u32 off = (round + len) % 8;

			for (i = 0; i < len; i++)
				bytes[off + i] = (u8)cnf_jhash_rand(&state);
			digest = cnf_jhash_fold(digest, jhash(bytes + off, len, initval));
			n++;
		}
		for (len = 0; len <= CNF_JHASH_MAX_LEN / 4; len++) {
			for (i = 0; i < len; i++)
				words[i] = (u32)cnf_jhash_rand(&state);
			digest = cnf_jhash_fold(digest, jhash2(words, len, initval));
			n++;
		}
		a = (u32)cnf_jhash_rand(&state);
		b = (u32)cnf_jhash_rand(&state);
		c = (u32)cnf_jhash_rand(&state);
		digest = cnf_jhash_fold(digest, jhash_1word(a, initval));
		digest = cnf_jhash_fold(digest, jhash_2words(a, b, initval));
		digest = cnf_jhash_fold(digest, jhash_3words(a, b, c, initval));
		n += 3;
	}
	*count = n;
	return digest;
}

#endif /* _CNF_JHASH_DIGEST_H */
