// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/cuckoo_nf: the control device (ABI in uapi/linux/cuckoo_nf.h).
 *
 * An open file is bound to the opener's network namespace, which it keeps
 * alive like a socket does; every call needs CAP_NET_ADMIN over that
 * namespace.  Opening creates nothing.  Adds and settings create the
 * namespace's state when it has none (cnf_state_activate()); reads,
 * deletes and flush of a namespace without state answer as for an empty
 * filter and create nothing; a reset frees it.  Every use of the state
 * takes the namespace's own lock (cnf_net_lock()), killably, then the
 * filter's writer lock, and never while reading or writing user memory: a
 * stalled user buffer stalls only its own call.  A batch takes the locks
 * once per chunk; a union's mend after a flush, destroy or replace once
 * per step (cnf_mend_run()); a dump takes its snapshot a step at a time
 * (cnf_dump_snapshot()), which it then reads out.  The packet path takes
 * neither.
 */
#include "cnf.h"

#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/sched/signal.h>
#include <linux/socket.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <net/ipv6.h>

/* Addresses copied from or to userspace per step of a batch or dump. */
#define CNF_CHUNK	256

/*
 * A batch's step: CNF_CHUNK entries as copied in, each then replaced by
 * its key, and their timeouts.  One buffer for entries and keys: a second
 * would be one more 8 KB slab object, which the slab keeps after the
 * batch, and which a small load's memory figure would count.
 */
union cnf_chunk_entry {
	struct cnf_addr addr;	/* as copied in: an array of them */
	struct cnf_key key;	/* once converted */
};

struct cnf_chunk {
	union cnf_chunk_entry *e;
	u32 *secs;
};

/* The entries are copied in as the array of struct cnf_addr they are. */
static_assert(sizeof(union cnf_chunk_entry) == sizeof(struct cnf_addr));

/*
 * One family's entries of a dump snapshot, in the order they were taken.
 * @addr:     @cap addresses of @size bytes, @n of them taken.
 * @len:      their prefix lengths.
 * @deadline: their deadlines (cnf_timeout_deadline()); NULL while none
 *            of them has one.
 */
struct cnf_dump_fam {
	void *addr;
	u8 *len;
	u64 *deadline;
	u32 n, cap;
	u32 size;
};

/*
 * An open file.  @net is fixed at open.  The dump snapshot (@dump_*) is
 * used under @dump_lock: a cursor is only valid on the file that made it.
 * Its memory is charged to the budget of the state whose cnf_state.gen is
 * @dump_gen; a reset frees that budget, charge and all, and the snapshot
 * then has nothing to uncharge.
 * @dump_again: the snapshot, while it is taken, may hold an entry twice.
 */
struct cnf_file {
	struct net *net;
	struct mutex dump_lock;	/* guards the dump_* fields */
	u32 dump_id;		/* 0: no snapshot */
	struct cnf_dump_fam dump[CNF_NFAMILIES];
	u64 dump_charged;
	u64 dump_gen;
	bool dump_again;
};

static atomic_t cnf_dump_ids = ATOMIC_INIT(0);

/*
 * Take cnf_net_lock() and find the state: made now when @create, else NULL
 * for a namespace without one.  *@created says whether this call made it.
 */
static struct cnf_state *cnf_lock_state(struct cnf_file *cf, bool create,
					bool *created)
{
	struct mutex *lock = cnf_net_lock(cf->net);
	struct cnf_state *st;
	int err;

	*created = false;
	err = mutex_lock_killable(lock);
	if (err)
		return ERR_PTR(err);
	if (!create)
		return cnf_state_locked(cf->net);
	st = cnf_state_activate(cf->net, created);
	if (IS_ERR(st))
		mutex_unlock(lock);
	return st;
}

/*
 * Drop cnf_net_lock().  A state this call made for a change that failed
 * before anything was added goes again: a refused first add leaves the
 * namespace as unconfigured as it found it.
 */
static void cnf_unlock_state(struct cnf_file *cf, struct cnf_state *st,
			     bool created, bool undo)
{
	bool empty = false;

	if (created && undo)
		empty = cnf_sets_pristine(&st->sets);
	if (empty)
		cnf_state_reset(cf->net);
	mutex_unlock(cnf_net_lock(cf->net));
}

/*
 * Is the namespace's expiry work due, and so perhaps failing to take
 * cnf_net_lock(), which it only tries?  Under that lock.
 */
static bool cnf_expiry_due(const struct net *net)
{
	struct cnf_state *st = cnf_state_locked(net);

	return st && st->expiry.due &&
	       time_after_eq64(get_jiffies_64(), st->expiry.due);
}

/*
 * Between two holds of cnf_net_lock() by a call that takes it many times.
 * The expiry work does not wait for the lock, it tries again every few
 * milliseconds, and would seldom find it free if it were free only between
 * two holds: while it is @due, leave the lock free as long as the last
 * hold took, @held_ns.  Else for 50 us at least: another caller spinning
 * on the mutex while its owner runs (optimistic spinning) waits for the
 * owner to change, and would not see it let go of the lock and take it
 * again at once; it would spin on until the owner slept (measured: 0.8 s
 * under TCG while expiry was due once a second).
 */
static void cnf_lock_pause(bool due, u64 held_ns)
{
	u64 us = 50;

	if (due)
		us = clamp_t(u64, held_ns / NSEC_PER_USEC, us, 10000);
	usleep_range(us, 2 * us);
}

/*
 * Once a change of a set let go of cnf_net_lock(): free what it retired
 * (sets.h, struct cnf_retired), after a grace period, and mend the union
 * it left to mend (sets.h): the old union's prefixes taken out without
 * the lock, then put in the new union CNF_MEND_STEP at a time under it,
 * which the namespace's other calls, waiting for it, get in between (a
 * mutex hands itself to a waiter that lost it once); what the mend's end
 * retires is freed after it.  Unkillable, as the change was: until the
 * mend is done the kind's packets probe its sets one by one.
 */
static void cnf_mend_run(struct cnf_file *cf, struct cnf_mend *m)
{
	struct mutex *lock = cnf_net_lock(cf->net);
	bool done, due;
	u64 held;

	cnf_retired_free(&m->retired);
	if (!cnf_mend_pending(m))
		return;
	cnf_mend_take(m);
	for (;;) {
		mutex_lock(lock);
		held = ktime_get_ns();
		done = cnf_mend_step(m);
		held = ktime_get_ns() - held;
		due = cnf_expiry_due(cf->net);
		mutex_unlock(lock);
		if (done)
			break;
		cnf_lock_pause(due, held);
	}
	cnf_retired_free(&m->retired);
	cnf_mend_release(m);
}

/*
 * A set's name from userspace, NUL-padded: "" (the default set) or 1 to
 * CNF_SET_NAME_LEN - 1 bytes of [A-Za-z0-9_.-].
 */
static int cnf_set_name(const char *raw, char *name)
{
	size_t len = strnlen(raw, CNF_SET_NAME_LEN), i;

	if (len == CNF_SET_NAME_LEN ||
	    memchr_inv(raw + len, 0, CNF_SET_NAME_LEN - len))
		return -EINVAL;
	/* ASCII only: the kernel's isalnum() takes Latin-1 letters too. */
	for (i = 0; i < len; i++)
		if (!isascii(raw[i]) ||
		    (!isalnum(raw[i]) && !strchr("_.-", raw[i])))
			return -EINVAL;
	memcpy(name, raw, CNF_SET_NAME_LEN);
	return 0;
}

static bool cnf_names_default(const char *name)
{
	return !*name || !strcmp(name, CNF_SET_DEFAULT);
}

/*
 * cnf_lock_state(), and find the set named @name.  A namespace without
 * state has an empty default set and no other: *@set is then NULL.  A set
 * that does not exist: ERR_PTR(-ENXIO), unlocked.
 */
static struct cnf_state *cnf_lock_set(struct cnf_file *cf, const char *name,
				      bool create, bool *created,
				      struct cnf_set **set)
{
	struct cnf_state *st = cnf_lock_state(cf, create, created);

	*set = NULL;
	if (IS_ERR(st))
		return st;
	if (st)
		*set = cnf_set_find(&st->sets, name);
	if (*set || (!st && cnf_names_default(name)))
		return st;
	cnf_unlock_state(cf, st, *created, true);
	return ERR_PTR(-ENXIO);
}

/* ---- addresses ---- */

/* Are bytes 4 to 15 of an IPv4 entry's address zero, as they must be? */
static bool cnf_v4_tail_zero(const struct cnf_addr *a)
{
	u32 w[3];

	/* Words, not memchr_inv(): this is once per entry of every batch. */
	memcpy(w, a->addr + 4, sizeof(w));
	return !(w[0] | w[1] | w[2]);
}

/*
 * A prefix from userspace.  Its bits past @prefixlen are left to the filter
 * to check (-EINVAL).
 */
