// SPDX-License-Identifier: GPL-2.0
/*
 * Privilege, from an unprivileged user's side (ioctl_test.c covers a
 * privileged process dropping privileges, and a user ns created by root).
 *
 * An unprivileged user (uid 65534, no capabilities) creates a user
 * namespace and a network namespace it owns.  The ABI binds an open file to
 * the OPENER's netns and checks CAP_NET_ADMIN over that netns at each call,
 * with the caller's credentials.  So:
 *  - the user cannot open /dev/cuckoo_nf (0600 root:root), not even as
 *    "root" of its user ns: root of the host is not mapped there, so
 *    CAP_DAC_OVERRIDE does not apply (EACCES);
 *  - a privileged helper can enter the user's netns (setns), open the device
 *    there and pass the file (SCM_RIGHTS): the user, in its user ns, then
 *    manages that netns' filter with every call;
 *  - the same user gets EPERM for every call on a file of the initial netns
 *    and on one of another user's netns, whose sets stay unchanged;
 *  - the owner uid of the user ns also has the capability from outside it
 *    (the kernel's owner rule), and nobody else does.
 * If the device were world-openable (0666), the per-call check would still
 * refuse everything but the caller's own namespaces: the last test shows it
 * with a temporary chmod.
 */
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "cnf_util.h"

#define NOBODY		65534
#define OTHER		65533

static const unsigned long mutating[] = {
	CNF_IOC_ADD, CNF_IOC_DEL, CNF_IOC_ADD_BATCH, CNF_IOC_DEL_BATCH,
	CNF_IOC_FLUSH, CNF_IOC_SET_CONFIG,
	/* In this order, so that every call leaves no set behind. */
	CNF_IOC_SET_CREATE, CNF_IOC_SET_FLUSH, CNF_IOC_SET_DESTROY,
};

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

static int drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	/* Changing uid made us non-dumpable: /proc/self/uid_map root's. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* As @uid: a user ns (uid 0 inside = @uid outside) and a netns it owns. */
static int enter_own_userns(uid_t uid)
{
	char map[64];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", map))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	return write_file("/proc/self/gid_map", map);
}

/* Root: open the device inside the netns of process @pid. */
static int open_in_netns_of(pid_t pid)
{
	char path[64];
	int nsfd, fd = -1, sv[2], status;
	pid_t h;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	nsfd = open(path, O_RDONLY);
	if (nsfd < 0 || socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return -1;
	h = fork();
	if (!h) {
		if (setns(nsfd, CLONE_NEWNET))
			_exit(1);
		fd = open(CNF_DEVICE_PATH, O_RDWR);
		_exit(fd < 0 || cnf_send_fd(sv[1], fd) ? 2 : 0);
	}
	if (h > 0 && waitpid(h, &status, 0) == h && WIFEXITED(status) &&
	    !WEXITSTATUS(status))
		fd = cnf_recv_fd(sv[0]);
	close(sv[0]);
	close(sv[1]);
	close(nsfd);
	return fd;
}

/* Every mutating call with valid arguments; the errnos in @err. */
static void try_mutating(int fd, int *err)
{
	struct cnf_entry x = cnf_entry_of(cnf_v4(0xc6336401), NULL);
	struct cnf_addr y = cnf_v6(0x20010db8, 7, 7, 7);
	struct cnf_batch b = { .addrs = (uintptr_t)&y, .count = 1 };
	struct cnf_config c = { .set = CNF_CONFIG_MODE, .mode = CNF_MODE_MONITOR };
	struct cnf_set_req set = { .name = "userns_set", .kind = CNF_SET_ALLOW };
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(mutating); i++) {
		void *arg = NULL;

		switch (mutating[i]) {
		case CNF_IOC_ADD: case CNF_IOC_DEL: arg = &x; break;
		case CNF_IOC_ADD_BATCH: case CNF_IOC_DEL_BATCH:
			b.flags = CNF_BATCH_F_EXIST_OK;
			arg = &b;
			break;
		case CNF_IOC_SET_CONFIG: arg = &c; break;
		case CNF_IOC_SET_CREATE: arg = &set; break;
		case CNF_IOC_SET_FLUSH: case CNF_IOC_SET_DESTROY:
			set.kind = 0;
			arg = &set;
			break;
		}
		err[i] = cnf_ioc(fd, mutating[i], arg);
	}
}

/* What the unprivileged side saw, in shared memory. */
struct seen {
	int setup;			/* step that failed, 0 when all done */
	int open_err;			/* opening the device in its user ns */
	int own[ARRAY_LEN(mutating)];	/* on its own netns' file */
	int own_add, own_test, own_dump_n, own_mode;
	int init[ARRAY_LEN(mutating)];	/* on the initial netns' file */
	int init_test, init_stats;
	int other[ARRAY_LEN(mutating)];	/* on another user's netns' file */
};

