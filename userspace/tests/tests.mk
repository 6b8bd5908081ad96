# SPDX-License-Identifier: GPL-2.0
# Host unit tests of the filter core (included by userspace/Makefile).
#
#   make unit          build $(UNIT_TESTS) into build/tests/, run each, sum the
#                      kselftest "# Totals:" lines, end with "N passed, N failed";
#                      output kept in build/tests/unit.log, whose "# reliability:"
#                      lines go to build/bench/reliability.json
#   make unit SAN=1    the same with -fsanitize=address,undefined (every unit
#                      test, not just the core's: the flags go into CFLAGS)
#   make unit CNF_TEST_FULL=0
#                      the quick sizes (make check's: cnf_scaled() in
#                      cnf_test.h); the full ones are the default
#
# Binaries are rebuilt when the compiler flags change (a SAN=1 run after a
# plain one), recorded in build/tests/.flags.

ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	     -fno-omit-frame-pointer
CFLAGS	  += $(SAN_FLAGS)
LDFLAGS	  += $(SAN_FLAGS)
endif

CORE_TESTS   := $(B)/tests/test_filter $(B)/tests/test_filter_model \
		$(B)/tests/test_filter_prefix \
		$(B)/tests/test_filter_stress $(B)/tests/test_filter_interleave
UNIT_TESTS   += $(CORE_TESTS)
# Scripts, run from the tree: scripts/kernel-btf.sh's module BTF checks,
# stats --prometheus through promtool (on the fake device of test_ctl_cli).
UNIT_SCRIPTS := tests/test_kernel_btf.sh tests/test_ctl_prom.sh
TEST_HDRS    := tests/cnf_test.h $(KSFT_HARNESS)
UNIT_FLAGS    = $(CC) $(CFLAGS) $(LDFLAGS)
UNIT_STAMP   := $(B)/tests/.flags

# The full sizes unless asked otherwise; the tests read it (cnf_scaled).
CNF_TEST_FULL ?= 1
UNIT_SOURCE := make unit$(if $(filter 1,$(CNF_TEST_FULL)),, (quick size))

.PHONY: unit
unit: export CNF_TEST_FULL := $(CNF_TEST_FULL)
unit:
	@mkdir -p $(B)/tests
	@if [ "$$(cat $(UNIT_STAMP) 2>/dev/null)" != '$(UNIT_FLAGS)' ]; then \
		rm -f $(UNIT_TESTS) $(CNFCTL_OBJS) $(CNFCTL_LIB); echo '$(UNIT_FLAGS)' > $(UNIT_STAMP); fi
	@$(MAKE) --no-print-directory $(UNIT_TESTS)
	@CNF_UNIT_LOG=$(B)/tests/unit.log bash tests/run_unit.sh $(UNIT_TESTS) $(UNIT_SCRIPTS); rc=$$?; \
		python3 $(TOP)/scripts/reliability.py collect "$(UNIT_SOURCE)" \
		--where "host, userspace build of the core" $(B)/tests/unit.log; exit $$rc

# One translation unit per test plus the core, unchanged.
$(CORE_TESTS): $(B)/tests/%: tests/%.c $(TEST_HDRS) $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(KSFT) -Itests -o $@ $< $(CORE_SRCS) \
		$(LDFLAGS) $(CORE_LIBS)

# Every marked access of the core goes through the test's hooks.
$(B)/tests/test_filter_interleave: CFLAGS += -DCNF_USER_INSTRUMENT
