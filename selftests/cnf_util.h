/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the C selftests of /dev/cuckoo_nf (ioctl_test.c,
 * scale_test.c): address builders, ioctl wrappers returning the errno,
 * a whole-set dump and an address order for comparing sets.
 */
#ifndef _CNF_SELFTEST_UTIL_H
#define _CNF_SELFTEST_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cuckoo_nf.h>

#include "kselftest.h"

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* 0 on success, else the errno of the failed ioctl. */
static inline int cnf_ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* Where a member of a struct ends, as the kernel's offsetofend(). */
#ifndef offsetofend
#define offsetofend(T, m)	(offsetof(T, m) + sizeof(((T *)0)->m))
#endif

/*
 * The single-entry calls and the batch and dump structs as they were
 * before sets: a struct cnf_addr, and structs that end before their set
 * name.  They still work and mean the default set.
 */
#define CNF_BATCH_V1_SIZE	offsetof(struct cnf_batch, set)
#define CNF_DUMP_V1_SIZE	offsetof(struct cnf_dump, set)
#define CNF_IOC_ADD_V1		_IOW(CNF_IOC_TYPE, 0x01, struct cnf_addr)
#define CNF_IOC_DEL_V1		_IOW(CNF_IOC_TYPE, 0x02, struct cnf_addr)
#define CNF_IOC_TEST_V1		_IOW(CNF_IOC_TYPE, 0x03, struct cnf_addr)
#define CNF_IOC_MATCH_V1	_IOWR(CNF_IOC_TYPE, 0x0b, struct cnf_addr)
#define CNF_IOC_ADD_BATCH_V1	_IOC(_IOC_READ | _IOC_WRITE, CNF_IOC_TYPE, 0x04, \
				     CNF_BATCH_V1_SIZE)
#define CNF_IOC_DEL_BATCH_V1	_IOC(_IOC_READ | _IOC_WRITE, CNF_IOC_TYPE, 0x05, \
				     CNF_BATCH_V1_SIZE)
#define CNF_IOC_DUMP_V1		_IOC(_IOC_READ | _IOC_WRITE, CNF_IOC_TYPE, 0x06, \
				     CNF_DUMP_V1_SIZE)

/* Copy @name (NULL: the default set) into a set name field. */
static inline void cnf_set_name(char *field, const char *name)
{
	memset(field, 0, CNF_SET_NAME_LEN);
	if (name)
		memcpy(field, name, strnlen(name, CNF_SET_NAME_LEN));
}

static inline struct cnf_entry cnf_entry_of(struct cnf_addr a, const char *set)
{
	struct cnf_entry e;

	memset(&e, 0, sizeof(e));
	e.addr = a;
	cnf_set_name(e.set, set);
	return e;
}

/*
 * A single-entry call (CNF_IOC_ADD, _DEL, _TEST, _MATCH) on @a in set @set
 * (NULL: the default set).  *@a gets the address the kernel wrote back
 * (CNF_IOC_MATCH).  0 or the errno.
 */
static inline int cnf_ioc_set(int fd, unsigned long cmd, struct cnf_addr *a,
			      const char *set)
{
	struct cnf_entry e = cnf_entry_of(*a, set);
	int err = cnf_ioc(fd, cmd, &e);

	*a = e.addr;
	return err;
}

/* The same on the default set. */
static inline int cnf_ioc_addr(int fd, unsigned long cmd, struct cnf_addr *a)
{
	return cnf_ioc_set(fd, cmd, a, NULL);
}

static inline struct cnf_addr cnf_v4(uint32_t host)
{
	struct cnf_addr a;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	a.prefixlen = 32;
	a.addr[0] = host >> 24;
	a.addr[1] = host >> 16;
	a.addr[2] = host >> 8;
	a.addr[3] = host;
	return a;
}

/* @w: the four 32-bit words of the address, most significant first. */
static inline struct cnf_addr cnf_v6(uint32_t w0, uint32_t w1, uint32_t w2,
				     uint32_t w3)
{
	uint32_t w[4] = { w0, w1, w2, w3 };
	struct cnf_addr a;
	int i;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET6;
	a.prefixlen = 128;
	for (i = 0; i < 16; i++)
		a.addr[i] = w[i / 4] >> (24 - 8 * (i % 4));
	return a;
}

/* A bijection of 32-bit integers (the murmur3 finaliser): distinct in, out. */
static inline uint32_t cnf_perm32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return x;
}

static inline int cnf_addr_cmp(const void *pa, const void *pb)
{
	const struct cnf_addr *a = pa, *b = pb;

	int c;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	c = memcmp(a->addr, b->addr, sizeof(a->addr));
	return c ? c : a->prefixlen - b->prefixlen;
}