static int cnf_addr_to_key(const struct cnf_addr *a, struct cnf_key *key)
{
	bool all = a->flags & CNF_ADDR_F_ALL;

	/* A /0 only when the caller says so, and the flag says only that. */
	if ((a->flags & ~CNF_ADDR_F_ALL) || all != !a->prefixlen)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	key->len = a->prefixlen;
	switch (a->family) {
	case AF_INET:
		if (a->prefixlen > 32 || !cnf_v4_tail_zero(a))
			return -EINVAL;
		key->family = CNF_V4;
		memcpy(&key->v4, a->addr, sizeof(key->v4));
		return 0;
	case AF_INET6:
		if (a->prefixlen > 128)
			return -EINVAL;
		key->family = CNF_V6;
		memcpy(&key->v6, a->addr, sizeof(key->v6));
		/* IPv4 packets never carry them: IPv4 prefixes are meant. */
		if (a->prefixlen >= 96 && ipv6_addr_v4mapped(&key->v6))
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

static void cnf_key_to_addr(const struct cnf_key *key, struct cnf_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->prefixlen = key->len;
	a->flags = key->len ? 0 : CNF_ADDR_F_ALL;
	if (key->family == CNF_V4) {
		a->family = AF_INET;
		memcpy(a->addr, &key->v4, sizeof(key->v4));
	} else {
		a->family = AF_INET6;
		memcpy(a->addr, &key->v6, sizeof(key->v6));
	}
}

/*
 * A struct cnf_entry (or the struct cnf_addr of callers from before sets),
 * its flags among @flags; a timeout only with %CNF_ENTRY_F_TIMEOUT.
 */
static int cnf_get_entry(const void __user *uarg, size_t usize,
			 struct cnf_entry *e, struct cnf_key *key, u32 flags)
{
	int err;

	err = copy_struct_from_user(e, sizeof(*e), uarg, usize);
	if (err)
		return err;
	if ((e->flags & ~flags) ||
	    (e->timeout && !(e->flags & CNF_ENTRY_F_TIMEOUT)))
		return -EINVAL;
	err = cnf_set_name(e->set, e->set);
	return err ?: cnf_addr_to_key(&e->addr, key);
}

/*
 * Add @key, with a timeout of @seconds (0: none), in a change of a set.
 * A stored @key gets -EEXIST, and with @refresh also the timeout anew.
 */
static int cnf_entry_add(struct cnf_state *st, struct cnf_change *c,
			 const struct cnf_key *key, u32 seconds, bool refresh)
{
	struct cnf_timeouts *t = &c->set->timeouts;
	int err = cnf_change_add(c, key);

	if (err == -EEXIST && refresh)
		return cnf_timeout_set(st, t, key, seconds) ?: -EEXIST;
	if (err || !seconds)
		return err;
	err = cnf_timeout_set(st, t, key, seconds);
	if (err)
		WARN_ON_ONCE(cnf_change_del(c, key));
	return err;
}

/* Delete @key, and its timeout, in a change of a set. */
static int cnf_entry_del(struct cnf_state *st, struct cnf_change *c,
			 const struct cnf_key *key)
{
	int err = cnf_change_del(c, key);

	if (!err)
		cnf_timeout_set(st, &c->set->timeouts, key, 0);
	return err;
}

/* ---- one address ---- */

/*
 * Whether a change that failed with @err asked for a union made aside
 * (struct cnf_aside): then made, without cnf_net_lock(), and true when
 * the change is to be tried again.  *@err is what fails the call if not.
 */
static bool cnf_aside_again(struct cnf_aside *a, int *err)
{
	if (*err != -EAGAIN || !a->wanted)
		return false;
	*err = cnf_aside_make(a);
	return !*err;
}

/* An add or delete of @key, once; -EAGAIN with @m->aside wanted: again. */
static int cnf_change_once(struct cnf_file *cf, const struct cnf_entry *e,
			   const struct cnf_key *key, bool add,
			   struct cnf_mend *m)
{
	struct cnf_change c;
	struct cnf_state *st;
	struct cnf_set *set;
	bool created;
	int err;

	st = cnf_lock_set(cf, e->set, add, &created, &set);
	if (IS_ERR(st))
		return PTR_ERR(st);
	err = -ENOENT;
	if (set)
		err = cnf_change_begin(&c, &st->sets, set, add, m);
	if (set && !err) {
		if (add)
			err = cnf_entry_add(st, &c, key,
					    e->flags & CNF_ENTRY_F_TIMEOUT ?
					    e->timeout : set->timeout,
					    e->flags & CNF_ENTRY_F_EXIST);
		else
			err = cnf_entry_del(st, &c, key);
		cnf_change_end(&c);
	}
	/* -exist: a stored entry is no error; it has its new timeout. */
	if (err == -EEXIST && (e->flags & CNF_ENTRY_F_EXIST))
		err = 0;
	cnf_unlock_state(cf, st, created, err);
	cnf_mend_run(cf, m);
	return err;
}

/* An add creates the state; a delete from a namespace without one fails. */
static long cnf_ioc_change(struct cnf_file *cf, const void __user *uarg,
			   size_t usize, bool add)
{
	const u32 flags = CNF_ENTRY_F_TIMEOUT | CNF_ENTRY_F_EXIST;
	struct cnf_aside aside = { };
	struct cnf_entry e;
	struct cnf_key key;
	struct cnf_mend m;
	int err;

	err = cnf_get_entry(uarg, usize, &e, &key, add ? flags : 0);
	if (err)
		return err;
	do {
		cnf_mend_init(&m);
		m.aside = &aside;
		err = cnf_change_once(cf, &e, &key, add, &m);
	} while (cnf_aside_again(&aside, &err));
	cnf_aside_free(&aside);
	return err;
}

static long cnf_ioc_add(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	return cnf_ioc_change(cf, uarg, usize, true);
}

static long cnf_ioc_del(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	return cnf_ioc_change(cf, uarg, usize, false);
}

/*
 * TEST, and with @match MATCH: is the prefix covered, and by which, for
 * how long.
 */
static long cnf_ioc_lookup(struct cnf_file *cf, void __user *uarg,
			   size_t usize, bool match)
{
	struct cnf_key key, found;
	struct cnf_state *st;
	struct cnf_set *set;
	struct cnf_entry e;
	u64 deadline = 0;
	bool created;
	int err;

	err = cnf_get_entry(uarg, usize, &e, &key, 0);
	if (err)
		return err;
	st = cnf_lock_set(cf, e.set, false, &created, &set);
	if (IS_ERR(st))
		return PTR_ERR(st);
	err = -ENOENT;
	if (set) {
		cnf_filter_lock(set->filter);
		err = cnf_filter_match(set->filter, &key, &found);
		cnf_filter_unlock(set->filter);
	}
	if (!err)
		deadline = cnf_timeout_deadline(&set->timeouts, &found);
	cnf_unlock_state(cf, st, created, false);
	if (err || !match)
		return err;
	cnf_key_to_addr(&found, &e.addr);
	e.timeout = cnf_timeout_left(deadline);
	/* The set's name stays as the caller gave it. */
	if (copy_to_user(uarg, &e.addr, sizeof(e.addr)) ||
	    (usize >= offsetofend(struct cnf_entry, flags) &&
	     copy_to_user(uarg + offsetof(struct cnf_entry, timeout),
			  &e.timeout, sizeof(e.timeout) + sizeof(e.flags))))
		return -EFAULT;
	return 0;
}

static long cnf_ioc_test(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	return cnf_ioc_lookup(cf, uarg, usize, false);
}

static long cnf_ioc_match(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	return cnf_ioc_lookup(cf, uarg, usize, true);
}

/* ---- batches ---- */

/* Count an entry's outcome: -EEXIST/-ENOENT are skips under EXIST_OK. */
static int cnf_batch_count(struct cnf_batch *b, int err, bool add)
{
	if (!err) {
		b->applied++;
		return 0;
	}
	if ((b->flags & CNF_BATCH_F_EXIST_OK) &&
	    err == (add ? -EEXIST : -ENOENT)) {
		b->skipped++;
		return 0;
	}
	return err;
}

/*
 * Copy what can be copied of @n elements of @size bytes; returns how many
 * were.
 */
static u32 cnf_copy_in(void *buf, const void __user *src, u32 n, size_t size)
{
	u32 i;

	if (!copy_from_user(buf, src, n * size))
		return n;
	/* Some element faulted: find the first one, for the report. */
	for (i = 0; i < n; i++)
		if (copy_from_user(buf + i * size, src + i * size, size))
			break;
	return i;
}

/*
 * A batch's entries [@from, @from + @n) and their timeouts, if it has
 * them, into @addrs and @secs; returns how many could be copied.
 */
static u32 cnf_batch_copy_in(const struct cnf_batch *b, u32 from, u32 n,
			     struct cnf_addr *addrs, u32 *secs)
{
	const struct cnf_addr __user *ua = u64_to_user_ptr(b->addrs);
	const u32 __user *us = u64_to_user_ptr(b->timeouts);

	n = cnf_copy_in(addrs, ua + from, n, sizeof(*addrs));
	if (b->timeouts)
		n = cnf_copy_in(secs, us + from, n, sizeof(*secs));
	return n;
}

/*
 * Apply one entry, with @seconds its timeout (NULL: the set's default);
 * -EEXIST/-ENOENT become "skipped" under EXIST_OK, which also gives a
 * stored entry its timeout anew.  A delete without a set (@c NULL: no
 * state) finds nothing.
 */
static int cnf_batch_one(struct cnf_state *st, struct cnf_change *c,
			 struct cnf_batch *b, const struct cnf_key *key,
			 const u32 *seconds, bool add)
{
	int err;

	if (!c)
		err = -ENOENT;
	else if (add)
		err = cnf_entry_add(st, c, key,
				    seconds ? *seconds : c->set->timeout,
				    b->flags & CNF_BATCH_F_EXIST_OK);
	else
		err = cnf_entry_del(st, c, key);
	return cnf_batch_count(b, err, add);
}

/*
 * Replace each of @n entries by its key, once for their prefetch and their
 * change; returns how many lead valid (the next one, if any, is not).
 */
static u32 cnf_chunk_keys(struct cnf_chunk *ck, u32 n)
{
	struct cnf_addr a;
	u32 i;

	for (i = 0; i < n; i++) {
		a = ck->e[i].addr;
		if (cnf_addr_to_key(&a, &ck->e[i].key))
			break;
	}
	return i;
}

static void cnf_tally_addrs(struct cnf_tally *tally, const struct cnf_addr *a,
			    u32 n)
{
	struct cnf_key key;
	u32 i;

	for (i = 0; i < n; i++)
		if (!cnf_addr_to_key(&a[i], &key))
			cnf_tally_add(tally, &key);
}

/*
 * The keys an add batch brings to each lookup table, read ahead of its
 * adds a chunk at a time, without the locks.  NULL when memory is short:
 * the tables then grow as the adds need, as they do for a batch whose
 * entries cannot be read now (it fails when they are copied in again).
 */
static struct cnf_tally *cnf_batch_tally(const struct cnf_batch *b,
					 struct cnf_addr *buf)
{
	const struct cnf_addr __user *ua = u64_to_user_ptr(b->addrs);
	struct cnf_tally *tally;
	u32 from, got;

	tally = kzalloc(sizeof(*tally), GFP_KERNEL);
	if (!tally)
		return NULL;
	for (from = 0; from < b->count; from += got) {
		got = cnf_copy_in(buf, ua + from,
				  min_t(u32, b->count - from, CNF_CHUNK),
				  sizeof(*buf));
		cnf_tally_addrs(tally, buf, got);
		if (!got || fatal_signal_pending(current))
			break;
		cond_resched();
	}
	return tally;
}

/*
 * The next chunk of a batch: copied in without the locks, applied under
 * them.  The state is looked up again for every chunk: a reset between two
 * chunks is seen, and an add then makes a new one.  Adds announce how many
 * entries are left, so that growth sizes for them, and size the tables
 * for the keys of the whole batch (@tally, if not NULL).
 */
static int cnf_batch_chunk(struct cnf_file *cf, struct cnf_batch *b,
			   struct cnf_chunk *ck, bool add,
			   const struct cnf_tally *tally, struct cnf_mend *m)
{
	u32 want = min_t(u32, b->count - b->done, CNF_CHUNK);
	struct cnf_change change, *c = NULL;
	u32 applied = b->applied;
	struct cnf_state *st;
	struct cnf_set *set;
	u32 got, valid, i;
	bool created;
	int err = 0;

	if (fatal_signal_pending(current))
		return -EINTR;
	got = cnf_batch_copy_in(b, b->done, want, &ck->e->addr, ck->secs);
	valid = cnf_chunk_keys(ck, got);
	/* Nothing to add in this chunk: no reason to make a state for it. */
	st = cnf_lock_set(cf, b->set, add && got, &created, &set);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (set) {
		err = cnf_change_begin(&change, &st->sets, set,
				       add ? b->count - b->done : 0, m);
		c = err ? NULL : &change;
		if (c && add && tally)
			cnf_change_expect_tally(c, tally);
	}
	for (i = 0; i < valid && !err; i++) {
		if (c && i + CNF_PREFETCH_AHEAD < valid)
			cnf_change_prefetch(c,
					    &ck->e[i + CNF_PREFETCH_AHEAD].key);
		err = cnf_batch_one(st, c, b, &ck->e[i].key,
				    b->timeouts ? &ck->secs[i] : NULL, add);
		if (!err)
			b->done++;
	}
	if (!err && valid < got)
		err = -EINVAL;
	if (c)
		cnf_change_end(c);
	cnf_unlock_state(cf, st, created, b->applied == applied);
	if (err)
		return err;
	return got < want ? -EFAULT : 0;
}

/* Entries a replace copies in, or tallies, between two cond_resched(). */
#define CNF_REPLACE_STEP	(64 * 1024)
/*
 * What the contents a replace builds aside may use beyond what the
 * namespace's budget was charged for them, before it is charged the rest.
 */
#define CNF_REPLACE_SLACK	(64 * 1024)

/*
 * What a replace holds of its namespace while it builds the new contents
 * aside, without cnf_net_lock(): the namespace's one staging slot
 * (cnf_net.staging), and @bytes charged to the budget of the state whose
 * cnf_state.gen is @gen; a reset frees that budget, charge and all.
 * @bytes:    the entries copied in, their timeouts, the tally, the new
 *            contents' struct: what the call allocates, but for the
 *            contents' tables and timeouts, which @room bounds.
 * @built:    what the contents built aside use, as charged to that budget
 *            too (cnf_stage_sync()).
 * @room:     the namespace's budget left, once @bytes were charged: the
 *            limit the contents are built within.
 * @capacity: the namespace's initial capacity, of the contents too.
 * @union4, @union6: the prefixes of each family the set's kind's union
 *            held; @has_union: whether the kind had one, which a replace
 *            then mends (sets.h), with a union made aside of the contents,
 *            or other sets of the kind had prefixes, whose first union it
 *            builds from that union made aside.
 * @timeout:  the set's default timeout, of entries given none.
 * @created:  this call made the state; a failed replace undoes it.
 */
struct cnf_stage {
	u64 bytes;
	u64 built;
	u64 gen;
	u64 room;
	u64 capacity;
	u64 union4, union6;
	u32 timeout;
	bool has_union;
	bool created;
};

/*
 * Take the namespace's staging slot, waiting killably for another
 * replace's, and charge the staging to the namespace's budget: -ENOSPC when
 * it does not fit, -ENXIO for a set that does not exist.
 */
static int cnf_stage_begin(struct cnf_file *cf, struct cnf_batch *b,
			   struct cnf_stage *sg)
{
	struct cnf_net *cn = cnf_pernet(cf->net);
	struct cnf_budget *budget;
	struct cnf_state *st;
	struct cnf_set *set;
	int err;

	for (;;) {
		st = cnf_lock_set(cf, b->set, true, &sg->created, &set);
		if (IS_ERR(st))
			return PTR_ERR(st);
		if (!cn->staging)
			break;
		cnf_unlock_state(cf, st, sg->created, true);
		err = wait_var_event_killable(&cn->staging,
					      !READ_ONCE(cn->staging));
		if (err)
			return err;
	}
	budget = &st->sets.budget;
	err = cnf_budget_charge(budget, sg->bytes);
	if (!err) {
		WRITE_ONCE(cn->staging, true);
		sg->gen = st->gen;
		sg->room = budget->limit - cnf_budget_used(budget);
		sg->capacity = st->sets.initial_capacity;
		sg->timeout = set->timeout;
		/* A rules-only set is in no union: none to make aside. */
		sg->has_union = cnf_replace_wants_union(&st->sets, set);
		cnf_union_peek(&st->sets, set->kind, &sg->union4,
			       &sg->union6);
	}
	cnf_unlock_state(cf, st, sg->created, err);
	return err;
}

/*
 * Every entry of a replace, CNF_REPLACE_STEP at a time; b->done is how
 * many could be copied.
 */
static int cnf_replace_copy_in(struct cnf_batch *b, struct cnf_addr *all,
			       u32 *secs)
{
	u32 step, got;

	for (b->done = 0; b->done < b->count; b->done += got) {
		if (fatal_signal_pending(current))
			return -EINTR;
		step = min_t(u32, b->count - b->done, CNF_REPLACE_STEP);
		got = cnf_batch_copy_in(b, b->done, step, all + b->done,
					secs ? secs + b->done : NULL);
		if (got < step) {
			b->done += got;
			return -EFAULT;
		}
		cond_resched();
	}
	return 0;
}

static void cnf_replace_tally(struct cnf_tally *tally,
			      const struct cnf_addr *all, u32 count)
{
	u32 from, step;

	for (from = 0; from < count; from += step) {
		step = min_t(u32, count - from, CNF_REPLACE_STEP);
		cnf_tally_addrs(tally, all + from, step);
		cond_resched();
	}
}

/*
 * Charge the namespace's budget what the contents built aside use now,
 * @used, instead of what it was charged for them before, so that while
 * they are built it holds no more than its limit allows beside them
 * (within CNF_REPLACE_SLACK and one growth of a table).  -ENOSPC when it
 * does not fit.  A state reset meanwhile has no budget left to charge:
 * the contents are checked against the new one when they are published.
 */
static int cnf_stage_sync(struct cnf_file *cf, struct cnf_stage *sg,
			  u64 used)
{
	struct mutex *lock = cnf_net_lock(cf->net);
	struct cnf_budget *budget;
	struct cnf_state *st;
	int err;

	err = mutex_lock_killable(lock);
	if (err)
		return err;
	st = cnf_state_locked(cf->net);
	if (st && st->gen == sg->gen) {
		budget = &st->sets.budget;
		cnf_budget_uncharge(budget, sg->built);
		sg->built = 0;
		err = cnf_budget_charge(budget, used);
		if (!err)
			sg->built = used;
	}
	mutex_unlock(lock);
	return err;
}

/*
 * Build the set's new contents from every entry into @n and @t, aside:
 * without cnf_net_lock(), within @n's budget, which @t is charged to too,
 * and which the namespace's is charged with as it grows.  The entries
 * (@all, and their timeouts @secs, NULL for the set's default) were read
 * in first, so that no lock is held over user memory.
 */
static int cnf_replace_build(struct cnf_file *cf, struct cnf_stage *sg,
			     struct cnf_filter *n,
			     struct cnf_budget *aside, struct cnf_timeouts *t,
			     struct cnf_batch *b, const struct cnf_addr *all,
			     const u32 *secs, struct cnf_tally *tally)
{
	struct cnf_key key;
	int err = 0;
	u64 used;

	cnf_replace_tally(tally, all, b->count);
	cnf_filter_lock(n);
	cnf_filter_expect(n, b->count);
	cnf_filter_expect_tally(n, tally);
	for (b->done = 0; b->done < b->count; b->done++) {
		if (!(b->done % CNF_CHUNK) || b->done == 1) {
			used = cnf_budget_used(aside);
			/* Not under @n's lock: cnf_net_lock() comes first. */
			if (used > sg->built + CNF_REPLACE_SLACK) {
				cnf_filter_unlock(n);
				err = cnf_stage_sync(cf, sg, used);
				cnf_filter_lock(n);
			}
			if (!err && fatal_signal_pending(current))
				err = -EINTR;
			if (err)
				break;
			cond_resched();
		}
		err = cnf_addr_to_key(&all[b->done], &key);
		if (!err)
			err = cnf_filter_add(n, &key);
		/* An entry given twice under EXIST_OK: the last timeout. */
		if (!err || (err == -EEXIST && (b->flags & CNF_BATCH_F_EXIST_OK)))
			err = cnf_timeout_stage(t, aside, &key,
						secs ? secs[b->done] :
						sg->timeout) ?: err;
		err = cnf_batch_count(b, err, true);
		if (err)
			break;
	}
	cnf_filter_expect(n, 0);
	cnf_filter_unlock(n);
	return err;
}

/*
 * Under cnf_net_lock(): put the contents built aside in place, in the set
 * named as the batch says of the namespace's state as it now is.  A set
 * made anew while they were built, with another default timeout that
 * entries without theirs got, refuses them (-EAGAIN).  *@n and *@u (the
 * union made aside, if any) are NULL once they left @aside: in the set
 * and its kind, or freed.  @t then holds timeouts no set has (on success
 * the old contents'), uncharged, which the caller frees without the lock;
 * @m a mend of the kind's union, which the caller runs without it.
 */
static int cnf_replace_publish(struct cnf_file *cf, struct cnf_batch *b,
			       struct cnf_stage *sg, struct cnf_filter **n,
			       struct cnf_filter **u, struct cnf_budget *aside,
			       struct cnf_timeouts *t, struct cnf_mend *m)
{
	struct cnf_budget *budget;
	struct cnf_state *st;
	struct cnf_set *set;
	bool created;
	int err;

	st = cnf_state_activate(cf->net, &created);
	if (IS_ERR(st))
		return PTR_ERR(st);
	sg->created |= created;
	set = cnf_set_find(&st->sets, b->set);
	if (!set)
		return -ENXIO;
	if (!b->timeouts && set->timeout != sg->timeout)
		return -EAGAIN;
	budget = &st->sets.budget;
	err = cnf_budget_merge(budget, aside);
	if (err)
		return err;
	err = cnf_set_replace(&st->sets, set, *n, t, *u, m);
	if (err) {
		/* All freed without the lock, the filters retired first. */
		cnf_budget_uncharge(budget, cnf_timeouts_bytes(t));
		cnf_retire(&st->sets, &m->retired, *n);
		cnf_retire(&st->sets, &m->retired, *u);
	}
	*n = NULL;
	*u = NULL;
	if (!err)
		cnf_expiry_arm(st);
	return err;
}

/*
 * Give back the staging, and publish the contents if @err is 0.  The lock
 * is taken unkillably: the charge must go back.
 */
static int cnf_stage_end(struct cnf_file *cf, struct cnf_batch *b,
			 struct cnf_stage *sg, struct cnf_filter **n,
			 struct cnf_filter **u, struct cnf_budget *aside,
			 struct cnf_timeouts *t, struct cnf_mend *m, int err)
{
	struct cnf_net *cn = cnf_pernet(cf->net);
	struct cnf_state *st;

	mutex_lock(cnf_net_lock(cf->net));
	st = cnf_state_locked(cf->net);
	if (st && st->gen == sg->gen)
		cnf_budget_uncharge(&st->sets.budget, sg->bytes + sg->built);
	else
		sg->created = false;
	WRITE_ONCE(cn->staging, false);
	if (!err)
		err = cnf_replace_publish(cf, b, sg, n, u, aside, t, m);
	st = cnf_state_locked(cf->net);
	if (st)
		cnf_unlock_state(cf, st, sg->created, err);
	else
		mutex_unlock(cnf_net_lock(cf->net));
	/*
	 * Order the slot's release before wake_up_var()'s lockless look at
	 * the waiters, against a waiter's queueing before its look at the
	 * slot (wait_var_event_killable()): one of the two sees the other.
	 */
	smp_mb();
	wake_up_var(&cn->staging);
	return err;
}

/*
 * A replace: the entries copied in, the new contents built from them and
 * their timeouts all aside, without cnf_net_lock(), which is held only to
 * charge the staging and to put the contents in place; so is, when the
 * set's kind has a union or other sets with prefixes, a copy of the
 * contents that becomes the kind's new union, mended (or, the kind's
 * first, built) afterwards in steps (cnf_mend_run()).  The expiry and
 * the other calls of the namespace go on meanwhile.
 */
static int cnf_replace(struct cnf_file *cf, struct cnf_batch *b)
{
	struct cnf_timeouts t = { RB_ROOT, RB_ROOT_CACHED, 0 };
	size_t room = max_t(u32, b->count, 1);
	struct cnf_stage sg = {
		.bytes = room * sizeof(struct cnf_addr) +
			 (b->timeouts ? room * sizeof(u32) : 0) +
			 sizeof(struct cnf_tally) + cnf_filter_size(),
	};
	struct cnf_filter *n = NULL, *u = NULL;
	struct cnf_tally *tally;
	struct cnf_budget aside;
	struct cnf_addr *all;
	struct cnf_mend m;
	u32 *secs = NULL;
	int err;

	cnf_mend_init(&m);
	err = cnf_stage_begin(cf, b, &sg);
	if (err)
		goto out;
	cnf_budget_init(&aside, sg.room);
	err = -ENOMEM;
	all = kvmalloc_array(room, sizeof(*all),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (b->timeouts)
		secs = kvmalloc_array(room, sizeof(*secs),
				      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	tally = kzalloc(sizeof(*tally), GFP_KERNEL_ACCOUNT);
	if (all && (!b->timeouts || secs) && tally)
		err = cnf_replace_copy_in(b, all, secs);
	if (!err) {
		n = cnf_filter_create_in(sg.capacity, &aside);
		if (!n)
			err = -ENOMEM;
		else if (cnf_budget_used(&aside) > aside.limit)
			err = -ENOSPC;
	}
	if (!err)
		err = cnf_replace_build(cf, &sg, n, &aside, &t, b, all, secs,
					tally);
	kfree(tally);
	kvfree(secs);
	kvfree(all);
	if (!err && sg.has_union) {
		u = cnf_union_aside(n, &aside, sg.capacity, sg.union4,
				    sg.union6);
		if (IS_ERR(u)) {
			err = PTR_ERR(u);
			u = NULL;
		}
	}
	err = cnf_stage_end(cf, b, &sg, &n, &u, &aside, &t, &m, err);
	/* Without the lock: what the replace did not put in place. */
	if (u)
		cnf_filter_destroy(u);
	if (n)
		cnf_filter_destroy(n);
	cnf_timeouts_clear(&t, NULL);
	cnf_mend_run(cf, &m);
out:
	if (err) {
		b->applied = 0;
		b->skipped = 0;
	}
	return err;
}

static long cnf_ioc_batch(struct cnf_file *cf, void __user *uarg,
			  size_t usize, bool add)
{
	struct cnf_tally *tally = NULL;
	struct cnf_aside aside = { };
	struct cnf_chunk ck;
	struct cnf_mend m;
	struct cnf_batch b;
	int err;

	err = copy_struct_from_user(&b, sizeof(b), uarg, usize);
	if (err)
		return err;
	if ((b.flags & ~(CNF_BATCH_F_EXIST_OK | CNF_BATCH_F_REPLACE)) ||
	    (!add && ((b.flags & CNF_BATCH_F_REPLACE) || b.timeouts)) ||
	    cnf_set_name(b.set, b.set))
		return -EINVAL;
	if (b.count > CNF_BATCH_MAX)
		return -E2BIG;
	b.applied = 0;
	b.skipped = 0;
	b.done = 0;
	b.error = 0;
	/* Change nothing unless the outcome can be reported. */
	if (copy_to_user(uarg, &b, min(usize, sizeof(b))))
		return -EFAULT;
	if (b.flags & CNF_BATCH_F_REPLACE) {
		b.error = cnf_replace(cf, &b);
		goto out;
	}
	ck.e = kmalloc_array(CNF_CHUNK, sizeof(*ck.e), GFP_KERNEL);
	ck.secs = kmalloc_array(CNF_CHUNK, sizeof(*ck.secs), GFP_KERNEL);
	if (!ck.e || !ck.secs)
		b.error = -ENOMEM;
	else if (add)
		tally = cnf_batch_tally(&b, &ck.e->addr);
	while (b.done < b.count && !b.error) {
		cnf_mend_init(&m);
		m.aside = &aside;
		b.error = cnf_batch_chunk(cf, &b, &ck, add, tally, &m);
		/* A union the chunk began, filled before the next chunk. */
		cnf_mend_run(cf, &m);
		/* Nothing of the chunk applied: it goes again. */
		if (cnf_aside_again(&aside, &b.error))
			b.error = 0;
		cond_resched();
	}
	cnf_aside_free(&aside);
	kfree(tally);
	kfree(ck.secs);
	kfree(ck.e);
out:
	if (copy_to_user(uarg, &b, min(usize, sizeof(b))))
		return -EFAULT;
	return b.error;
}

static long cnf_ioc_add_batch(struct cnf_file *cf, void __user *uarg,
			      size_t usize)
{
	return cnf_ioc_batch(cf, uarg, usize, true);
}

static long cnf_ioc_del_batch(struct cnf_file *cf, void __user *uarg,
			      size_t usize)
{
	return cnf_ioc_batch(cf, uarg, usize, false);
}

/* ---- dump ---- */

/*
 * A dump's snapshot is taken in steps of CNF_DUMP_STEP buckets of the
 * set's tables (cnf_walk_step()), each under cnf_net_lock() and the set's
 * lock, which others take in between: a set of millions of entries is
 * copied a few milliseconds at a time.  The snapshot is then not one
 * moment's set but what the walk promises: every entry the set held from
 * the dump's first call until the snapshot was whole, each once, and no
 * entry the set did not hold while it was taken; one added or deleted
 * meanwhile may be there or not.  Contents replaced or swapped meanwhile
 * are walked anew, which keeps the promise for the set as it then is;
 * after CNF_DUMP_RESTARTS new contents the dump fails with -EAGAIN, so
 * that a loop of replaces cannot keep it going for ever.
 */
#define CNF_DUMP_STEP		1024
#define CNF_DUMP_RESTARTS	4

/* What the snapshot holds in memory: its arrays. */
static u64 cnf_dump_bytes(const struct cnf_file *cf)
{
	const struct cnf_dump_fam *d;
	u64 bytes = 0;

	for (d = cf->dump; d < cf->dump + CNF_NFAMILIES; d++)
		bytes += (u64)d->cap * (d->size + 1 +
					(d->deadline ? sizeof(u64) : 0));
	return bytes;
}

/* Also from release: waits for cnf_net_lock() unkillably. */
static void cnf_dump_free(struct cnf_file *cf)
{
	struct cnf_dump_fam *d;
	struct cnf_state *st;

	if (cf->dump_charged) {
		mutex_lock(cnf_net_lock(cf->net));
		st = cnf_state_locked(cf->net);
		if (st && st->gen == cf->dump_gen)
			cnf_budget_uncharge(&st->sets.budget, cf->dump_charged);
		mutex_unlock(cnf_net_lock(cf->net));
	}
	for (d = cf->dump; d < cf->dump + CNF_NFAMILIES; d++) {
		kvfree(d->addr);
		kvfree(d->len);
		kvfree(d->deadline);
		memset(d, 0, sizeof(*d));
	}
	cf->dump[CNF_V4].size = sizeof(__be32);
	cf->dump[CNF_V6].size = sizeof(struct in6_addr);
	cf->dump_charged = 0;
	cf->dump_gen = 0;
	cf->dump_id = 0;
	cf->dump_again = false;
}

/*
 * Charge the snapshot's @bytes to the budget of @st, under cnf_net_lock():
 * what they grew by since the last charge, or all of them to a state made
 * since (a reset freed the charge with the budget).  -ENOSPC past the
 * memory limit.
 */
static int cnf_dump_charge(struct cnf_file *cf, struct cnf_state *st,
			   u64 bytes)
{
	int err;

	if (st->gen != cf->dump_gen) {
		cf->dump_gen = st->gen;
		cf->dump_charged = 0;
	}
	if (bytes <= cf->dump_charged)
		return 0;
	err = cnf_budget_charge(&st->sets.budget, bytes - cf->dump_charged);
	if (!err)
		cf->dump_charged = bytes;
	return err;
}

/*
 * Room in @d for @more entries, and their deadlines if @deadlines: made
 * anew, a quarter larger at least, without the locks (charged at the next
 * step).  Entries taken before it had deadlines had none.
 */
static int cnf_dump_grow(struct cnf_dump_fam *d, u32 more, bool deadlines)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
	u64 cap = max3((u64)d->cap + d->cap / 4, (u64)d->n + more, 64ULL);
	u64 *dl = NULL;
	void *addr;
	u8 *len;

	deadlines |= !!d->deadline;
	if (cap > U32_MAX)
		return -EOVERFLOW;
	addr = kvmalloc_array(cap, d->size, gfp);
	len = kvmalloc(cap, gfp);
	if (deadlines)
		dl = kvcalloc(cap, sizeof(*dl), gfp);
	if (!addr || !len || (deadlines && !dl)) {
		kvfree(dl);
		kvfree(len);
		kvfree(addr);
		return -ENOMEM;
	}
	memcpy(addr, d->addr, (size_t)d->n * d->size);
	memcpy(len, d->len, d->n);
	if (d->deadline)
		memcpy(dl, d->deadline, (size_t)d->n * sizeof(*dl));
	kvfree(d->addr);
	kvfree(d->len);
	kvfree(d->deadline);
	d->addr = addr;
	d->len = len;
	d->deadline = dl;
	d->cap = cap;
	return 0;
}

/*
 * What a step of the snapshot takes its entries into.
 * @timeouts: the set's, NULL while it has none.
 * @full:     the family that had no room for an entry (-ENOBUFS).
 * @more:     how many entries more it wants room for.
 * @deadlines: and the entry had a deadline its family had no room for.
 */
struct cnf_dump_ctx {
	struct cnf_file *cf;
	const struct cnf_timeouts *timeouts;
	enum cnf_family full;
	u32 more;
	bool deadlines;
};

static int cnf_dump_collect(void *ctx, const struct cnf_key *key)
{
	struct cnf_dump_ctx *c = ctx;
	struct cnf_dump_fam *d = &c->cf->dump[key->family];
	u64 deadline = 0;

	if (c->timeouts)
		deadline = cnf_timeout_deadline(c->timeouts, key);
	if (d->n == d->cap || (deadline && !d->deadline)) {
		c->full = key->family;
		c->more = CNF_DUMP_STEP * CNF_BUCKET_SLOTS;
		c->deadlines = deadline;
		return -ENOBUFS;
	}
	memcpy(d->addr + (size_t)d->n * d->size,
	       key->family == CNF_V4 ? (const void *)&key->v4 : &key->v6,
	       d->size);
	d->len[d->n] = key->len;
	if (d->deadline)
		d->deadline[d->n] = deadline;
	d->n++;
	return 0;
}

/*
 * Room in the snapshot for the entries of @f, under its lock, before its
 * walk begins: -ENOBUFS, and what @c->full lacks, rather than room made
 * step by step.
 */
static int cnf_dump_room(struct cnf_file *cf, struct cnf_filter *f,
			 struct cnf_dump_ctx *c)
{
	const struct cnf_dump_fam *d;
	u64 n;

	for (d = cf->dump; d < cf->dump + CNF_NFAMILIES; d++) {
		c->full = d - cf->dump;
		n = cnf_filter_count(f, c->full);
		if (d->n + n <= d->cap)
			continue;
		/* An eighth more for what is added while it is taken. */
		c->more = min_t(u64, n + n / 8, U32_MAX);
		c->deadlines = false;
		return -ENOBUFS;
	}
	return 0;
}

/*
 * A step of the snapshot of the set named @name, under cnf_net_lock():
 * @w walks its contents, begun anew when they are other ones, *@starts
 * counting them.  A namespace without state has an empty default set.
 * Contents that change so fast that a table of theirs had to be walked
 * again from its start CNF_WALK_REWINDS times end the snapshot with
 * -EAGAIN, as contents replaced too often do: the step after could take a
 * whole table in one hold.
 *
 * Return: 1 when the snapshot is whole; 0 when there is more to take;
 * -ENOBUFS when @c->full needs room; -ENXIO, -EAGAIN, -ENOSPC, -ENOMEM.
 */
static int cnf_dump_step(struct cnf_file *cf, const char *name,
			 struct cnf_walk *w, struct cnf_dump_ctx *c,
			 unsigned int *starts)
{
	struct cnf_state *st = cnf_state_locked(cf->net);
	struct cnf_set *set = st ? cnf_set_find(&st->sets, name) : NULL;
	struct cnf_filter *f, *old = w->f;
	int err;

	if (!set)
		return !st && cnf_names_default(name) ? 1 : -ENXIO;
	err = cnf_dump_charge(cf, st, cnf_dump_bytes(cf));
	if (err)
		return err;
	f = set->filter;
	if (old != f) {
		if (old) {
			cnf_filter_lock(old);
			cnf_walk_end(w);
			cnf_filter_unlock(old);
		}
		if (*starts > CNF_DUMP_RESTARTS)
			return -EAGAIN;
		cnf_filter_lock(f);
		err = cnf_dump_room(cf, f, c) ?: cnf_walk_begin(f, w);
		if (err) {
			cnf_filter_unlock(f);
			return err;
		}
		/* Entries of the contents walked before may come again. */
		cf->dump_again |= (*starts)++ > 0;
	} else {
		cnf_filter_lock(f);
	}
	c->timeouts = set->timeouts.n ? &set->timeouts : NULL;
	/* Its next step may be a whole table, in one hold of the lock. */
	if (cnf_walk_churned(w)) {
		cnf_filter_unlock(f);
		return -EAGAIN;
	}
	err = cnf_walk_step(w, CNF_DUMP_STEP, cnf_dump_collect, c);
	cf->dump_again |= w->again;
	if (!err && w->done) {
		cnf_walk_end(w);
		err = 1;
	}
	cnf_filter_unlock(f);
	return err;
}

/* Entries @a and @b (indices) of @priv, a snapshot's family, in order. */
static bool cnf_dump_same(const struct cnf_dump_fam *d, u32 a, u32 b)
{
	return d->len[a] == d->len[b] &&
	       !memcmp(d->addr + (size_t)a * d->size,
		       d->addr + (size_t)b * d->size, d->size);
}

static int cnf_dump_cmp(const void *pa, const void *pb, const void *priv)
{
	const struct cnf_dump_fam *d = priv;
	u32 a = *(const u32 *)pa, b = *(const u32 *)pb;
	int r = memcmp(d->addr + (size_t)a * d->size,
		       d->addr + (size_t)b * d->size, d->size);

	if (!r)
		r = (int)d->len[a] - (int)d->len[b];
	/* Equal entries in the order taken: the first of them is kept. */
	return r ?: (a < b ? -1 : a > b);
}

/* Memory cnf_dump_dedup() takes for a family of @n entries. */
static u64 cnf_dedup_bytes(u32 n)
{
	return (u64)n * sizeof(u32) + BITS_TO_LONGS(n) * sizeof(long);
}

/*
 * Drop the entries @d holds twice, keeping the first of each, in the
 * order taken; without the locks, the memory it takes charged.
 */
static int cnf_dump_dedup(struct cnf_dump_fam *d)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
	unsigned long *dup;
	u32 *idx, i, j;

	if (d->n < 2)
		return 0;
	idx = kvmalloc_array(d->n, sizeof(*idx), gfp);
	dup = kvcalloc(BITS_TO_LONGS(d->n), sizeof(*dup), gfp);
	if (!idx || !dup) {
		kvfree(dup);
		kvfree(idx);
		return -ENOMEM;
	}
	for (i = 0; i < d->n; i++)
		idx[i] = i;
	sort_r(idx, d->n, sizeof(*idx), cnf_dump_cmp, NULL, d);
	for (i = 1; i < d->n; i++)
		if (cnf_dump_same(d, idx[i - 1], idx[i]))
			__set_bit(idx[i], dup);
	for (i = 0, j = 0; i < d->n; i++) {
		if (test_bit(i, dup))
			continue;
		if (i != j) {
			memcpy(d->addr + (size_t)j * d->size,
			       d->addr + (size_t)i * d->size, d->size);
			d->len[j] = d->len[i];
			if (d->deadline)
				d->deadline[j] = d->deadline[i];
		}
		j++;
	}
	d->n = j;
	kvfree(dup);
	kvfree(idx);
	return 0;
}

/*
 * The entries a snapshot may hold twice go, once the memory that takes is
 * charged (until the snapshot is freed).
 */
static int cnf_dump_unique(struct cnf_file *cf)
{
	struct mutex *lock = cnf_net_lock(cf->net);
	u32 most = max(cf->dump[CNF_V4].n, cf->dump[CNF_V6].n);
	struct cnf_state *st;
	int err = 0;

	if (!cf->dump_again)
		return 0;
	mutex_lock(lock);
	st = cnf_state_locked(cf->net);
	if (st)
		err = cnf_dump_charge(cf, st, cnf_dump_bytes(cf) +
				      cnf_dedup_bytes(most));
	mutex_unlock(lock);
	return err ?: cnf_dump_dedup(&cf->dump[CNF_V4]) ?:
		      cnf_dump_dedup(&cf->dump[CNF_V6]);
}

/*
 * Take the snapshot of a set in steps, to be read out over many calls.
 * One that does not fit in the memory limit fails with -ENOSPC.  A fatal
 * signal stops it, once it let go of the walk under the lock.
 */
static int cnf_dump_snapshot(struct cnf_file *cf, const char *name)
{
	struct mutex *lock = cnf_net_lock(cf->net);
	struct cnf_dump_ctx c = { .cf = cf };
	struct cnf_walk w = { };
	unsigned int starts = 0;
	struct cnf_filter *f;
	u64 held = 0;
	bool due;
	int err = 0;

	cnf_dump_free(cf);
	for (;;) {
		if (err == -ENOBUFS)
			err = cnf_dump_grow(&cf->dump[c.full], c.more,
					    c.deadlines);
		if (!err && fatal_signal_pending(current))
			err = -EINTR;
		if (mutex_lock_killable(lock)) {
			err = -EINTR;
			mutex_lock(lock);
		}
		if (!err) {
			held = ktime_get_ns();
			err = cnf_dump_step(cf, name, &w, &c, &starts);
			held = ktime_get_ns() - held;
		}
		f = w.f;
		if (err && err != -ENOBUFS && f) {
			cnf_filter_lock(f);
			cnf_walk_end(&w);
			cnf_filter_unlock(f);
		}
		due = cnf_expiry_due(cf->net);
		mutex_unlock(lock);
		if (err && err != -ENOBUFS)
			break;
		cnf_lock_pause(due, held);
	}
	if (err == 1)
		err = cnf_dump_unique(cf);
	if (!err && (u64)cf->dump[CNF_V4].n + cf->dump[CNF_V6].n > U32_MAX)
		err = -EOVERFLOW;
	if (err) {
		cnf_dump_free(cf);
		return err;
	}
	do {
		cf->dump_id = atomic_inc_return(&cnf_dump_ids);
	} while (!cf->dump_id);
	return 0;
}

/* Entry @pos of the snapshot, IPv4 first, and its family's part. */
static const struct cnf_dump_fam *cnf_dump_at(const struct cnf_file *cf,
					      u32 *pos)
{
	const struct cnf_dump_fam *d = &cf->dump[CNF_V4];

	if (*pos < d->n)
		return d;
	*pos -= d->n;
	return &cf->dump[CNF_V6];
}

static void cnf_dump_entry(const struct cnf_file *cf, u32 pos,
			   struct cnf_addr *a)
{
	const struct cnf_dump_fam *d = cnf_dump_at(cf, &pos);
	struct cnf_key key = { .len = d->len[pos] };

	if (d == &cf->dump[CNF_V4]) {
		key.family = CNF_V4;
		memcpy(&key.v4, d->addr + (size_t)pos * d->size, d->size);
	} else {
		key.family = CNF_V6;
		memcpy(&key.v6, d->addr + (size_t)pos * d->size, d->size);
	}
	cnf_key_to_addr(&key, a);
}

/* Seconds left of the snapshot's entry at @pos; 0: no timeout. */
static u32 cnf_dump_left(const struct cnf_file *cf, u32 pos)
{
	const struct cnf_dump_fam *d = cnf_dump_at(cf, &pos);

	return d->deadline ? cnf_timeout_left(d->deadline[pos]) : 0;
}

/* Entries in the snapshot. */
static u32 cnf_dump_total(const struct cnf_file *cf)
{
	return cf->dump[CNF_V4].n + cf->dump[CNF_V6].n;
}

/*
 * Copy entries [@pos, @pos + @n) of the snapshot to @dst, and their
 * seconds left to @left unless it is NULL.
 */
static int cnf_dump_copy_out(const struct cnf_file *cf,
			     struct cnf_addr __user *dst, u32 __user *left,
			     u32 pos, u32 n)
{
	struct cnf_addr *buf;
	u32 *secs, i, done;
	int err = 0;

	buf = kmalloc_array(CNF_CHUNK, sizeof(*buf), GFP_KERNEL);
	secs = kmalloc_array(CNF_CHUNK, sizeof(*secs), GFP_KERNEL);
	if (!buf || !secs)
		err = -ENOMEM;
	for (done = 0; done < n && !err; done += i) {
		u32 step = min_t(u32, n - done, CNF_CHUNK);

		for (i = 0; i < step; i++) {
			cnf_dump_entry(cf, pos + done + i, &buf[i]);
			secs[i] = cnf_dump_left(cf, pos + done + i);
		}
		if (copy_to_user(dst + done, buf, step * sizeof(*buf)) ||
		    (left && copy_to_user(left + done, secs,
					  step * sizeof(*secs))))
			err = -EFAULT;
	}
	kfree(secs);
	kfree(buf);
	return err;
}

static long cnf_ioc_dump(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	struct cnf_dump d;
	u32 pos, total, n;
	int err;

	err = copy_struct_from_user(&d, sizeof(d), uarg, usize);
	if (err)
		return err;
	if (d.flags || !d.count || cnf_set_name(d.set, d.set))
		return -EINVAL;
	if (d.count > CNF_BATCH_MAX)
		return -E2BIG;
	err = mutex_lock_killable(&cf->dump_lock);
	if (err)
		return err;
	if (!d.cursor) {
		err = cnf_dump_snapshot(cf, d.set);
		if (err)
			goto out;
	} else if (!cf->dump_id || d.cursor >> 32 != cf->dump_id ||
		   (u32)d.cursor > cnf_dump_total(cf)) {
		err = -EINVAL;
		goto out;
	}
	pos = d.cursor ? (u32)d.cursor : 0;
	total = cnf_dump_total(cf);
	n = min_t(u32, d.count, total - pos);
	err = cnf_dump_copy_out(cf, u64_to_user_ptr(d.addrs),
				u64_to_user_ptr(d.timeouts), pos, n);
	if (err)
		goto out;
	d.count = n;
	d.cursor = (u64)cf->dump_id << 32 | (pos + n);
	d.flags = pos + n == total ? CNF_DUMP_F_DONE : 0;
	if (copy_to_user(uarg, &d, min(usize, sizeof(d))))
		err = -EFAULT;
	else if (d.flags & CNF_DUMP_F_DONE)
		cnf_dump_free(cf);
out:
	mutex_unlock(&cf->dump_lock);
	return err;
}

/* ---- whole filter ---- */

/*
 * Flush keeps the state, as nftables keeps an emptied table: the mode, the
 * memory limit, the counters, the sets and the hooks stay.  Of a namespace
 * without state there is nothing to flush, and nothing is made for it.
 */
/* A flush, once; -EAGAIN with @m->aside wanted: again. */
static int cnf_flush_once(struct cnf_file *cf, const char *name,
			  struct cnf_mend *m)
{
	struct cnf_timeouts old = { RB_ROOT, RB_ROOT_CACHED, 0 };
	struct cnf_state *st;
	struct cnf_set *set;
	bool created;
	int err = 0;

	st = cnf_lock_set(cf, name, false, &created, &set);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (set)
		err = cnf_set_flush(&st->sets, set, &old, m);
	cnf_unlock_state(cf, st, created, false);
	cnf_timeouts_clear(&old, NULL);
	cnf_mend_run(cf, m);
	return err;
}

static int cnf_flush_set(struct cnf_file *cf, const char *name)
{
	struct cnf_aside aside = { };
	struct cnf_mend m;
	int err;

	do {
		cnf_mend_init(&m);
		m.aside = &aside;
		err = cnf_flush_once(cf, name, &m);
	} while (cnf_aside_again(&aside, &err));
	cnf_aside_free(&aside);
	return err;
}

static long cnf_ioc_flush(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	return cnf_flush_set(cf, "");
}

/*
 * Back to the namespace as it was before its first change: no addresses,
 * no hooks, no memory; the mode, limit and counters are forgotten and the
 * next change starts from the module's parameters again.  Not while an
 * iptables rule holds a set: it reads the set's filter (xt_cuckoo.c).
 */
static long cnf_ioc_reset(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	struct mutex *lock = cnf_net_lock(cf->net);
	struct cnf_state *st;
	int err;

	err = mutex_lock_killable(lock);
	if (err)
		return err;
	st = cnf_state_locked(cf->net);
	if (st && cnf_sets_held(&st->sets))
		err = -EBUSY;
	else
		cnf_state_reset(cf->net);
	mutex_unlock(lock);
	return err;
}

struct cnf_counts {
	u64 checked, matched, dropped, marked;
	struct cnf_byte_stats bytes;
};

static void cnf_add_bytes(struct cnf_byte_stats *sum,
			  const struct cnf_byte_stats *b)
{
	sum->checked += b->checked;
	sum->matched += b->matched;
	sum->dropped += b->dropped;
	sum->marked += b->marked;
}

/* Add one CPU's packet counters to @sum. */
static void cnf_add_cpu_counters(const struct cnf_pcpu_stats *p,
				 struct cnf_counts sum[][CNF_NFAMILIES])
{
	struct cnf_counts c[CNF_NPATHS][CNF_NFAMILIES];
	unsigned int start, path, fam;

	do {
		start = u64_stats_fetch_begin(&p->syncp);
		for (path = 0; path < CNF_NPATHS; path++) {
			for (fam = 0; fam < CNF_NFAMILIES; fam++) {
				struct cnf_counts *cc = &c[path][fam];

				cc->checked = u64_stats_read(&p->checked[path][fam]);
				cc->matched = u64_stats_read(&p->matched[path][fam]);
				cc->dropped = u64_stats_read(&p->dropped[path][fam]);
				cc->bytes.checked =
					u64_stats_read(&p->checked_bytes[path][fam]);
				cc->bytes.matched =
					u64_stats_read(&p->matched_bytes[path][fam]);
				cc->bytes.dropped =
					u64_stats_read(&p->dropped_bytes[path][fam]);
				/* Only the hooks mark. */
				cc->marked = path == CNF_PATH_HOOK ?
					     u64_stats_read(&p->marked[fam]) : 0;
				cc->bytes.marked = path == CNF_PATH_HOOK ?
					u64_stats_read(&p->marked_bytes[fam]) : 0;
			}
		}
	} while (u64_stats_fetch_retry(&p->syncp, start));
	for (path = 0; path < CNF_NPATHS; path++) {
		for (fam = 0; fam < CNF_NFAMILIES; fam++) {
			sum[path][fam].checked += c[path][fam].checked;
			sum[path][fam].matched += c[path][fam].matched;
			sum[path][fam].dropped += c[path][fam].dropped;
			sum[path][fam].marked += c[path][fam].marked;
			cnf_add_bytes(&sum[path][fam].bytes,
				      &c[path][fam].bytes);
		}
	}
}

/* Add one CPU's drop log counters to @st's. */
static void cnf_add_log_counters(const struct cnf_pcpu_stats *p,
				 struct cnf_stats *st)
{
	unsigned int start;
	u64 logged, suppressed;

	do {
		start = u64_stats_fetch_begin(&p->syncp);
		logged = u64_stats_read(&p->logged);
		suppressed = u64_stats_read(&p->log_suppressed);
	} while (u64_stats_fetch_retry(&p->syncp, start));
	st->logged += logged;
	st->log_suppressed += suppressed;
}

/*
 * Out of line: its sums, a path and family each, are not kept on the
 * stack beside cnf_ioc_stats()'s struct cnf_stats in one frame.
 */
static noinline_for_stack void cnf_sum_counters(struct cnf_state *cs,
						struct cnf_stats *st)
{
	struct cnf_family_stats *fs[CNF_NFAMILIES] = { &st->v4, &st->v6 };
	struct cnf_path_stats *ps[CNF_NPATHS][CNF_NFAMILIES] = {
		[CNF_PATH_XDP] = { &st->xdp_v4, &st->xdp_v6 },
		[CNF_PATH_TC] = { &st->tc_v4, &st->tc_v6 },
		[CNF_PATH_RULE] = { &st->rule_v4, &st->rule_v6 },
	};
	u64 *marked[CNF_NFAMILIES] = { &st->marked_v4, &st->marked_v6 };
	struct cnf_byte_stats *bytes[CNF_NPATHS][CNF_NFAMILIES] = {
		[CNF_PATH_HOOK] = { &st->bytes_v4, &st->bytes_v6 },
		[CNF_PATH_XDP] = { &st->xdp_bytes_v4, &st->xdp_bytes_v6 },
		[CNF_PATH_TC] = { &st->tc_bytes_v4, &st->tc_bytes_v6 },
		[CNF_PATH_RULE] = { &st->rule_bytes_v4, &st->rule_bytes_v6 },
	};
	struct cnf_counts sum[CNF_NPATHS][CNF_NFAMILIES] = {};
	unsigned int path, fam;
	int cpu;

	for_each_possible_cpu(cpu) {
		cnf_add_cpu_counters(per_cpu_ptr(cs->stats, cpu), sum);
		cnf_add_log_counters(per_cpu_ptr(cs->stats, cpu), st);
	}
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		const struct cnf_counts *hook = &sum[CNF_PATH_HOOK][fam];

		fs[fam]->checked = hook->checked;
		fs[fam]->matched = hook->matched;
		fs[fam]->dropped = hook->dropped;
		*marked[fam] = hook->marked;
		for (path = 0; path < CNF_NPATHS; path++)
			*bytes[path][fam] = sum[path][fam].bytes;
		for (path = CNF_PATH_XDP; path < CNF_NPATHS; path++) {
			ps[path][fam]->checked = sum[path][fam].checked;
			ps[path][fam]->matched = sum[path][fam].matched;
			ps[path][fam]->dropped = sum[path][fam].dropped;
		}
	}
}

/*
 * Add a filter's sizes to the namespace's figures; its prefixes only for a
 * set's filter (@entries), its lookup figures only for a lookup filter
 * (@lookup).  A lookup filter that is a set's is passed once, with both.
 */
static void cnf_stats_add(struct cnf_filter *f, struct cnf_stats *st,
			  bool entries, bool lookup)
{
	struct cnf_family_stats *fs[CNF_NFAMILIES] = { &st->v4, &st->v6 };
	struct cnf_lookup_stats *ls[CNF_NFAMILIES] = {
		&st->v4_lookup, &st->v6_lookup
	};
	struct cnf_filter_stats fst;
	unsigned int fam;

	cnf_filter_lock(f);
	cnf_filter_stats(f, &fst);
	cnf_filter_unlock(f);
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		const struct cnf_table_stats *t = &fst.fam[fam];

		fs[fam]->capacity += t->capacity;
		fs[fam]->bytes += t->bytes;
		fs[fam]->grows += t->grows;
		fs[fam]->stashed += t->stashed;
		if (entries) {
			fs[fam]->entries += t->entries;
			ls[fam]->prefixes += t->entries;
		}
		if (lookup) {
			ls[fam]->keys += t->keys;
			ls[fam]->lengths = max(ls[fam]->lengths, t->lengths);
			ls[fam]->tables += t->tables;
		}
	}
}

