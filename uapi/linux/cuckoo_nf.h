/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cuckoo_nf: control ABI of /dev/cuckoo_nf.
 *
 * Every call acts on the filter of the network namespace the device was
 * opened in and needs CAP_NET_ADMIN in that namespace's user namespace
 * (-EPERM otherwise).
 *
 * A namespace has no filter, no counters and no netfilter hooks until it is
 * first configured: by an add (%CNF_IOC_ADD, a %CNF_IOC_ADD_BATCH with at
 * least one entry) or a %CNF_IOC_SET_CONFIG that sets something.  The
 * module's parameters (initial_capacity, mem_limit) apply at that moment.
 * Until then its packets never reach the module, and reads (%CNF_IOC_TEST,
 * %CNF_IOC_DUMP, %CNF_IOC_STATS), deletes and %CNF_IOC_FLUSH answer as for
 * an empty filter and create nothing.  %CNF_IOC_RESET returns a namespace
 * to that state.
 *
 * Sets.  A namespace's prefixes are kept in named sets, each a block set
 * or an allow set (enum cnf_set_kind).  A packet is dropped when some
 * block set covers its source and no allow set does (and the namespace is
 * in %CNF_MODE_DROP).  The block set %CNF_SET_DEFAULT always exists: calls
 * that name no set (an all-zero name, or a struct from before sets that
 * ends before its name) act on it.  A name is 1 to %CNF_SET_NAME_LEN - 1
 * bytes of [A-Za-z0-9_.-], NUL-padded to %CNF_SET_NAME_LEN (-EINVAL
 * otherwise).  A call that names a set the namespace does not have fails
 * with -ENXIO, but %CNF_IOC_SET_DESTROY and %CNF_IOC_SET_SWAP, which fail
 * with -ENOENT.  A namespace has at most %CNF_SETS_MAX sets, and its memory
 * limit covers them all.
 *
 * Timeouts.  An entry may have a timeout: it is removed by the kernel
 * when it runs out, and stops matching no later than a second after.  A
 * timeout is given in seconds (a __u32); 0 means none (a permanent
 * entry).  An entry added without saying gets its set's default
 * timeout (&struct cnf_set_req.timeout; none for a set created without
 * one).  Timeouts are kept beside the sets, not in the tables packets
 * probe: entries without one cost nothing more, and each timed entry costs
 * the bytes &struct cnf_expiry_stats reports.
 *
 * Conventions:
 *  - Fixed-width types only; user pointers travel as __u64.
 *  - Every reserved or padding field must be zero on input (-EINVAL).
 *  - Structs may grow at their end.  The kernel takes the size from the
 *    ioctl number: a larger struct from newer userspace is accepted when its
 *    extra bytes are zero (-E2BIG otherwise), a shorter one from older
 *    userspace when it holds at least the first version's fields.
 *  - Unknown commands fail with -ENOTTY.
 */
#ifndef _UAPI_LINUX_CUCKOO_NF_H
#define _UAPI_LINUX_CUCKOO_NF_H

#include <linux/const.h>
#include <linux/types.h>
#include <linux/ioctl.h>

#define CNF_DEVICE_NAME		"cuckoo_nf"
#define CNF_DEVICE_PATH		"/dev/" CNF_DEVICE_NAME

/* The ABI this header describes (see struct cnf_version). */
#define CNF_ABI_VERSION		1
/* Room for the version string in struct cnf_version, NUL included. */
#define CNF_VERSION_LEN		64

/**
 * struct cnf_addr - one source prefix
 * @family:    AF_INET (2) or AF_INET6 (10).
 * @prefixlen: 0 to 32 for AF_INET, 0 to 128 for AF_INET6.  32 and 128 are
 *             single addresses.  0 (every address) needs %CNF_ADDR_F_ALL.
 * @flags:     %CNF_ADDR_F_ALL: the caller means a /0.  No other bit is
 *             defined (-EINVAL).
 * @addr:      the prefix in network byte order; every bit past @prefixlen
 *             must be zero (-EINVAL).  An AF_INET prefix uses the first 4
 *             bytes; the other 12 must be zero.
 *
 * Prefixes are kept as given: overlapping ones are separate entries, a
 * delete removes exactly the prefix named (-ENOENT when that prefix is not
 * stored, even if another covers it), and adding a stored prefix again
 * fails with -EEXIST.  A packet is matched when any stored prefix covers
 * its source.  An IPv4-mapped IPv6 prefix (::ffff:0:0/96 and longer) is
 * refused with -EINVAL: IPv4 packets are matched by AF_INET entries.
 */
struct cnf_addr {
	__u8	family;
	__u8	prefixlen;
	__u16	flags;
	__u8	addr[16];
};

#define CNF_ADDR_F_ALL		_BITUL(0)

