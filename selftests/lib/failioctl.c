// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for faults.sh: the task is marked for fault injection
 * (/proc/self/make-it-fail, with failslab/fail_page_alloc task-filter) only
 * while it is inside ioctl() or opening the cuckoo_nf device, so injected
 * allocation failures hit the module's paths, not execve() or the tool's
 * own page faults.  The proc file is opened once, before any fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int mif = -1;

__attribute__((constructor)) static void failioctl_init(void)
{
	mif = syscall(SYS_openat, AT_FDCWD, "/proc/self/make-it-fail",
		      O_WRONLY | O_CLOEXEC);
}

static void mark(int on)
{
	int e = errno;

	if (mif >= 0)
		(void)!pwrite(mif, on ? "1" : "0", 1, 0);
	errno = e;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	long arg, r;

	va_start(ap, req);
	arg = va_arg(ap, long);
	va_end(ap);
	mark(1);
	r = syscall(SYS_ioctl, fd, req, arg);
	mark(0);
	return r;
}

static int dev_open(const char *path, int flags, va_list ap)
{
	int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
	int dev = !strncmp(path, "/dev/cuckoo_nf", 14);
	long r;

	if (dev)
		mark(1);
	r = syscall(SYS_openat, AT_FDCWD, path, flags, mode);
	if (dev)
		mark(0);
	return r;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = dev_open(path, flags, ap);
	va_end(ap);
	return r;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int r;

	va_start(ap, flags);
	r = dev_open(path, flags, ap);
	va_end(ap);
	return r;
}