static void cnf_expiry_stats(struct cnf_state *cs, struct cnf_expiry_stats *es)
{
	struct cnf_sets *ss = &cs->sets;
	unsigned int i;

	for (i = 0; i < ss->n; i++) {
		es->entries += ss->set[i]->timeouts.n;
		es->bytes += cnf_timeouts_bytes(&ss->set[i]->timeouts);
	}
	es->expired = cs->expiry.expired;
	es->late = cs->expiry.late;
	es->max_late_ms = cs->expiry.max_late_ms;
}

static void cnf_sets_stats(struct cnf_sets *ss, struct cnf_stats *st)
{
	struct cnf_filter *lookup[CNF_SET_KINDS];
	unsigned int i, kind;

	for (kind = 0; kind < CNF_SET_KINDS; kind++) {
		lookup[kind] = cnf_sets_lookup(ss, kind);
		if (lookup[kind] && lookup[kind] == ss->union_of[kind])
			cnf_stats_add(lookup[kind], st, false, true);
	}
	for (i = 0; i < ss->n; i++) {
		struct cnf_filter *f = ss->set[i]->filter;

		cnf_stats_add(f, st, true, f == lookup[ss->set[i]->kind]);
	}
	st->mem_limit = ss->budget.limit;
}

/* Under cnf_net_lock(): the mark and the hooks' scope, as set. */
static void cnf_stats_scope(struct cnf_state *cs, struct cnf_stats *st)
{
	const struct cnf_scope *s = rcu_dereference_protected(cs->scope, true);

	st->mark = lower_32_bits(cs->mark);
	st->mark_mask = upper_32_bits(cs->mark);
	if (!s)
		return;
	st->iif_count = s->n;
	memcpy(st->iif, s->pat, s->n * sizeof(*s->pat));
}