/* Room for a set's name, its NUL included. */
#define CNF_SET_NAME_LEN	32
/* The block set every namespace has; it cannot be destroyed. */
#define CNF_SET_DEFAULT		"default"
/* Most sets a namespace has, the default set included. */
#define CNF_SETS_MAX		256

enum cnf_set_kind {
	CNF_SET_BLOCK = 0,	/* drop the sources it covers... */
	CNF_SET_ALLOW = 1,	/* ...unless an allow set covers them too */
};

/**
 * struct cnf_entry - one prefix of one set
 * @addr:    the prefix, see &struct cnf_addr.
 * @set:     the set's name; all zero for the default set.  A caller that
 *           passes only a &struct cnf_addr (the first version) means the
 *           default set.
 * @timeout: %CNF_IOC_ADD with %CNF_ENTRY_F_TIMEOUT: the entry's timeout in
 *           seconds, 0 for none.  %CNF_IOC_MATCH, out: the seconds the
 *           matching prefix has left (rounded up), 0 when it has no
 *           timeout.  Else 0.
 * @flags:   %CNF_ENTRY_F_TIMEOUT (%CNF_IOC_ADD): @timeout is given; without
 *           it the entry gets its set's default.
 *           %CNF_ENTRY_F_EXIST (%CNF_IOC_ADD): adding a stored prefix is
 *           not an error: its timeout is set anew (as ipset's -exist does)
 *           and the call returns 0.  No other bit is defined, and none is
 *           for the other calls (-EINVAL).  Out of %CNF_IOC_MATCH: 0.
 *           Both fields are absent from structs before timeouts.
 */
struct cnf_entry {
	struct cnf_addr addr;
	char	set[CNF_SET_NAME_LEN];
	__u32	timeout;
	__u32	flags;
};

#define CNF_ENTRY_F_TIMEOUT	_BITUL(0)
#define CNF_ENTRY_F_EXIST	_BITUL(1)

/**
 * struct cnf_batch - add or delete many prefixes in one call
 * @addrs:   user pointer to an array of struct cnf_addr.
 * @count:   entries in @addrs, at most %CNF_BATCH_MAX (-E2BIG above).
 * @flags:   %CNF_BATCH_F_EXIST_OK: an address already present (add) or
 *           absent (delete) is counted in @skipped instead of stopping the
 *           batch.  No other bit is defined.
 * @applied: out: entries added or deleted.
 * @skipped: out: entries passed over under %CNF_BATCH_F_EXIST_OK.
 * @done:    out: entries processed; equals @count when the whole batch went
 *           through, else the index of the entry that failed.
 * @error:   out: 0, or the negative errno of the entry at index @done.
 * @set:     the set the batch changes (see &struct cnf_entry).  Absent from
 *           the first version: the default set.
 * @timeouts: %CNF_IOC_ADD_BATCH: 0, or a user pointer to @count __u32,
 *           each entry's timeout in seconds (0: none).  0 gives every entry
 *           its set's default timeout.  Under %CNF_BATCH_F_EXIST_OK an
 *           entry already stored gets its timeout set anew (and is counted
 *           in @skipped).  %CNF_IOC_DEL_BATCH: 0.  Absent from structs
 *           before timeouts.
 *
 * Entries are processed in order and the batch stops at the first failure:
 * every entry before @done is applied (or skipped), none after it is.  The
 * call returns @error.  The struct is written back before the first entry
 * is applied (-EFAULT and nothing changed if it cannot be) and again at the
 * end, so after any call that got that far @done and @error are exact; a
 * call refused before (bad flags, -E2BIG, -EPERM) leaves it untouched.
 *
 * %CNF_BATCH_F_REPLACE (%CNF_IOC_ADD_BATCH only): the set's contents
 * become exactly the batch's entries, in one step.  The entries are read
 * in and built into new contents aside; only when every one went in do
 * they take the old contents' place.  No packet sees a mix: a source both
 * the old and the new contents cover is matched throughout, one neither
 * covers never is.  On any failure the set is left as it was, @applied
 * and @skipped are 0, and @done and @error say which entry failed, also
 * when the memory limit was reached while building (it must hold the old
 * and the new contents at once); @done equals @count when the contents
 * were built but putting them in place failed (-ENOSPC, -ENOMEM: the
 * tables the sets of a kind share, made anew with them).  With
 * %CNF_BATCH_F_EXIST_OK, an entry given twice is counted in @skipped;
 * without it, it fails the batch with -EEXIST.  A @count of 0 empties the
 * set in one step.  While it runs, the entries as copied in (20 bytes
 * each, 4 more with @timeouts) count against the memory limit: a replace
 * they do not fit beside what is in use fails at once with -ENOSPC, @done
 * 0.  A namespace builds one replace at a time: another waits for it
 * (killably).  The namespace's other calls and its expiry go on while a
 * replace builds; a set made anew meanwhile, with another default
 * timeout that entries without theirs were given, fails it with -EAGAIN.
 */
