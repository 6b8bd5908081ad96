// SPDX-License-Identifier: GPL-2.0
/*
 * A namespace that replaces a set's contents with millions of entries, over
 * and over, from two threads, each replace failing on its last entry so
 * that it keeps nothing and can go on forever, must not hold up anybody
 * else: neither the calls of other namespaces, nor those of its own, nor
 * any namespace's expiry, which must remove a timed entry within a second
 * of its deadline (struct cnf_expiry_stats).  Nor must one that makes a
 * kind's union change with every call: a set of hundreds of thousands of
 * entries replaced, flushed, destroyed and made again beside others of its
 * kind (union_changes_starve_nobody).  Nor one that dumps a set of up to
 * two million entries over and over (dumps_starve_nobody), nor one that
 * makes a second set of a kind beside such a set, which makes the kind's
 * first union, over and over (first_unions_starve_nobody).
 *
 * Bounds are derived from what the VM measures, so that a loaded host
 * slows both sides alike: a replace is made large enough to take
 * REPLACE_MS of the guest's time at least (up to MAX_ENTRIES), and then
 *  - a victim's slowest call must take less than a quarter of a replace;
 *  - an entry's lateness (max_late_ms) must stay below a second plus a
 *    quarter of a replace;
 * both plus the longest the VM's CPUs were kept from running meanwhile
 * (cnf_stall.h): a host that deschedules the VM for a second makes every
 * call and every expiry of the guest a second late, whatever the module
 * does.
 * A replace that held a lock others need for all its build would make the
 * first at least a whole replace, the second nearly the whole attack,
 * which lasts ATTACK_REPLACES replaces.  The union changes are measured
 * the same way, by a flush of the set that takes UNION_MS at least (up
 * to UNION_MAX_ENTRIES): a union made anew under the lock the flush
 * holds would make a victim's call in the attacker's namespace wait for
 * most of one.
 *
 * The other namespaces are VICTIMS of them: were the namespaces' locks
 * shared, one of 64 by hash of the namespace, some victim would share the
 * attacker's but once in 25 runs.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "kselftest_harness.h"
#include "cnf_util.h"
#include "cnf_stall.h"

#define VICTIMS			200
#define REPLACE_MS		1500
#define MIN_ENTRIES		(1U << 18)
#define MAX_ENTRIES		(1U << 22)
/*
 * How many of the attacker's calls each attack lasts: fewer in make check
 * (without CNF_TEST_FULL=1) than in the long suites.  A call that holds
 * what a victim needs shows in the first one: the victims call every
 * VICTIM_PAUSE_US, dozens of times in each, and the bounds are a quarter
 * of one call, whatever the count.  More calls find rarer interleavings.
 */
#define ATTACK_REPLACES		scaled(2, 4)
#define ATTACKERS		2
/* Between two rounds of a victim's adds. */
#define VICTIM_PAUSE_US		50000
#define UNION_MS		3000
#define UNION_MIN_ENTRIES	(1U << 15)
#define UNION_MAX_ENTRIES	(1U << 20)
/* Flushes' worth: a round (replace, flush, replace, destroy, create) is two. */
#define UNION_ROUNDS		scaled(3, 6)
/*
 * The first call of a dump, which takes the snapshot, is made to take
 * DUMP_MS at least, of a set of up to DUMP_MAX_ENTRIES IPv6 addresses,
 * which cost it more than IPv4 ones, and the attack lasts DUMP_ROUNDS of
 * them; the same for a set of IPv4 addresses made, given an entry and
 * destroyed beside such a set, which makes the kind's first union.
 */
#define DUMP_MS			3000
#define DUMP_MIN_ENTRIES	(1U << 16)
#define DUMP_MAX_ENTRIES	(1U << 21)
#define DUMP_ROUNDS		scaled(2, 4)
#define FIRST_ROUNDS		scaled(2, 4)

