// SPDX-License-Identifier: GPL-2.0
/*
 * Scale: 1M distinct IPv4 and 100K IPv6 addresses (CNF_TEST_FULL=1, as
 * the long suites set; 200K and 20K otherwise) loaded into an empty
 * filter with CNF_IOC_ADD_BATCH (the tables grow on the way), the count
 * exact, every one found, 1M IPv4 + 100K IPv6 absent addresses not found
 * (no false positive), the dump equal to what was loaded.  The load time is
 * printed, never asserted: the VM is emulated.
 *
 * CNF_TEST_SCALE_V4 / CNF_TEST_SCALE_V6 change the sizes.
 */
#include <sys/mman.h>
#include <time.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
/* ASSERT_*() longjmp()s out of the test; nothing is used after that. */
#pragma GCC diagnostic ignored "-Wclobbered"

#include "kselftest_harness.h"
#include "cnf_util.h"

static uint32_t env_u32(const char *name, uint32_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

/* Addresses @i of a family; i < n present, n <= i < 2n absent. */
static struct cnf_addr v4_at(uint32_t i)
{
	return cnf_v4(cnf_perm32(i));
}

static struct cnf_addr v6_at(uint32_t i)
{
	uint32_t x = cnf_perm32(i);

	return cnf_v6(0x20010db8, x ^ 0x5bd1e995, x, ~i);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct cnf_addr *make(struct cnf_addr (*gen)(uint32_t), uint32_t from,
			     uint32_t n)
{
	struct cnf_addr *a = malloc((size_t)n * sizeof(*a) + 1);
	uint32_t i;

	if (a)
		for (i = 0; i < n; i++)
			a[i] = gen(from + i);
	return a;
}

static int run_batch(int fd, unsigned long cmd, struct cnf_addr *a, uint32_t n,
		     uint32_t flags, struct cnf_batch *b)
{
	memset(b, 0, sizeof(*b));
	b->addrs = (uintptr_t)a;
	b->count = n;
	b->flags = flags;
	return cnf_ioc(fd, cmd, b);
}

/* How many of @a the filter reports present. */
static uint32_t count_present(int fd, const struct cnf_addr *a, uint32_t n)
{
	uint32_t i, hits = 0;

	for (i = 0; i < n; i++) {
		struct cnf_addr q = a[i];

		hits += !cnf_ioc_addr(fd, CNF_IOC_TEST, &q);
	}
	return hits;
}

FIXTURE(scale) {
	int fd;
	uint32_t n4, n6;
	struct cnf_addr *in4, *in6, *out4, *out6;
};

FIXTURE_SETUP(scale)
{
	bool full = env_u32("CNF_TEST_FULL", 0) == 1;

	self->fd = open(CNF_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %m", CNF_DEVICE_PATH);
	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_FLUSH, NULL));
	ASSERT_EQ(0, cnf_reset_config(self->fd));
	self->n4 = env_u32("CNF_TEST_SCALE_V4", full ? 1000000 : 200000);
	self->n6 = env_u32("CNF_TEST_SCALE_V6", full ? 100000 : 20000);
	self->in4 = make(v4_at, 0, self->n4);
	self->out4 = make(v4_at, self->n4, self->n4);
	self->in6 = make(v6_at, 0, self->n6);
	self->out6 = make(v6_at, self->n6, self->n6);
	ASSERT_TRUE(self->in4 && self->out4 && self->in6 && self->out6);
}

FIXTURE_TEARDOWN(scale)
{
	cnf_ioc(self->fd, CNF_IOC_FLUSH, NULL);
	cnf_reset_config(self->fd);
	close(self->fd);
	free(self->in4);
	free(self->out4);
	free(self->in6);
	free(self->out6);
}

TEST_F_TIMEOUT(scale, load_find_dump, 900)
{
	uint32_t n4 = self->n4, n6 = self->n6;
	struct cnf_stats st0, st;
	struct cnf_batch b;
	struct cnf_addr *got = NULL, *want;
	double t0, t4, t6;
	long n;

	st0 = (struct cnf_stats){ 0 };
	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_STATS, &st0));
	ASSERT_EQ(0, st0.v4.entries + st0.v6.entries);

	/* Load, one batch per family. */
	t0 = now();
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_ADD_BATCH, self->in4, n4, 0, &b));
	t4 = now();
	EXPECT_EQ(n4, b.applied);
	EXPECT_EQ(n4, b.done);
	EXPECT_EQ(0, b.error);
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_ADD_BATCH, self->in6, n6, 0, &b));
	t6 = now();
	EXPECT_EQ(n6, b.applied);
	EXPECT_EQ(n6, b.done);
	ksft_print_msg("loaded %u IPv4 in %.3f s, %u IPv6 in %.3f s (emulated VM: not a benchmark)\n",
		       n4, t4 - t0, n6, t6 - t4);

	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_STATS, &st));
	EXPECT_EQ(n4, st.v4.entries);
	EXPECT_EQ(n6, st.v6.entries);
	EXPECT_LE(st.v4.entries, st.v4.capacity);
	EXPECT_LE(st.v6.entries, st.v6.capacity);
	EXPECT_LT(st0.v4.grows, st.v4.grows) TH_LOG("no IPv4 growth during the load");
	EXPECT_LT(st0.v6.grows, st.v6.grows) TH_LOG("no IPv6 growth during the load");
	ksft_print_msg("IPv4: %llu entries, capacity %llu (load %.3f), %llu bytes (%.2f B/entry), %llu grows, %llu stashed\n",
		       (unsigned long long)st.v4.entries, (unsigned long long)st.v4.capacity,
		       (double)st.v4.entries / st.v4.capacity, (unsigned long long)st.v4.bytes,
		       (double)st.v4.bytes / st.v4.entries, (unsigned long long)st.v4.grows,
		       (unsigned long long)st.v4.stashed);
	ksft_print_msg("IPv6: %llu entries, capacity %llu (load %.3f), %llu bytes (%.2f B/entry), %llu grows, %llu stashed\n",
		       (unsigned long long)st.v6.entries, (unsigned long long)st.v6.capacity,
		       (double)st.v6.entries / st.v6.capacity, (unsigned long long)st.v6.bytes,
		       (double)st.v6.bytes / st.v6.entries, (unsigned long long)st.v6.grows,
		       (unsigned long long)st.v6.stashed);

	/* Every one present, one lookup each. */
	EXPECT_EQ(n4, count_present(self->fd, self->in4, n4));
	EXPECT_EQ(n6, count_present(self->fd, self->in6, n6));
	/* No absent one reported present. */
	EXPECT_EQ(0, count_present(self->fd, self->out4, n4)) TH_LOG("IPv4 false positives");
	EXPECT_EQ(0, count_present(self->fd, self->out6, n6)) TH_LOG("IPv6 false positives");

	/* The same through batches: re-adding skips all, deleting absent ones too. */
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_ADD_BATCH, self->in4, n4,
			       CNF_BATCH_F_EXIST_OK, &b));
	EXPECT_EQ(0, b.applied);
	EXPECT_EQ(n4, b.skipped);
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_DEL_BATCH, self->out4, n4,
			       CNF_BATCH_F_EXIST_OK, &b));
	EXPECT_EQ(0, b.applied);
	EXPECT_EQ(n4, b.skipped);
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_DEL_BATCH, self->out6, n6,
			       CNF_BATCH_F_EXIST_OK, &b));
	EXPECT_EQ(0, b.applied);
	EXPECT_EQ(n6, b.skipped);

	/* The dump is exactly the loaded set. */
	n = cnf_dump_all(self->fd, 65536, &got);
	ASSERT_EQ((long)n4 + n6, n);
	want = malloc((size_t)n * sizeof(*want));
	ASSERT_NE(NULL, want);
	memcpy(want, self->in4, (size_t)n4 * sizeof(*want));
	memcpy(want + n4, self->in6, (size_t)n6 * sizeof(*want));
	cnf_sort(want, n);
	cnf_sort(got, n);
	EXPECT_TRUE(cnf_same_set(want, n, got, n));
	free(want);
	free(got);

	/* And it all goes away again. */
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_DEL_BATCH, self->in4, n4, 0, &b));
	EXPECT_EQ(n4, b.applied);
	EXPECT_EQ(0, run_batch(self->fd, CNF_IOC_DEL_BATCH, self->in6, n6, 0, &b));
	EXPECT_EQ(n6, b.applied);
	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_STATS, &st));
	EXPECT_EQ(0, st.v4.entries + st.v6.entries);
	EXPECT_EQ(0, count_present(self->fd, self->in4, 100000 < n4 ? 100000 : n4));
}

static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

int main(int argc, char **argv)
{
	if (access(CNF_DEVICE_PATH, F_OK))
		ksft_exit_skip("%s is missing: load cuckoo_nf.ko\n", CNF_DEVICE_PATH);
	return test_harness_run(argc, argv);
}
