# SPDX-License-Identifier: GPL-2.0
# cuckooctl: the control tool, and host unit tests of its parsing and
# formatting (no device needed).  Included by userspace/Makefile.
#
# libcnfctl.a: what cuckooctl, the bouncer (crowdsec/) and the tests
# share - the device and its calls, parsing, formatting, set names, and
# reports of failures through the program's reporter (ctl_report.h).
# Built twice: with CFLAGS, and without the sanitizers for what runs
# under an LD_PRELOAD shim (a preloaded library must come before the
# ASan runtime); position-independent, for the shims.
CNFCTL_SRCS := ctl_dev.c ctl_report.c ctl_parse.c ctl_format.c ctl_setname.c
CNFCTL_HDRS := ctl_dev.h ctl_report.h ctl_parse.h ctl_format.h ctl_setname.h \
	$(TOP)/uapi/linux/cuckoo_nf.h
CNFCTL_LIB := $(B)/cnfctl/libcnfctl.a
CNFCTL_LIB_NOSAN := $(B)/cnfctl/nosan/libcnfctl.a
CNFCTL_OBJS := $(addprefix $(B)/cnfctl/,$(CNFCTL_SRCS:.c=.o))
CNFCTL_OBJS_NOSAN := $(addprefix $(B)/cnfctl/nosan/,$(CNFCTL_SRCS:.c=.o))

CTL_SRCS := cuckooctl.c ctl_entries.c ctl_config.c ctl_sets.c \
	ctl_load.c ctl_replace.c ctl_persist.c \
	ctl_local.c ctl_verdict.c ctl_ipset.c ctl_prom.c \
	ctl_xdp.c ctl_xdp_obj.S
CTL_HDRS := ctl.h ctl_local.h ctl_ipset.h ctl_prom.h $(CNFCTL_HDRS)
# cuckooctl xdp: libbpf (libbpf-dev) for its headers, opened at run time
# (dlopen), and the program embedded by ctl_xdp_obj.S.
CTL_LIBS := -ldl
CTL_XDP_OBJ := $(B)/cuckoo_xdp.o
CTL_XDP_FLAGS = -DCTL_XDP_OBJ='"$(CTL_XDP_OBJ)"'

# The XDP program, and its twin for tc, for BPF: libbpf's headers, the uapi
# headers of the host's multiarch directory (asm/types.h).  `make install`
# installs both.
BPF_CLANG ?= clang
BPF_CFLAGS := -O2 -g -target bpf -std=gnu11 -Wall -Wextra \
	-I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null || gcc -print-multiarch)
$(B)/cuckoo_xdp.o $(B)/cuckoo_tc.o: $(B)/%.o: xdp/%.bpf.c xdp/cuckoo_frame.h
	@mkdir -p $(dir $@)
	$(BPF_CLANG) $(BPF_CFLAGS) -c -o $@ $<

# The version: dkms.conf's PACKAGE_VERSION, as the module's.
CNF_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$$/\1/p' $(TOP)/dkms.conf)
ifeq ($(CNF_VERSION),)
$(error no PACKAGE_VERSION="..." line in $(TOP)/dkms.conf)
endif

CNFCTL_CFLAGS = -fPIC -DCTL_VERSION='"$(CNF_VERSION)"'
$(CNFCTL_OBJS): $(B)/cnfctl/%.o: %.c $(CNFCTL_HDRS) $(TOP)/dkms.conf
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CNFCTL_CFLAGS) -c -o $@ $<
$(CNFCTL_OBJS_NOSAN): $(B)/cnfctl/nosan/%.o: %.c $(CNFCTL_HDRS) $(TOP)/dkms.conf
	@mkdir -p $(@D)
	$(CC) $(filter-out $(SAN_FLAGS),$(CFLAGS)) $(CNFCTL_CFLAGS) -c -o $@ $<
$(CNFCTL_LIB): $(CNFCTL_OBJS)
$(CNFCTL_LIB_NOSAN): $(CNFCTL_OBJS_NOSAN)
$(CNFCTL_LIB) $(CNFCTL_LIB_NOSAN):
	rm -f $@
	$(AR) rcs $@ $^

$(B)/cuckooctl: $(CTL_SRCS) $(CTL_HDRS) $(TOP)/dkms.conf $(CTL_XDP_OBJ) $(CNFCTL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCTL_VERSION='"$(CNF_VERSION)"' $(CTL_XDP_FLAGS) -o $@ \
		$(CTL_SRCS) $(CNFCTL_LIB) $(LDFLAGS) $(CTL_LIBS)

# kselftest_harness.h: see scripts/kernel-source.mk.
# Its EXPECT_EQ(literal, unsigned) and TH_LOG() in loops trip these two
# warnings inside the harness's own macros.
CTL_TEST_CFLAGS = $(CFLAGS) -Wno-sign-compare -Wno-format-overflow -I$(KSFT) -I.

# With the formatting: reasons name the network they suggest.
$(B)/tests/test_ctl_parse: tests/test_ctl_parse.c $(CNFCTL_LIB) $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -o $@ tests/test_ctl_parse.c $(CNFCTL_LIB) $(LDFLAGS)

# With the parser: printed addresses must read back the same.
$(B)/tests/test_ctl_format: tests/test_ctl_format.c $(CNFCTL_LIB) $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -o $@ tests/test_ctl_format.c $(CNFCTL_LIB) $(LDFLAGS)

# ipset save output, read into the sets of a save.
$(B)/tests/test_ctl_ipset: tests/test_ctl_ipset.c ctl_ipset.c ctl_ipset.h \
			   $(CNFCTL_LIB) $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -o $@ tests/test_ctl_ipset.c ctl_ipset.c $(CNFCTL_LIB) $(LDFLAGS)

# The tool itself against emulated modules (tests/ctl_fake_dev.c, an
# LD_PRELOAD ioctl shim).  Tool and shim are built without sanitizers
# (SAN=1): a preloaded library would come before the ASan runtime.
CTL_CLI_CFLAGS = $(filter-out $(SAN_FLAGS),$(CFLAGS))

$(B)/tests/cuckooctl: $(CTL_SRCS) $(CTL_HDRS) $(TOP)/dkms.conf $(CTL_XDP_OBJ) \
		      $(CNFCTL_LIB_NOSAN)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_CLI_CFLAGS) -DCTL_VERSION='"$(CNF_VERSION)"' $(CTL_XDP_FLAGS) \
		-o $@ $(CTL_SRCS) $(CNFCTL_LIB_NOSAN) $(CTL_LIBS)

$(B)/tests/ctl_fake_dev.so: tests/ctl_fake_dev.c $(TOP)/uapi/linux/cuckoo_nf.h
	@mkdir -p $(dir $@)
	$(CC) $(CTL_CLI_CFLAGS) -shared -fPIC -o $@ $< -ldl

$(B)/tests/test_ctl_cli: tests/test_ctl_cli.c $(B)/tests/cuckooctl \
			 $(B)/tests/ctl_fake_dev.so $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -DCTL_BIN='"$(B)/tests/cuckooctl"' \
		-DFAKE_SO='"$(B)/tests/ctl_fake_dev.so"' -o $@ tests/test_ctl_cli.c

UNIT_TESTS += $(B)/tests/test_ctl_parse $(B)/tests/test_ctl_format \
	      $(B)/tests/test_ctl_ipset $(B)/tests/test_ctl_cli