/* @quick in make check, @full with CNF_TEST_FULL=1 (selftests/lib.sh's scaled). */
static unsigned int scaled(unsigned int quick, unsigned int full)
{
	const char *e = getenv("CNF_TEST_FULL");

	return e && !strcmp(e, "1") ? full : quick;
}

/* A diagnostic line, out before a test's child process exits. */
#define note(...)	do { ksft_print_msg(__VA_ARGS__); fflush(stdout); } while (0)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Entries of a replace that fails on the last: an invalid prefix. */
static struct cnf_addr *failing_list(uint32_t n)
{
	struct cnf_addr *a = calloc(n, sizeof(*a));
	uint32_t i;

	if (!a)
		return NULL;
	for (i = 0; i < n - 1; i++)
		a[i] = cnf_v4(i * 2654435761u);
	a[n - 1] = cnf_v4(0x0a000001);
	a[n - 1].prefixlen = 33;
	return a;
}

/* One failing replace of @set; 0 when it failed as meant, else the errno. */
static int replace_fails(int fd, const char *set, struct cnf_addr *a,
			 uint32_t n)
{
	struct cnf_batch b;
	int err;

	memset(&b, 0, sizeof(b));
	b.addrs = (uintptr_t)a;
	b.count = n;
	b.flags = CNF_BATCH_F_REPLACE;
	cnf_set_name(b.set, set);
	err = cnf_ioc(fd, CNF_IOC_ADD_BATCH, &b);
	if (err == EINVAL && b.done == n - 1 && !b.applied)
		return 0;
	return err ?: EPROTO;
}

/*
 * An attack: @round, the calls one round makes on @fd (0, or the errno
 * that ends the attack), over and over from each attacking thread.
 */
struct attack {
	int fd;
	struct cnf_addr *a;
	uint32_t n;
	int (*round)(struct attack *at);
	volatile int stop;
	int err;
	unsigned long rounds;
	pthread_mutex_t lock;	/* guards err, rounds */
};

static void *attacker(void *arg)
{
	struct attack *at = arg;
	int err = 0;

	while (!at->stop && !err) {
		err = at->round(at);
		pthread_mutex_lock(&at->lock);
		if (err)
			at->err = err;
		else
			at->rounds++;
		pthread_mutex_unlock(&at->lock);
	}
	return NULL;
}

/* A failing replace of the default set. */
static int replace_round(struct attack *at)
{
	return replace_fails(at->fd, NULL, at->a, at->n);
}

/*
 * What a victim namespace's calls saw: the slowest, in ms, and timed
 * entries added (1 s each, in set @set).
 */
struct victim {
	int fd;
	const char *set;
	double worst_ms;
	unsigned long added;
	int err;
};

static int add_timed(int fd, const char *set, struct cnf_addr a)
{
	struct cnf_entry e = cnf_entry_of(a, set);

	e.flags = CNF_ENTRY_F_TIMEOUT;
	e.timeout = 1;
	return cnf_ioc(fd, CNF_IOC_ADD, &e);
}

/* A round: one timed entry more in every victim, a stats call of each. */
static void victims_round(struct victim *v, unsigned int nv, uint32_t round)
{
	struct cnf_stats st;
	unsigned int i;
	double t0, t;
	int err;

	for (i = 0; i < nv; i++) {
		if (v[i].err)
			continue;
		t0 = now_ms();
		err = add_timed(v[i].fd, v[i].set, cnf_v4(0x0b000000 + round));
		if (!err)
			err = cnf_ioc(v[i].fd, CNF_IOC_STATS, &st);
		t = now_ms() - t0;
		if (err)
			v[i].err = err;
		else
			v[i].added++;
		if (t > v[i].worst_ms)
			v[i].worst_ms = t;
	}
}

static struct cnf_stats stats_of(int fd)
{
	struct cnf_stats st;

	memset(&st, 0, sizeof(st));
	cnf_ioc(fd, CNF_IOC_STATS, &st);
	return st;
}

