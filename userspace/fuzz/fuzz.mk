# SPDX-License-Identifier: GPL-2.0
# libFuzzer target of the filter core (included by userspace/Makefile).
#
#   make fuzz            build build/fuzz/fuzz_filter (clang, libFuzzer, ASan,
#                        UBSan) and build/fuzz/fuzz_filter_replay (plain $(CC))
#   make fuzz-run        bounded run: FUZZ_RUNS inputs (default 200000), seed
#                        FUZZ_SEED, new inputs kept in build/fuzz/corpus,
#                        crashers in build/fuzz/
#   make fuzz-replay     replay fuzz/corpus and build/fuzz/corpus without
#                        libFuzzer (any compiler, honours SAN=1)
#
# Unit tests: test_fuzz_replay always (committed corpus plus 4000 seeded
# random inputs); test_fuzz_filter when clang is installed (a bounded
# libFuzzer run, FUZZ_UNIT_RUNS inputs after the corpus, about 20 s here
# under ASan: prefixes of up to 128 keys each make an input 70 times the
# work of one of addresses; make fuzz-run runs longer).
FUZZ_CC		?= clang
FUZZ_SEED	?= 1
FUZZ_RUNS	?= 200000
FUZZ_UNIT_RUNS	?= 200
FUZZ_MAX_LEN	:= 1024
FUZZ_CORPUS	:= $(CURDIR)/fuzz/corpus
FUZZ_SRC	:= fuzz/fuzz_filter.c
FUZZ_DEPS	:= $(FUZZ_SRC) tests/cnf_test.h $(CORE_SRCS) $(CORE_HDRS)
FUZZ_CFLAGS	:= -O1 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
		   -D_GNU_SOURCE -I$(TOP)/uapi -I$(TOP)/module \
		   -I$(TOP)/userspace/lib -Itests \
		   -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
HAVE_FUZZ_CC	:= $(shell command -v $(FUZZ_CC) 2>/dev/null)

.PHONY: fuzz fuzz-run fuzz-replay
fuzz: $(B)/fuzz/fuzz_filter $(B)/fuzz/fuzz_filter_replay

$(B)/fuzz/fuzz_filter: $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SRC) $(CORE_SRCS) $(CORE_LIBS)

# The same target as a plain program; -DCNF_FUZZ_STANDALONE adds a main().
$(B)/fuzz/fuzz_filter_replay $(B)/tests/test_fuzz_replay: $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests -DCNF_FUZZ_STANDALONE \
		-DCNF_FUZZ_CORPUS='"$(FUZZ_CORPUS)"' -o $@ $(FUZZ_SRC) \
		$(CORE_SRCS) $(LDFLAGS) $(CORE_LIBS)

fuzz-run: $(B)/fuzz/fuzz_filter
	bash fuzz/run_bounded.sh $< $(FUZZ_RUNS) $(FUZZ_SEED) $(FUZZ_MAX_LEN) \
		$(B)/fuzz/corpus $(FUZZ_CORPUS)

fuzz-replay: $(B)/fuzz/fuzz_filter_replay
	$< $(FUZZ_CORPUS) $(wildcard $(B)/fuzz/corpus)

UNIT_TESTS += $(B)/tests/test_fuzz_replay
ifneq ($(HAVE_FUZZ_CC),)
UNIT_TESTS += $(B)/tests/test_fuzz_filter

# A bounded libFuzzer run as a unit test: a fresh corpus directory each time,
# so the run depends only on the seed and the committed corpus.
$(B)/tests/test_fuzz_filter: $(B)/fuzz/fuzz_filter fuzz/run_bounded.sh fuzz/fuzz.mk
	@mkdir -p $(@D)
	printf '#!/bin/sh\nd=$$(mktemp -d) || exit 1\nbash %s %s %s %s %s "$$d" %s\nrc=$$?\nrm -rf "$$d"\nexit $$rc\n' \
		$(CURDIR)/fuzz/run_bounded.sh $(B)/fuzz/fuzz_filter \
		$(FUZZ_UNIT_RUNS) $(FUZZ_SEED) $(FUZZ_MAX_LEN) \
		$(FUZZ_CORPUS) > $@
	chmod +x $@
endif
