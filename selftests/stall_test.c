// SPDX-License-Identifier: GPL-2.0
/*
 * A batch whose user buffer stalls (a userfaultfd page nobody serves, as a
 * FUSE or network-backed mapping can) must stall only its own call: other
 * processes' calls on the same namespace go on, and a fatal signal ends the
 * stalled call.  The module copies user memory without its filter lock,
 * and takes that lock killably.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "cnf_util.h"

/* Pages of entries before the stalled page, which the read-ahead reads. */
#define PAGES_BEFORE	16

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * @pages of anonymous memory; the last one registered with a userfaultfd
 * that nobody reads: touching it blocks.  Returns the uffd, or -errno.
 * Non-blocking: poll() on a blocking userfaultfd returns EPOLLERR at once
 * instead of waiting for the fault.
 */
static int stalling_buffer(size_t pages, char **buf)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct uffdio_register reg;
	struct uffdio_api api = { .api = UFFD_API };
	int uffd;

	*buf = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*buf == MAP_FAILED)
		return -errno;
	memset(*buf, 0, (pages - 1) * psz);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		return -errno;
	if (ioctl(uffd, UFFDIO_API, &api))
		return -errno;
	reg.range.start = (unsigned long)*buf + (pages - 1) * psz;
	reg.range.len = psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	return uffd;
}

FIXTURE(stall)
{
	int fd;
};

FIXTURE_SETUP(stall)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (access(CNF_DEVICE_PATH, F_OK))
		SKIP(return, "%s missing: load cuckoo_nf.ko", CNF_DEVICE_PATH);
	self->fd = open(CNF_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, cnf_ioc(self->fd, CNF_IOC_FLUSH, NULL));
}

FIXTURE_TEARDOWN(stall)
{
	if (self->fd > 0) {
		cnf_ioc(self->fd, CNF_IOC_FLUSH, NULL);
		close(self->fd);
	}
}

/*
 * The child: a buffer of valid entries up to a page that stalls, added in
 * one batch.  The registration is the child's own (a fork does not carry
 * it over); the uffd goes to the parent, to see the fault happen.
 */
static int stalled_batch(int fd, int sock)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t pages = PAGES_BEFORE + 1, i;
	size_t before = PAGES_BEFORE * psz / sizeof(struct cnf_addr);
	struct cnf_batch b = { .count = pages * psz / sizeof(struct cnf_addr) };
	struct cnf_addr *a;
	char *buf;
	int uffd;

	uffd = stalling_buffer(pages, &buf);
	if (cnf_send_fd(sock, uffd < 0 ? sock : uffd))
		return 100;
	if (uffd < 0)
		return 101;
	a = (struct cnf_addr *)buf;
	for (i = 0; i < before; i++)
		a[i] = cnf_v4(0x0a000000 + i);
	b.addrs = (uintptr_t)a;
	return cnf_ioc(fd, CNF_IOC_ADD_BATCH, &b);
}

static pid_t start_stalled_batch(struct __test_metadata *_metadata,
				 FIXTURE_DATA(stall) *self)
{
	struct pollfd pfd = { .events = POLLIN };
	int sv[2];
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	pid = fork();
	if (!pid)
		_exit(stalled_batch(self->fd, sv[1]));
	pfd.fd = cnf_recv_fd(sv[0]);
	close(sv[0]);
	close(sv[1]);
	/* The fault on the registered page shows on the uffd. */
	EXPECT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("the batch never reached the stalled page");
	close(pfd.fd);
	return pid;
}

TEST_F(stall, other_calls_go_on)
{
	struct cnf_addr x = cnf_v6(0x20010db8, 0, 0, 9);
	struct cnf_stats st;
	int other, status;
	double t0;
	pid_t pid;

	pid = start_stalled_batch(_metadata, self);
	ASSERT_LT(0, pid);
	if (waitpid(pid, &status, WNOHANG) == pid)
		SKIP(return, "no userfaultfd here (child exit %d)", WEXITSTATUS(status));
	/* Another open file of the same namespace: stats, add, dump, flush. */
	other = open(CNF_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, other);
	t0 = now();
	ASSERT_EQ(0, cnf_ioc(other, CNF_IOC_STATS, &st));
	/* An add batch reads its entries ahead, whole, before it adds any. */
	EXPECT_EQ(0ULL, st.v4.entries) TH_LOG("the batch added before it had read its entries");
	ASSERT_EQ(0, cnf_ioc_addr(other, CNF_IOC_ADD, &x));
	ASSERT_EQ(0, cnf_ioc_addr(other, CNF_IOC_TEST, &x));
	EXPECT_LT(now() - t0, 2.0) TH_LOG("calls waited for the stalled batch");

	/* SIGKILL ends the stalled call. */
	t0 = now();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("the batch ended on its own: %d", WEXITSTATUS(status));
	EXPECT_LT(now() - t0, 5.0) TH_LOG("the killed batch took %.1f s to end", now() - t0);
	ASSERT_EQ(0, cnf_ioc(other, CNF_IOC_STATS, &st));
	EXPECT_EQ(1ULL, st.v6.entries);
	close(other);
}

TEST_HARNESS_MAIN
