/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The prefix store (store.c): the prefixes a filter's lookup tables
 * cannot tell back.  Private to the core; writers only, under the
 * filter's lock.
 */
#ifndef _CNF_STORE_H
#define _CNF_STORE_H

#include "core.h"

void cnf_store_key_prefix(enum cnf_family fam, const struct cnf_key *k,
			  struct cnf_key *p);
unsigned int cnf_store_index(const struct cnf_key *p);
bool cnf_store_has(struct cnf_filter *f, const struct cnf_key *p);
int cnf_store_add(struct cnf_filter *f, const struct cnf_key *p);
void cnf_store_del(struct cnf_filter *f, const struct cnf_key *p);

#endif /* _CNF_STORE_H */
