/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace twins of the kernel services the filter core uses, so that
 * module/filter.c builds unchanged into tests, fuzzers and benchmarks.
 *
 * - jhash*: the kernel's Jenkins hash (include/linux/jhash.h), same values;
 *   selftests/jhash.sh compares both inside the VM.
 * - RCU: liburcu (memb flavour); readers must rcu_register_thread().
 * - seqcount: C11-style seqlock (Boehm, "Can seqlocks get along with
 *   programming language memory models?"); slot accesses go through
 *   READ_ONCE/WRITE_ONCE like in the kernel.
 * - cnf_zalloc: calloc, with a countdown to make the Nth allocation fail.
 */
#ifndef _CNF_COMPAT_USER_H
#define _CNF_COMPAT_USER_H

#define _LGPL_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#define U64_MAX	((u64)~0ULL)
typedef int32_t s32;
typedef uint32_t __be32;

#define __rcu
#define __force
#define noinline	__attribute__((noinline))
#define __ffs64(x)	((unsigned int)__builtin_ctzll(x))
#define __ffs(x)	((unsigned int)__builtin_ctzl(x))
#define __fls(x)	((unsigned int)(8 * sizeof(long) - 1 - __builtin_clzl(x)))
#define prefetch(x)	__builtin_prefetch(x)
#define prefetchw(x)	__builtin_prefetch(x, 1)
#ifndef __always_inline
#define __always_inline	inline __attribute__((always_inline))
#endif
#define __aligned(x)	__attribute__((aligned(x)))
#define OPTIMIZER_HIDE_VAR(var) __asm__ ("" : "=r" (var) : "0" (var))
#define lockdep_is_held(x) 1
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#ifdef CNF_USER_INSTRUMENT
/*
 * The interleaving test (userspace/tests/test_filter_interleave.c) sees
 * every marked access: it logs the writers' stores, replays them forwards
 * and backwards, and moves memory from one state to another between two
 * loads of a reader.  Unmarked accesses are the writers' private data.
 */
struct rcu_head;
struct cnf_user_hooks {
	/* Before a marked load of @size bytes at @addr. */
	void (*load)(const void *addr, size_t size);
	/*
	 * Instead of a marked store: must write @size bytes of @val at @addr.
	 * @seq: the store is a seqcount's, which readers only compare.
	 */
	void (*store)(void *addr, size_t size, const void *val, bool seq);
	/* read_seqcount_begin() found a write section open: it would wait. */
	void (*seq_wait)(void);
	/* cnf_free(): the test frees once no replayed store can reach @p. */
	void (*free)(void *p);
	/*
	 * call_rcu(): free after the readers of the test are done, and no
	 * reader that starts after the call may reach what @fn frees.
	 */
	void (*retire)(struct rcu_head *head, void (*fn)(struct rcu_head *head));
};
extern struct cnf_user_hooks cnf_user_hooks;

static inline void cnf_user_load(const void *addr, size_t size)
{
	if (cnf_user_hooks.load)
		cnf_user_hooks.load(addr, size);
}

static inline void cnf_user_store(void *addr, size_t size, const void *val,
				  bool seq)
{
	if (cnf_user_hooks.store)
		cnf_user_hooks.store(addr, size, val, seq);
	else
		memcpy(addr, val, size);
}

#define READ_ONCE(x)							\
	(*({ cnf_user_load(&(x), sizeof(x));				\
	     (const volatile __typeof__(x) *)&(x); }))
#define WRITE_ONCE(x, v)						\
	do {								\
		__typeof__(x) __cnf_v = (v);				\
		cnf_user_store((void *)&(x), sizeof(x), &__cnf_v, false); \
	} while (0)
#undef rcu_dereference
#define rcu_dereference(p)	READ_ONCE(p)
#undef rcu_assign_pointer
#define rcu_assign_pointer(p, v) WRITE_ONCE(p, v)
/*
 * A pointer dropped (NULL, or a table no reader sees yet) is a store
 * readers can see too: logged, so that the states after it are replayed.
 */
#define RCU_INIT_POINTER(p, v) WRITE_ONCE(p, v)
#else
#define RCU_INIT_POINTER(p, v) ((p) = (v))
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#endif
/* x86-64's loads and stores are ordered; the instrumented build records them. */
#define smp_load_acquire(p)						\
	({ __typeof__(*(p)) __cnf_a = READ_ONCE(*(p));			\
	   __atomic_thread_fence(__ATOMIC_ACQUIRE); __cnf_a; })
#define smp_store_release(p, v)						\
	do {								\
		__atomic_thread_fence(__ATOMIC_RELEASE);		\
		WRITE_ONCE(*(p), v);					\
	} while (0)
#define BIT_ULL(n)	(1ULL << (n))
#define hweight64(x)	((unsigned int)__builtin_popcountll(x))
#define hweight16(x)	((unsigned int)__builtin_popcount((u16)(x)))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c)	_Static_assert(!(c), #c)
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)	((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define min(a, b)	((a) < (b) ? (a) : (b))
#define struct_size(p, member, n) \
	(sizeof(*(p)) + sizeof((p)->member[0]) * (size_t)(n))
#define WARN_ON_ONCE(c)	cnf_user_warn(!!(c), #c, __FILE__, __LINE__)
#define cond_resched()	do { } while (0)
#define local_bh_disable() do { } while (0)
#define local_bh_enable() do { } while (0)
#define preempt_disable() do { } while (0)
#define preempt_enable() do { } while (0)
#define rcu_dereference_protected(p, c) (p)
#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

static inline bool cnf_user_warn(bool cond, const char *what,
				 const char *file, int line)
{
	if (cond) {
		fprintf(stderr, "WARNING: %s at %s:%d\n", what, file, line);
		abort();
	}
	return false;
}

static inline u32 rol32(u32 word, unsigned int shift)
{
	return (word << (shift & 31)) | (word >> ((-shift) & 31));
}

static inline int ilog2(u64 n)
{
	return 63 - __builtin_clzll(n);
}

/* ---- jhash: Bob Jenkins' lookup3, as the kernel computes it ---- */
#define JHASH_INITVAL	0xdeadbeef

static inline void __jhash_mix3(u32 *a, u32 *b, u32 *c)
{
	*a -= *c; *a ^= rol32(*c, 4);  *c += *b;
	*b -= *a; *b ^= rol32(*a, 6);  *a += *c;
	*c -= *b; *c ^= rol32(*b, 8);  *b += *a;
	*a -= *c; *a ^= rol32(*c, 16); *c += *b;
	*b -= *a; *b ^= rol32(*a, 19); *a += *c;
	*c -= *b; *c ^= rol32(*b, 4);  *b += *a;
}

static inline u32 __jhash_final3(u32 a, u32 b, u32 c)
{
	c ^= b; c -= rol32(b, 14);
	a ^= c; a -= rol32(c, 11);
	b ^= a; b -= rol32(a, 25);
	c ^= b; c -= rol32(b, 16);
	a ^= c; a -= rol32(c, 4);
	b ^= a; b -= rol32(a, 14);
	c ^= b; c -= rol32(b, 24);
	return c;
}

static inline u32 jhash(const void *key, u32 length, u32 initval)
{
	const u8 *k = key;
	u32 a, b, c, tail[3] = { 0, 0, 0 };
	u32 i;

	a = b = c = JHASH_INITVAL + length + initval;
	for (; length > 12; length -= 12, k += 12) {
		u32 w[3];

		memcpy(w, k, sizeof(w));
		a += w[0];
		b += w[1];
		c += w[2];
		__jhash_mix3(&a, &b, &c);
	}
	if (!length)
		return c;
	/* The kernel assembles the last block little-endian, byte by byte. */
	for (i = 0; i < length; i++)
		tail[i / 4] |= (u32)k[i] << (8 * (i % 4));
	return __jhash_final3(a + tail[0], b + tail[1], c + tail[2]);
}

static inline u32 jhash2(const u32 *k, u32 length, u32 initval)
{
	u32 a, b, c;

	a = b = c = JHASH_INITVAL + (length << 2) + initval;
	for (; length > 3; length -= 3, k += 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		__jhash_mix3(&a, &b, &c);
	}
	switch (length) {
	case 3:
		c += k[2];
		/* fall through */
	case 2:
		b += k[1];
		/* fall through */
	case 1:
		a += k[0];
		return __jhash_final3(a, b, c);
	}
	return c;
}

static inline u32 __jhash_nwords(u32 a, u32 b, u32 c, u32 initval)
{
	return __jhash_final3(a + initval, b + initval, c + initval);
}

static inline u32 jhash_3words(u32 a, u32 b, u32 c, u32 initval)
{
	return __jhash_nwords(a, b, c, initval + JHASH_INITVAL + (3 << 2));
}

static inline u32 jhash_2words(u32 a, u32 b, u32 initval)
{
	return __jhash_nwords(a, b, 0, initval + JHASH_INITVAL + (2 << 2));
}

static inline u32 jhash_1word(u32 a, u32 initval)
{
	return __jhash_nwords(a, 0, 0, initval + JHASH_INITVAL + (1 << 2));
}

/* ---- random bytes: getrandom(), or a fixed sequence for reproducible runs */
u32 get_random_u32(void);
void cnf_user_seed_random(u64 seed);

/* ---- allocation, with failure injection for tests ---- */
/* The allocation this many calls from now fails; <0 never (the default). */
extern long cnf_user_fail_alloc_in;

/* Bytes the core holds, and the most it held since the last reset. */
extern size_t cnf_user_bytes, cnf_user_bytes_peak;

static inline void *cnf_zalloc(size_t size)
{
	size_t round = (size + 63) & ~(size_t)63, now;
	void *p;

	if (cnf_user_fail_alloc_in >= 0 && cnf_user_fail_alloc_in-- == 0)
		return NULL;
	/*
	 * Cache-line aligned, like the kernel's power-of-two allocations; the
	 * size is kept in the line before, for cnf_user_free_now().
	 */
	p = aligned_alloc(64, round + 64);
	if (!p)
		return NULL;
	*(size_t *)p = round;
	p = (char *)p + 64;
	memset(p, 0, round);
	now = __atomic_add_fetch(&cnf_user_bytes, round, __ATOMIC_RELAXED);
	if (now > __atomic_load_n(&cnf_user_bytes_peak, __ATOMIC_RELAXED))
		__atomic_store_n(&cnf_user_bytes_peak, now, __ATOMIC_RELAXED);
	return p;
}

void cnf_user_free_now(void *p);

static inline void cnf_free(void *p)
{
#ifdef CNF_USER_INSTRUMENT
	if (cnf_user_hooks.free) {
		cnf_user_hooks.free(p);
		return;
	}
#endif
	cnf_user_free_now(p);
}

/* After a grace period: the caller waits for it here. */
static inline void cnf_call_rcu(struct rcu_head *head,
				void (*fn)(struct rcu_head *head))
{
#ifdef CNF_USER_INSTRUMENT
	if (cnf_user_hooks.retire) {
		cnf_user_hooks.retire(head, fn);
		return;
	}
#endif
	synchronize_rcu();
	fn(head);
}

/* ---- writer lock ---- */
struct cnf_mutex {
	pthread_mutex_t m;
};

#define cnf_mutex_init(x)	pthread_mutex_init(&(x)->m, NULL)
#define cnf_mutex_destroy(x)	pthread_mutex_destroy(&(x)->m)
#define cnf_mutex_lock(x)	pthread_mutex_lock(&(x)->m)
#define cnf_mutex_lock_nested(x) cnf_mutex_lock(x)
#define cnf_mutex_lock_killable(x) pthread_mutex_lock(&(x)->m)
#define cnf_mutex_unlock(x)	pthread_mutex_unlock(&(x)->m)
#define cnf_assert_held(x)	do { } while (0)

/* ---- seqcount ---- */
typedef struct {
	unsigned int sequence;
} seqcount_t;

static inline void seqcount_init(seqcount_t *s)
{
	s->sequence = 0;
}

#ifdef CNF_USER_INSTRUMENT
/* Single-threaded under the test: every count access is a marked one. */
static inline unsigned int read_seqcount_begin(const seqcount_t *s)
{
	unsigned int seq = READ_ONCE(s->sequence);

	if ((seq & 1) && cnf_user_hooks.seq_wait)
		cnf_user_hooks.seq_wait();
	return seq;
}

static inline unsigned int raw_seqcount_begin(const seqcount_t *s)
{
	return READ_ONCE(s->sequence) & ~1U;
}

static inline bool read_seqcount_retry(const seqcount_t *s, unsigned int seq)
{
	return READ_ONCE(s->sequence) != seq;
}

static inline void write_seqcount_begin(seqcount_t *s)
{
	unsigned int v = s->sequence + 1;

	cnf_user_store(&s->sequence, sizeof(v), &v, true);
}

static inline void write_seqcount_end(seqcount_t *s)
{
	unsigned int v = s->sequence + 1;

	cnf_user_store(&s->sequence, sizeof(v), &v, true);
}
#else
static inline unsigned int read_seqcount_begin(const seqcount_t *s)
{
	unsigned int seq;

	while ((seq = __atomic_load_n(&s->sequence, __ATOMIC_ACQUIRE)) & 1)
		__builtin_ia32_pause();
	return seq;
}

/* Does not wait for an even count: an odd one fails the retry instead. */
static inline unsigned int raw_seqcount_begin(const seqcount_t *s)
{
	return __atomic_load_n(&s->sequence, __ATOMIC_ACQUIRE) & ~1U;
}

static inline bool read_seqcount_retry(const seqcount_t *s, unsigned int seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->sequence, __ATOMIC_RELAXED) != seq;
}

static inline void write_seqcount_begin(seqcount_t *s)
{
	__atomic_store_n(&s->sequence, s->sequence + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void write_seqcount_end(seqcount_t *s)
{
	__atomic_store_n(&s->sequence, s->sequence + 1, __ATOMIC_RELEASE);
}

#endif

#endif /* _CNF_COMPAT_USER_H */