struct cnf_batch {
	__u64	addrs;
	__u32	count;
	__u32	flags;
	__u32	applied;
	__u32	skipped;
	__u32	done;
	__s32	error;
	char	set[CNF_SET_NAME_LEN];
	__u64	timeouts;
};

#define CNF_BATCH_F_EXIST_OK	_BITUL(0)
#define CNF_BATCH_F_REPLACE	_BITUL(1)
#define CNF_BATCH_MAX		0x1000000

/**
 * struct cnf_dump - read a set, a chunk per call
 * @addrs:  user pointer to room for @count struct cnf_addr.
 * @cursor: in: 0 to start a dump, else the cursor the previous call
 *          returned on the same open file.  out: cursor for the next call.
 * @count:  in: room in @addrs (at least 1).  out: entries written.
 * @flags:  in: must be zero.  out: %CNF_DUMP_F_DONE when no entry is left.
 * @set:    the set to read (see &struct cnf_entry), when starting a dump;
 *          a later call goes on with the set its dump started on.  Absent
 *          from the first version: the default set.
 * @timeouts: 0, or a user pointer to room for @count __u32: out, the
 *          seconds each entry written has left (rounded up, at least 1),
 *          0 for an entry without a timeout.  Absent from structs before
 *          timeouts.
 *
 * Starting a dump takes a snapshot of the set, which later calls read
 * out: what changes after the first call returns does not show.  The
 * first call copies the set a few thousand entries at a time, letting the
 * set change in between, as a netlink dump does; the snapshot then holds,
 * each once, every entry the set held throughout that call, and no entry
 * it did not hold at some moment of it; an entry added or deleted during
 * the call may be there or not.  Contents replaced or swapped during the
 * call are copied anew; after a few times the call fails with -EAGAIN.
 * So does a call during which the set changes so fast that a part of it
 * had to be copied again from its start a few times: a dump of a set that
 * other calls keep changing may have to be started again.
 * Entries come IPv4 first, in no particular order.  A cursor from another
 * open file or an older dump fails with -EINVAL.
 */
struct cnf_dump {
	__u64	addrs;
	__u64	cursor;
	__u32	count;
	__u32	flags;
	char	set[CNF_SET_NAME_LEN];
	__u64	timeouts;
};

#define CNF_DUMP_F_DONE		_BITUL(0)

enum cnf_mode {
	CNF_MODE_DROP = 0,	/* drop packets from listed sources */
	CNF_MODE_MONITOR = 1,	/* count them as matched, drop nothing */
	CNF_MODE_MARK = 2,	/* the hooks mark them and accept them */
};

/*
 * In %CNF_MODE_MARK the kfuncs pass a listed source's packet (0) with no
 * XDP mark of theirs, for the hooks to look up and mark: mark mode needs
 * the hooks on, and the packet's device in their scope.
 */

/*
 * Where the namespace's packets are looked up.  With its netfilter hooks
 * off, only XDP and tc programs calling the kfuncs filter it: every
 * device a listed source could come in by must run one.
 */
enum cnf_hooks {
	CNF_HOOKS_ON = 0,	/* netfilter's hooks, and XDP or tc programs */
	CNF_HOOKS_OFF = 1,	/* XDP or tc programs only: no hooks */
};

/* Room for a device's name or pattern, its NUL included (IFNAMSIZ). */
#define CNF_IFNAMSIZ		16
/* Most device names or patterns a namespace's hooks' scope has. */
#define CNF_IIF_MAX		8

