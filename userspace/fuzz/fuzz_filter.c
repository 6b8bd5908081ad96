// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the filter core: input bytes decode to a sequence of
 * operations (add, del, lookup, reserve, flush, set_limit, and arming an
 * allocation failure for the next operation) on keys of both families from
 * a small key space, each result checked against the exact set model of
 * userspace/tests/cnf_test.h.  Any disagreement aborts.
 *
 * Input format (all choices modulo their range, so every input is valid):
 *   byte 0          initial capacity: 0, or 2^(b & 7) entries
 *   then per op     one opcode byte b, b % 16:
 *     0-4  add K    5-8 del K    9-11 lookup K     (K: two bytes, below)
 *     12   reserve  fam (1 byte), entries = 8 * (1 byte)
 *     13   flush
 *     14   set_limit, 1 byte c: c % 4 = 0 unlimited, 1 = bytes in use,
 *          2 = one byte below use (must fail), 3 = use + 4 KiB * (c / 4)
 *     15   arm failure: the (1 byte % 4)-th allocation of the next op fails
 *   K = 16 bits v: family v >> 15, pool (v >> 10) & 31, index v & 1023.
 *   Pools 0-27 are cnf_test.h's key shapes (addresses; for IPv6 also
 *   random /64 prefixes, which fill the /64 tier's table); 28-31
 *   prefixes, where the index picks a length (i & 15, a table of the
 *   lengths around the tiers' edges) and a base (i >> 4) from a few
 *   regions of nested blocks, so that prefixes overlap.  A lookup of a prefix tests its first and last
 *   address against every stored prefix covering them.
 *
 * Built three ways (fuzz/fuzz.mk): with clang -fsanitize=fuzzer,address,
 * undefined (build/fuzz/fuzz_filter), and with CNF_FUZZ_STANDALONE as a
 * plain program that replays files and directories and runs seeded random
 * inputs (build/fuzz/fuzz_filter_replay, any C compiler).
 */
#include "cnf_test.h"

#define NO_LIMIT	(1ULL << 40)
#define CHECK_EVERY	32		/* ops between full comparisons */

#define FUZZ_CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_filter: op %u: ", st->op); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, " (%s)\n", #cond); \
		abort(); \
	} \
} while (0)

struct fuzz {
	const u8 *p, *end;
	struct cnf_filter *f;
	struct cnf_model m;
	u64 limit;
	u64 initial_capacity[CNF_NFAMILIES];
	unsigned int op;
	long pending;		/* armed failure for the next op, or -1 */
	u32 nlen[CNF_NFAMILIES][CNF_V6_BITS + 1];	/* model keys per length */
	bool op_armed;		/* this op runs with a failure armed */
};

/* Did an allocation fail in this op?  The countdown then ran out to -1. */
static bool injected(const struct fuzz *st)
{
	return st->op_armed && cnf_user_fail_alloc_in == -1;
}

static bool take(struct fuzz *st, unsigned int n, const u8 **out)
{
	if ((size_t)(st->end - st->p) < n)
		return false;
	*out = st->p;
	st->p += n;
	return true;
}

#define PREFIX_POOLS	28		/* pools from here on are prefixes */

/* Lengths on both sides of the tiers' edges (prefix.h), and the ends. */
static const u8 v4_lens[16] = {
	0, 8, 15, 16, 17, 20, 23, 24, 25, 26, 28, 30, 31, 32, 12, 22,
};
static const u8 v6_lens[16] = {
	8, 24, 32, 33, 40, 47, 48, 56, 63, 64, 65, 96, 112, 120, 127, 128,
};

/*
 * A prefix from 64 bases, whose bits vary at several depths (so that
 * short prefixes cover long ones), cut to one of 16 lengths.
 */
static struct cnf_key prefix_key(enum cnf_family fam, unsigned int idx)
{
	unsigned int b = idx >> 4, len;
	struct cnf_key k;

