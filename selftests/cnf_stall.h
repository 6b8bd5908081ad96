/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stall probes for the C selftests whose bounds are in the guest's time:
 * how long the VM's CPUs were kept from running while a test measured.
 * A host busy with other work deschedules the VM's vCPUs, and every
 * timer and work of the guest then runs late by as much, which no code
 * of the module can help.  One thread per CPU, pinned there, sleeps
 * CNF_STALL_TICK_MS at a time and keeps the most any of its sleeps
 * overran: the worst a timer of that CPU could have fired late for that
 * reason.  A test adds the worst of them to a bound it derives from the
 * module's own promise, so that its verdict does not depend on the
 * host's load.
 */
#ifndef _CNF_SELFTEST_STALL_H
#define _CNF_SELFTEST_STALL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define CNF_STALL_TICK_MS	10
#define CNF_STALL_CPUS		64

struct cnf_stall_probe {
	pthread_t thread;
	int cpu;
	atomic_bool *stop;
	unsigned int worst_ms;
};

struct cnf_stall {
	atomic_bool stop;
	unsigned int n;
	struct cnf_stall_probe probe[CNF_STALL_CPUS];
};

static inline uint64_t cnf_stall_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static inline void *cnf_stall_probe_run(void *arg)
{
	struct cnf_stall_probe *p = arg;
	struct timespec tick = { 0, CNF_STALL_TICK_MS * 1000000L };
	cpu_set_t cpus;
	uint64_t t;

	CPU_ZERO(&cpus);
	CPU_SET(p->cpu, &cpus);
	/* A CPU that went offline is nobody's: its probe measures nothing. */
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus))
		return NULL;
	while (!atomic_load(p->stop)) {
		t = cnf_stall_mono_ms();
		nanosleep(&tick, NULL);
		t = cnf_stall_mono_ms() - t;
		if (t > CNF_STALL_TICK_MS && t - CNF_STALL_TICK_MS > p->worst_ms)
			p->worst_ms = t - CNF_STALL_TICK_MS;
	}
	return NULL;
}

/* Start a probe on each online CPU.  Return: 0, or pthread_create()'s error. */
static inline int cnf_stall_start(struct cnf_stall *s)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int i;
	int err;

	atomic_init(&s->stop, false);
	s->n = 0;
	cpus = cpus < 1 ? 1 : cpus > CNF_STALL_CPUS ? CNF_STALL_CPUS : cpus;
	for (i = 0; i < cpus; i++) {
		s->probe[i] = (struct cnf_stall_probe){ .cpu = i, .stop = &s->stop };
		err = pthread_create(&s->probe[i].thread, NULL,
				     cnf_stall_probe_run, &s->probe[i]);
		if (err)
			break;
		s->n++;
	}
	return s->n == cpus ? 0 : err;
}

/* Stop the probes.  Return: the longest any CPU was kept from running, ms. */
static inline unsigned int cnf_stall_stop(struct cnf_stall *s)
{
	unsigned int i, worst = 0;

	atomic_store(&s->stop, true);
	for (i = 0; i < s->n; i++) {
		pthread_join(s->probe[i].thread, NULL);
		if (s->probe[i].worst_ms > worst)
			worst = s->probe[i].worst_ms;
	}
	s->n = 0;
	return worst;
}

#endif /* _CNF_SELFTEST_STALL_H */
