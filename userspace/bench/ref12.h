/* SPDX-License-Identifier: GPL-2.0 */
/* The benchmark's baseline filter (see ref12.c). */
#ifndef _CNF_REF12_H
#define _CNF_REF12_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

struct ref12;

/* 2^@log buckets; NULL when out of memory. */
struct ref12 *ref12_create(unsigned int log, u64 seed);
void ref12_destroy(struct ref12 *r);
/* 0, or -1 when the kicks ran out (a fingerprint was lost). */
int ref12_add(struct ref12 *r, u32 key);
/* Probabilistic: true for every added key, and for some others. */
bool ref12_lookup(const struct ref12 *r, u32 key);

#endif /* _CNF_REF12_H */
