/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory of filters and the budgets they count against (budget.c).
 * Every function has its kernel-doc where it is defined.
 */
#ifndef _CNF_BUDGET_H
#define _CNF_BUDGET_H

#include "types.h"

struct cnf_filter;

void cnf_budget_init(struct cnf_budget *b, u64 limit);
u64 cnf_budget_used(const struct cnf_budget *b);
int cnf_budget_set_limit(struct cnf_budget *b, u64 bytes);
int cnf_budget_charge(struct cnf_budget *b, u64 bytes);
void cnf_budget_uncharge(struct cnf_budget *b, u64 bytes);
int cnf_budget_merge(struct cnf_budget *to, struct cnf_budget *from);
u64 cnf_filter_bytes(const struct cnf_filter *f);
bool cnf_fits(const struct cnf_filter *f, u64 bytes);

#endif /* _CNF_BUDGET_H */