/*
 * Without state: an empty filter, in the mode and under the limit that the
 * next change would give it, flagged inactive.
 */
static int cnf_fill_stats(struct cnf_file *cf, struct cnf_stats *st)
{
	struct cnf_state *cs;
	bool created;

	memset(st, 0, sizeof(*st));
	cs = cnf_lock_state(cf, false, &created);
	if (IS_ERR(cs))
		return PTR_ERR(cs);
	if (!cs) {
		cnf_unlock_state(cf, cs, created, false);
		st->mode = CNF_MODE_DROP;
		st->mem_limit = cnf_mem_limit;
		st->flags = CNF_STATS_F_INACTIVE;
		st->log_rate = CNF_LOG_RATE_DEFAULT;
		st->log_burst = CNF_LOG_BURST_DEFAULT;
		return 0;
	}
	cnf_log_limit_get(&cs->log, &st->log_rate, &st->log_burst);
	cnf_sets_stats(&cs->sets, st);
	cnf_expiry_stats(cs, &st->expiry);
	st->mode = cs->mode;
	if (!cs->hooks_on)
		st->flags |= CNF_STATS_F_HOOKS_OFF;
	cnf_stats_scope(cs, st);
	cnf_sum_counters(cs, st);
	cnf_unlock_state(cf, cs, created, false);
	return 0;
}

