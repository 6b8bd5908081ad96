// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl fuzzer for /dev/cuckoo_nf.
 *
 * CNF_FUZZ_PROCS worker processes (default 4) share CNF_FUZZ_CALLS calls
 * (default 20000; check-debug runs 1M).  Each worker lives in a network
 * namespace of its own holding a reference set, and issues:
 *  - command numbers: the real ones, ours with a random nr/size/direction,
 *    and fully random ones;
 *  - random struct contents, random and interesting sizes, huge counts;
 *  - argument and array pointers that are fine, read-only, PROT_NONE,
 *    straddling a guard page, unmapped (a freed mapping), kernel or
 *    non-canonical addresses, NULL, unaligned;
 *  - dump cursors: fresh, its own, from another open file, forged;
 *  - calls on a second file of the same namespace, and on a file whose
 *    namespace was abandoned (opened by a child in a new netns that then
 *    exited: the file is all that keeps the namespace alive).
 * Before its reference set is loaded, each worker's namespace takes a
 * first round of calls that only read, delete or flush (fuzzed as above):
 * none of them may configure the namespace, so stats must still report it
 * inactive after them.
 * The reference is three sets: the default set, a block set and an allow
 * set (REF_SETS), each with its own addresses; fuzzed calls name them, new
 * names and bad ones, and create, destroy, swap, flush, list and replace.
 * A call that succeeded must have named its set as the ABI allows.
 * Invariant: every refused call leaves the sets unchanged.  Calls go in
 * rounds of CHECK_EVERY; a round in which no call could have changed the
 * sets (every call that reached a mutating handler was refused, and no
 * batch reports an applied entry) ends with the set list (exactly the
 * three, with their kinds) and each set's dump compared with the
 * reference.  A round that did change them restores the reference
 * instead.
 * Mutating inputs are mostly invalid, so most rounds are checked.
 * The kernel side (no WARN, oops, KASAN report, leak) is checked by the VM
 * harness from the kernel log.
 *
 * Reproduce with CNF_FUZZ_SEED=<seed printed> (and the same call count and
 * process count).  A worker that fails has the parent print its seed and
 * its last RING calls (each with its number, the generator's state before
 * it, the first bytes of its argument and a batch's report), and a check
 * that found the sets changed says how (which set, what it lacks or has
 * beyond the reference).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <time.h>
#include <linux/fs.h>

#include "cnf_util.h"

#define PAGE		4096UL

/* Device names for a scope: good ones, prefixes, and refused ones. */
static const char *const iif_names[] = {
	"lo", "veth+", "+", "eth0", "cnf0", "", "a/b", ".", "..", ".+",
	"a b", "0123456789abcdef",
};
#define NIIF_NAMES	(sizeof(iif_names) / sizeof(iif_names[0]))
#define DEFAULT_CALLS	20000UL
#define DEFAULT_PROCS	4
#define REF_V4		160
#define REF_V6		96
#define REF_N		(REF_V4 + REF_V6)
/* The named sets' references: the first REF_SET_N of another draw each. */
#define REF_SET_N	40
#define CHECK_EVERY	16
/* The ring: the failing round's calls, and the round before. */
#define RING		(2 * CHECK_EVERY)
#define ARR_PAGES	4

/* ---- per-worker results, in shared memory ---- */

/* Bytes of a call's argument the ring keeps, as they went in. */
#define ARG_KEEP	64

/*
 * One call of the ring: enough to tell what it asked and what it got.
 * @n:     its number among the worker's calls, from 0.
 * @rs:    the worker's generator state before the call: with the worker's
 *         seed, where a replay reaches it.
 * @arg:   the first @narg bytes of the argument as passed (readable ones).
 * @batch: a batch's report after the call (flags, count, done, applied,
 *         skipped, error), when @is_batch.
 */
struct call {
	uint64_t n;
	uint64_t rs;
	unsigned long cmd;
	int fdk;		/* 0 main, 1 other, 2 abandoned, 3 bad fd */
	int w;			/* enum where */
	long ret;
	int err;
	unsigned int narg;
	unsigned char arg[ARG_KEEP];
	bool is_batch;
	uint32_t batch[6];
};

struct result {
	uint64_t calls;		/* fuzzed calls issued */
	uint64_t refused;	/* of which returned -1 */
	uint64_t verified;	/* refused calls in rounds checked by dump */
	uint64_t rounds_checked;
	uint64_t restores;	/* rounds that changed the set: reference restored */
	uint64_t abandoned_calls; /* calls on the abandoned netns' file */
	int failed;
	char msg[512];
	/*
	 * The worker's seed, and its last calls: a worker exits with _exit(),
	 * which drops what its stdout still buffers, so the parent prints them.
	 */
	uint64_t seed;
	struct call ring[RING];
	unsigned int nring;
};

static struct result *res;

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (!res->failed) {
		va_start(ap, fmt);
		vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
		va_end(ap);
	}
	res->failed = 1;
}

/* ---- randomness (xorshift64*, reproducible per worker) ---- */

static uint64_t rs;

static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 0x2545F4914F6CDD1DULL;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)((rnd() >> 32) % n);
}

static int chance(unsigned int percent)
{
	return below(100) < percent;
}

static void rnd_fill(void *p, size_t n)
{
	unsigned char *c = p;

	while (n--)
		*c++ = rnd() >> 56;
}

/* ---- memory the arguments point at ---- */

static unsigned char *rw;	/* ARR_PAGES rw pages, then a guard page */
static unsigned char *ro;	/* one read-only page */
static unsigned char *none;	/* one PROT_NONE page */
static unsigned char *freed;	/* a mapping that was unmapped */
static unsigned char *arr;	/* the address arrays: ARR_PAGES + guard */
static unsigned char *secs;	/* timeout arrays, short ones: ARR_PAGES + guard */

static unsigned char *map_guarded(size_t pages)
{
	unsigned char *p = mmap(NULL, (pages + 1) * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + pages * PAGE, PAGE, PROT_NONE))
		return NULL;
	return p;
}