/**
 * struct cnf_config - change the namespace's settings
 * @set:       which fields below to apply: %CNF_CONFIG_MODE,
 *             %CNF_CONFIG_MEM_LIMIT, %CNF_CONFIG_HOOKS, %CNF_CONFIG_MARK,
 *             %CNF_CONFIG_IIF.
 * @mode:      enum cnf_mode.  %CNF_MODE_MARK needs a mark: set in the
 *             same call (%CNF_CONFIG_MARK) or before (-EINVAL otherwise).
 * @mem_limit: bytes the namespace may make the kernel hold: the sets'
 *             tables, the sets themselves (some 8 KB each beside their
 *             tables), the state and its per-CPU counters, timeouts, dump
 *             snapshots, and a replace's staging (its entries as copied
 *             in); growth past it fails with -ENOSPC.  Below the bytes
 *             already in use: -EINVAL.  ~0 sets no limit.
 * @hooks:     enum cnf_hooks.  Absent from kernels before it: a shorter
 *             struct, and -EINVAL for %CNF_CONFIG_HOOKS.
 * @reserved:  0.
 * @mark, @mark_mask: %CNF_CONFIG_MARK: in %CNF_MODE_MARK, the hooks set
 *             the bits of @mark under @mark_mask in the skb's mark of a
 *             packet whose source is listed, and accept it; the other
 *             bits of its mark stay.  @mark_mask must not be 0, nor may
 *             @mark have bits outside it (-EINVAL).  Kept until set again,
 *             in any mode.  Absent from kernels before mark mode.
 * @iif_count: %CNF_CONFIG_IIF: the names in @iif, at most %CNF_IIF_MAX
 *             (-E2BIG above).  0: the hooks judge packets of every device
 *             but loopback ones (the default).  Else only packets that
 *             arrive on a device @iif names, loopback or not, whenever it
 *             was created: the scope follows devices registered, renamed,
 *             moved in and out of the namespace.  Absent from kernels
 *             before the scope.
 * @reserved2: 0.
 * @iif:       %CNF_CONFIG_IIF: @iif_count device names, each NUL-padded
 *             to %CNF_IFNAMSIZ; a name that ends in '+' matches every
 *             device whose name begins with what precedes it ("eth+",
 *             "+" every device), as iptables' -i does.  A name that is
 *             empty, not NUL-terminated, or that no device could have
 *             (".", "..", '/', ':' or white space), fails with -EINVAL,
 *             as do non-zero bytes past the names.  The scope's memory,
 *             a bit per interface index up to 65,535 at least, counts
 *             against @mem_limit; a device the scope covers is refused
 *             (its registration or rename fails with -ENOSPC; one moved
 *             in from another namespace cannot be, and stays uncovered,
 *             the kernel log naming it) when its index is past what the
 *             scope was made for, twice the highest index of the
 *             namespace then: setting the scope again makes room.
 *             XDP and tc programs are attached per device: the scope
 *             concerns the hooks only.
 * @log_rate, @log_burst: %CNF_CONFIG_LOG_LIMIT: the lines a second the
 *             namespace's logging sets may give the kernel's packet
 *             logger together (%CNF_SET_F_LOG), 1 to %CNF_LOG_RATE_MAX,
 *             and how many may come at once after a quiet spell, 1 to
 *             %CNF_LOG_BURST_MAX (-EINVAL otherwise); a drop past them is
 *             counted (&struct cnf_stats.log_suppressed), not logged.
 *             %CNF_LOG_RATE_DEFAULT and %CNF_LOG_BURST_DEFAULT until set.
 *             Both absent from kernels before logging.
 */
struct cnf_config {
	__u32	set;
	__u32	mode;
	__u64	mem_limit;
	__u32	hooks;
	__u32	reserved;
	__u32	mark;
	__u32	mark_mask;
	__u32	iif_count;
	__u32	reserved2;
	char	iif[CNF_IIF_MAX][CNF_IFNAMSIZ];
	__u32	log_rate;
	__u32	log_burst;
};

#define CNF_CONFIG_MODE		_BITUL(0)
#define CNF_CONFIG_MEM_LIMIT	_BITUL(1)
#define CNF_CONFIG_HOOKS	_BITUL(2)
#define CNF_CONFIG_MARK		_BITUL(3)
#define CNF_CONFIG_IIF		_BITUL(4)
#define CNF_CONFIG_LOG_LIMIT	_BITUL(5)

#define CNF_LOG_RATE_DEFAULT	10
#define CNF_LOG_BURST_DEFAULT	20
#define CNF_LOG_RATE_MAX	1000000
#define CNF_LOG_BURST_MAX	1000000

/**
 * struct cnf_family_stats - per address family figures
 * @entries:  prefixes stored.
 * @capacity: slots in the table (entries it holds before it must grow).
 * @bytes:    memory used by the family's table.
 * @grows:    times the table was rebuilt larger.
 * @stashed:  entries kept in the overflow stash.
 * @checked:  packets the netfilter hook looked up.
 * @matched:  of those, packets whose source is listed: some block set
 *            covers it and no allow set does (dropped in drop mode).
 * @dropped:  of those, packets dropped.
 */
struct cnf_family_stats {
	__u64	entries;
	__u64	capacity;
	__u64	bytes;
	__u64	grows;
	__u64	stashed;
	__u64	checked;
	__u64	matched;
	__u64	dropped;
};

/**
 * struct cnf_lookup_stats - per address family, how prefixes are looked up
 * @prefixes: prefixes stored (an address counts as one; also in
 *            &struct cnf_family_stats.entries).
 * @keys:     keys in the lookup tables the prefixes expand into; a
 *            prefix of up to 16 bits sets a bit per /16 it covers in the
 *            family's /16 map instead, each counted as a key (and the
 *            map's 65,536 bits in &struct cnf_family_stats.capacity).
 * @lengths:  distinct prefix lengths stored.
 * @tables:   lookup tables a packet of the family is checked against, the
 *            /16 map included.
 */
struct cnf_lookup_stats {
	__u64	prefixes;
	__u64	keys;
	__u32	lengths;
	__u32	tables;
};

/**
 * struct cnf_expiry_stats - entries with a timeout, all sets together
 * @entries:     entries that have a timeout.
 * @bytes:       memory that keeping their timeouts uses.
 * @expired:     entries removed because their timeout ran out.
 * @late:        of those, the ones removed more than a second after.
 * @max_late_ms: the longest any was removed after its timeout ran out, in
 *               milliseconds.
 * @reserved:    0.
 */