static long cnf_ioc_stats(struct cnf_file *cf, void __user *uarg, size_t usize)
{
	struct cnf_stats st;
	int err;

	err = cnf_fill_stats(cf, &st);
	if (err)
		return err;
	/* An older, shorter struct gets the fields it has. */
	if (copy_to_user(uarg, &st, min(usize, sizeof(st))))
		return -EFAULT;
	/* A newer, larger struct: fields this kernel does not know are 0. */
	if (usize > sizeof(st) &&
	    clear_user(uarg + sizeof(st), usize - sizeof(st)))
		return -EFAULT;
	return 0;
}

/*
 * The fields of a &struct cnf_config that CNF_CONFIG_MARK and
 * CNF_CONFIG_IIF set, checked: zero unless set, a mask that holds the
 * mark, valid names and zeroes past them.
 */
static int cnf_config_check_scope(const struct cnf_config *c)
{
	u32 i;

	if (!(c->set & CNF_CONFIG_MARK) ? c->mark || c->mark_mask :
	    !c->mark_mask || (c->mark & ~c->mark_mask))
		return -EINVAL;
	if (!(c->set & CNF_CONFIG_IIF))
		return c->iif_count ||
		       memchr_inv(c->iif, 0, sizeof(c->iif)) ? -EINVAL : 0;
	if (c->iif_count > CNF_IIF_MAX)
		return -E2BIG;
	for (i = 0; i < c->iif_count; i++)
		if (cnf_scope_name_valid(c->iif[i]))
			return -EINVAL;
	if (memchr_inv(&c->iif[i], 0, (CNF_IIF_MAX - i) * CNF_IFNAMSIZ))
		return -EINVAL;
	return 0;
}