static int setup_memory(void)
{
	rw = map_guarded(ARR_PAGES);
	arr = map_guarded(ARR_PAGES);
	secs = map_guarded(ARR_PAGES);
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Far from where mmap() places things, so that no later mapping
	 * (malloc's) lands there and gets written by a fuzzed call.
	 */
	freed = mmap((void *)0x100000000000ULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (!rw || !arr || !secs || ro == MAP_FAILED || none == MAP_FAILED ||
	    freed == MAP_FAILED)
		return -1;
	if (munmap(freed, 4 * PAGE) || mprotect(ro, PAGE, PROT_READ))
		return -1;
	return 0;
}

/* ---- the reference set ---- */

static struct cnf_addr ref[REF_N];

/* The reference's sets, in creation order: its set list. */
static const struct {
	const char *name;
	uint32_t kind;
	struct cnf_addr *addrs;
	uint32_t n;
} ref_sets[] = {
	{ CNF_SET_DEFAULT, CNF_SET_BLOCK, ref, REF_N },
	{ "fz_b", CNF_SET_BLOCK, ref + REF_N - REF_SET_N, REF_SET_N },
	{ "fz_a", CNF_SET_ALLOW, ref, REF_SET_N },
};

#define REF_SETS	ARRAY_LEN(ref_sets)

static void make_ref(void)
{
	uint32_t i;

	for (i = 0; i < REF_V4; i++)	/* distinct: a bijection of i */
		ref[i] = cnf_v4(cnf_perm32(i + (uint32_t)rnd() % 1000 * REF_N));
	for (i = 0; i < REF_V6; i++)
		ref[REF_V4 + i] = cnf_v6(0x20010db8, (uint32_t)rnd(),
					 (uint32_t)rnd(), i);
	cnf_sort(ref, REF_N);
	for (i = 1; i < REF_N; i++)
		if (!cnf_addr_cmp(&ref[i - 1], &ref[i]))
			ref[i].addr[15] ^= 0x80;	/* never in practice */
	cnf_sort(ref, REF_N);
}

static int fd_main, fd_other, fd_check, fd_ab;

/*
 * Put the reference back: no sets, default config, then the reference's
 * sets, created and loaded.
 */
static int restore(void)
{
	struct cnf_batch b;
	struct cnf_set_req r;
	unsigned int i;
	int err;

	if (ioctl(fd_check, CNF_IOC_RESET))
		return errno;
	err = cnf_reset_config(fd_check);
	if (err)
		return err;
	for (i = 0; i < REF_SETS; i++) {
		if (i) {
			memset(&r, 0, sizeof(r));
			cnf_set_name(r.name, ref_sets[i].name);
			r.kind = ref_sets[i].kind;
			if (ioctl(fd_check, CNF_IOC_SET_CREATE, &r))
				return errno;
		}
		memset(&b, 0, sizeof(b));
		b.addrs = (uintptr_t)ref_sets[i].addrs;
		b.count = ref_sets[i].n;
		cnf_set_name(b.set, ref_sets[i].name);
		if (ioctl(fd_check, CNF_IOC_ADD_BATCH, &b))
			return errno;
		if (b.applied != ref_sets[i].n)
			return EPROTO;
	}
	return 0;
}

static struct cnf_addr *cur;
/* How compare() found the sets other than the reference. */
static char why[160];

/* @a as address/length into @buf of @size bytes. */
static void prefix_str(const struct cnf_addr *a, char *buf, size_t size)
{
	size_t at = strlen(cnf_str(a, buf, size));

	snprintf(buf + at, size - at, "/%u", a->prefixlen);
}

/*
 * Into @why: how set @name's dump @got (@ngot, sorted) differs from its
 * reference @want (@nwant, sorted): how many it lacks and has beyond, and
 * the first of each.
 */
static void say_diff(const char *name, const struct cnf_addr *got, long ngot,
		     const struct cnf_addr *want, long nwant)
{
	char lack[INET6_ADDRSTRLEN + 4] = "-", extra[INET6_ADDRSTRLEN + 4] = "-";
	long i = 0, j = 0, nlack = 0, nextra = 0;
	int c;

	while (i < ngot || j < nwant) {
		c = i == ngot ? 1 : j == nwant ? -1 :
		    cnf_addr_cmp(&got[i], &want[j]);
		if (c < 0 && !nextra++)
			prefix_str(&got[i], extra, sizeof(extra));
		if (c > 0 && !nlack++)
			prefix_str(&want[j], lack, sizeof(lack));
		i += c <= 0;
		j += c >= 0;
	}
	snprintf(why, sizeof(why), "set \"%s\" dumps %ld entries for %ld: %ld missing (first %s), %ld more (first %s)",
		 name, ngot, nwant, nlack, lack, nextra, extra);
}

/* 0 when the sets are the reference; -1 with @why said, or an errno. */
static int compare(void)
{
	struct cnf_set_info info[REF_SETS + 1];
	struct cnf_set_list l = {
		.sets = (uintptr_t)info, .count = REF_SETS + 1,
		.size = sizeof(info[0]),
	};
	unsigned int i;
	long n;
	int same;

	if (ioctl(fd_check, CNF_IOC_SET_LIST, &l))
		return errno;
	if (l.total != REF_SETS || l.count != REF_SETS) {
		snprintf(why, sizeof(why), "%u sets listed, %u in all, not %zu",
			 l.count, l.total, REF_SETS);
		return -1;
	}
	for (i = 0; i < REF_SETS; i++) {
		char want[CNF_SET_NAME_LEN];

		cnf_set_name(want, ref_sets[i].name);
		if (memcmp(info[i].name, want, sizeof(want)) ||
		    info[i].kind != ref_sets[i].kind) {
			snprintf(why, sizeof(why), "set %u is \"%.*s\" of kind %u, not \"%s\" of kind %u",
				 i, CNF_SET_NAME_LEN, info[i].name,
				 info[i].kind, ref_sets[i].name,
				 ref_sets[i].kind);
			return -1;
		}
		n = cnf_dump_set_sorted(fd_check, ref_sets[i].name, &cur);
		/*
		 * A limit that a SET_CONFIG of the round lowered (settings,
		 * not the sets) may leave no room for the snapshot: back to
		 * the default one.
		 */
		if (n == -ENOSPC) {
			same = cnf_reset_config(fd_check);
			if (same)
				return same;
			n = cnf_dump_set_sorted(fd_check, ref_sets[i].name, &cur);
		}
		if (n < 0)
			return (int)-n;
		same = cnf_same_set(cur, n, ref_sets[i].addrs, ref_sets[i].n);
		if (!same)
			say_diff(ref_sets[i].name, cur, n, ref_sets[i].addrs,
				 ref_sets[i].n);
		free(cur);
		if (!same)
			return -1;
	}
	return 0;
}

/* ---- one fuzzed call ---- */

/* @min: the struct's first version, when the kernel takes it too. */
struct known {
	unsigned long cmd;
	unsigned int weight;
	bool mutates;
	uint32_t min;
};

static const struct known known[] = {
	{ CNF_IOC_ADD, 15, true, sizeof(struct cnf_addr) },
	{ CNF_IOC_DEL, 12, true, sizeof(struct cnf_addr) },
	{ CNF_IOC_TEST, 10, false, sizeof(struct cnf_addr) },
	{ CNF_IOC_MATCH, 5, false, sizeof(struct cnf_addr) },
	{ CNF_IOC_ADD_BATCH, 18, true, CNF_BATCH_V1_SIZE },
	{ CNF_IOC_DEL_BATCH, 12, true, CNF_BATCH_V1_SIZE },
	{ CNF_IOC_DUMP, 15, false, CNF_DUMP_V1_SIZE },
	{ CNF_IOC_FLUSH, 1, true, 0 },
	{ CNF_IOC_STATS, 7, false, offsetof(struct cnf_stats, v4_lookup) },
	{ CNF_IOC_SET_CONFIG, 10, false, 0 },	/* settings, not the sets */
	{ CNF_IOC_RESET, 1, true, 0 },
	{ CNF_IOC_SET_CREATE, 5, true, 0 },
	{ CNF_IOC_SET_DESTROY, 4, true, 0 },
	{ CNF_IOC_SET_SWAP, 4, true, 0 },
	{ CNF_IOC_SET_FLUSH, 3, true, 0 },
	{ CNF_IOC_SET_LIST, 6, false, 0 },
};

/*
 * Only commands that never configure a namespace: no add, no setting, no
 * set created.
 */
static bool inert_only;

static bool inert(unsigned long cmd)
{
	return cmd != CNF_IOC_ADD && cmd != CNF_IOC_ADD_BATCH &&
	       cmd != CNF_IOC_SET_CONFIG && cmd != CNF_IOC_RESET &&
	       cmd != CNF_IOC_SET_CREATE;
}

static unsigned long pick_known(void)
{
	unsigned int total = 0, i, r;

	for (i = 0; i < ARRAY_LEN(known); i++)
		total += known[i].weight;
	do {
		r = below(total);
		for (i = 0; r >= known[i].weight; i++)
			r -= known[i].weight;
	} while (inert_only && !inert(known[i].cmd));
	return known[i].cmd;
}

/* The known command @cmd would reach, as the module dispatches, or 0. */
static const struct known *dispatch(unsigned long cmd)
{
	unsigned int i;

	if (_IOC_TYPE(cmd) != CNF_IOC_TYPE)
		return NULL;
	for (i = 0; i < ARRAY_LEN(known); i++)
		if (_IOC_NR(known[i].cmd) == _IOC_NR(cmd) &&
		    _IOC_DIR(known[i].cmd) == _IOC_DIR(cmd) &&
		    _IOC_SIZE(cmd) >= (known[i].min ?: _IOC_SIZE(known[i].cmd)))
			return &known[i];
	return NULL;
}

static uint32_t pick_size(uint32_t exact)
{
	static const uint32_t odd[] = { 0, 1, 3, 4, 8, 15, 16, 17, 23, 24, 25,
					31, 32, 33, 40, 48, 63, 64, 136, 144,
					152, 160, 256, 4095, 4096, 8192, 16383 };

	switch (below(4)) {
	case 0:
		return exact;
	case 1:
		return exact + 8 * below(4);
	case 2:
		return odd[below(ARRAY_LEN(odd))];
	default:
		return below(_IOC_SIZEMASK + 1);
	}
}

static unsigned long pick_cmd(void)
{
	unsigned long cmd;

	switch (inert_only ? below(6) : below(10)) {
	case 0: case 1: case 2: case 3:
		return pick_known();
	case 4: case 5:	/* a known one with another size or direction */
		cmd = pick_known();
		return _IOC(chance(70) ? _IOC_DIR(cmd) : below(4), CNF_IOC_TYPE,
			    _IOC_NR(cmd), pick_size(_IOC_SIZE(cmd)) & _IOC_SIZEMASK);
	case 6: case 7: case 8:	/* our type, anything else */
		do {
			cmd = _IOC(below(4), CNF_IOC_TYPE,
				   chance(90) ? below(16) : below(256),
				   pick_size(below(64)) & _IOC_SIZEMASK);
			/* FLUSH or RESET with any size: keep them rare */
		} while ((_IOC_NR(cmd) == _IOC_NR(CNF_IOC_FLUSH) ||
			  _IOC_NR(cmd) == _IOC_NR(CNF_IOC_RESET)) &&
			 _IOC_DIR(cmd) == _IOC_NONE && chance(95));
		return cmd;
	default:	/* anything, but what the VFS itself acts on */
		do {
			cmd = (uint32_t)rnd();
		} while (_IOC_TYPE(cmd) == 'X' || _IOC_TYPE(cmd) == 0x94 ||
			 cmd == FIFREEZE || cmd == FITHAW);
		return cmd;
	}
}

/* Where a pointer points, to tell what the kernel could have done. */
enum where { W_RW, W_RO, W_BAD };

static uint64_t kernel_ptrs[] = {
	0xffffffff81000000ULL, 0xffff888000000000ULL, 0xffffffffff600000ULL,
	0xfffffe0000000000ULL, 0xffffc90000000000ULL,
};

/* A pointer to @size bytes: where it points is stored in *@w. */
static uint64_t pick_ptr(unsigned char *area, size_t area_len, size_t size,
			 enum where *w)
{
	size_t room = area_len > size ? area_len - size : 0;

	*w = W_BAD;
	switch (below(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
	case 8: case 9: case 10:
		*w = W_RW;
		return (uintptr_t)(area + (chance(80) ? below(room / 8 + 1) * 8 :
					   below(room + 1)));
	case 11:	/* runs into the guard page */
		return (uintptr_t)(area + area_len - (size ? below(size) : 0));
	case 12:
		*w = W_RO;
		return (uintptr_t)(ro + (size < PAGE ? below(PAGE - size + 1) : 0));
	case 13:
		return (uintptr_t)none + below(PAGE);
	case 14:
		return (uintptr_t)freed + below(4 * PAGE);
	case 15:
		return kernel_ptrs[below(ARRAY_LEN(kernel_ptrs))] + below(PAGE);
	case 16:
		return below(4) ? below(PAGE) : 0;
	case 17:
		return chance(50) ? 0x8000000000000000ULL + rnd() % PAGE : ~0ULL - below(64);
	case 18:
		return (uintptr_t)none - size / 2;	/* straddles into it */
	default:
		*w = (size_t)(area_len - 1) >= size ? W_RW : W_BAD;
		return (uintptr_t)(area + 1 + (room ? below(room) : 0));
	}
}

/* @a, an address, cut to its first @len bits. */
static void cut_prefix(struct cnf_addr *a, unsigned int len)
{
	unsigned int i;

	a->prefixlen = len;
	for (i = 0; i < 16; i++, len = len > 8 ? len - 8 : 0)
		if (len < 8)
			a->addr[i] &= (uint8_t)(0xff00 >> len);
}

static void fill_addr(struct cnf_addr *a)
{
	switch (below(10)) {
	case 0:	/* a stored one: ADD refused (EEXIST), DEL would apply */
		*a = ref[below(REF_N)];
		break;
	case 1:	/* a valid new one, an address or a prefix */
		*a = chance(50) ? cnf_v4((uint32_t)rnd()) :
			cnf_v6((uint32_t)rnd(), (uint32_t)rnd(), (uint32_t)rnd(),
			       (uint32_t)rnd());
		if (chance(50))
			cut_prefix(a, 1 + below(a->prefixlen));
		break;
	case 2: case 3: case 4: case 5: case 6:	/* a stored one, spoiled */
		*a = ref[below(REF_N)];
		switch (below(5)) {
		case 0: a->family = below(256); break;
		case 1: a->prefixlen = below(256); break;
		case 2: a->flags = 1 + below(0xffff); break;
		case 3: a->addr[4 + below(12)] ^= 1 + below(255);
			a->family = AF_INET; a->prefixlen = 32; break;
		default: a->family ^= AF_INET ^ AF_INET6; break;
		}
		break;
	default:
		rnd_fill(a, sizeof(*a));
		break;
	}
}

/* Fill the address array region with a mix; mostly invalid entries. */
static void fill_arr(void)
{
	struct cnf_addr *a = (struct cnf_addr *)arr;
	size_t i, n = ARR_PAGES * PAGE / sizeof(*a);

	for (i = 0; i < n; i++)
		fill_addr(&a[i]);
}

/* A set name: the reference's, new ones, and bad ones of every form. */
/* Timeouts of 0 to 3 s, so that entries run out while the fuzzer runs. */
static void fill_secs(void)
{
	uint32_t *t = (uint32_t *)secs;
	size_t i;

	for (i = 0; i < ARR_PAGES * PAGE / sizeof(*t); i++)
		t[i] = below(4);
}

/* An entry's timeout: none, a short one, refreshed or not, or junk. */
static void fill_timeout(uint32_t *timeout, uint32_t *flags)
{
	switch (below(5)) {
	case 0: case 1:
		*timeout = 0;
		*flags = 0;
		break;
	case 2:
		*timeout = 1 + below(3);
		*flags = CNF_ENTRY_F_TIMEOUT | (chance(50) ? CNF_ENTRY_F_EXIST : 0);
		break;
	case 3:
		*timeout = below(3);
		*flags = below(4);
		break;
	default:
		*timeout = (uint32_t)rnd();
		*flags = (uint32_t)rnd();
		break;
	}
}

/* The mark and the scope of a fuzzed &struct cnf_config. */
static void fuzz_mark_scope(struct cnf_config *cf)
{
	unsigned int i, n;

	cf->mark = chance(50) ? 0 : chance(50) ? 1U << below(32) :
		   (uint32_t)rnd();
	cf->mark_mask = chance(30) ? 0 : chance(30) ? ~0U :
			chance(50) ? cf->mark : (uint32_t)rnd();
	n = chance(80) ? below(CNF_IIF_MAX + 1) : (uint32_t)rnd();
	cf->iif_count = chance(30) ? 0 : n;
	cf->reserved2 = chance(95) ? 0 : (uint32_t)rnd();
	memset(cf->iif, 0, sizeof(cf->iif));
	for (i = 0; i < CNF_IIF_MAX && i < cf->iif_count; i++) {
		if (chance(90))
			strncpy(cf->iif[i], iif_names[below(NIIF_NAMES)],
				CNF_IFNAMSIZ);
		else
			rnd_fill(cf->iif[i], CNF_IFNAMSIZ);
	}
	/* Now and then a stray byte past the names. */
	if (chance(5))
		((char *)cf->iif)[below(sizeof(cf->iif))] = 'x';
}

static void fill_name(char *name)
{
	static const char ok[] = "abcXYZ019_.-";
	unsigned int i, n;

	memset(name, 0, CNF_SET_NAME_LEN);
	switch (below(12)) {
	case 0:		/* the default set, unnamed */
		break;
	case 1:
		cnf_set_name(name, CNF_SET_DEFAULT);
		break;
	case 2: case 3: case 4: case 5:
		cnf_set_name(name, ref_sets[1 + below(REF_SETS - 1)].name);
		break;
	case 6:		/* a new one */
		snprintf(name, CNF_SET_NAME_LEN, "fz_n%u", below(4));
		break;
	case 7:		/* valid characters, 1 to 32 of them (32: no NUL) */
		n = 1 + below(CNF_SET_NAME_LEN);
		for (i = 0; i < n; i++)
			name[i] = ok[below(sizeof(ok) - 1)];
		break;
	case 8:		/* a good name, junk after its NUL */
		cnf_set_name(name, ref_sets[1 + below(REF_SETS - 1)].name);
		name[5 + below(CNF_SET_NAME_LEN - 5)] = 1 + below(255);
		break;
	case 9:		/* a good name, one bad byte */
		cnf_set_name(name, ref_sets[1 + below(REF_SETS - 1)].name);
		name[below(4)] = "/ :*\n\x80\xff"[below(7)];
		break;
	default:
		rnd_fill(name, CNF_SET_NAME_LEN);
		break;
	}
}

/*
 * @name as the ABI takes it: all zero (the default set), or 1 to 31 bytes
 * of [A-Za-z0-9_.-] and zeros after them.
 */
static bool name_ok(const char *name)
{
	unsigned int i, len = strnlen(name, CNF_SET_NAME_LEN);

	if (len == CNF_SET_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	for (; i < CNF_SET_NAME_LEN; i++)
		if (name[i])
			return false;
	return true;
}

/*
 * The first name in @p (a struct of @size bytes for @cmd, the names it
 * reads) that the ABI refuses, or NULL.
 */
static const char *bad_name(unsigned long cmd, const unsigned char *p,
			    size_t size)
{
	const char *n[2] = { NULL, NULL };
	unsigned int i;

	if ((cmd == CNF_IOC_ADD || cmd == CNF_IOC_DEL || cmd == CNF_IOC_TEST ||
	     cmd == CNF_IOC_MATCH) &&
	    size >= offsetofend(struct cnf_entry, set))
		n[0] = ((const struct cnf_entry *)p)->set;
	else if ((cmd == CNF_IOC_ADD_BATCH || cmd == CNF_IOC_DEL_BATCH) &&
		 size >= offsetofend(struct cnf_batch, set))
		n[0] = ((const struct cnf_batch *)p)->set;
	else if (cmd == CNF_IOC_SET_CREATE || cmd == CNF_IOC_SET_DESTROY ||
		 cmd == CNF_IOC_SET_FLUSH)
		n[0] = ((const struct cnf_set_req *)p)->name;
	else if (cmd == CNF_IOC_SET_SWAP) {
		n[0] = ((const struct cnf_set_swap *)p)->a;
		n[1] = ((const struct cnf_set_swap *)p)->b;
	}
	/* A dump reads its name only when it starts: not checked. */
	for (i = 0; i < 2; i++)
		if (n[i] && !name_ok(n[i]))
			return n[i];
	return NULL;
}

static uint32_t pick_count(void)
{
	static const uint32_t v[] = { 0, 1, 2, 3, 255, 256, 257, 511, 512, 513,
				      1023, 1024, 0x10000, CNF_BATCH_MAX,
				      CNF_BATCH_MAX + 1, 0x7fffffff, 0x80000000,
				      0xffffffff };

	return chance(50) ? v[below(ARRAY_LEN(v))] : below(1100);
}

static uint64_t other_cursor;	/* a live cursor of fd_other */
static uint64_t own_cursor;	/* the last cursor fd_main returned */

/* Issue one random ioctl; returns true when it may have changed the set. */
static bool fuzz_one_ioctl(void)
{
	static const int bad_fds[] = { -1, 1000, 0 };
	uint64_t rs_before = rs;
	unsigned long cmd = pick_cmd();
	const struct known *k = dispatch(cmd);
	uint32_t size = _IOC_SIZE(cmd);
	size_t need = size ? size : sizeof(struct cnf_batch);
	unsigned char *p = NULL;
	enum where w, aw = W_BAD;
	struct call *c;
	uint64_t arg;
	int fd, fdk, r;
	bool maybe = false, sentinel = false;

	fdk = below(100);
	fdk = fdk < 78 ? 0 : fdk < 88 ? 1 : fdk < 98 ? 2 : 3;
	fd = fdk == 0 ? fd_main : fdk == 1 ? fd_other : fdk == 2 ? fd_ab :
		bad_fds[below(ARRAY_LEN(bad_fds))];

	arg = pick_ptr(rw, ARR_PAGES * PAGE, need, &w);
	/* Contents: random, then shaped for the command it reaches. */
	if (w == W_RW) {
		p = (unsigned char *)(uintptr_t)arg;
		rnd_fill(p, need);
		if (chance(60) && need > 32)	/* zero tail */
			memset(p + 32, 0, need - 32);
		else if (chance(50) && need > 24)
			memset(p + 24, 0, need - 24);
		if (k && (k->cmd == CNF_IOC_ADD || k->cmd == CNF_IOC_DEL ||
			  k->cmd == CNF_IOC_TEST || k->cmd == CNF_IOC_MATCH)) {
			struct cnf_entry *e = (struct cnf_entry *)p;

			fill_addr(&e->addr);
			if (need >= offsetofend(struct cnf_entry, set) &&
			    chance(70))
				fill_name(e->set);
			if (need >= sizeof(*e))
				fill_timeout(&e->timeout, &e->flags);
		} else if (k && (k->cmd == CNF_IOC_ADD_BATCH ||
				 k->cmd == CNF_IOC_DEL_BATCH)) {
			struct cnf_batch *b = (struct cnf_batch *)p;

			b->count = pick_count();
			b->addrs = pick_ptr(arr, ARR_PAGES * PAGE,
					    (size_t)(b->count < 4096 ? b->count : 4096) *
					    sizeof(struct cnf_addr), &aw);
			b->flags = chance(70) ? below(4) : (uint32_t)rnd();
			if (need >= offsetofend(struct cnf_batch, set) &&
			    chance(50))
				fill_name(b->set);
			if (need >= sizeof(*b))
				b->timeouts = chance(60) ? 0 :
					pick_ptr(secs, ARR_PAGES * PAGE,
						 (size_t)(b->count < 4096 ?
							  b->count : 4096) * 4,
						 &aw);
			if (chance(90)) {
				b->applied = b->skipped = b->done = 0xdeadbeef;
				b->error = 0x5eadbeef;
				sentinel = true;
			}
			if (chance(10))
				fill_arr();
		} else if (k && k->cmd == CNF_IOC_DUMP) {
			struct cnf_dump *d = (struct cnf_dump *)p;

			d->count = pick_count();
			d->addrs = pick_ptr(arr, ARR_PAGES * PAGE,
					    (size_t)(d->count < 4096 ? d->count : 4096) *
					    sizeof(struct cnf_addr), &aw);
			switch (below(6)) {
			case 0: d->cursor = 0; break;
			case 1: d->cursor = own_cursor; break;
			case 2: d->cursor = other_cursor; break;
			case 3: d->cursor = own_cursor + below(600) - 300; break;
			case 4: d->cursor = (own_cursor & ~0xffffffffULL) | (uint32_t)rnd(); break;
			default: break;
			}
			d->flags = chance(80) ? 0 : (uint32_t)rnd();
			if (need >= offsetofend(struct cnf_dump, set) &&
			    chance(50))
				fill_name(d->set);
			if (need >= sizeof(*d))
				d->timeouts = chance(50) ? 0 :
					pick_ptr(arr, ARR_PAGES * PAGE,
						 (size_t)(d->count < 4096 ?
							  d->count : 4096) * 4,
						 &aw);
		} else if (k && (k->cmd == CNF_IOC_SET_CREATE ||
				 k->cmd == CNF_IOC_SET_DESTROY ||
				 k->cmd == CNF_IOC_SET_FLUSH)) {
			struct cnf_set_req *q = (struct cnf_set_req *)p;

			fill_name(q->name);
			q->kind = k->cmd != CNF_IOC_SET_CREATE ? 0 : below(2);
			if (chance(10))
				q->kind = (uint32_t)rnd();
			/* Creates of rules-only sets, and the flag elsewhere. */
			q->flags = chance(80) ? 0 :
				   chance(50) ? CNF_SET_F_RULES_ONLY :
				   (uint32_t)rnd();
			q->timeout = chance(50) ? 0 : chance(90) ? below(4) :
				     (uint32_t)rnd();
			q->reserved = chance(95) ? 0 : (uint32_t)rnd();
		} else if (k && k->cmd == CNF_IOC_SET_SWAP) {
			struct cnf_set_swap *q = (struct cnf_set_swap *)p;

			fill_name(q->a);
			fill_name(q->b);
		} else if (k && k->cmd == CNF_IOC_SET_LIST) {
			struct cnf_set_list *q = (struct cnf_set_list *)p;

			q->count = chance(70) ? below(8) : pick_count();
			q->size = chance(70) ? sizeof(struct cnf_set_info) :
				chance(50) ? below(256) : (uint32_t)rnd();
			q->sets = pick_ptr(arr, ARR_PAGES * PAGE,
					   (size_t)(q->count < 64 ? q->count : 64) *
					   (q->size < 256 ? q->size : 256), &aw);
			/* Creates of rules-only sets, and the flag elsewhere. */
			q->flags = chance(80) ? 0 :
				   chance(50) ? CNF_SET_F_RULES_ONLY :
				   (uint32_t)rnd();
		} else if (k && k->cmd == CNF_IOC_SET_CONFIG) {
			struct cnf_config *cf = (struct cnf_config *)p;

			cf->set = chance(70) ? below(32) : (uint32_t)rnd();
			cf->mode = chance(70) ? below(4) : (uint32_t)rnd();
			cf->mem_limit = chance(30) ? 0 : chance(50) ?
				(uint64_t)below(1 << 20) : rnd() >> below(64);
			fuzz_mark_scope(cf);
		}
	} else if (w == W_RO && chance(50)) {
		/* read-only: contents fixed at setup, refresh sometimes */
		if (!mprotect(ro, PAGE, PROT_READ | PROT_WRITE)) {
			rnd_fill(ro, PAGE);
			if (chance(50) && need >= sizeof(struct cnf_addr))
				fill_addr((struct cnf_addr *)(uintptr_t)arg);
			mprotect(ro, PAGE, PROT_READ);
		}
	}

	c = &res->ring[res->nring++ % RING];
	memset(c, 0, sizeof(*c));
	c->n = res->calls;
	c->rs = rs_before;
	c->cmd = cmd;
	c->fdk = fdk;
	c->w = w;
	if (w != W_BAD) {
		c->narg = need < ARG_KEEP ? need : ARG_KEEP;
		memcpy(c->arg, (const void *)(uintptr_t)arg, c->narg);
	}
	r = ioctl(fd, cmd, (unsigned long)arg);
	c->ret = r;
	c->err = r ? errno : 0;
	if (w == W_RW && k && (k->cmd == CNF_IOC_ADD_BATCH ||
			       k->cmd == CNF_IOC_DEL_BATCH) &&
	    need >= offsetofend(struct cnf_batch, error)) {
		const struct cnf_batch *b = (const void *)(uintptr_t)arg;

		c->is_batch = true;
		c->batch[0] = b->flags;
		c->batch[1] = b->count;
		c->batch[2] = b->done;
		c->batch[3] = b->applied;
		c->batch[4] = b->skipped;
		c->batch[5] = (uint32_t)b->error;
	}

	res->calls++;
	if (fdk == 2)
		res->abandoned_calls++;
	if (r)
		res->refused++;
	if (!r && k && w == W_RW) {
		const char *bad = bad_name(k->cmd, p, need);
		char hex[2 * CNF_SET_NAME_LEN + 1];
		unsigned int i;

		for (i = 0; bad && i < CNF_SET_NAME_LEN; i++)
			snprintf(hex + 2 * i, 3, "%02x", (unsigned char)bad[i]);
		if (bad)
			fail("cmd %#lx succeeded on set name %s (hex), which the ABI refuses",
			     cmd, hex);
	}
	if (fdk >= 2 || !k)
		return false;	/* another set, or no handler reached */

	/* Remember cursors for later calls. */
	if (!r && k->cmd == CNF_IOC_DUMP && w == W_RW)
		own_cursor = ((struct cnf_dump *)(uintptr_t)arg)->cursor;

	if (!k->mutates)
		return false;
	if (k->cmd != CNF_IOC_ADD_BATCH && k->cmd != CNF_IOC_DEL_BATCH)
		return !r;	/* single entries, FLUSH, RESET, the set calls:
				 * refused ones change nothing
				 */
	/*
	 * A batch stops at its first failure, keeping what it applied before
	 * it (the ABI), and reports it in the struct: trust the report when
	 * we can read it, and check it.
	 */
	if (w == W_RW && sentinel) {
		struct cnf_batch *b = (struct cnf_batch *)(uintptr_t)arg;

		if (b->applied == 0xdeadbeef && b->done == 0xdeadbeef &&
		    b->skipped == 0xdeadbeef && b->error == 0x5eadbeef) {
			if (!r)
				fail("batch cmd %#lx: succeeded without a report", cmd);
			return false;	/* refused before it started */
		}
		if (b->error != (r ? -c->err : 0))
			fail("batch cmd %#lx: returned errno %d, struct says error %d (done %u applied %u)",
			     cmd, r ? c->err : 0, b->error, b->done, b->applied);
		/* A failed replace leaves the set as it was and says so. */
		if (k->cmd == CNF_IOC_ADD_BATCH && (b->flags & CNF_BATCH_F_REPLACE) && r) {
			if (b->done > b->count || b->applied || b->skipped)
				fail("replace cmd %#lx: failed (errno %d), count %u done %u applied %u skipped %u",
				     cmd, c->err, b->count, b->done, b->applied, b->skipped);
			return false;
		}
		if (b->done > b->count ||
		    (uint64_t)b->applied + b->skipped != b->done ||
		    (!r && b->done != b->count))
			fail("batch cmd %#lx: returned %d, count %u done %u applied %u skipped %u",
			     cmd, r, b->count, b->done, b->applied, b->skipped);
		/* A replace that went through changed the set, even to empty. */
		if (k->cmd == CNF_IOC_ADD_BATCH && (b->flags & CNF_BATCH_F_REPLACE))
			return true;
		/*
		 * An entry skipped by an add under EXIST_OK got its timeout
		 * anew (the ABI): a reference entry given one runs out a
		 * second or three later, in whatever round runs then.
		 */
		return b->applied != 0 ||
		       (k->cmd == CNF_IOC_ADD_BATCH && b->skipped != 0);
	}
	if (!r || w == W_RW)
		return true;	/* cannot tell what it reports */
	/* Refused; from read-only memory it could not write its report back. */
	maybe = w == W_RO && c->err == EFAULT;
	return maybe;
}

/* The ring of a worker that failed, its seed first; by the parent. */
static void print_ring(unsigned int id, const struct result *r)
{
	static const char *const wn[] = { "rw", "ro", "bad" };
	unsigned int i, j, n = r->nring < RING ? r->nring : RING;
	char hex[2 * ARG_KEEP + 1], rep[96];

	ksft_print_msg("worker %u: seed %#" PRIx64 ", its last %u calls (arg: the first bytes as passed; rs: the generator before the call):\n",
		       id, r->seed, n);
	for (i = 0; i < n; i++) {
		const struct call *c = &r->ring[(r->nring - n + i) % RING];

		for (j = 0; j < c->narg; j++)
			snprintf(hex + 2 * j, 3, "%02x", c->arg[j]);
		hex[2 * c->narg] = 0;
		rep[0] = 0;
		if (c->is_batch)
			snprintf(rep, sizeof(rep),
				 " after: flags=%#x count=%u done=%u applied=%u skipped=%u error=%d",
				 c->batch[0], c->batch[1], c->batch[2],
				 c->batch[3], c->batch[4], (int32_t)c->batch[5]);
		ksft_print_msg("  #%" PRIu64 " rs=%#" PRIx64 " cmd=%#010lx fd=%d arg=%s ret=%ld errno=%d%s\n",
			       c->n, c->rs, c->cmd, c->fdk, wn[c->w], c->ret,
			       c->err, rep);
		if (c->narg)
			ksft_print_msg("    arg %s\n", hex);
	}
}

/* A crash of the fuzzer itself: say where, for the log. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	snprintf(res->msg, sizeof(res->msg),
		 "fuzzer bug: signal %d at %p after %" PRIu64 " calls (last cmd %#lx; rw %p arr %p ro %p none %p)",
		 sig, si->si_addr, res->calls, res->nring ? res->ring[(res->nring - 1) % RING].cmd : 0,
		 rw, arr, ro, none);
	{
		ucontext_t *u = uc;

		snprintf(res->msg + strlen(res->msg), 100, " rip-on_fault %#llx",
			 (unsigned long long)u->uc_mcontext.gregs[REG_RIP] -
			 (unsigned long long)(uintptr_t)on_fault);
	}
	res->failed = 1;
	_exit(3);
}

/* ---- the abandoned namespace ---- */

/* A file opened by a child in a netns of its own; the child is gone. */
static int abandoned_fd(void)
{
	int sv[2], fd, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct cnf_addr a = cnf_v4(0x0a0b0c0d);

		if (unshare(CLONE_NEWNET))
			_exit(10);
		fd = open(CNF_DEVICE_PATH, O_RDWR);
		if (fd < 0 || cnf_ioc_addr(fd, CNF_IOC_ADD, &a))
			_exit(11);
		_exit(cnf_send_fd(sv[1], fd) ? 12 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	fd = cnf_recv_fd(sv[0]);
	close(sv[0]);
	close(sv[1]);
	return fd;
}

/* ---- a fuzzing process: its own device descriptor, seed and share of calls ---- */

static int fuzz_process(unsigned int id, uint64_t seed, uint64_t calls)
{
	struct cnf_stats st;
	struct cnf_dump d;
	struct cnf_addr one;
	uint64_t done = 0, refused_round;
	unsigned int i;
	bool dirty;
	int err;

	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	rs = seed ? seed : 1;
	res->seed = seed;
	if (setup_memory())
		return fail("worker %u: mmap: %s", id, strerror(errno)), 1;
	fd_ab = abandoned_fd();
	if (fd_ab < 0)
		return fail("worker %u: no file in an abandoned netns", id), 1;
	if (unshare(CLONE_NEWNET))
		return fail("worker %u: unshare(CLONE_NEWNET): %s", id, strerror(errno)), 1;
	fd_main = open(CNF_DEVICE_PATH, O_RDWR);
	fd_other = open(CNF_DEVICE_PATH, O_RDWR);
	fd_check = open(CNF_DEVICE_PATH, O_RDWR);
	if (fd_main < 0 || fd_other < 0 || fd_check < 0)
		return fail("worker %u: open: %s", id, strerror(errno)), 1;
	make_ref();
	fill_arr();
	fill_secs();
	/* The abandoned netns' file works, on its own set. */
	one = cnf_v4(0x0a0b0c0d);
	if ((errno = cnf_ioc_addr(fd_ab, CNF_IOC_TEST, &one)))
		return fail("worker %u: abandoned netns file lost its set: %s",
			    id, strerror(errno)), 1;
	/* Reads, deletes and flushes of a fresh namespace create nothing. */
	inert_only = true;
	for (i = 0; i < 4 * CHECK_EVERY && done < calls; i++, done++)
		fuzz_one_ioctl();
	inert_only = false;
	memset(&st, 0, sizeof(st));
	if (ioctl(fd_check, CNF_IOC_STATS, &st))
		return fail("worker %u: stats: %s", id, strerror(errno)), 1;
	if (!(st.flags & CNF_STATS_F_INACTIVE) || st.v4.capacity ||
	    st.v6.capacity || st.v4.bytes || st.v6.bytes)
		return fail("worker %u: %u calls that only read made the namespace active (flags %#x, %llu bytes)",
			    id, i, st.flags,
			    (unsigned long long)(st.v4.bytes + st.v6.bytes)), 1;
	err = restore();
	if (err)
		return fail("worker %u: loading the reference: %s", id, strerror(err)), 1;
	if (compare())
		return fail("worker %u: the reference set did not load as given", id), 1;
	/* A live cursor of another file. */
	memset(&d, 0, sizeof(d));
	d.addrs = (uintptr_t)arr;
	d.count = 1;
	if (ioctl(fd_other, CNF_IOC_DUMP, &d))
		return fail("worker %u: dump: %s", id, strerror(errno)), 1;
	other_cursor = d.cursor;

	while (done < calls && !res->failed) {
		dirty = false;
		refused_round = res->refused;
		for (i = 0; i < CHECK_EVERY && done < calls; i++, done++)
			dirty |= fuzz_one_ioctl();
		if (dirty) {
			err = restore();
			if (err)
				return fail("worker %u: restoring the reference: %s",
					    id, strerror(err)), 1;
			res->restores++;
			continue;
		}
		err = compare();
		if (err) {
			fail("worker %u: the set changed in a round where every mutating call was refused (%s); seed %#" PRIx64,
			     id, err < 0 ? why : strerror(err), seed);
			return 1;
		}
		res->rounds_checked++;
		res->verified += res->refused - refused_round;
	}
	/* The set is the reference after a last restore, and still dumpable. */
	if (!res->failed && (restore() || compare()))
		fail("worker %u: final restore/compare failed", id);
	return res->failed;
}

int main(void)
{
	const char *s;
	uint64_t calls = DEFAULT_CALLS, seed, per, tot_calls = 0, tot_ref = 0,
		 tot_ver = 0, tot_rounds = 0, tot_rest = 0, tot_ab = 0;
	unsigned int procs = DEFAULT_PROCS, i;
	struct result *all;
	unsigned int failed = 0;
	int status;
	pid_t *pids;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("needs root\n");
	if (access(CNF_DEVICE_PATH, F_OK))
		ksft_exit_skip("%s is missing: load cuckoo_nf.ko\n", CNF_DEVICE_PATH);
	s = getenv("CNF_FUZZ_CALLS");
	if (s && *s)
		calls = strtoull(s, NULL, 0);
	s = getenv("CNF_FUZZ_PROCS");
	if (s && *s)
		procs = strtoul(s, NULL, 0);
	if (!procs || procs > 64)
		procs = DEFAULT_PROCS;
	s = getenv("CNF_FUZZ_SEED");
	seed = s && *s ? strtoull(s, NULL, 0) :
		((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
	ksft_set_plan(procs + 1);
	ksft_print_msg("seed %#" PRIx64 ", %" PRIu64 " calls, %u processes (CNF_FUZZ_SEED, CNF_FUZZ_CALLS, CNF_FUZZ_PROCS)\n",
		       seed, calls, procs);

	all = mmap(NULL, procs * sizeof(*all), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(procs, sizeof(*pids));
	if (all == MAP_FAILED || !pids)
		ksft_exit_fail_msg("out of memory\n");
	memset(all, 0, procs * sizeof(*all));
	per = calls / procs;
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pids[i]) {
			res = &all[i];
			_exit(fuzz_process(i, seed + i * 0x9E3779B97F4A7C15ULL,
				     per + (i < calls % procs)));
		}
	}
	for (i = 0; i < procs; i++) {
		struct result *r = &all[i];

		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			if (!r->failed)
				snprintf(r->msg, sizeof(r->msg), "worker %u died (status %#x)",
					 i, status);
			r->failed = 1;
		}
		tot_calls += r->calls;
		tot_ref += r->refused;
		tot_ver += r->verified;
		tot_rounds += r->rounds_checked;
		tot_rest += r->restores;
		tot_ab += r->abandoned_calls;
		if (r->failed) {
			failed++;
			ksft_test_result_fail("worker %u: %s\n", i, r->msg);
			/* A failure after calls: what was asked last. */
			if (r->nring)
				print_ring(i, r);
		} else {
			ksft_test_result_pass("worker %u: %" PRIu64 " calls, %" PRIu64 " refused, %" PRIu64 " rounds checked by dump, %" PRIu64 " restores\n",
					      i, r->calls, r->refused, r->rounds_checked,
					      r->restores);
		}
	}
	ksft_print_msg("fuzz totals: calls=%" PRIu64 " refused=%" PRIu64 " refused_verified_by_dump=%" PRIu64 " rounds_checked=%" PRIu64 " restores=%" PRIu64 " abandoned_netns_calls=%" PRIu64 "\n",
		       tot_calls, tot_ref, tot_ver, tot_rounds, tot_rest, tot_ab);
	/*
	 * The reliability table (docs/benchmarks.md): the calls made, and the workers whose
	 * check found the set other than its reference (or that died).
	 */
	ksft_print_msg("reliability: calls_fuzzed=%" PRIu64 " rounds_checked=%" PRIu64 " lost=%u\n",
		       tot_calls, tot_rounds, failed);
	ksft_test_result(!failed && tot_calls == calls,
			 "%" PRIu64 " calls; every refused call left the set unchanged\n",
			 tot_calls);
	ksft_finished();
}