/*
 * Every entry ran out a second after it was added: all gone soon, else the
 * lateness figures tell by how much.  Bounds from @unit_ms, what one of
 * the attacker's calls took, of which the attack lasted @units, and from
 * the CPUs' stalls @probes measured since before the attack; stopped here.
 */
static void victims_judge(struct __test_metadata *_metadata,
			  struct victim *v, unsigned int nv, double unit_ms,
			  unsigned int units, struct cnf_stall *probes)
{
	/* Other namespaces' victims, and the one in the attacker's. */
	struct seen {
		double worst;
		unsigned long added, late;
		uint32_t max_late;
	} seen[2] = {}, *g;
	double t0, late_bound, call_bound;
	unsigned int i, stall;
	struct cnf_stats st;

	for (i = 0; i < nv; i++) {
		EXPECT_EQ(0, v[i].err) TH_LOG("victim %u", i);
		t0 = now_ms();
		while ((st = stats_of(v[i].fd)).expiry.entries &&
		       now_ms() - t0 < 2000 + units * unit_ms)
			usleep(100000);
		EXPECT_EQ(0ULL, st.expiry.entries) TH_LOG("victim %u", i);
		EXPECT_EQ(v[i].added, st.expiry.expired) TH_LOG("victim %u", i);
		g = &seen[i == VICTIMS];
		g->added += v[i].added;
		g->late += st.expiry.late;
		if (st.expiry.max_late_ms > g->max_late)
			g->max_late = st.expiry.max_late_ms;
		if (v[i].worst_ms > g->worst)
			g->worst = v[i].worst_ms;
	}
	stall = cnf_stall_stop(probes);
	call_bound = unit_ms / 4 + stall;
	late_bound = 1000 + unit_ms / 4 + stall;
	for (i = 0; i < 2; i++) {
		g = &seen[i];
		note("%s: slowest call %.1f ms (bound %.0f); %lu entries added, %lu late, latest %u ms (bound %.0f; CPUs stalled up to %u ms)\n",
		     i ? "the attacker's namespace" : "other namespaces",
		     g->worst, call_bound, g->added, g->late, g->max_late,
		     late_bound, stall);
		EXPECT_LT((long)g->worst, (long)call_bound) TH_LOG("%u", i);
		EXPECT_LT((long)g->max_late, (long)late_bound) TH_LOG("%u", i);
		EXPECT_LT(0UL, g->added);
	}
}

/*
 * A set "victim" in every namespace, for its victim in @v: of kind
 * @attacker_kind in the attacker's, the last of @v.
 */
static int victims_make(const int *fd, int attacker_fd, struct victim *v,
			uint8_t attacker_kind)
{
	struct cnf_set_req r;
	unsigned int i;
	int err;

	memset(&r, 0, sizeof(r));
	cnf_set_name(r.name, "victim");
	for (i = 0; i < VICTIMS; i++) {
		err = cnf_ioc(fd[i], CNF_IOC_SET_CREATE, &r);
		if (err)
			return err;
		v[i] = (struct victim){ .fd = fd[i], .set = "victim" };
	}
	r.kind = attacker_kind;
	v[VICTIMS] = (struct victim){ .fd = attacker_fd, .set = "victim" };
	return cnf_ioc(attacker_fd, CNF_IOC_SET_CREATE, &r);
}

/*
 * @threads threads run @at's rounds while the victims add timed entries,
 * for @ms of the guest's time; @probes measure the VM's stalls from the
 * start (victims_judge() stops them).  @what names the rounds.
 */