FIXTURE(userns)
{
	int fd;			/* root's file on the initial netns */
	struct seen *seen;
	struct cnf_addr *before;
	long nbefore;
	mode_t mode;
};

FIXTURE_SETUP(userns)
{
	struct cnf_addr a[3] = { cnf_v4(0x0a050001), cnf_v4(0x0a050002),
				 cnf_v6(0x20010db8, 5, 5, 5) };
	struct cnf_batch b = { .addrs = (uintptr_t)a, .count = 3,
			       .flags = CNF_BATCH_F_EXIST_OK };
	struct stat st;

	if (geteuid())
		SKIP(return, "needs root");
	if (access(CNF_DEVICE_PATH, F_OK))
		SKIP(return, "%s missing: load cuckoo_nf.ko", CNF_DEVICE_PATH);
	ASSERT_EQ(0, stat(CNF_DEVICE_PATH, &st));
	self->mode = st.st_mode & 07777;
	self->fd = open(CNF_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_FLUSH, NULL));
	ASSERT_EQ(0, cnf_reset_config(self->fd));
	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_ADD_BATCH, &b));
	self->nbefore = cnf_dump_sorted(self->fd, &self->before);
	ASSERT_EQ(3, self->nbefore);
	self->seen = mmap(NULL, sizeof(struct seen), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->seen);
	memset(self->seen, 0, sizeof(*self->seen));
}

/* Unprivileged users started in user+net namespaces of their own. */
static unsigned int tenants;

FIXTURE_TEARDOWN(userns)
{
	struct cnf_stats st;
	struct cnf_addr *now;
	long n, i, lost = 0;

	if (self->fd <= 0)
		return;
	chmod(CNF_DEVICE_PATH, self->mode);
	/* The initial netns' set never changed. */
	n = cnf_dump_sorted(self->fd, &now);
	EXPECT_TRUE(cnf_same_set(now, n, self->before, self->nbefore));
	for (i = 0; i < self->nbefore; i++)
		if (n < 0 || !bsearch(&self->before[i], now, n, sizeof(*now),
				      cnf_addr_cmp))
			lost++;
	/* docs/benchmarks.md's reliability table: summed over the tests by the report. */
	fprintf(stderr, "# reliability: tenants_tried=%u lost=%ld\n",
		tenants, lost);
	memset(&st, 0xff, sizeof(st));
	EXPECT_EQ(0, cnf_ioc(self->fd, CNF_IOC_STATS, &st));
	EXPECT_EQ((__u32)CNF_MODE_DROP, st.mode);
	cnf_ioc(self->fd, CNF_IOC_FLUSH, NULL);
	free(now);
	free(self->before);
	close(self->fd);
}

/* A process of @uid in its own user+net ns, waiting on @go before @fn. */
struct ns_child {
	pid_t pid;
	int ready[2], go[2], sock[2];
};

static int start_child(struct ns_child *c, uid_t uid,
		       int (*fn)(struct ns_child *c, void *arg), void *arg)
{
	char b;

	if (pipe(c->ready) || pipe(c->go) ||
	    socketpair(AF_UNIX, SOCK_DGRAM, 0, c->sock))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		close(c->ready[0]);
		close(c->go[1]);
		if (drop_to(uid) || enter_own_userns(uid))
			_exit(100);
		if (write(c->ready[1], "r", 1) != 1 || read(c->go[0], &b, 1) != 1)
			_exit(101);
		_exit(fn(c, arg));
	}
	close(c->ready[1]);
	close(c->go[0]);
	if (read(c->ready[0], &b, 1) != 1)
		return -1;
	tenants++;
	return 0;
}