/*
 * Before cnf_net_lock(), since registering its notifier takes RTNL: a new
 * scope of @c's names (NULL in *@scope when it names none), keeping its
 * table already, for the caller to charge and publish, or to give back
 * with cnf_scope_put_away().
 */
static int cnf_config_make_scope(struct net *net, const struct cnf_config *c,
				 struct cnf_scope **scope)
{
	struct cnf_scope *s;
	int err;

	*scope = NULL;
	if (!(c->set & CNF_CONFIG_IIF) || !c->iif_count)
		return 0;
	s = cnf_scope_create(net, c->iif_count, c->iif);
	if (!s)
		return -ENOMEM;
	err = cnf_scope_start(s);
	if (err) {
		cnf_scope_free(s);
		return err;
	}
	*scope = s;
	return 0;
}

/* Under cnf_net_lock(): uncharge and put away @s, if any. */
static void cnf_config_drop_scope(struct cnf_state *st, struct cnf_scope *s)
{
	if (!s)
		return;
	cnf_budget_uncharge(&st->sets.budget, s->bytes);
	cnf_scope_put_away(s);
}

/*
 * Under cnf_net_lock(): the hooks as @c sets them, on or off, and with
 * @s, charged, as their scope when @c sets one (NULL: none); the old
 * scope, replaced, uncharged and put away.  When it fails, the state is
 * as it was and @s the caller's.
 */