struct cnf_expiry_stats {
	__u64	entries;
	__u64	bytes;
	__u64	expired;
	__u64	late;
	__u32	max_late_ms;
	__u32	reserved;
};

/**
 * struct cnf_path_stats - per address family, the packets BPF programs
 *                         looked up through the kfuncs of one hook: at
 *                         XDP bpf_cnf_lookup4() and bpf_cnf_lookup6(), at
 *                         tc bpf_cnf_skb_lookup4() and
 *                         bpf_cnf_skb_lookup6()
 * @checked: packets looked up.
 * @matched: of those, packets whose source is listed.
 * @dropped: of those, packets the kfunc told the program to drop (listed,
 *           in drop mode).  A packet XDP or tc drops never reaches the
 *           netfilter hook.  One XDP passed carries the kfuncs' mark
 *           there, which spares it the hook's lookup when the driver
 *           keeps XDP metadata: it is then not in &struct
 *           cnf_family_stats.  One tc passed is looked up by the hook
 *           again (when the hooks are on), and counted there too.
 */
struct cnf_path_stats {
	__u64	checked;
	__u64	matched;
	__u64	dropped;
};

/**
 * struct cnf_byte_stats - per path and address family, the bytes of the
 *                         packets its packet counters count
 * @checked, @matched, @dropped: beside the packet counters of the same
 *          names.  The netfilter hooks count a packet's IP datagram
 *          (skb->len at PRE_ROUTING, its IP header on), the XDP and tc
 *          paths its frame (its link-layer header on, as the program
 *          sees it).
 * @marked: the hooks' only: beside &struct cnf_stats.marked_v4 and
 *          .marked_v6; 0 for the other paths.
 */
struct cnf_byte_stats {
	__u64	checked;
	__u64	matched;
	__u64	dropped;
	__u64	marked;
};

/**
 * struct cnf_stats - state and counters of the namespace's filter
 * @v4, @v6:   per family, the namespace's totals: &struct
 *             cnf_family_stats.entries counts the prefixes of every set,
 *             capacity and bytes cover every table of the family, the
 *             sets' own and those the sets of a kind share; per set, see
 *             %CNF_IOC_SET_LIST.
 * @mem_limit: current memory limit in bytes (the module's mem_limit when
 *             inactive: what the first change will start from).
 * @mode:      enum cnf_mode.
 * @flags:     %CNF_STATS_F_INACTIVE: the namespace was never configured, or
 *             not since its last %CNF_IOC_RESET; every figure above is then
 *             0 but @mem_limit and @mode (kernels without the flag always
 *             had every namespace active and wrote 0 here, which reads
 *             correctly as "active").  %CNF_STATS_F_HOOKS_OFF: its
 *             netfilter hooks are off (%CNF_HOOKS_OFF).
 * @v4_lookup, @v6_lookup: per family, see &struct cnf_lookup_stats.
 *             Absent from kernels before prefixes: a shorter struct.
 * @expiry:    see &struct cnf_expiry_stats.  Absent from kernels before
 *             timeouts.
 * @xdp_v4, @xdp_v6: per family, the XDP path's counters, see &struct
 *             cnf_path_stats.  Absent from kernels before XDP.
 * @tc_v4, @tc_v6: per family, the tc path's counters, likewise.  Absent
 *             from kernels before the tc kfuncs.
 * @marked_v4, @marked_v6: per family, packets the hooks marked in
 *             %CNF_MODE_MARK (also in &struct cnf_family_stats.matched,
 *             not in .dropped).
 * @mark, @mark_mask, @iif_count, @reserved2, @iif: as &struct cnf_config
 *             has them: the mark, 0 and 0 when never set; the hooks'
 *             scope, @iif_count 0 for every device but loopback ones.
 *             All absent from kernels before mark mode and the scope.
 * @logged:    drops the hooks gave the kernel's packet logger for a
 *             logging set (%CNF_SET_F_LOG, %CNF_SET_F_NFLOG).
 * @log_suppressed: drops of a logging set past the namespace's rate
 *             limit: counted here instead.
 * @log_rate, @log_burst: the rate limit, as &struct cnf_config has it.
 *             The four absent from kernels before logging.
 * @bytes_v4, @bytes_v6, @xdp_bytes_v4, @xdp_bytes_v6, @tc_bytes_v4,
 *             @tc_bytes_v6: per path and family, the bytes beside the
 *             packet counters, see &struct cnf_byte_stats.  Absent from
 *             kernels before byte counters.
 * @rule_v4, @rule_v6: per family, the packets `-m cuckoo` rules (&struct
 *             cnf_xt_info) asked about, all rules of the namespace
 *             together: @checked each time a rule's match ran (a packet
 *             two rules ask about counts twice), @matched when the rule's
 *             set covered the address it asks about (and, with
 *             %CNF_XT_F_WITH_ALLOW, no allow set did), whatever its '!';
 *             @dropped 0: the rule's target decides, and iptables counts
 *             its rules' own.
 * @rule_bytes_v4, @rule_bytes_v6: their bytes, the IP datagram's (as the
 *             hooks count); @dropped and @marked 0.  The four absent from
 *             kernels before the rules' counters.
 */
