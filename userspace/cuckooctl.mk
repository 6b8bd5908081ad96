# SPDX-License-Identifier: GPL-2.0
# cuckooctl: the control tool, and host unit tests of its parsing and
# formatting (no device needed).  Included by userspace/Makefile.
CTL_SRCS := cuckooctl.c ctl_entries.c ctl_config.c ctl_sets.c ctl_dev.c \
	ctl_load.c ctl_replace.c ctl_persist.c ctl_parse.c ctl_format.c ctl_setname.c \
	ctl_local.c ctl_verdict.c ctl_ipset.c ctl_prom.c \
	ctl_xdp.c ctl_xdp_obj.S
CTL_HDRS := ctl.h ctl_parse.h ctl_format.h ctl_setname.h ctl_local.h ctl_ipset.h ctl_prom.h \
	$(TOP)/uapi/linux/cuckoo_nf.h
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

$(B)/cuckooctl: $(CTL_SRCS) $(CTL_HDRS) $(TOP)/dkms.conf $(CTL_XDP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DCTL_VERSION='"$(CNF_VERSION)"' $(CTL_XDP_FLAGS) -o $@ \
		$(CTL_SRCS) $(LDFLAGS) $(CTL_LIBS)

# kselftest_harness.h: see scripts/kernel-source.mk.
# Its EXPECT_EQ(literal, unsigned) and TH_LOG() in loops trip these two
# warnings inside the harness's own macros.
CTL_TEST_CFLAGS = $(CFLAGS) -Wno-sign-compare -Wno-format-overflow -I$(KSFT) -I.

# With the formatting: reasons name the network they suggest.
$(B)/tests/test_ctl_parse: tests/test_ctl_parse.c ctl_parse.c ctl_parse.h \
			   ctl_format.c ctl_format.h ctl_setname.c $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -o $@ tests/test_ctl_parse.c ctl_parse.c ctl_format.c ctl_setname.c

# With the parser: printed addresses must read back the same.
$(B)/tests/test_ctl_format: tests/test_ctl_format.c ctl_format.c ctl_format.h \
			    ctl_parse.c ctl_parse.h ctl_setname.c $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -o $@ tests/test_ctl_format.c ctl_format.c ctl_parse.c ctl_setname.c

# ipset save output, read into the sets of a save.
$(B)/tests/test_ctl_ipset: tests/test_ctl_ipset.c ctl_ipset.c ctl_ipset.h \
			   ctl_parse.c ctl_parse.h ctl_format.c ctl_setname.c $(KSFT_HARNESS)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_TEST_CFLAGS) -o $@ tests/test_ctl_ipset.c ctl_ipset.c ctl_parse.c ctl_format.c ctl_setname.c

# The tool itself against emulated modules (tests/ctl_fake_dev.c, an
# LD_PRELOAD ioctl shim).  Tool and shim are built without sanitizers
# (SAN=1): a preloaded library would come before the ASan runtime.
CTL_CLI_CFLAGS = $(filter-out $(SAN_FLAGS),$(CFLAGS))

$(B)/tests/cuckooctl: $(CTL_SRCS) $(CTL_HDRS) $(TOP)/dkms.conf $(CTL_XDP_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CTL_CLI_CFLAGS) -DCTL_VERSION='"$(CNF_VERSION)"' $(CTL_XDP_FLAGS) \
		-o $@ $(CTL_SRCS) $(CTL_LIBS)

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