static void attack_run(struct __test_metadata *_metadata, struct attack *at,
		       unsigned int threads, struct victim *v, unsigned int nv,
		       double ms, struct cnf_stall *probes, const char *what)
{
	pthread_t th[ATTACKERS];
	double t0, attack_ms;
	uint32_t round;
	unsigned int i;

	ASSERT_GE((unsigned int)ATTACKERS, threads);
	ASSERT_EQ(0, cnf_stall_start(probes));
	for (i = 0; i < threads; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, attacker, at));
	t0 = now_ms();
	for (round = 0; now_ms() - t0 < ms; round++) {
		victims_round(v, nv, round);
		usleep(VICTIM_PAUSE_US);
	}
	attack_ms = now_ms() - t0;
	at->stop = 1;
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, at->err);
	note("%lu %s by %u thread(s) in %.0f ms, %u victim rounds\n",
	     at->rounds, what, threads, attack_ms, round);
	EXPECT_LT(0UL, at->rounds);
}

/*
 * The victims' namespaces, made once, by the harness's process before it
 * forks the child that runs each test: a namespace takes a tenth of a
 * second to make and more to tear down under TCG, two hundred of them
 * most of a test's time.  Every child inherits the files, each bound to
 * its namespace; each test's set-up resets them (as its teardown does),
 * so that every test starts from namespaces as new, whatever the one
 * before left.  victims_errno: why they could not be made (0: they were).
 */
static int victim_fd[VICTIMS];
static int victims_errno;

