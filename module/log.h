/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drop log: the hooks hand a packet they drop for a logging set
 * (CNF_SET_F_LOG, CNF_SET_F_NFLOG) to the kernel's packet logger, as
 * iptables' LOG and NFLOG targets do, under a rate limit per namespace
 * that decides before anything is formatted.
 */
#ifndef _CNF_LOG_H
#define _CNF_LOG_H

#include <linux/atomic.h>
#include "types.h"

struct cnf_state;
struct nf_hook_state;
struct sk_buff;

/*
 * A set's logging, one word that a packet reads whole (struct cnf_set.log):
 * its CNF_SET_F_LOG or CNF_SET_F_NFLOG flag shifted by CNF_LOG_SHIFT, and
 * the NFLOG group in the bits below.  0: the set does not log.
 */
#define CNF_LOG_SHIFT		16
#define CNF_LOG_GROUP_MASK	0xffffU

static inline u32 cnf_log_flags(u32 log)
{
	return log >> CNF_LOG_SHIFT;
}

static inline u32 cnf_log_group(u32 log)
{
	return log & CNF_LOG_GROUP_MASK;
}

/*
 * The namespace's rate limit on log lines: a token bucket kept as the
 * generic cell rate algorithm does, in one word, so that packets on every
 * CPU share it without a lock.
 * @tat:  the time (ktime_get_mono_fast_ns()) by which the lines let
 *        through so far would have been paid for at the rate; a line is
 *        let through while @tat is at most the burst's worth of lines
 *        ahead of now, and moves it on by one line's worth (cmpxchg).
 * @conf: the rate (lines a second) in the high 32 bits, the burst in the
 *        low ones, one word so that a packet reads both as set together;
 *        written under cnf_net_lock() (WRITE_ONCE), read by packets.
 */
struct cnf_log_limit {
	atomic64_t tat;
	u64 conf;
};

void cnf_log_limit_init(struct cnf_log_limit *l);
void cnf_log_limit_set(struct cnf_log_limit *l, u32 rate, u32 burst);
void cnf_log_limit_get(const struct cnf_log_limit *l, u32 *rate, u32 *burst);
int cnf_log_setting(u32 flags, u32 group, u32 *log);
int cnf_log_get(u32 log);
void cnf_log_put(u32 log);
void cnf_log_drop(struct cnf_state *cs, const struct sk_buff *skb,
		  const struct nf_hook_state *state, enum cnf_family fam,
		  const void *saddr);

#endif /* _CNF_LOG_H */