	if (fam == CNF_V4) {
		k = cnf_key4(0x0a000000u | (b & 3) << 22 | (b >> 2 & 3) << 14 |
			     (b >> 4 & 3) << 6 | 0x00010101u);
		len = v4_lens[idx & 15];
	} else {
		k = cnf_key6(0x20010db8u, (b & 3) << 20 | (b >> 2 & 3) << 4,
			     (b >> 4 & 3) << 30, 0x10001u);
		len = v6_lens[idx & 15];
	}
	cnf_key_cut(&k, len);
	return k;
}

/* The last address of prefix @p. */
static struct cnf_key prefix_last(const struct cnf_key *p)
{
	struct cnf_key a = *p;
	unsigned int w, l = p->len;

	if (a.family == CNF_V4) {
		if (l < 32)
			a.v4 |= htonl(~0U >> l);
	} else {
		for (w = 0; w < 4; w++, l = l > 32 ? l - 32 : 0)
			if (l < 32)
				a.v6.s6_addr32[w] |= l ? htonl(~0U >> l) : ~0U;
	}
	a.len = a.family == CNF_V4 ? CNF_V4_BITS : CNF_V6_BITS;
	return a;
}

/* 32 pools: shape from the low bits, the rest salts the pool's keys. */
static struct cnf_key decode_key(const u8 *b)
{
	u16 v = (u16)(b[0] << 8 | b[1]);
	enum cnf_family fam = v >> 15;
	unsigned int pool = (v >> 10) & 31;
	enum cnf_shape shape = pool % CNF_NSHAPES;

	if (pool >= PREFIX_POOLS)
		return prefix_key(fam, v & 1023);

	if (fam == CNF_V4 && shape > CNF_SHAPE_SEQ)
		shape -= 2;
	return cnf_pool_key(fam, shape, 0xf00d + pool / CNF_NSHAPES,
			    v & 1023);
}

static void full_check(struct fuzz *st)
{
	char why[256];

	FUZZ_CHECK(cnf_check_full(st->f, &st->m, why, sizeof(why)), "%s",
		   why);
}

static bool is_prefix(const struct cnf_key *k)
{
	return k->len < (k->family == CNF_V4 ? CNF_V4_BITS : CNF_V6_BITS);
}

/* The first address of prefix @p. */
static struct cnf_key prefix_first(const struct cnf_key *p)
{
	struct cnf_key a = *p;

	a.len = a.family == CNF_V4 ? CNF_V4_BITS : CNF_V6_BITS;
	return a;
}

/* Does a prefix of the model cover address @a?  A probe per length held. */
static bool model_covers(const struct fuzz *st, const struct cnf_key *a)
{
	struct cnf_key p = *a;
	int len;

	for (len = a->len; len >= 0; len--) {
		if (!st->nlen[a->family][len])
			continue;
		cnf_key_cut(&p, len);
		if (cnf_model_has(&st->m, &p))
			return true;
	}
	return false;
}

/* Is @k stored, as it is, exactly when the model holds it? */
static void check_stored(struct fuzz *st, const struct cnf_key *k)
{
	char buf[INET6_ADDRSTRLEN + 8];
	bool want = cnf_model_has(&st->m, k), got;

	cnf_filter_lock(st->f);
	got = cnf_filter_has(st->f, k);
	cnf_filter_unlock(st->f);
	FUZZ_CHECK(got == want, "%s stored: %d, model %d",
		   cnf_key_str(k, buf, sizeof(buf)), got, want);
}

/* Does every reader drop address @a exactly when a model prefix covers it? */
static void check_covered(struct fuzz *st, const struct cnf_key *a)
{
	char buf[INET6_ADDRSTRLEN + 8];
	int want = model_covers(st, a), got = cnf_t_has(st->f, a);

	FUZZ_CHECK(got == want, "lookup of %s: %d, model %d",
		   cnf_key_str(a, buf, sizeof(buf)), got, want);
}

static void check_key(struct fuzz *st, const struct cnf_key *k)
{
	struct cnf_key a = prefix_first(k);

	check_stored(st, k);
	check_covered(st, &a);
	if (is_prefix(k)) {
		a = prefix_last(k);
		check_covered(st, &a);
	}
}