__attribute__((constructor)) static void victims_open(void)
{
	unsigned int i;

	for (i = 0; i < VICTIMS; i++) {
		if (unshare(CLONE_NEWNET)) {
			victims_errno = errno;
			return;
		}
		victim_fd[i] = open(CNF_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (victim_fd[i] < 0) {
			victims_errno = errno;
			return;
		}
	}
}

FIXTURE(iso)
{
	int attacker_fd;
	int fd[VICTIMS];
};

/*
 * The attacker's namespace new, the victims' reset; each file stays
 * bound to the namespace it was opened in.
 */
FIXTURE_SETUP(iso)
{
	unsigned int i;

	ASSERT_EQ(0, victims_errno) TH_LOG("victims' namespaces: %s",
					   strerror(victims_errno));
	for (i = 0; i < VICTIMS; i++) {
		self->fd[i] = victim_fd[i];
		ASSERT_EQ(0, cnf_ioc(self->fd[i], CNF_IOC_RESET, NULL));
	}
	ASSERT_EQ(0, unshare(CLONE_NEWNET)) TH_LOG("unshare: %m");
	self->attacker_fd = open(CNF_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->attacker_fd) TH_LOG("open: %m");
}

FIXTURE_TEARDOWN(iso)
{
	unsigned int i;

	for (i = 0; i < VICTIMS; i++)
		cnf_ioc(self->fd[i], CNF_IOC_RESET, NULL);
	cnf_ioc(self->attacker_fd, CNF_IOC_RESET, NULL);
	close(self->attacker_fd);
}

/*
 * Entries for a failing replace that takes REPLACE_MS at least, or
 * MAX_ENTRIES; *@ms: how long the last one took.
 */
static struct cnf_addr *calibrate(struct __test_metadata *_metadata, int fd,
				  uint32_t *n, double *ms)
{
	struct cnf_addr *a = NULL;
	double t0;

	for (*n = MIN_ENTRIES; ; *n *= 2) {
		free(a);
		a = failing_list(*n);
		if (!a)
			return NULL;
		t0 = now_ms();
		EXPECT_EQ(0, replace_fails(fd, NULL, a, *n));
		*ms = now_ms() - t0;
		if (*ms >= REPLACE_MS || *n >= MAX_ENTRIES)
			return a;
	}
}

TEST_F_TIMEOUT(iso, replace_starves_nobody, 600)
{
	struct attack at = { .fd = self->attacker_fd, .round = replace_round };
	struct victim v[VICTIMS + 1];
	struct cnf_stall probes;
	double replace_ms;

	pthread_mutex_init(&at.lock, NULL);
	ASSERT_EQ(0, victims_make(self->fd, self->attacker_fd, v,
				  CNF_SET_BLOCK));
	at.a = calibrate(_metadata, self->attacker_fd, &at.n, &replace_ms);
	ASSERT_NE(NULL, at.a);
	note("a failing replace of %u entries takes %.0f ms\n",
		       at.n, replace_ms);
	attack_run(_metadata, &at, ATTACKERS, v, VICTIMS + 1,
		   ATTACK_REPLACES * replace_ms, &probes, "failing replaces");
	victims_judge(_metadata, v, VICTIMS + 1, replace_ms, ATTACK_REPLACES,
		      &probes);
	free(at.a);
	pthread_mutex_destroy(&at.lock);
}

/* @n addresses from @seed on, spread as failing_list()'s are. */
static struct cnf_addr *addr_list(uint32_t n, uint32_t seed)
{
	struct cnf_addr *a = calloc(n, sizeof(*a));
	uint32_t i;

	if (!a)
		return NULL;
	for (i = 0; i < n; i++)
		a[i] = cnf_v4((seed + i) * 2654435761u);
	return a;
}

static int replace_all(int fd, const char *set, struct cnf_addr *a,
		       uint32_t n)
{
	struct cnf_batch b;

	memset(&b, 0, sizeof(b));
	b.addrs = (uintptr_t)a;
	b.count = n;
	b.flags = CNF_BATCH_F_REPLACE;
	cnf_set_name(b.set, set);
	return cnf_ioc(fd, CNF_IOC_ADD_BATCH, &b);
}

static int set_call(int fd, unsigned long cmd, const char *set)
{
	struct cnf_set_req r;

	memset(&r, 0, sizeof(r));
	cnf_set_name(r.name, set);
	r.kind = CNF_SET_BLOCK;
	return cnf_ioc(fd, cmd, &r);
}

/*
 * The set "churn", beside "keep1" and "keep2" of its kind: each call
 * changes the kind's union.
 */
static int union_round(struct attack *at)
{
	return replace_all(at->fd, "churn", at->a, at->n) ?:
	       set_call(at->fd, CNF_IOC_SET_FLUSH, "churn") ?:
	       replace_all(at->fd, "churn", at->a, at->n) ?:
	       set_call(at->fd, CNF_IOC_SET_DESTROY, "churn") ?:
	       set_call(at->fd, CNF_IOC_SET_CREATE, "churn");
}

TEST_F_TIMEOUT(iso, union_changes_starve_nobody, 600)
{
	struct attack at = { .fd = self->attacker_fd, .round = union_round };
	struct victim v[VICTIMS + 1];
	struct cnf_addr *keep = NULL, one = cnf_v4(0x0c000001);
	struct cnf_stall probes;
	double flush_ms = 0, t0;
	struct cnf_stats st;

	pthread_mutex_init(&at.lock, NULL);
	ASSERT_EQ(0, victims_make(self->fd, self->attacker_fd, v,
				  CNF_SET_BLOCK));
	ASSERT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_CREATE, "keep1"));
	ASSERT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_CREATE, "keep2"));
	ASSERT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_CREATE, "churn"));
	ASSERT_EQ(0, replace_all(self->attacker_fd, "keep2", &one, 1));

	/* As large as makes a flush of "churn" take UNION_MS. */
	for (at.n = UNION_MIN_ENTRIES; flush_ms < UNION_MS &&
	     at.n <= UNION_MAX_ENTRIES; at.n *= 2) {
		free(keep);
		free(at.a);
		keep = addr_list(at.n, 0);
		at.a = addr_list(at.n, at.n);
		ASSERT_NE(NULL, keep);
		ASSERT_NE(NULL, at.a);
		ASSERT_EQ(0, replace_all(self->attacker_fd, "keep1", keep,
					 at.n));
		ASSERT_EQ(0, replace_all(self->attacker_fd, "churn", at.a,
					 at.n));
		t0 = now_ms();
		ASSERT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_FLUSH,
				      "churn"));
		flush_ms = now_ms() - t0;
	}
	at.n /= 2;
	note("a flush of a set of %u entries beside one of as many takes %.0f ms\n",
	     at.n, flush_ms);

	attack_run(_metadata, &at, 1, v, VICTIMS + 1, UNION_ROUNDS * flush_ms,
		   &probes, "rounds of replace, flush, replace, destroy, create");
	victims_judge(_metadata, v, VICTIMS + 1, flush_ms, UNION_ROUNDS,
		      &probes);

	/*
	 * The union the packets probe holds what the sets do, no more, no
	 * less: "keep1" and "keep2", once "churn" is emptied again and every
	 * timed entry of "victim" is gone.
	 */
	EXPECT_EQ(0, replace_all(self->attacker_fd, "churn", at.a, at.n));
	EXPECT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_FLUSH, "churn"));
	st = stats_of(self->attacker_fd);
	EXPECT_EQ(0ULL, st.expiry.entries);
	EXPECT_EQ((unsigned long long)at.n + 1, st.v4.entries);
	EXPECT_EQ((unsigned long long)at.n + 1, st.v4_lookup.keys);
	free(keep);
	free(at.a);
	pthread_mutex_destroy(&at.lock);
}

