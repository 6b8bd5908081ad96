// SPDX-License-Identifier: GPL-2.0
/*
 * What a filter's tables, maps and directory use, and the budget that
 * filters count against together: whether more bytes fit, and charges
 * that are not tables (struct cnf_budget, types.h).
 */
#include "budget.h"
#include "core.h"

/* A table of a filter whose writers the budget's lock serialises. */
static const struct cnf_table *cnf_budget_deref(struct cnf_table __rcu *const *tp)
{
	return rcu_dereference_protected(*tp, 1);
}

/**
 * cnf_filter_bytes - the memory a filter's tables use
 * @f: the filter, under cnf_filter_lock() or its budget's lock
 *
 * Return: bytes of its tables, maps and directory, the replaced tables an
 * add keeps included.
 */
u64 cnf_filter_bytes(const struct cnf_filter *f)
{
	const struct cnf_v6dir *d = rcu_dereference_protected(f->v6dir, 1);
	const struct cnf_table *t;
	const struct cnf_map *m;
	unsigned int fam, len, i;
	u64 bytes = (d ? d->bytes : 0) + (f->thash4 ? cnf_thash4_bytes() : 0) +
		    (f->moves.ring ? (f->moves.mask + 1ULL) * sizeof(u64) : 0);

	for (i = 0; i < f->undo_n; i++)
		bytes += f->undo[i].old->bytes;
	for (fam = 0; fam < CNF_NFAMILIES; fam++) {
		m = rcu_dereference_protected(f->map[fam], 1);
		bytes += m ? m->bytes : 0;
		for (i = 0; i < CNF_STORE_TABLES; i++) {
			t = cnf_budget_deref(&f->store[fam][i]);
			bytes += t ? t->bytes : 0;
		}
		for (len = 0; len < CNF_TIERS; len++) {
			t = cnf_budget_deref(&f->tier[fam][len]);
			bytes += t ? t->bytes : 0;
		}
	}
	return bytes;
}

/**
 * cnf_budget_used - what counts against a budget's limit
 * @b: the budget, under the lock that serialises its filters
 *
 * Return: the bytes of every filter's tables, and the charges.
 */
u64 cnf_budget_used(const struct cnf_budget *b)
{
	const struct cnf_filter *f;
	u64 bytes = b->charged;

	for (f = b->filters; f; f = f->budget_next)
		bytes += cnf_filter_bytes(f);
	return bytes;
}

/**
 * cnf_fits - would more bytes fit in a filter's budget
 * @f: the filter, under cnf_filter_lock()
 * @bytes: the bytes
 *
 * Return: true if they would.
 */
bool cnf_fits(const struct cnf_filter *f, u64 bytes)
{
	return cnf_budget_used(f->budget) + bytes <= f->budget->limit;
}

/**
 * cnf_budget_charge - count memory held for a budget's users
 * @b: the budget, under the lock that serialises its filters
 * @bytes: what a user holds (a dump's snapshot)
 *
 * Return: 0, or -ENOSPC past the limit (nothing charged).
 */
int cnf_budget_charge(struct cnf_budget *b, u64 bytes)
{
	if (cnf_budget_used(b) + bytes > b->limit)
		return -ENOSPC;
	b->charged += bytes;
	return 0;
}

/**
 * cnf_budget_uncharge - give back what cnf_budget_charge() counted
 * @b: the budget, under the lock that serialises its filters
 * @bytes: as charged
 */
void cnf_budget_uncharge(struct cnf_budget *b, u64 bytes)
{
	b->charged -= min(bytes, b->charged);
}

/**
 * cnf_budget_set_limit - change a budget's limit
 * @b: the budget, under the lock that serialises its filters
 * @bytes: the new limit
 *
 * Return: 0, or -EINVAL when its filters already use more than @bytes.
 */
int cnf_budget_set_limit(struct cnf_budget *b, u64 bytes)
{
	if (bytes < cnf_budget_used(b))
		return -EINVAL;
	b->limit = bytes;
	return 0;
}

/**
 * cnf_budget_merge - move the filters and charges of one budget to another
 * @to: the budget they join, under the lock that serialises its filters
 * @from: a budget whose filters nobody else changes now; left empty
 *
 * Contents built aside, within a budget of their own and without the lock
 * of @to, join @to in a step as long as @from has filters.
 *
 * Return: 0, or -ENOSPC when what @from uses does not fit in @to's limit
 * beside what @to uses: nothing changed.
 */
int cnf_budget_merge(struct cnf_budget *to, struct cnf_budget *from)
{
	u64 used = cnf_budget_used(to), more = cnf_budget_used(from);
	struct cnf_filter *f;

	if (used > to->limit || more > to->limit - used)
		return -ENOSPC;
	while ((f = from->filters)) {
		from->filters = f->budget_next;
		f->budget = to;
		f->budget_next = to->filters;
		to->filters = f;
	}
	to->charged += from->charged;
	from->charged = 0;
	return 0;
}

/**
 * cnf_budget_init - a budget with no filter yet
 * @b: the budget
 * @limit: its limit in bytes
 */
void cnf_budget_init(struct cnf_budget *b, u64 limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}