static void do_add(struct fuzz *st, const struct cnf_key *k)
{
	bool had = cnf_model_has(&st->m, k);
	int err = cnf_t_add(st->f, k);

	if (had) {
		FUZZ_CHECK(err == -EEXIST, "add of present key: %d", err);
	} else if (!err) {
		cnf_model_add(&st->m, k);
		st->nlen[k->family][k->len]++;
	} else {
		FUZZ_CHECK((err == -ENOSPC && st->limit != NO_LIMIT) ||
			   (err == -ENOMEM && injected(st)),
			   "add of absent key: %d (limit %llu)", err,
			   (unsigned long long)st->limit);
	}
	check_key(st, k);
}

static void do_del(struct fuzz *st, const struct cnf_key *k)
{
	bool had = cnf_model_has(&st->m, k);
	int err = cnf_t_del(st->f, k);

	FUZZ_CHECK(err == (had ? 0 : -ENOENT), "del: %d, model %d", err,
		   had);
	if (had) {
		cnf_model_del(&st->m, k);
		st->nlen[k->family][k->len]--;
	}
	check_key(st, k);
}

static void do_lookup(struct fuzz *st, const struct cnf_key *k)
{
	check_key(st, k);
}

static void do_reserve(struct fuzz *st, enum cnf_family fam, u64 n)
{
	int err = cnf_t_reserve(st->f, fam, n);
	struct cnf_filter_stats s;

	FUZZ_CHECK(!err || (err == -ENOSPC && st->limit != NO_LIMIT) ||
		   (err == -ENOMEM && injected(st)), "reserve %llu: %d",
		   (unsigned long long)n, err);
	s = cnf_t_stats(st->f);
	/* Room for n within the load the core allows before growing. */
	if (!err)
		FUZZ_CHECK(s.fam[fam].capacity >= n, "reserve %llu: capacity %llu",
			   (unsigned long long)n,
			   (unsigned long long)s.fam[fam].capacity);
	full_check(st);
}

static void do_flush(struct fuzz *st)
{
	int err = cnf_t_flush(st->f);
	struct cnf_filter_stats s;
	unsigned int fam;

	FUZZ_CHECK(!err || (err == -ENOMEM && injected(st)), "flush: %d", err);
	if (!err) {
		cnf_model_clear(&st->m);
		memset(st->nlen, 0, sizeof(st->nlen));
		s = cnf_t_stats(st->f);
		for (fam = 0; fam < CNF_NFAMILIES; fam++)
			FUZZ_CHECK(s.fam[fam].capacity ==
				   st->initial_capacity[fam],
				   "flush left capacity %llu",
				   (unsigned long long)s.fam[fam].capacity);
	}
	full_check(st);
}

static void do_set_limit(struct fuzz *st, u8 c)
{
	u64 used = cnf_t_bytes(st->f), want;
	int err;

	switch (c % 4) {
	case 0:
		want = NO_LIMIT;
		break;
	case 1:
		want = used;
		break;
	case 2:
		want = used - 1;
		break;
	default:
		want = used + 4096ULL * (c / 4);
	}
	err = cnf_t_set_limit(st->f, want);
	FUZZ_CHECK(err == (want < used ? -EINVAL : 0), "set_limit: %d", err);
	if (!err)
		st->limit = want;
	FUZZ_CHECK(cnf_t_stats(st->f).mem_limit == st->limit,
		   "mem_limit not as set");
}