/* @n IPv6 addresses, spread as addr_list()'s are. */
static struct cnf_addr *addr6_list(uint32_t n)
{
	struct cnf_addr *a = calloc(n, sizeof(*a));
	uint32_t i;

	if (!a)
		return NULL;
	for (i = 0; i < n; i++)
		a[i] = cnf_v6(0x20010db8, i * 2654435761u, i, 1);
	return a;
}

/* The first call of a dump of the set "big": its snapshot. */
static int dump_start(int fd)
{
	struct cnf_addr one;
	struct cnf_dump d;
	int err;

	memset(&d, 0, sizeof(d));
	d.addrs = (uintptr_t)&one;
	d.count = 1;
	cnf_set_name(d.set, "big");
	err = cnf_ioc(fd, CNF_IOC_DUMP, &d);
	return err ?: d.count == 1 ? 0 : EPROTO;
}

/* Snapshots of the set "big", over and over. */
static int dump_round(struct attack *at)
{
	return dump_start(at->fd);
}

TEST_F_TIMEOUT(iso, dumps_starve_nobody, 600)
{
	struct attack at = { .fd = self->attacker_fd, .round = dump_round };
	struct victim v[VICTIMS + 1];
	struct cnf_addr *got = NULL;
	struct cnf_stall probes;
	double dump_ms = 0, t0;
	struct cnf_set_req r;
	unsigned int i;
	long n;

	pthread_mutex_init(&at.lock, NULL);
	ASSERT_EQ(0, victims_make(self->fd, self->attacker_fd, v,
				  CNF_SET_BLOCK));
	memset(&r, 0, sizeof(r));
	/*
	 * An allow set: a block set would make a union with "victim" each
	 * time that gets an entry again, which is not what is measured here.
	 */
	cnf_set_name(r.name, "big");
	r.kind = CNF_SET_ALLOW;
	ASSERT_EQ(0, cnf_ioc(self->attacker_fd, CNF_IOC_SET_CREATE, &r));

	/* As large as makes a snapshot take DUMP_MS, or DUMP_MAX_ENTRIES. */
	for (at.n = DUMP_MIN_ENTRIES; ; at.n *= 2) {
		free(at.a);
		at.a = addr6_list(at.n);
		ASSERT_NE(NULL, at.a);
		ASSERT_EQ(0, replace_all(self->attacker_fd, "big", at.a, at.n));
		t0 = now_ms();
		ASSERT_EQ(0, dump_start(self->attacker_fd));
		dump_ms = now_ms() - t0;
		if (dump_ms >= DUMP_MS || at.n >= DUMP_MAX_ENTRIES)
			break;
	}
	/* The whole dump: every entry, once. */
	n = cnf_dump_set_sorted(self->attacker_fd, "big", &got);
	ASSERT_EQ((long)at.n, n);
	for (i = 1; i < n; i++)
		ASSERT_GT(0, cnf_addr_cmp(&got[i - 1], &got[i]));
	free(got);
	note("a dump's snapshot of a set of %u IPv6 entries takes %.0f ms\n",
	     at.n, dump_ms);

	attack_run(_metadata, &at, 1, v, VICTIMS + 1, DUMP_ROUNDS * dump_ms,
		   &probes, "snapshots");
	/*
	 * Judged against half a snapshot rather than a quarter: one under
	 * the lock makes a victim wait for all of it, and a snapshot of the
	 * largest set still takes little time next to the host's stalls.
	 */
	victims_judge(_metadata, v, VICTIMS + 1, 2 * dump_ms, DUMP_ROUNDS / 2,
		      &probes);
	free(at.a);
	pthread_mutex_destroy(&at.lock);
}

