/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: what `ipset save` prints, read as the sets of a save, for
 * `restore --from-ipset` (ctl_ipset.c).
 *
 * Nothing here touches the device, so all of it is unit-tested on the host
 * (userspace/tests/test_ctl_ipset.c).
 */
#ifndef _CTL_IPSET_H
#define _CTL_IPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ctl_parse.h"

/* The allow set that takes the nomatch entries of set NAME. */
#define CTL_IPSET_NOMATCH	"-nomatch"

/*
 * What ctl_ipset_read() has to say about line @lineno: an error (@note
 * false) or a note on what it ignored.
 */
typedef void ctl_ipset_say_fn(void *ctx, unsigned long lineno, bool note,
			      const char *text);

/*
 * Read the `create` and `add` lines of @f, an `ipset save` (or an ipset
 * restore file of those two commands), into @in, initialised with
 * CTL_PARSE_F_SETS: a section per `create` of a set of type hash:ip,
 * hash:net or bitmap:ip, in the order created, a block set with the
 * create's timeout as its default, then its entries with their own
 * timeouts; `netmask N` makes a set's addresses /N prefixes.  Entries
 * marked nomatch go to an allow set NAME-nomatch, made after NAME.
 *
 * A line that cannot be mapped (another type or command, an entry of
 * the wrong family, a set never created...) is passed to @say with @ctx
 * and counted in *@bad; what is ignored (comments, counters, skbinfo,
 * forceadd) is said once per option, as a note.  Sizes (hashsize,
 * maxelem, bucketsize, initval, a bitmap's range) are passed over in
 * silence: cuckoo_nf sizes its tables itself.
 *
 * Returns 0, or -errno on a read or allocation failure.
 */
int ctl_ipset_read(struct ctl_input *in, FILE *f, ctl_ipset_say_fn *say,
		   void *ctx, size_t *bad);

#endif /* _CTL_IPSET_H */