struct cnf_stats {
	struct cnf_family_stats v4;
	struct cnf_family_stats v6;
	__u64	mem_limit;
	__u32	mode;
	__u32	flags;
	struct cnf_lookup_stats v4_lookup;
	struct cnf_lookup_stats v6_lookup;
	struct cnf_expiry_stats expiry;
	struct cnf_path_stats xdp_v4;
	struct cnf_path_stats xdp_v6;
	struct cnf_path_stats tc_v4;
	struct cnf_path_stats tc_v6;
	__u64	marked_v4;
	__u64	marked_v6;
	__u32	mark;
	__u32	mark_mask;
	__u32	iif_count;
	__u32	reserved2;
	char	iif[CNF_IIF_MAX][CNF_IFNAMSIZ];
	__u64	logged;
	__u64	log_suppressed;
	__u32	log_rate;
	__u32	log_burst;
	struct cnf_byte_stats bytes_v4;
	struct cnf_byte_stats bytes_v6;
	struct cnf_byte_stats xdp_bytes_v4;
	struct cnf_byte_stats xdp_bytes_v6;
	struct cnf_byte_stats tc_bytes_v4;
	struct cnf_byte_stats tc_bytes_v6;
	struct cnf_path_stats rule_v4;
	struct cnf_path_stats rule_v6;
	struct cnf_byte_stats rule_bytes_v4;
	struct cnf_byte_stats rule_bytes_v6;
};

#define CNF_STATS_F_INACTIVE	_BITUL(0)
#define CNF_STATS_F_HOOKS_OFF	_BITUL(1)

/**
 * struct cnf_set_req - name a set: create, destroy or flush it
 * @name:  the set's name.
 * @kind:  %CNF_IOC_SET_CREATE: enum cnf_set_kind; else 0.
 * @flags: %CNF_IOC_SET_CREATE: %CNF_SET_F_RULES_ONLY, and at most one
 *         of %CNF_SET_F_LOG and %CNF_SET_F_NFLOG, or 0.
 *         %CNF_IOC_SET_CHANGE: the set's logging from then on: one of
 *         %CNF_SET_F_LOG and %CNF_SET_F_NFLOG, or 0 for none.  Else 0.
 *         No other bit is defined (-EINVAL).
 * @timeout: %CNF_IOC_SET_CREATE: the timeout in seconds of entries added
 *         without one (0: none); else 0.  Absent from structs before
 *         timeouts.
 * @reserved: 0.
 * @log_group: with %CNF_SET_F_NFLOG, the NFLOG group, 0 to 65535; else
 *         0.  Absent from structs before logging.
 * @reserved2: 0.
 */
struct cnf_set_req {
	char	name[CNF_SET_NAME_LEN];
	__u32	kind;
	__u32	flags;
	__u32	timeout;
	__u32	reserved;
	__u32	log_group;
	__u32	reserved2;
};

/*
 * A set only iptables rules consult (`-m cuckoo --match-set`, struct
 * cnf_xt_info): it stays out of the verdict of the netfilter hooks and of
 * the XDP and tc kfuncs, which never look its entries up, so on its own it
 * drops nothing.  Fixed at creation.  Kernels before it: -EINVAL.
 */
#define CNF_SET_F_RULES_ONLY	_BITUL(0)

/*
 * A logging set: the netfilter hooks hand each packet they drop because
 * the set covers its source (the first such set in creation order) to the
 * kernel's packet logger, as iptables' LOG and NFLOG targets do, with the
 * prefix "cuckoo_nf NAME: ".  %CNF_SET_F_LOG: to the kernel log, through
 * the logger of type LOG (nf_log_syslog, which logs for a namespace other
 * than the initial one only under the sysctl
 * net.netfilter.nf_log_all_netns).  %CNF_SET_F_NFLOG: to the NFLOG group
 * &struct cnf_set_req.log_group (nfnetlink_log), which ulogd2 or
 * tcpdump -i nflog:GROUP reads.  The logger's module is loaded when
 * logging is turned on (-ENOENT when the kernel has none) and held while
 * the set logs.  The namespace's rate limit (&struct cnf_config.log_rate)
 * bounds the lines of all its sets together.  XDP and tc programs never
 * log: they count.  Not for a rules-only set nor an allow set (-EINVAL):
 * the hooks never drop a packet for either.  Kernels before logging:
 * -EINVAL.
 */
#define CNF_SET_F_LOG		_BITUL(1)
#define CNF_SET_F_NFLOG		_BITUL(2)