static int cnf_config_set_hooks(struct net *net, struct cnf_state *st,
				const struct cnf_config *c, struct cnf_scope *s)
{
	bool on = c->set & CNF_CONFIG_HOOKS ? c->hooks == CNF_HOOKS_ON :
					      st->hooks_on;
	struct cnf_scope *old;
	int err;

	if (!(c->set & CNF_CONFIG_IIF))
		s = rcu_dereference_protected(st->scope, true);
	err = cnf_state_set_hooks(net, st, on, s, &old);
	if (!err)
		cnf_config_drop_scope(st, old);
	return err;
}

/* The drop log's rate limit: set within its bounds, or not and zero. */
static int cnf_config_check_log(const struct cnf_config *c)
{
	if (!(c->set & CNF_CONFIG_LOG_LIMIT))
		return c->log_rate || c->log_burst ? -EINVAL : 0;
	if (!c->log_rate || c->log_rate > CNF_LOG_RATE_MAX ||
	    !c->log_burst || c->log_burst > CNF_LOG_BURST_MAX)
		return -EINVAL;
	return 0;
}

static long cnf_ioc_set_config(struct cnf_file *cf, void __user *uarg,
			       size_t usize)
{
	const u32 known = CNF_CONFIG_MODE | CNF_CONFIG_MEM_LIMIT |
			  CNF_CONFIG_HOOKS | CNF_CONFIG_MARK | CNF_CONFIG_IIF |
			  CNF_CONFIG_LOG_LIMIT;
	struct cnf_scope *scope = NULL;
	struct cnf_state *st;
	struct cnf_config c;
	u64 old_limit;
	bool created;
	int err;

	err = copy_struct_from_user(&c, sizeof(c), uarg, usize);
	if (err)
		return err;
	/* A field not being set must be zero, like any unused field. */
	if ((c.set & ~known) ||
	    (!(c.set & CNF_CONFIG_MODE) && c.mode) ||
	    (!(c.set & CNF_CONFIG_MEM_LIMIT) && c.mem_limit) ||
	    (!(c.set & CNF_CONFIG_HOOKS) && c.hooks) ||
	    c.mode > CNF_MODE_MARK || c.hooks > CNF_HOOKS_OFF ||
	    c.reserved || c.reserved2)
		return -EINVAL;
	err = cnf_config_check_scope(&c) ?: cnf_config_check_log(&c);
	if (err)
		return err;
	/*
	 * The module's limit is the host's: only the host's administrator
	 * lets a namespace, maybe a tenant's, use more.
	 */
	if ((c.set & CNF_CONFIG_MEM_LIMIT) && c.mem_limit > cnf_mem_limit &&
	    !capable(CAP_NET_ADMIN))
		return -EPERM;
	err = cnf_config_make_scope(cf->net, &c, &scope);
	if (err)
		return err;
	/* Even a setting equal to the default configures the namespace. */
	st = cnf_lock_state(cf, c.set, &created);
	if (IS_ERR(st)) {
		if (scope)
			cnf_scope_put_away(scope);
		return PTR_ERR(st);
	}
	if (!st)
		goto out;
	/* Mark mode marks with a mark: this call's, or one set before. */
	if ((c.set & CNF_CONFIG_MODE) && c.mode == CNF_MODE_MARK &&
	    !(c.set & CNF_CONFIG_MARK) && !upper_32_bits(st->mark)) {
		err = -EINVAL;
		goto out;
	}
	/* All or nothing: what can fail first, each undone if a later one does. */
	old_limit = st->sets.budget.limit;
	if (c.set & CNF_CONFIG_MEM_LIMIT)
		err = cnf_budget_set_limit(&st->sets.budget, c.mem_limit);
	if (!err && scope) {
		err = cnf_budget_charge(&st->sets.budget, scope->bytes);
		if (err) {
			cnf_scope_put_away(scope);
			scope = NULL;
			cnf_budget_set_limit(&st->sets.budget, old_limit);
		}
	}
	if (!err && (c.set & (CNF_CONFIG_HOOKS | CNF_CONFIG_IIF))) {
		err = cnf_config_set_hooks(cf->net, st, &c, scope);
		if (err) {
			cnf_config_drop_scope(st, scope);
			/* The old limit, which held a moment ago. */
			cnf_budget_set_limit(&st->sets.budget, old_limit);
		}
		scope = NULL;
	}
	if (err)
		goto out;
	if (c.set & CNF_CONFIG_MARK)
		WRITE_ONCE(st->mark, (u64)c.mark_mask << 32 | c.mark);
	if (c.set & CNF_CONFIG_LOG_LIMIT)
		cnf_log_limit_set(&st->log, c.log_rate, c.log_burst);
	if (c.set & CNF_CONFIG_MODE) {
		WRITE_ONCE(st->mode, c.mode);
		/* A listed source XDP passed in monitor mode is dropped now. */
		cnf_state_changed(st);
	}
out:
	/* Made but neither charged nor published. */
	if (scope)
		cnf_scope_put_away(scope);
	cnf_unlock_state(cf, st, created, err);
	return err;
}

/* Every byte is written: the string, then zeroes to the end. */
static long cnf_ioc_version(struct cnf_file *cf, void __user *uarg,
			    size_t usize)
{
	struct cnf_version v;

	BUILD_BUG_ON(sizeof(CNF_VERSION) > sizeof(v.version));
	memset(&v, 0, sizeof(v));
	v.abi = CNF_ABI_VERSION;
	strscpy_pad(v.version, CNF_VERSION, sizeof(v.version));
	if (copy_to_user(uarg, &v, sizeof(v)))
		return -EFAULT;
	/* A newer, larger struct: fields this kernel does not know are 0. */
	if (usize > sizeof(v) &&
	    clear_user(uarg + sizeof(v), usize - sizeof(v)))
		return -EFAULT;
	return 0;
}

/* ---- sets ---- */

/* The log flags and group of a request to create or change a set. */
#define CNF_SET_F_LOGGING	(CNF_SET_F_LOG | CNF_SET_F_NFLOG)

/*
 * What each call takes of a &struct cnf_set_req: a create every field, a
 * change the name and the logging, the others the name.
 */
enum cnf_set_call {
	CNF_SET_CALL_NAME,
	CNF_SET_CALL_CREATE,
	CNF_SET_CALL_CHANGE,
};

static int cnf_get_set_req(const void __user *uarg, size_t usize,
			   struct cnf_set_req *r, enum cnf_set_call call)
{
	static const u32 flags[] = {
		[CNF_SET_CALL_CREATE] = CNF_SET_F_RULES_ONLY | CNF_SET_F_LOGGING,
		[CNF_SET_CALL_CHANGE] = CNF_SET_F_LOGGING,
	};
	bool create = call == CNF_SET_CALL_CREATE;
	int err = copy_struct_from_user(r, sizeof(*r), uarg, usize);

	if (err)
		return err;
	if ((r->flags & ~flags[call]) || r->reserved || r->reserved2 ||
	    (call == CNF_SET_CALL_NAME && r->log_group) ||
	    r->kind > (create ? CNF_SET_ALLOW : 0) ||
	    (!create && r->timeout) || cnf_set_name(r->name, r->name))
		return -EINVAL;
	/* Neither makes the hooks drop a packet: nothing to log. */
	if ((r->flags & CNF_SET_F_LOGGING) &&
	    ((r->flags & CNF_SET_F_RULES_ONLY) || r->kind == CNF_SET_ALLOW))
		return -EINVAL;
	return 0;
}

/* Creating a set configures the namespace, as an add does. */
static long cnf_ioc_set_create(struct cnf_file *cf, void __user *uarg,
			       size_t usize)
{
	struct cnf_set_req r;
	struct cnf_state *st;
	bool created;
	u32 log;
	int err;

	err = cnf_get_set_req(uarg, usize, &r, CNF_SET_CALL_CREATE);
	if (!err)
		err = cnf_log_setting(r.flags & CNF_SET_F_LOGGING, r.log_group,
				      &log);
	if (err)
		return err;
	if (cnf_names_default(r.name))
		return -EEXIST;
	/* The logger's module may have to be loaded: before the lock. */
	err = cnf_log_get(log);
	if (err)
		return err;
	st = cnf_lock_state(cf, true, &created);
	if (IS_ERR(st)) {
		cnf_log_put(log);
		return PTR_ERR(st);
	}
	err = cnf_set_create(&st->sets, r.name, r.kind, r.timeout,
			     r.flags & CNF_SET_F_RULES_ONLY);
	/* Empty, the set is in no plan yet: packets see it once it fills. */
	if (!err)
		cnf_set_find(&st->sets, r.name)->log = log;
	cnf_unlock_state(cf, st, created, err);
	if (err)
		cnf_log_put(log);
	return err;
}

/*
 * A set's logging, set anew.  Changing the default set's configures the
 * namespace, as creating a set does.
 */
static long cnf_ioc_set_change(struct cnf_file *cf, void __user *uarg,
			       size_t usize)
{
	struct cnf_retired retired = { };
	struct cnf_set *set = NULL;
	struct cnf_set_req r;
	struct cnf_state *st;
	bool created;
	u32 log;
	int err;

	err = cnf_get_set_req(uarg, usize, &r, CNF_SET_CALL_CHANGE);
	if (!err)
		err = cnf_log_setting(r.flags, r.log_group, &log);
	if (!err)
		err = cnf_log_get(log);
	if (err)
		return err;
	st = cnf_lock_state(cf, cnf_names_default(r.name), &created);
	if (IS_ERR(st)) {
		cnf_log_put(log);
		return PTR_ERR(st);
	}
	if (st)
		set = cnf_set_find(&st->sets, r.name);
	if (!set)
		err = -ENXIO;
	else if ((set->rules_only || set->kind == CNF_SET_ALLOW) && log)
		err = -EINVAL;
	else
		err = cnf_set_log(&st->sets, set, &log, &retired);
	cnf_unlock_state(cf, st, created, err);
	cnf_retired_free(&retired);
	/* The old setting's loggers, or on failure the new one's. */
	cnf_log_put(log);
	return err;
}

/* A destroy, once; -EAGAIN with @m->aside wanted: again. */
static int cnf_destroy_once(struct cnf_file *cf, const char *name,
			    struct cnf_mend *m)
{
	struct cnf_timeouts old = { RB_ROOT, RB_ROOT_CACHED, 0 };
	struct cnf_set *set = NULL;
	struct cnf_state *st;
	bool created;
	int err;

