/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A filter's tables, each grown and shrunk as it fills; the tables an add
 * replaced, kept to undo it; the /16 maps (ftable.c).  Private to the
 * core.  Every function has its kernel-doc or comment where it is defined.
 */
#ifndef _CNF_FTABLE_H
#define _CNF_FTABLE_H

#include "core.h"

/*
 * Most times a batch's tally grows a table past the keys it holds, in one
 * step, once the batch had copies (cnf_tally_step()); the keys a table
 * that a batch makes counts as holding for its first step, before any
 * landed (cnf_ftable_ensure()).
 */
#define CNF_TALLY_STEP		64
#define CNF_TALLY_FIRST		16

struct cnf_table *cnf_deref(const struct cnf_filter *f,
			    struct cnf_table __rcu *const *tp);
int cnf_ftable_ensure(struct cnf_filter *f, struct cnf_table __rcu **tp,
		      enum cnf_layout layout);
void cnf_ftable_release(struct cnf_filter *f, struct cnf_table __rcu **tp);
u64 cnf_tally_step(u64 want, u64 have, bool copies);
bool cnf_ftable_has(const struct cnf_filter *f, struct cnf_table __rcu *const *tp,
		    const struct cnf_key *key);
void cnf_undo_begin(struct cnf_filter *f);
void cnf_undo_commit(struct cnf_filter *f);
void cnf_undo_rollback(struct cnf_filter *f);
int cnf_ftable_add(struct cnf_filter *f, struct cnf_table __rcu **tp,
		   const struct cnf_key *key);
int cnf_ftable_reserve(struct cnf_filter *f, struct cnf_table __rcu **tp,
		       u64 keys);
int cnf_ftable_del(struct cnf_filter *f, struct cnf_table __rcu **tp,
		   const struct cnf_key *key);
struct cnf_map *cnf_map_deref(const struct cnf_filter *f,
			      enum cnf_family fam);
int cnf_map_ensure(struct cnf_filter *f, enum cnf_family fam);
void cnf_map_release(struct cnf_filter *f, enum cnf_family fam);
struct cnf_table *cnf_ftable_alloc(struct cnf_filter *f,
				   enum cnf_layout layout,
				   unsigned int log, bool summary,
				   u32 **thash4);
unsigned int cnf_log_for(enum cnf_layout layout, u64 entries,
			 unsigned int min_log);
int cnf_ftable_grow(struct cnf_filter *f, struct cnf_table __rcu **tp,
		    unsigned int log);
void cnf_shrink_below(struct cnf_filter *f, struct cnf_table __rcu **tp,
		      unsigned int part, u64 room);
void cnf_ftable_drop(struct cnf_filter *f, struct cnf_table __rcu **tp);
void cnf_map_drop(struct cnf_filter *f, enum cnf_family fam);
void cnf_map_free(struct cnf_map *m);

#endif /* _CNF_FTABLE_H */