/**
 * struct cnf_set_swap - exchange the contents of two sets
 * @a, @b: the sets' names: two different sets of the same kind, both
 *         %CNF_SET_F_RULES_ONLY or neither (-EINVAL otherwise).
 */
struct cnf_set_swap {
	char	a[CNF_SET_NAME_LEN];
	char	b[CNF_SET_NAME_LEN];
};

/**
 * struct cnf_set_info - one set, as %CNF_IOC_SET_LIST reports it
 * @name:       the set's name.
 * @kind:       enum cnf_set_kind.
 * @timeout:    the set's default timeout in seconds, 0 for none (kernels
 *              before timeouts wrote 0 here).
 * @v4_entries: IPv4 prefixes stored.
 * @v6_entries: IPv6 prefixes stored.
 * @bytes:      memory the set's own tables use.  Lookup tables shared by
 *              the sets of a kind are in &struct cnf_stats only.
 * @matched:    packets whose source the set covered.  A block set counts
 *              every packet it covers (an allow set may have let it
 *              through); an allow set counts the packets some block set
 *              covered and it let through.
 * @timed:      entries that have a timeout.  Absent from kernels before
 *              timeouts (see @size in &struct cnf_set_list).
 * @flags:      %CNF_SET_F_RULES_ONLY when the set was created so.
 * @rules:      iptables rules (`-m cuckoo`) that name the set: while
 *              there is one, the set cannot be destroyed (-EBUSY) nor the
 *              namespace reset.  Neither counts the packets they match:
 *              @matched is the hooks' and kfuncs' count; iptables counts
 *              its rules' own.  Both absent from kernels before iptables
 *              rules.  @flags also has %CNF_SET_F_LOG or %CNF_SET_F_NFLOG
 *              while the set logs.
 * @log_group:  the NFLOG group under %CNF_SET_F_NFLOG, else 0.
 * @reserved:   0.  Both absent from kernels before logging.
 * @matched_bytes: the bytes of the packets @matched counts, as their
 *              path counts them (&struct cnf_byte_stats).  Absent from
 *              kernels before byte counters.
 */
struct cnf_set_info {
	char	name[CNF_SET_NAME_LEN];
	__u32	kind;
	__u32	timeout;
	__u64	v4_entries;
	__u64	v6_entries;
	__u64	bytes;
	__u64	matched;
	__u64	timed;
	__u32	flags;
	__u32	rules;
	__u32	log_group;
	__u32	reserved;
	__u64	matched_bytes;
};

/**
 * struct cnf_set_list - the namespace's sets
 * @sets:  user pointer to room for @count entries of @size bytes each.
 * @count: in: room in @sets.  out: sets written, in creation order (the
 *         default set first).
 * @total: out: sets the namespace has; more than @count when the room was
 *         too small.
 * @size:  in: the size of a &struct cnf_set_info as the caller knows it,
 *         at least up to @matched (-EINVAL).  The kernel writes that many
 *         bytes per set, zero past the fields it knows.
 * @flags: none defined; 0.
 *
 * A namespace never configured reports its default set, empty.
 */
struct cnf_set_list {
	__u64	sets;
	__u32	count;
	__u32	total;
	__u32	size;
	__u32	flags;
};

/**
 * struct cnf_version - which module answers, and which ABI it speaks
 * @abi:      the module's %CNF_ABI_VERSION.  It changes only when an
 *            existing call changes incompatibly; new calls, new flags and
 *            grown structs keep it.  A tool must refuse an @abi it does not
 *            know: it cannot tell what its calls would do.
 * @reserved: out: 0.
 * @version:  the module's version, as `modinfo -F version` shows it:
 *            NUL-terminated, every byte after the string 0.
 *
 * A module older than this call answers %CNF_IOC_VERSION with -ENOTTY; it
 * speaks ABI 1.  A larger struct from newer userspace gets its extra bytes
 * zeroed.
 */
struct cnf_version {
	__u32	abi;
	__u32	reserved;
	char	version[CNF_VERSION_LEN];
};

#define CNF_IOC_TYPE		0xC5

/*
 * Single entries take a &struct cnf_entry; a caller from before sets passes
 * a &struct cnf_addr, which means the default set.
 */
#define CNF_IOC_ADD		_IOW(CNF_IOC_TYPE, 0x01, struct cnf_entry)
#define CNF_IOC_DEL		_IOW(CNF_IOC_TYPE, 0x02, struct cnf_entry)
/*
 * Returns 0 when stored prefixes cover the given prefix (for an address:
 * when a packet from it would match), -ENOENT when they do not.
 */
