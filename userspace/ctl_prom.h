/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cuckooctl: the namespace's figures in Prometheus' text exposition
 * format, for node_exporter's textfile collector (ctl_prom.c).
 */
#ifndef _CTL_PROM_H
#define _CTL_PROM_H

#include <stddef.h>
#include <stdio.h>
#include <linux/cuckoo_nf.h>

/*
 * `stats --prometheus`: the figures of @st, of @ex (NULL: a module
 * without timeouts) and of the @nsets sets @sets (NULL: a module without
 * sets) as metrics named cuckoo_nf_*, each with its HELP and TYPE lines;
 * cuckooctl(8) lists them.
 */
void ctl_print_stats_prometheus(FILE *out, const struct cnf_stats *st,
				const struct cnf_expiry_stats *ex,
				const struct cnf_set_info *sets, size_t nsets);

#endif /* _CTL_PROM_H */
