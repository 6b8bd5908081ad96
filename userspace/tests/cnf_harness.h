/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest harness, with a default timeout sized for the
 * machines the unit tests run on.
 *
 * The harness kills a test after 30 s.  make check runs the unit tests
 * beside two TCG VMs on a 2-core host, where a test gets a quarter of a
 * CPU or less: the largest plain TEST() here, ipv6_net64_tier_bytes
 * (a 2^18-bucket tier built key by key), takes about 3.5 s of CPU, took
 * 13.5 s of wall time there, and hit the 30 s limit on a host busier
 * still.  A timeout is for a test that hangs, not one that was slowed
 * down: 120 s is over 30 times that CPU time, 4 times the harness's own,
 * and still well inside what make check may take.  Tests
 * that run far longer on purpose (the interleaving and model tests) set
 * their own with TEST_F_TIMEOUT().
 */
#ifndef _CNF_HARNESS_H
#define _CNF_HARNESS_H

#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	120

#endif /* _CNF_HARNESS_H */