/*
 * A set "second" made beside "big", of its kind, given an entry (the
 * kind's first union is made), then destroyed (the union goes).
 */
static int first_union_round(struct attack *at)
{
	struct cnf_entry e = cnf_entry_of(cnf_v4(0x0d000001), "second");

	return set_call(at->fd, CNF_IOC_SET_CREATE, "second") ?:
	       cnf_ioc(at->fd, CNF_IOC_ADD, &e) ?:
	       set_call(at->fd, CNF_IOC_SET_DESTROY, "second");
}

TEST_F_TIMEOUT(iso, first_unions_starve_nobody, 600)
{
	struct attack at = { .fd = self->attacker_fd,
			     .round = first_union_round };
	struct victim v[VICTIMS + 1];
	struct cnf_stall probes;
	double round_ms = 0, t0;
	struct cnf_stats st;

	pthread_mutex_init(&at.lock, NULL);
	/* The attacker's of the other kind, so that its adds make no union. */
	ASSERT_EQ(0, victims_make(self->fd, self->attacker_fd, v,
				  CNF_SET_ALLOW));
	ASSERT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_CREATE, "big"));

	/* As large as makes a round take DUMP_MS, or DUMP_MAX_ENTRIES. */
	for (at.n = UNION_MIN_ENTRIES; ; at.n *= 2) {
		free(at.a);
		at.a = addr_list(at.n, 0);
		ASSERT_NE(NULL, at.a);
		ASSERT_EQ(0, replace_all(self->attacker_fd, "big", at.a, at.n));
		t0 = now_ms();
		ASSERT_EQ(0, first_union_round(&at));
		round_ms = now_ms() - t0;
		if (round_ms >= DUMP_MS || at.n >= DUMP_MAX_ENTRIES)
			break;
	}
	note("a second set beside one of %u entries: made, given an entry and destroyed in %.0f ms\n",
	     at.n, round_ms);

	attack_run(_metadata, &at, 1, v, VICTIMS + 1, FIRST_ROUNDS * round_ms,
		   &probes, "rounds of a second set made, given an entry, destroyed");
	victims_judge(_metadata, v, VICTIMS + 1, round_ms, FIRST_ROUNDS,
		      &probes);

	/*
	 * The union the packets probe holds what the sets do: made once
	 * more, "big" and the entry of "second" in it, each once.
	 */
	ASSERT_EQ(0, set_call(self->attacker_fd, CNF_IOC_SET_CREATE,
			      "second"));
	{
		struct cnf_entry e = cnf_entry_of(cnf_v4(0x0d000001), "second");

		ASSERT_EQ(0, cnf_ioc(self->attacker_fd, CNF_IOC_ADD, &e));
	}
	st = stats_of(self->attacker_fd);
	EXPECT_EQ(0ULL, st.expiry.entries);
	EXPECT_EQ((unsigned long long)at.n + 1, st.v4.entries);
	EXPECT_EQ((unsigned long long)at.n + 1, st.v4_lookup.keys);
	free(at.a);
	pthread_mutex_destroy(&at.lock);
}

TEST_HARNESS_MAIN