static inline void cnf_sort(struct cnf_addr *a, size_t n)
{
	qsort(a, n, sizeof(*a), cnf_addr_cmp);
}

static inline const char *cnf_str(const struct cnf_addr *a, char *buf,
				  size_t len)
{
	if (!inet_ntop(a->family, a->addr, buf, len))
		snprintf(buf, len, "<family %u>", a->family);
	return buf;
}

/* A dump entry as the ABI promises it: no stray byte anywhere. */
static inline bool cnf_well_formed(const struct cnf_addr *a)
{
	static const uint8_t zero[12];

	if (a->flags != (a->prefixlen ? 0 : CNF_ADDR_F_ALL))
		return false;
	if (a->family == AF_INET)
		return a->prefixlen <= 32 && !memcmp(a->addr + 4, zero, 12);
	return a->family == AF_INET6 && a->prefixlen <= 128;
}

/*
 * Dump the whole of set @set (NULL: the default set) in chunks of @chunk
 * entries.  Returns the number of entries (stored in a malloc'ed *@out) or
 * -errno; -EPROTO when the protocol was broken (DONE early or never, more
 * entries than asked for, a malformed entry).
 */
static inline long cnf_dump_set_all(int fd, const char *set, uint32_t chunk,
				    struct cnf_addr **out)
{
	size_t n = 0, room = 1024;
	struct cnf_addr *all = malloc(room * sizeof(*all));
	struct cnf_addr *buf = malloc((size_t)chunk * sizeof(*buf));
	struct cnf_dump d = { .cursor = 0 };
	long ret = -EPROTO;
	uint32_t i;

	cnf_set_name(d.set, set);
	if (!all || !buf)
		goto out;
	for (;;) {
		memset(buf, 0xa5, (size_t)chunk * sizeof(*buf));
		d.addrs = (uintptr_t)buf;
		d.count = chunk;
		d.flags = 0;
		if (ioctl(fd, CNF_IOC_DUMP, &d)) {
			ret = -errno;
			goto out;
		}
		if (d.count > chunk)
			goto out;
		if (!(d.flags & CNF_DUMP_F_DONE) && d.count != chunk)
			goto out;
		if (d.flags & ~CNF_DUMP_F_DONE)
			goto out;
		for (i = 0; i < d.count; i++) {
			if (!cnf_well_formed(&buf[i]))
				goto out;
			if (n == room) {
				struct cnf_addr *p;

				room *= 2;
				p = realloc(all, room * sizeof(*all));
				if (!p)
					goto out;
				all = p;
			}
			all[n++] = buf[i];
		}
		if (d.flags & CNF_DUMP_F_DONE)
			break;
		if (n > 100000000)	/* never DONE */
			goto out;
	}
	*out = all;
	all = NULL;
	ret = n;
out:
	free(all);
	free(buf);
	return ret;
}

static inline long cnf_dump_all(int fd, uint32_t chunk, struct cnf_addr **out)
{
	return cnf_dump_set_all(fd, NULL, chunk, out);
}

/* Dump set @set sorted; for before/after comparisons.  -errno on failure. */
static inline long cnf_dump_set_sorted(int fd, const char *set,
				       struct cnf_addr **out)
{
	long n = cnf_dump_set_all(fd, set, 64, out);

	if (n >= 0)
		cnf_sort(*out, n);
	return n;
}

static inline long cnf_dump_sorted(int fd, struct cnf_addr **out)
{
	return cnf_dump_set_sorted(fd, NULL, out);
}

static inline bool cnf_same_set(const struct cnf_addr *a, long na,
				const struct cnf_addr *b, long nb)
{
	return na == nb && (!na || !memcmp(a, b, na * sizeof(*a)));
}

/* The module's default memory limit, from its parameter. */
static inline unsigned long long cnf_default_mem_limit(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/module/cuckoo_nf/parameters/mem_limit", "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Back to drop mode and the default limit; 0 or the errno. */
static inline int cnf_reset_config(int fd)
{
	struct cnf_config c = {
		.set = CNF_CONFIG_MODE | CNF_CONFIG_MEM_LIMIT,
		.mode = CNF_MODE_DROP,
		.mem_limit = cnf_default_mem_limit(),
	};

	return cnf_ioc(fd, CNF_IOC_SET_CONFIG, &c);
}

/* Pass an open file to another process over a unix socket (SCM_RIGHTS). */
static inline int cnf_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static inline int cnf_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

#endif /* _CNF_SELFTEST_UTIL_H */