/* One operation; false when the input ends. */
static bool one_op(struct fuzz *st)
{
	const u8 *b, *a;
	struct cnf_key k;
	u8 code;

	if (!take(st, 1, &b))
		return false;
	code = b[0] % 16;
	if (code <= 11) {
		if (!take(st, 2, &a))
			return false;
		k = decode_key(a);
		if (code <= 4)
			do_add(st, &k);
		else if (code <= 8)
			do_del(st, &k);
		else
			do_lookup(st, &k);
		return true;
	}
	if (code == 13) {
		do_flush(st);
		return true;
	}
	if (!take(st, code == 12 ? 2 : 1, &a))
		return false;
	if (code == 12)
		do_reserve(st, a[0] & 1, 8ULL * a[1]);
	else if (code == 14)
		do_set_limit(st, a[0]);
	else
		st->pending = a[0] % 4;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz s = { .p = data, .end = data + size, .limit = NO_LIMIT,
			  .pending = -1 };
	struct fuzz *st = &s;
	struct cnf_filter_stats stats;
	u64 cap = 0;
	unsigned int fam;

	if (size && data[0] & 7)
		cap = 1ULL << (data[0] & 7);
	s.p += !!size;
	cnf_user_fail_alloc_in = -1;
	cnf_user_seed_random(0xf122);	/* same table seeds: reproducible */
	s.f = cnf_filter_create(cap, NO_LIMIT);
	FUZZ_CHECK(s.f, "create");
	stats = cnf_t_stats(s.f);
	for (fam = 0; fam < CNF_NFAMILIES; fam++)
		s.initial_capacity[fam] = stats.fam[fam].capacity;
	cnf_model_init(&s.m, 6);
	for (;; s.op++) {
		bool more;

		/* An armed failure applies to the next op only. */
		s.op_armed = s.pending >= 0;
		cnf_user_fail_alloc_in = s.pending;
		s.pending = -1;
		more = one_op(&s);
		cnf_user_fail_alloc_in = -1;
		if (!more)
			break;
		if (s.op % CHECK_EVERY == CHECK_EVERY - 1)
			full_check(&s);
	}
	full_check(&s);
	cnf_model_free(&s.m);
	cnf_filter_destroy(s.f);
	cnf_user_fail_alloc_in = -1;
	return 0;
}

#ifdef CNF_FUZZ_STANDALONE
/*
 * Without libFuzzer: replay files and directories of inputs, then run
 * -runs=N seeded random inputs (-seed=S, -max_len=L).  With no arguments:
 * the committed corpus (CNF_FUZZ_CORPUS) and 4000 random inputs, seed 1.
 * Prints a kselftest Totals line, so it can serve as a unit test.
 */
#include <dirent.h>
#include <sys/stat.h>

static unsigned long replayed;

static void replay_file(const char *path)
{
	static u8 buf[1 << 16];
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp) {
		perror(path);
		exit(1);
	}
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	LLVMFuzzerTestOneInput(buf, n);
	replayed++;
}

static void replay(const char *path)
{
	char sub[4096];
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
		replay_file(path);
		return;
	}
	d = opendir(path);
	if (!d) {
		perror(path);
		exit(1);
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		replay_file(sub);
	}
	closedir(d);
}

/*
 * A random input in the format above, biased to what matters: keys mostly
 * from 16 per pool so duplicates and deletes of present keys are common.
 */
static size_t random_input(struct cnf_rng *r, u8 *buf, size_t max_len)
{
	size_t len = 1 + cnf_rng_below(r, max_len), i;

	for (i = 0; i < len; i++)
		buf[i] = (u8)cnf_rng_next(r);
	for (i = 1; i + 2 < len; i += 3) {
		buf[i] = (u8)cnf_rng_below(r, cnf_rng_below(r, 8) ? 12 : 16);
		if (cnf_rng_below(r, 4))
			buf[i + 2] &= 15;
	}
	return len;
}

int main(int argc, char **argv)
{
	unsigned long runs = 0, seed = 1, max_len = 1024, i;
	static u8 buf[1 << 16];
	struct cnf_rng r;
	bool paths = false;
	int a;

	for (a = 1; a < argc; a++) {
		if (sscanf(argv[a], "-runs=%lu", &runs) == 1 ||
		    sscanf(argv[a], "-seed=%lu", &seed) == 1 ||
		    sscanf(argv[a], "-max_len=%lu", &max_len) == 1)
			continue;
		replay(argv[a]);
		paths = true;
	}
	if (argc == 1) {
		replay(CNF_FUZZ_CORPUS);
		runs = 4000;
	}
	if (max_len < 1 || max_len > sizeof(buf))
		max_len = sizeof(buf);
	r.s = seed;
	for (i = 0; i < runs; i++)
		LLVMFuzzerTestOneInput(buf, random_input(&r, buf, max_len));
	printf("# fuzz_filter: %lu inputs replayed%s, %lu random inputs (seed %lu, max_len %lu), all agree with the model\n",
	       replayed, paths || argc == 1 ? "" : " (none given)", runs, seed,
	       max_len);
	printf("# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n");
	return 0;
}
#endif
