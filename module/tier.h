/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a filter's tiers and /16 maps follow the prefixes it stores
 * (tier.c): an add prepared, then published or undone; a delete.
 * Private to the core; under the filter's lock.
 */
#ifndef _CNF_TIER_H
#define _CNF_TIER_H

#include "core.h"

void cnf_table_key_prefix(enum cnf_family fam, unsigned int tl,
			  const struct cnf_key *k, struct cnf_key *p);
bool cnf_derived(struct cnf_filter *f, const struct cnf_key *k,
		 unsigned int skip);
bool cnf_stored(struct cnf_filter *f, const struct cnf_key *p);
int cnf_tier_prepare(struct cnf_filter *f, const struct cnf_key *key,
		     bool strict);
int cnf_tier_publish(struct cnf_filter *f, const struct cnf_key *key);
void cnf_map_unprepare(struct cnf_filter *f, const struct cnf_key *p);
void cnf_expanded_unprepare(struct cnf_filter *f,
			    const struct cnf_key *p);
void cnf_native_unprepare(struct cnf_filter *f, const struct cnf_key *p);
void cnf_map_del(struct cnf_filter *f, const struct cnf_key *p);
bool cnf_tier_plain(const struct cnf_filter *f, const struct cnf_key *p);
int cnf_tier_del(struct cnf_filter *f, const struct cnf_key *p);
void cnf_del_native(struct cnf_filter *f, const struct cnf_key *p);
void cnf_uncover_all(struct cnf_filter *f, const struct cnf_key *p,
		     unsigned int tl, u32 n);

#endif /* _CNF_TIER_H */
