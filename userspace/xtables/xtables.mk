# SPDX-License-Identifier: GPL-2.0
# libxt_cuckoo.so, the iptables and ip6tables extension of the match
# `cuckoo` (iptables-legacy and iptables-nft load the same file), against
# libxtables' headers (libxtables-dev).  Included by userspace/Makefile;
# built when pkg-config finds xtables, else skipped with a note.
# make install puts it in the directory iptables loads extensions from
# (pkg-config --variable=xtlibdir xtables).
XT_PC := $(shell pkg-config --exists xtables 2>/dev/null && echo y)

ifeq ($(XT_PC),y)
all: $(B)/libxt_cuckoo.so
$(B)/libxt_cuckoo.so: xtables/libxt_cuckoo.c $(TOP)/uapi/linux/cuckoo_nf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags xtables) -fPIC -shared \
		-o $@ $< $(LDFLAGS)
else
all: xtables-missing
.PHONY: xtables-missing
xtables-missing:
	@echo "userspace: no libxtables development files (libxtables-dev): libxt_cuckoo.so not built"
endif