#define CNF_IOC_TEST		_IOW(CNF_IOC_TYPE, 0x03, struct cnf_entry)
#define CNF_IOC_ADD_BATCH	_IOWR(CNF_IOC_TYPE, 0x04, struct cnf_batch)
#define CNF_IOC_DEL_BATCH	_IOWR(CNF_IOC_TYPE, 0x05, struct cnf_batch)
#define CNF_IOC_DUMP		_IOWR(CNF_IOC_TYPE, 0x06, struct cnf_dump)
/* Empties the default set; %CNF_IOC_SET_FLUSH empties any set. */
#define CNF_IOC_FLUSH		_IO(CNF_IOC_TYPE, 0x07)
#define CNF_IOC_STATS		_IOR(CNF_IOC_TYPE, 0x08, struct cnf_stats)
#define CNF_IOC_SET_CONFIG	_IOW(CNF_IOC_TYPE, 0x09, struct cnf_config)
/*
 * Remove every address and set and forget the mode, the memory limit, the
 * hooks setting and scope, the mark and the counters: the namespace's
 * hooks are unregistered and its memory freed, as if it had never been
 * configured.  Addresses stay effective until the
 * hooks are gone.  Returns 0 (also for a namespace without state, left as
 * it is), -EBUSY (nothing changed) while an iptables rule names one of its
 * sets (&struct cnf_set_info.rules), or -EINTR when a fatal signal came
 * while it waited for another call on the namespace.
 * %CNF_IOC_FLUSH, by contrast, empties the filter and keeps the rest.
 */
#define CNF_IOC_RESET		_IO(CNF_IOC_TYPE, 0x0a)
/*
 * As %CNF_IOC_TEST, and on success the struct's address is overwritten with
 * the longest prefix of the set that covers the given one.
 */
#define CNF_IOC_MATCH		_IOWR(CNF_IOC_TYPE, 0x0b, struct cnf_entry)
#define CNF_IOC_VERSION		_IOR(CNF_IOC_TYPE, 0x0c, struct cnf_version)
/*
 * A new, empty set: -EEXIST when the name is taken, -ENOSPC past
 * %CNF_SETS_MAX sets or the memory limit.
 */
#define CNF_IOC_SET_CREATE	_IOW(CNF_IOC_TYPE, 0x0d, struct cnf_set_req)
/*
 * Remove a set and its entries (-ENOENT when there is none of the name;
 * -EBUSY for the default set and for a set an iptables rule names, as
 * ipset refuses to destroy a set in use: &struct cnf_set_info.rules).  Its
 * sources stop matching when the call returns.
 */
#define CNF_IOC_SET_DESTROY	_IOW(CNF_IOC_TYPE, 0x0e, struct cnf_set_req)
/*
 * Exchange two sets' contents in one step, as ipset's swap does: each name
 * then holds what the other held.  Names, kinds and counters stay.
 */
#define CNF_IOC_SET_SWAP	_IOW(CNF_IOC_TYPE, 0x0f, struct cnf_set_swap)
#define CNF_IOC_SET_LIST	_IOWR(CNF_IOC_TYPE, 0x10, struct cnf_set_list)
/* Empty a set; it stays, with its kind and counters. */
#define CNF_IOC_SET_FLUSH	_IOW(CNF_IOC_TYPE, 0x11, struct cnf_set_req)
/*
 * Change a set's logging (&struct cnf_set_req.flags): its entries, kind
 * and counters stay.  Kernels before it: -ENOTTY.
 */
#define CNF_IOC_SET_CHANGE	_IOW(CNF_IOC_TYPE, 0x12, struct cnf_set_req)

/*
 * The iptables match `cuckoo` (ipt_cuckoo, ip6t_cuckoo; revision 0): does
 * a set of the rule's network namespace cover the packet's source or
 * destination address?  The set must exist when the rule is inserted
 * (-ENOENT otherwise, its name in the kernel log), and cannot be destroyed
 * while the rule is there (-EBUSY).
 */
#define CNF_XT_NAME		"cuckoo"

/**
 * struct cnf_xt_info - a `-m cuckoo` rule's match
 * @set:      the set's name, NUL-padded, as &struct cnf_set_req.name:
 *            "default" for the default set (an empty name is refused).
 * @flags:    %CNF_XT_F_DST: the packet's destination address, else its
 *            source.  %CNF_XT_F_INV: the match is inverted (`!`).
 *            %CNF_XT_F_WITH_ALLOW: an address the set covers matches
 *            only when no allow set the hooks consult covers it too (as
 *            the hooks decide); without it only the named set is asked.
 *            No other bit is defined (-EINVAL).
 * @reserved: 0 (-EINVAL otherwise).
 * @priv:     the kernel's (the set, held); userspace neither sets nor
 *            reads it: iptables copies the struct up to it only.
 */
struct cnf_xt_info {
	char	set[CNF_SET_NAME_LEN];
	__u32	flags;
	__u32	reserved;
	__aligned_u64	priv;
};

#define CNF_XT_F_DST		_BITUL(0)
#define CNF_XT_F_INV		_BITUL(1)
#define CNF_XT_F_WITH_ALLOW	_BITUL(2)

#endif /* _UAPI_LINUX_CUCKOO_NF_H */
