// SPDX-License-Identifier: GPL-2.0
/*
 * The drop log (log.h).  Only the netfilter hooks log: they have the skb
 * and the hook a logger wants; the XDP and tc kfuncs count their drops,
 * and the cuckoo_nf:drop tracepoint shows them.
 */
#include "cnf.h"
#include "verdict.h"

#include <linux/kernel.h>
#include <linux/kmod.h>
#include <linux/netfilter.h>
#include <linux/printk.h>
#include <linux/timekeeping.h>
#include <net/netfilter/nf_log.h>

static const u8 cnf_log_pfs[] = { NFPROTO_IPV4, NFPROTO_IPV6 };

/**
 * cnf_log_limit_init - the default rate limit, the bucket full
 * @l: the namespace's limit, not yet seen by packets
 */
void cnf_log_limit_init(struct cnf_log_limit *l)
{
	atomic64_set(&l->tat, 0);
	l->conf = (u64)CNF_LOG_RATE_DEFAULT << 32 | CNF_LOG_BURST_DEFAULT;
}

/**
 * cnf_log_limit_set - change the rate limit
 * @l: the namespace's limit, under cnf_net_lock()
 * @rate: lines a second, 1 to %CNF_LOG_RATE_MAX (checked by the caller)
 * @burst: lines at once, 1 to %CNF_LOG_BURST_MAX
 *
 * The bucket is left as it is: a packet reads the new rate and burst
 * together, and the next lines are paid for at the new rate.
 */
void cnf_log_limit_set(struct cnf_log_limit *l, u32 rate, u32 burst)
{
	WRITE_ONCE(l->conf, (u64)rate << 32 | burst);
}

/**
 * cnf_log_limit_get - the rate limit as set
 * @l: the namespace's limit, under cnf_net_lock()
 * @rate: out: lines a second
 * @burst: out: lines at once
 */
void cnf_log_limit_get(const struct cnf_log_limit *l, u32 *rate, u32 *burst)
{
	*rate = upper_32_bits(l->conf);
	*burst = lower_32_bits(l->conf);
}

/*
 * Whether one more line fits the limit; takes it if so.  Lockless: a
 * packet that loses the race for @tat tries again with what the winner
 * wrote.  A line costs NSEC_PER_SEC / rate of credit; the bucket holds
 * burst lines' worth.  Decided before anything is formatted.
 */
static bool cnf_log_allowed(struct cnf_log_limit *l)
{
	u64 conf = READ_ONCE(l->conf);
	u64 cost = NSEC_PER_SEC / upper_32_bits(conf);
	u64 room = cost * (lower_32_bits(conf) - 1);
	u64 now = ktime_get_mono_fast_ns();
	s64 tat = atomic64_read(&l->tat);
	u64 from;

	do {
		from = max_t(u64, tat, now);
		if (from - now > room)
			return false;
	} while (!atomic64_try_cmpxchg(&l->tat, &tat, from + cost));
	return true;
}

/**
 * cnf_log_setting - a set's logging word from what the caller asked
 * @flags: %CNF_SET_F_LOG, %CNF_SET_F_NFLOG or neither, and nothing else
 * @group: the NFLOG group with %CNF_SET_F_NFLOG, else 0
 * @log: out: the word (struct cnf_set.log)
 *
 * Return: 0, or -EINVAL for both flags, a group past 65535 or one without
 * %CNF_SET_F_NFLOG.
 */
int cnf_log_setting(u32 flags, u32 group, u32 *log)
{
	if (flags & ~(CNF_SET_F_LOG | CNF_SET_F_NFLOG) ||
	    flags == (CNF_SET_F_LOG | CNF_SET_F_NFLOG) ||
	    group > CNF_LOG_GROUP_MASK ||
	    (group && !(flags & CNF_SET_F_NFLOG)))
		return -EINVAL;
	*log = flags ? flags << CNF_LOG_SHIFT | group : 0;
	return 0;
}

static enum nf_log_type cnf_log_type(u32 log)
{
	return cnf_log_flags(log) & CNF_SET_F_NFLOG ? NF_LOG_TYPE_ULOG :
						      NF_LOG_TYPE_LOG;
}

