/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the filter core needs from its environment.  In the kernel these are
 * the kernel's own services; userspace builds get twins with the same
 * semantics from userspace/lib/compat_user.h (jhash with identical values,
 * liburcu for RCU, C11 atomics for the seqcount, calloc for kvzalloc).
 */
#ifndef _CNF_COMPAT_H
#define _CNF_COMPAT_H

#ifdef __KERNEL__
#include <asm/byteorder.h>
#include <linux/bitops.h>
#include <linux/bottom_half.h>
#include <linux/errno.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/prefetch.h>
#include <linux/preempt.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <linux/vmalloc.h>

#define cnf_mutex		mutex
#define cnf_mutex_init(m)	mutex_init(m)
#define cnf_mutex_destroy(m)	mutex_destroy(m)
#define cnf_mutex_lock(m)	mutex_lock(m)
#define cnf_mutex_lock_nested(m) mutex_lock_nested(m, SINGLE_DEPTH_NESTING)
#define cnf_mutex_lock_killable(m) mutex_lock_killable(m)
#define cnf_mutex_unlock(m)	mutex_unlock(m)
#define cnf_assert_held(m)	lockdep_assert_held(m)

/*
 * Memory for tables, charged to the caller's memory cgroup.  A table that
 * does not fit fails the change that wanted it (-ENOMEM), with no warning
 * and no OOM kill on its behalf.  kvmalloc() serves what kmalloc() can, up
 * to 4 MB, in a power of two of pages: sizes it would round up by a page
 * or more (tables of 24-byte buckets: three times a power of two of bytes)
 * go to vmalloc(), which takes whole pages instead.
 */
#define CNF_GFP		(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

static inline void *cnf_zalloc(size_t size)
{
	/* What kmalloc() would round up by a page or more. */
	if (PAGE_ALIGN(size) < roundup_pow_of_two(size))
		return __vmalloc(size, CNF_GFP | __GFP_ZERO);
	return kvzalloc(size, CNF_GFP);
}

#define cnf_free(p)		kvfree(p)
#define cnf_call_rcu(head, fn)	call_rcu(head, fn)
#else
#include "compat_user.h"
#endif

#endif /* _CNF_COMPAT_H */