	st = cnf_lock_state(cf, false, &created);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st)
		set = cnf_set_find(&st->sets, name);
	err = set ? cnf_set_destroy(&st->sets, set, &old, m) : -ENOENT;
	cnf_unlock_state(cf, st, created, false);
	cnf_timeouts_clear(&old, NULL);
	cnf_mend_run(cf, m);
	return err;
}

static long cnf_ioc_set_destroy(struct cnf_file *cf, void __user *uarg,
				size_t usize)
{
	struct cnf_aside aside = { };
	struct cnf_set_req r;
	struct cnf_mend m;
	int err;

	err = cnf_get_set_req(uarg, usize, &r, CNF_SET_CALL_NAME);
	if (err)
		return err;
	if (cnf_names_default(r.name))
		return -EBUSY;
	do {
		cnf_mend_init(&m);
		m.aside = &aside;
		err = cnf_destroy_once(cf, r.name, &m);
	} while (cnf_aside_again(&aside, &err));
	cnf_aside_free(&aside);
	return err;
}

static long cnf_ioc_set_flush(struct cnf_file *cf, void __user *uarg,
			      size_t usize)
{
	struct cnf_set_req r;
	int err;

	err = cnf_get_set_req(uarg, usize, &r, CNF_SET_CALL_NAME);
	return err ?: cnf_flush_set(cf, r.name);
}

static long cnf_ioc_set_swap(struct cnf_file *cf, void __user *uarg,
			     size_t usize)
{
	struct cnf_set *a = NULL, *b = NULL;
	struct cnf_retired retired = { };
	struct cnf_set_swap sw;
	struct cnf_state *st;
	bool created;
	int err;

	err = copy_struct_from_user(&sw, sizeof(sw), uarg, usize);
	if (err)
		return err;
	if (cnf_set_name(sw.a, sw.a) || cnf_set_name(sw.b, sw.b))
		return -EINVAL;
	st = cnf_lock_state(cf, false, &created);
	if (IS_ERR(st))
		return PTR_ERR(st);
	if (st) {
		a = cnf_set_find(&st->sets, sw.a);
		b = cnf_set_find(&st->sets, sw.b);
	}
	if (a && b)
		err = cnf_set_swap(&st->sets, a, b, &retired);
	else if (!st && cnf_names_default(sw.a) && cnf_names_default(sw.b))
		err = -EINVAL;	/* the default set with itself */
	else
		err = -ENOENT;
	cnf_unlock_state(cf, st, created, false);
	cnf_retired_free(&retired);
	return err;
}

/*
 * Packets a set covered, and their bytes, summed over the CPUs, into
 * @info; under cnf_net_lock().
 */
static void cnf_set_matched(struct cnf_state *cs, struct cnf_set *set,
			    struct cnf_set_info *info)
{
	unsigned int start;
	u64 n, b;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct cnf_pcpu_stats *p = per_cpu_ptr(cs->stats, cpu);
		const struct cnf_set_matched *m = per_cpu_ptr(set->matched, cpu);

		do {
			start = u64_stats_fetch_begin(&p->syncp);
			n = u64_stats_read(&m->packets);
			b = u64_stats_read(&m->bytes);
		} while (u64_stats_fetch_retry(&p->syncp, start));
		info->matched += n;
		info->matched_bytes += b;
	}
}

static void cnf_set_info(struct cnf_state *cs, struct cnf_set *set,
			 struct cnf_set_info *info)
{
	struct cnf_filter *f = set->filter;

	memset(info, 0, sizeof(*info));
	memcpy(info->name, set->name, sizeof(info->name));
	info->kind = set->kind;
	info->timeout = set->timeout;
	info->timed = set->timeouts.n;
	info->flags = set->rules_only ? CNF_SET_F_RULES_ONLY : 0;
	info->flags |= cnf_log_flags(set->log);
	if (info->flags & CNF_SET_F_NFLOG)
		info->log_group = cnf_log_group(set->log);
	info->rules = set->rules;
	cnf_filter_lock(f);
	info->v4_entries = cnf_filter_count(f, CNF_V4);
	info->v6_entries = cnf_filter_count(f, CNF_V6);
	info->bytes = cnf_filter_bytes(f);
	cnf_filter_unlock(f);
	cnf_set_matched(cs, set, info);
}

/* Without state: the default set, empty. */
static u32 cnf_set_infos(struct cnf_file *cf, struct cnf_set_info *infos)
{
	struct cnf_state *cs;
	bool created;
	u32 i, n = 1;

	cs = cnf_lock_state(cf, false, &created);
	if (IS_ERR(cs))
		return 0;
	if (cs) {
		n = cs->sets.n;
		for (i = 0; i < n; i++)
			cnf_set_info(cs, cs->sets.set[i], &infos[i]);
	} else {
		memset(infos, 0, sizeof(*infos));
		strscpy(infos->name, CNF_SET_DEFAULT, sizeof(infos->name));
	}
	cnf_unlock_state(cf, cs, created, false);
	return n;
}

static long cnf_ioc_set_list(struct cnf_file *cf, void __user *uarg,
			     size_t usize)
{
	const size_t known = sizeof(struct cnf_set_info);
	struct cnf_set_info *infos;
	struct cnf_set_list l;
	void __user *dst;
	int err;
	u32 i;

	err = copy_struct_from_user(&l, sizeof(l), uarg, usize);
	if (err)
		return err;
	if (l.flags || l.size < offsetofend(struct cnf_set_info, matched))
		return -EINVAL;
	infos = kvcalloc(CNF_SETS_MAX, known, GFP_KERNEL);
	if (!infos)
		return -ENOMEM;
	l.total = cnf_set_infos(cf, infos);
	err = l.total ? 0 : -EINTR;
	l.count = min(l.count, l.total);
	dst = u64_to_user_ptr(l.sets);
	for (i = 0; i < l.count && !err; i++, dst += l.size) {
		if (copy_to_user(dst, &infos[i], min_t(size_t, l.size, known)) ||
		    (l.size > known && clear_user(dst + known, l.size - known)))
			err = -EFAULT;
	}
	kvfree(infos);
	if (!err && copy_to_user(uarg, &l, sizeof(l)))
		err = -EFAULT;
	return err;
}

/* ---- file operations ---- */

/*
 * @min_size: the first version of the command's struct, when it has grown
 * since (0: the struct never changed).
 */
struct cnf_ioctl_desc {
	unsigned int cmd;
	long (*fn)(struct cnf_file *cf, void __user *uarg, size_t usize);
	size_t min_size;
};

static const struct cnf_ioctl_desc cnf_ioctls[] = {
	[_IOC_NR(CNF_IOC_ADD)] = { CNF_IOC_ADD, cnf_ioc_add,
				   sizeof(struct cnf_addr) },
	[_IOC_NR(CNF_IOC_DEL)] = { CNF_IOC_DEL, cnf_ioc_del,
				   sizeof(struct cnf_addr) },
	[_IOC_NR(CNF_IOC_TEST)] = { CNF_IOC_TEST, cnf_ioc_test,
				    sizeof(struct cnf_addr) },
	[_IOC_NR(CNF_IOC_ADD_BATCH)] = { CNF_IOC_ADD_BATCH, cnf_ioc_add_batch,
					 offsetof(struct cnf_batch, set) },
	[_IOC_NR(CNF_IOC_DEL_BATCH)] = { CNF_IOC_DEL_BATCH, cnf_ioc_del_batch,
					 offsetof(struct cnf_batch, set) },
	[_IOC_NR(CNF_IOC_DUMP)] = { CNF_IOC_DUMP, cnf_ioc_dump,
				    offsetof(struct cnf_dump, set) },
	[_IOC_NR(CNF_IOC_FLUSH)] = { CNF_IOC_FLUSH, cnf_ioc_flush },
	[_IOC_NR(CNF_IOC_STATS)] = { CNF_IOC_STATS, cnf_ioc_stats,
				     offsetofend(struct cnf_stats, flags) },
	[_IOC_NR(CNF_IOC_SET_CONFIG)] = { CNF_IOC_SET_CONFIG, cnf_ioc_set_config,
					  offsetofend(struct cnf_config,
						      mem_limit) },
	[_IOC_NR(CNF_IOC_RESET)] = { CNF_IOC_RESET, cnf_ioc_reset },
	[_IOC_NR(CNF_IOC_MATCH)] = { CNF_IOC_MATCH, cnf_ioc_match,
				     sizeof(struct cnf_addr) },
	[_IOC_NR(CNF_IOC_VERSION)] = { CNF_IOC_VERSION, cnf_ioc_version },
	[_IOC_NR(CNF_IOC_SET_CREATE)] = { CNF_IOC_SET_CREATE,
					  cnf_ioc_set_create,
					  offsetof(struct cnf_set_req, timeout) },
	[_IOC_NR(CNF_IOC_SET_DESTROY)] = { CNF_IOC_SET_DESTROY,
					   cnf_ioc_set_destroy,
					   offsetof(struct cnf_set_req, timeout) },
	[_IOC_NR(CNF_IOC_SET_SWAP)] = { CNF_IOC_SET_SWAP, cnf_ioc_set_swap },
	[_IOC_NR(CNF_IOC_SET_LIST)] = { CNF_IOC_SET_LIST, cnf_ioc_set_list },
	[_IOC_NR(CNF_IOC_SET_FLUSH)] = { CNF_IOC_SET_FLUSH, cnf_ioc_set_flush,
					 offsetof(struct cnf_set_req, timeout) },
	[_IOC_NR(CNF_IOC_SET_CHANGE)] = { CNF_IOC_SET_CHANGE,
					  cnf_ioc_set_change },
};

static long cnf_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct cnf_file *cf = file->private_data;
	unsigned int nr = _IOC_NR(cmd);
	const struct cnf_ioctl_desc *d;

	if (_IOC_TYPE(cmd) != CNF_IOC_TYPE || nr >= ARRAY_SIZE(cnf_ioctls) ||
	    !cnf_ioctls[nr].fn)
		return -ENOTTY;
	d = &cnf_ioctls[nr];
	/* Same direction, and at least the first version's struct. */
	if (_IOC_DIR(cmd) != _IOC_DIR(d->cmd) ||
	    _IOC_SIZE(cmd) < (d->min_size ?: _IOC_SIZE(d->cmd)))
		return -ENOTTY;
	if (!ns_capable(cf->net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	return d->fn(cf, (void __user *)arg, _IOC_SIZE(cmd));
}

static int cnf_open(struct inode *inode, struct file *file)
{
	struct cnf_file *cf = kzalloc(sizeof(*cf), GFP_KERNEL_ACCOUNT);

	if (!cf)
		return -ENOMEM;
	cf->net = get_net(current->nsproxy->net_ns);
	mutex_init(&cf->dump_lock);
	file->private_data = cf;
	return 0;
}

static int cnf_release(struct inode *inode, struct file *file)
{
	struct cnf_file *cf = file->private_data;

	cnf_dump_free(cf);
	mutex_destroy(&cf->dump_lock);
	put_net(cf->net);
	kfree(cf);
	return 0;
}

static const struct file_operations cnf_fops = {
	.owner		= THIS_MODULE,
	.open		= cnf_open,
	.release	= cnf_release,
	.unlocked_ioctl	= cnf_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice cnf_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= CNF_DEVICE_NAME,
	.fops	= &cnf_fops,
	.mode	= 0600,
};

int cnf_dev_init(void)
{
	return misc_register(&cnf_misc);
}

void cnf_dev_exit(void)
{
	misc_deregister(&cnf_misc);
}