/*
 * Hold the logger of @type for @pf, loading its module first when none is
 * registered, by the alias every logger module has (nf-logger-PF-TYPE):
 * some kernels' nf_logger_find_get() loads none itself.
 */
static int cnf_logger_get(u8 pf, enum nf_log_type type)
{
	int err = nf_logger_find_get(pf, type);

	if (err != -ENOENT)
		return err;
	request_module("nf-logger-%u-%u", pf, type);
	return nf_logger_find_get(pf, type);
}

/**
 * cnf_log_get - hold the loggers a setting logs to, for both families
 * @log: a set's logging word; 0 holds nothing
 *
 * Loads the logger's module when none is there (nf_log_syslog for the
 * kernel log, nfnetlink_log for NFLOG), as iptables' LOG and NFLOG
 * targets do: may sleep, so before cnf_net_lock().
 *
 * Return: 0, or -ENOENT when the kernel has no such logger.
 */
int cnf_log_get(u32 log)
{
	int err;

	if (!log)
		return 0;
	err = cnf_logger_get(NFPROTO_IPV4, cnf_log_type(log));
	if (err)
		return err;
	err = cnf_logger_get(NFPROTO_IPV6, cnf_log_type(log));
	if (err)
		nf_logger_put(NFPROTO_IPV4, cnf_log_type(log));
	return err;
}

/**
 * cnf_log_put - let go of what cnf_log_get() held
 * @log: the same word; 0 holds nothing
 */
void cnf_log_put(u32 log)
{
	unsigned int i;

	if (!log)
		return;
	for (i = 0; i < ARRAY_SIZE(cnf_log_pfs); i++)
		nf_logger_put(cnf_log_pfs[i], cnf_log_type(log));
}

/*
 * The first block set of @p, in creation order, that logs and covers
 * @saddr.  A kind with one non-empty set has it covered: the drop says so.
 */
static const struct cnf_set *cnf_log_set(const struct cnf_plan *p,
					 enum cnf_family fam,
					 const void *saddr, u32 *log)
{
	unsigned int i, n = p->n[CNF_SET_BLOCK];

	for (i = 0; i < n; i++) {
		*log = READ_ONCE(p->set[i].set->log);
		if (*log && (n == 1 || cnf_probe(p->set[i].filter, fam, saddr)))
			return p->set[i].set;
	}
	return NULL;
}

static void cnf_log_count(struct cnf_state *cs, bool logged)
{
	bool bh = cnf_stats_begin();
	struct cnf_pcpu_stats *st = this_cpu_ptr(cs->stats);

	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(logged ? &st->logged : &st->log_suppressed);
	u64_stats_update_end(&st->syncp);
	cnf_stats_end(bh);
}

/**
 * cnf_log_drop - log a packet the hooks drop, when a set that logs is why
 * @cs: the namespace's state, under the RCU read lock netfilter holds
 * @skb: the packet
 * @state: the hook's
 * @fam: @saddr's family
 * @saddr: the packet's source
 *
 * Called only when the plan says a block set logs.  A drop past the
 * namespace's rate limit is counted as suppressed and formats nothing.
 */
void cnf_log_drop(struct cnf_state *cs, const struct sk_buff *skb,
		  const struct nf_hook_state *state, enum cnf_family fam,
		  const void *saddr)
{
	const struct cnf_plan *p = rcu_dereference(cs->sets.plan);
	const struct cnf_set *set;
	struct nf_loginfo li = { };
	u32 log = 0;

	set = cnf_log_set(p, fam, saddr, &log);
	if (!set)
		return;
	if (!cnf_log_allowed(&cs->log)) {
		cnf_log_count(cs, false);
		return;
	}
	cnf_log_count(cs, true);
	li.type = cnf_log_type(log);
	if (li.type == NF_LOG_TYPE_ULOG) {
		li.u.ulog.group = cnf_log_group(log);
		li.u.ulog.qthreshold = 1;
	} else {
		li.u.log.level = LOGLEVEL_WARNING;
	}
	nf_log_packet(state->net, state->pf, state->hook, skb, state->in,
		      state->out, &li, KBUILD_MODNAME " %s: ", set->name);
}
