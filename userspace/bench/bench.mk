# SPDX-License-Identifier: GPL-2.0
# Benchmark of the filter core (included by userspace/Makefile).
#   make bench    build build/bench/bench_core with plain -O2 (portable, no
#                 -march=native, no sanitizers whatever SAN says), run it:
#                 a table on stdout, the same figures in build/bench/core.json
#   build/bench/bench_core [-r RUNS] [-s ipv4:1K,ipv4:64K,ipv4:1M,ipv4:16M,ipv6:1M,
#                 pfx4:1K,pfx4:10K,pfx4:100K,pfx6:1K,pfx6:10K,pfx6:100K] [JSON]
#                 some sizes only, with fewer or more runs (median kept)
BENCH_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
		-D_GNU_SOURCE -I$(TOP)/uapi -I$(TOP)/module \
		-I$(TOP)/userspace/lib -Itests

.PHONY: bench
bench: $(B)/bench/bench_core
	$< $(B)/bench/core.json

$(B)/bench/bench_core: bench/bench_core.c bench/ref12.c bench/ref12.h \
		       tests/cnf_test.h $(CORE_SRCS) \
		       $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< bench/ref12.c $(CORE_SRCS) $(CORE_LIBS) -lm
