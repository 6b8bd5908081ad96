/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entries with a timeout, and the namespace's work that removes them.
 *
 * A timeout is not kept in the cuckoo tables: packets never look at it.
 * A set keeps its timed entries in two rbtrees of its own, one by key (to
 * find an entry's timeout when it is refreshed, deleted or listed), one by
 * deadline (to find what runs out next).  A set without timed entries
 * has two empty roots and costs nothing else.  One delayed work per
 * namespace, queued for the earliest deadline of any set, removes what ran
 * out through the same changes as a delete (sets.h), a bounded number at
 * a time.
 */
#ifndef _CNF_EXPIRY_H
#define _CNF_EXPIRY_H

#include <linux/rbtree.h>
#include <linux/workqueue.h>

#include "filter.h"

struct cnf_state;
struct net;

/*
 * A set's timed entries (struct cnf_timed, private to expiry.c), under
 * cnf_net_lock().  Packets never read them.
 */
struct cnf_timeouts {
	struct rb_root by_key;
	struct rb_root_cached by_deadline;
	u64 n;
};

/*
 * A namespace's expiry.  Everything but @work is read and written under
 * cnf_net_lock(); @work takes that lock itself, with a trylock, so that a
 * holder of the lock may wait for it (cnf_expiry_stop()).
 * @due:     get_jiffies_64() the work is queued for; 0 when it is not.
 * @expired, @late, @max_late_ms: see struct cnf_expiry_stats.
 */
struct cnf_expiry {
	struct delayed_work work;
	struct net *net;
	u64 due;
	u64 expired;
	u64 late;
	u32 max_late_ms;
};

int cnf_expiry_cache_init(void);
void cnf_expiry_cache_exit(void);

void cnf_expiry_init(struct cnf_expiry *e, struct net *net);
void cnf_expiry_stop(struct cnf_expiry *e);
void cnf_expiry_arm(struct cnf_state *st);

int cnf_timeout_set(struct cnf_state *st, struct cnf_timeouts *t,
		    const struct cnf_key *key, u32 seconds);
int cnf_timeout_stage(struct cnf_timeouts *t, struct cnf_budget *b,
		      const struct cnf_key *key, u32 seconds);
u64 cnf_timeout_deadline(const struct cnf_timeouts *t,
			 const struct cnf_key *key);
u32 cnf_timeout_left(u64 deadline);
void cnf_timeouts_clear(struct cnf_timeouts *t, struct cnf_budget *b);
u64 cnf_timeouts_bytes(const struct cnf_timeouts *t);

#endif /* _CNF_EXPIRY_H */