static int finish_child(struct ns_child *c)
{
	int status;

	if (write(c->go[1], "g", 1) != 1)
		return -1;
	if (waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Just waits: the "other user" whose netns must stay out of reach. */
static int idle(struct ns_child *c, void *arg)
{
	return 0;
}

struct user_arg {
	struct seen *seen;
	int init_fd;
};

static int user_main(struct ns_child *c, void *varg)
{
	struct user_arg *ua = varg;
	struct seen *s = ua->seen;
	struct cnf_addr x = cnf_v4(0x0a0a0a0a), buf[8], *all;
	struct cnf_stats st;
	int own, other, fd;

	fd = open(CNF_DEVICE_PATH, O_RDWR);
	s->open_err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	own = cnf_recv_fd(c->sock[1]);
	other = cnf_recv_fd(c->sock[1]);
	if (own < 0 || other < 0)
		return s->setup = 1;

	try_mutating(own, s->own);
	s->own_add = cnf_ioc_addr(own, CNF_IOC_ADD, &x);
	s->own_test = cnf_ioc_addr(own, CNF_IOC_TEST, &x);
	s->own_dump_n = cnf_dump_all(own, ARRAY_LEN(buf), &all);
	if (s->own_dump_n >= 0)
		free(all);
	memset(&st, 0xff, sizeof(st));
	s->own_mode = ioctl(own, CNF_IOC_STATS, &st) ? -errno : (int)st.mode;

	try_mutating(ua->init_fd, s->init);
	s->init_test = cnf_ioc_addr(ua->init_fd, CNF_IOC_TEST, &x);
	s->init_stats = cnf_ioc(ua->init_fd, CNF_IOC_STATS, &st);
	try_mutating(other, s->other);
	return 0;
}

TEST_F(userns, unprivileged_owner_manages_only_its_netns)
{
	struct ns_child user, other;
	struct user_arg ua = { self->seen, self->fd };
	struct cnf_addr *got;
	struct cnf_stats st;
	unsigned int i;
	int own_fd, other_fd;

	ASSERT_EQ(0, start_child(&other, OTHER, idle, NULL));
	ASSERT_EQ(0, start_child(&user, NOBODY, user_main, &ua));
	/* Root opens the device in each netns: the only way in at 0600. */
	own_fd = open_in_netns_of(user.pid);
	other_fd = open_in_netns_of(other.pid);
	ASSERT_LE(0, own_fd);
	ASSERT_LE(0, other_fd);
	/* Something in the other user's set, to see it untouched. */
	ASSERT_EQ(0, cnf_ioc_addr(other_fd, CNF_IOC_ADD,
				  &(struct cnf_addr){ AF_INET, 32, 0, { 198, 51, 100, 1 } }));
	ASSERT_EQ(0, cnf_send_fd(user.sock[0], own_fd));
	ASSERT_EQ(0, cnf_send_fd(user.sock[0], other_fd));
	ASSERT_EQ(0, finish_child(&user));
	ASSERT_EQ(0, finish_child(&other));
	ASSERT_EQ(0, self->seen->setup);

	EXPECT_EQ(EACCES, self->seen->open_err)
		TH_LOG("root of an unprivileged user ns opened the 0600 device");
	for (i = 0; i < ARRAY_LEN(mutating); i++) {
		EXPECT_EQ(0, self->seen->own[i]) TH_LOG("own netns, call %u", i);
		EXPECT_EQ(EPERM, self->seen->init[i]) TH_LOG("initial netns, call %u", i);
		EXPECT_EQ(EPERM, self->seen->other[i]) TH_LOG("other user's netns, call %u", i);
	}
	EXPECT_EQ(0, self->seen->own_add);
	EXPECT_EQ(0, self->seen->own_test);
	EXPECT_EQ(1, self->seen->own_dump_n);
	EXPECT_EQ(CNF_MODE_MONITOR, self->seen->own_mode);
	EXPECT_EQ(EPERM, self->seen->init_test);
	EXPECT_EQ(EPERM, self->seen->init_stats);

	/* Root sees the user's netns as the user left it, the other as is. */
	EXPECT_EQ(1, cnf_dump_all(own_fd, 4, &got));
	free(got);
	EXPECT_EQ(1, cnf_dump_all(other_fd, 4, &got));
	if (got)
		EXPECT_EQ((__u8)198, got[0].addr[0]);
	free(got);
	memset(&st, 0, sizeof(st));
	EXPECT_EQ(0, cnf_ioc(other_fd, CNF_IOC_STATS, &st));
	EXPECT_EQ((__u32)CNF_MODE_DROP, st.mode);
	close(own_fd);
	close(other_fd);
}

/* The owner uid, outside its user ns, over the netns that ns owns. */
static int owner_outside(struct ns_child *c, void *varg)
{
	return 0;
}

TEST_F(userns, owner_uid_outside_and_strangers)
{
	struct ns_child user;
	int fd, status, err[2][ARRAY_LEN(mutating)];
	int *shared = mmap(NULL, sizeof(err), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned int i;
	pid_t p;

	ASSERT_NE(MAP_FAILED, shared);
	ASSERT_EQ(0, start_child(&user, NOBODY, owner_outside, NULL));
	fd = open_in_netns_of(user.pid);
	ASSERT_LE(0, fd);
	p = fork();
	ASSERT_LE(0, p);
	if (!p) {
		/* Same uid as the owner, in the initial user ns. */
		if (drop_to(NOBODY))
			_exit(1);
		try_mutating(fd, shared);
		_exit(0);
	}
	ASSERT_EQ(p, waitpid(p, &status, 0));
	ASSERT_EQ(0, status);
	p = fork();
	ASSERT_LE(0, p);
	if (!p) {
		/* Another unprivileged uid. */
		if (drop_to(OTHER))
			_exit(1);
		try_mutating(fd, shared + ARRAY_LEN(mutating));
		_exit(0);
	}
	ASSERT_EQ(p, waitpid(p, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, finish_child(&user));
	memcpy(err, shared, sizeof(err));
	for (i = 0; i < ARRAY_LEN(mutating); i++) {
		EXPECT_EQ(0, err[0][i]) TH_LOG("owner uid, call %u", i);
		EXPECT_EQ(EPERM, err[1][i]) TH_LOG("stranger uid, call %u", i);
	}
	close(fd);
	munmap(shared, sizeof(err));
}

/*
 * With the device world-openable, every process can open it, but the file
 * is bound to the opener's netns and each call needs CAP_NET_ADMIN over it:
 * an unprivileged user gets EPERM on the initial netns and full control
 * of its own netns, with no helper.
 */
static int open_itself(struct ns_child *c, void *varg)
{
	struct seen *s = varg;
	int fd = open(CNF_DEVICE_PATH, O_RDWR);

	if (fd < 0)
		return s->open_err = errno, 0;
	try_mutating(fd, s->own);
	close(fd);
	return 0;
}

TEST_F(userns, world_openable_still_safe)
{
	struct ns_child user;
	unsigned int i;
	int status, fd;
	pid_t p;

	ASSERT_EQ(0, chmod(CNF_DEVICE_PATH, 0666));
	p = fork();
	ASSERT_LE(0, p);
	if (!p) {
		if (drop_to(NOBODY))
			_exit(1);
		fd = open(CNF_DEVICE_PATH, O_RDWR);
		if (fd < 0)
			_exit(2);
		try_mutating(fd, self->seen->init);
		_exit(0);
	}
	ASSERT_EQ(p, waitpid(p, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(0, start_child(&user, NOBODY, open_itself, self->seen));
	ASSERT_EQ(0, finish_child(&user));
	ASSERT_EQ(0, chmod(CNF_DEVICE_PATH, self->mode));
	EXPECT_EQ(0, self->seen->open_err);
	for (i = 0; i < ARRAY_LEN(mutating); i++) {
		EXPECT_EQ(EPERM, self->seen->init[i]) TH_LOG("initial netns, call %u", i);
		EXPECT_EQ(0, self->seen->own[i]) TH_LOG("own netns, call %u", i);
	}
}

/*
 * A tenant, the unprivileged owner of a netns with a file of it, cannot
 * raise its memory limit above the module's (the host's), and within its
 * limit cannot make the kernel hold more: batches of one duplicate grow
 * nothing, distinct addresses stop at -ENOSPC with the tables, the old one
 * during growth included, within the limit.
 */
#define TENANT_LIMIT	(8ULL << 20)
#define TENANT_DUPS	(2U << 20)
#define TENANT_BATCH	65536U

struct tenant_seen {
	int setup;
	int raise_err, raise_all_err, lower_err;
	unsigned long long module_limit, bytes0;
	int dups_err;
	unsigned int dups_applied, dups_skipped;
	unsigned long long bytes_after_dups;
	int flood_err;
	unsigned long long flood_added, bytes_max, entries;
	int dump_err;
};

static unsigned long long stats_bytes(int fd, unsigned long long *entries)
{
	struct cnf_stats st;

	if (cnf_ioc(fd, CNF_IOC_STATS, &st))
		return ~0ULL;
	if (entries)
		*entries = st.v4.entries + st.v6.entries;
	return st.v4.bytes + st.v6.bytes;
}

static int tenant_main(struct ns_child *c, void *varg)
{
	struct tenant_seen *s = varg;
	struct cnf_config cfg = { .set = CNF_CONFIG_MEM_LIMIT };
	struct cnf_addr dup = cnf_v6(0x20010db8, 0xd, 0, 1), *a, *all;
	unsigned long long bytes;
	struct cnf_batch b;
	unsigned int i, k;
	FILE *f;
	int own;

	own = cnf_recv_fd(c->sock[1]);
	f = fopen("/sys/module/cuckoo_nf/parameters/mem_limit", "r");
	if (own < 0 || !f || fscanf(f, "%llu", &s->module_limit) != 1)
		return s->setup = 1;
	fclose(f);
	cfg.mem_limit = s->module_limit + 1;
	s->raise_err = cnf_ioc(own, CNF_IOC_SET_CONFIG, &cfg);
	cfg.mem_limit = ~0ULL;
	s->raise_all_err = cnf_ioc(own, CNF_IOC_SET_CONFIG, &cfg);
	cfg.mem_limit = TENANT_LIMIT;
	s->lower_err = cnf_ioc(own, CNF_IOC_SET_CONFIG, &cfg);
	s->bytes0 = stats_bytes(own, NULL);

	a = calloc(TENANT_DUPS, sizeof(*a));
	if (!a)
		return s->setup = 2;
	for (i = 0; i < TENANT_DUPS; i++)
		a[i] = dup;
	b = (struct cnf_batch){ .addrs = (uintptr_t)a, .count = TENANT_DUPS,
				.flags = CNF_BATCH_F_EXIST_OK };
	s->dups_err = cnf_ioc(own, CNF_IOC_ADD_BATCH, &b);
	s->dups_applied = b.applied;
	s->dups_skipped = b.skipped;
	s->bytes_after_dups = stats_bytes(own, NULL);

	for (k = 0; !s->flood_err && k < 64; k++) {
		for (i = 0; i < TENANT_BATCH; i++)
			a[i] = cnf_v6(0x20010db8, 0xe, k, i);
		b = (struct cnf_batch){ .addrs = (uintptr_t)a,
					.count = TENANT_BATCH };
		s->flood_err = cnf_ioc(own, CNF_IOC_ADD_BATCH, &b);
		s->flood_added += b.applied;
		bytes = stats_bytes(own, &s->entries);
		if (bytes > s->bytes_max)
			s->bytes_max = bytes;
	}
	free(a);
	/* A dump's snapshot counts too: it fits, or is refused. */
	s->dump_err = cnf_dump_all(own, 4096, &all) < 0 ? ENOSPC : 0;
	if (!s->dump_err)
		free(all);
	return 0;
}

/* Kernel memory in slab and vmalloc, in bytes, from /proc/meminfo. */
static long long kernel_bytes(void)
{
	char line[128];
	long long kb, sum = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lld", &kb) == 1 ||
		    sscanf(line, "VmallocUsed: %lld", &kb) == 1)
			sum += kb;
	fclose(f);
	return sum * 1024;
}

TEST_F(userns, tenant_memory_bounded)
{
	struct tenant_seen *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long long init_bytes = stats_bytes(self->fd, NULL);
	struct ns_child tenant;
	long long k0, k1;
	int own_fd;

	ASSERT_NE(MAP_FAILED, s);
	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, start_child(&tenant, NOBODY, tenant_main, s));
	own_fd = open_in_netns_of(tenant.pid);
	ASSERT_LE(0, own_fd);
	ASSERT_EQ(0, cnf_send_fd(tenant.sock[0], own_fd));
	k0 = kernel_bytes();
	ASSERT_EQ(0, finish_child(&tenant));
	k1 = kernel_bytes();
	ASSERT_EQ(0, s->setup);
	TH_LOG("tenant: limit %llu; %u duplicates: %u applied, tables %llu -> %llu bytes; flood: %llu added, at most %llu bytes, ended with %s; kernel memory %+lld bytes",
	       TENANT_LIMIT, TENANT_DUPS, s->dups_applied, s->bytes0,
	       s->bytes_after_dups, s->flood_added, s->bytes_max,
	       strerror(s->flood_err), k1 - k0);

	EXPECT_EQ(EPERM, s->raise_err);
	EXPECT_EQ(EPERM, s->raise_all_err);
	EXPECT_EQ(0, s->lower_err);
	EXPECT_EQ(0, s->dups_err);
	EXPECT_EQ(1U, s->dups_applied);
	EXPECT_EQ(TENANT_DUPS - 1, s->dups_skipped);
	EXPECT_EQ(s->bytes0, s->bytes_after_dups) TH_LOG("duplicates grew the table");
	EXPECT_EQ(ENOSPC, s->flood_err);
	EXPECT_LT(0ULL, s->flood_added);
	EXPECT_LE(s->bytes_max, TENANT_LIMIT);
	/* What the tenant still holds, plus the slab's and per-CPU noise. */
	EXPECT_LE(k1 - k0, (long long)TENANT_LIMIT + (2 << 20));
	/* Its neighbours: the initial netns' tables never moved. */
	EXPECT_EQ(init_bytes, stats_bytes(self->fd, NULL));
	close(own_fd);
	munmap(s, sizeof(*s));
}

TEST_HARNESS_MAIN
