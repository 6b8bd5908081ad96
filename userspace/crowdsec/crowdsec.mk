# SPDX-License-Identifier: GPL-2.0
# cuckoo-crowdsec-bouncer (userspace/crowdsec/), its host unit tests and its
# test against a real CrowdSec Local API (included by userspace/Makefile).
# Built when libcurl's, json-c's, libyaml's, zlib's and libmicrohttpd's
# development files are installed (libcurl4-openssl-dev, libjson-c-dev,
# libyaml-dev, zlib1g-dev, libmicrohttpd-dev: scripts/deps.sh); else
# `make` says so and goes on without it.
CBN_DIR  := crowdsec
CBN_PKGS := libcurl json-c yaml-0.1 zlib libmicrohttpd
CBN_HAVE := $(shell pkg-config --exists $(CBN_PKGS) 2>/dev/null && echo y)
CBN_SRCS := $(addprefix $(CBN_DIR)/,main.c config.c duration.c decisions.c \
	    state.c dev.c lapi.c log.c origin.c metrics.c)
# The parts that touch neither network nor device, for the unit tests.
CBN_PARSE_SRCS := $(addprefix $(CBN_DIR)/,config.c duration.c decisions.c \
		  state.c log.c origin.c metrics.c)
CBN_HDRS := $(CBN_DIR)/cbn.h $(CNFCTL_HDRS)
CBN_BIN  := $(B)/cuckoo-crowdsec-bouncer

ifeq ($(CBN_HAVE),y)
CBN_CFLAGS := $(CFLAGS) -DCBN_VERSION='"$(CNF_VERSION)"' \
	      $(shell pkg-config --cflags $(CBN_PKGS))
CBN_LIBS := $(shell pkg-config --libs $(CBN_PKGS))

all: $(CBN_BIN)

$(CBN_BIN): $(CBN_SRCS) $(CNFCTL_LIB) $(CBN_HDRS) $(TOP)/dkms.conf
	@mkdir -p $(@D)
	$(CC) $(CBN_CFLAGS) -o $@ $(CBN_SRCS) $(CNFCTL_LIB) $(LDFLAGS) $(CBN_LIBS)

# Prometheus' checker, when scripts/promtool.sh fetched it: the unit test
# of /metrics' text passes its text through it too.
CBN_PROMTOOL := $(shell $(TOP)/scripts/promtool.sh path 2>/dev/null)
CBN_TEST_CFLAGS = $(CBN_CFLAGS) -Wno-sign-compare -I$(KSFT) -I. \
		  -DCBN_FIXTURES='"$(abspath $(CBN_DIR)/tests/cfb)"' \
		  $(if $(CBN_PROMTOOL),-DCBN_PROMTOOL='"$(CBN_PROMTOOL)"')

$(B)/tests/test_cbn_parse: $(CBN_DIR)/tests/test_cbn_parse.c $(CBN_PARSE_SRCS) \
			   $(CNFCTL_LIB) $(CBN_HDRS) $(KSFT_HARNESS) \
			   $(wildcard $(CBN_DIR)/tests/cfb/*.yaml*)
	@mkdir -p $(@D)
	$(CC) $(CBN_TEST_CFLAGS) -o $@ $< $(CBN_PARSE_SRCS) $(CNFCTL_LIB) \
		$(LDFLAGS) $(CBN_LIBS)

# The daemon against crowdsec's Local API and a scripted one
# (fake_lapi.py), the device emulated by an LD_PRELOAD shim: both without
# sanitizers (the shim must come first).
$(B)/tests/cbn/cuckoo-crowdsec-bouncer: $(CBN_SRCS) $(CNFCTL_LIB_NOSAN) $(CBN_HDRS) \
					$(TOP)/dkms.conf
	@mkdir -p $(@D)
	$(CC) $(filter-out $(SAN_FLAGS),$(CBN_CFLAGS)) -o $@ $(CBN_SRCS) \
		$(CNFCTL_LIB_NOSAN) $(CBN_LIBS)

$(B)/tests/cbn/cbn_fake_dev.so: $(CBN_DIR)/tests/cbn_fake_dev.c $(CNFCTL_LIB_NOSAN) \
				$(CBN_HDRS)
	@mkdir -p $(@D)
	$(CC) $(filter-out $(SAN_FLAGS),$(CFLAGS)) -shared -fPIC -o $@ $< \
		$(CNFCTL_LIB_NOSAN) -ldl

# test_cbn_lapi: the bouncer against crowdsec's Local API (make
# engine-unit); test_cbn_tls: the same daemon over HTTPS with a client
# certificate, against fake_lapi.py alone: no crowdsec needed, so in make
# unit.  Both with the fake Local API and the certificates' maker beside
# them.
$(B)/tests/test_cbn_lapi $(B)/tests/test_cbn_tls: $(B)/tests/%: \
			  $(CBN_DIR)/tests/%.sh \
			  $(CBN_DIR)/tests/fake_lapi.py $(CBN_DIR)/tests/cbn_certs.sh \
			  $(B)/tests/cbn/cuckoo-crowdsec-bouncer \
			  $(B)/tests/cbn/cbn_fake_dev.so
	@mkdir -p $(@D)
	cp $(CBN_DIR)/tests/fake_lapi.py $(CBN_DIR)/tests/cbn_certs.sh $(B)/tests/cbn/
	sed 's,@CBN_TESTDIR@,$(B)/tests/cbn,' $< >$@
	chmod +x $@

UNIT_TESTS += $(B)/tests/test_cbn_parse $(B)/tests/test_cbn_tls

# The engines' host tests: the bouncer against crowdsec's own Local API,
# and fail2ban's actions in fail2ban-server (ENGINE_TESTS, from
# ../fail2ban/fail2ban.mk): they need the engine packages (scripts/deps.sh
# --engines), so they run in make check-engines, not in make unit.
.PHONY: engine-unit
engine-unit: $(B)/tests/test_cbn_lapi $(ENGINE_TESTS)
	@CNF_UNIT_LOG=$(B)/tests/engine-unit.log bash tests/run_unit.sh $^
else
all: cbn-missing

.PHONY: cbn-missing engine-unit
engine-unit: cbn-missing
	@false
cbn-missing:
	@echo "userspace: cuckoo-crowdsec-bouncer not built: no development files of $(CBN_PKGS) (pkg-config); install libcurl4-openssl-dev, libjson-c-dev, libyaml-dev, zlib1g-dev and libmicrohttpd-dev (scripts/deps.sh)"
endif
