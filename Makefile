# SPDX-License-Identifier: GPL-2.0
#
# cuckoo_nf.  The module is described in Kbuild and built by the kernel's
# build system; this file drives everything around it.
#
# `make help` lists the targets, each with the note after `## ` on its
# rule's line.  What those lines leave out:
#   module         with module BTF for the XDP kfuncs where the build can
#                  have it, else without them and a note (CNF_XDP, below)
#   check-engines  the engines are Debian's fail2ban and crowdsec, installed
#                  by scripts/deps.sh --engines; ends "N passed, N failed"
#   check-kernels  installs the 6.12 kernels; scripts/check-kernels.sh
#                  --kernel 7.2 runs one kernel's row
#   install        the bouncer's configuration only when none is there
#   dkms-install   with DESTDIR=: only the copy, no dkms add
#
# make, module, test-modules, install and uninstall are for the running
# kernel (uname -r), or KVER=/KDIR= when given, like any out-of-tree
# module; without that kernel's headers they stop and say which package
# has them (scripts/need-headers.sh), never building for another kernel.
# The VM targets (selftests, demo, check, lint) build against the Debian
# cloud kernel the VM boots (scripts/kver), or KVER=/KERNEL= when given,
# whatever the running kernel is.
# KVER takes a release or a short name: 6.1 (the VM's default), 6.12,
# 6.12-rt, 7.2 (the newest Debian kernel, sid's: scripts/sid-root.sh).

ifneq ($(KVER),)
ifeq ($(wildcard /lib/modules/$(KVER)),)
# A short name (6.1, 6.12, 6.12-rt): the installed release it names.
override KVER := $(or $(shell KVER=$(KVER) scripts/kver 2>/dev/null),$(KVER))
endif
# The recipes' scripts (scripts/kver, the VM's) boot and build for the
# kernel asked for: a variable the makefile overrides is no longer
# exported as the command line's was.  Unasked, they pick the VM's own.
export KVER
endif
ifeq ($(KVER),)
KVER := $(shell uname -r)
endif
# XDP: BPF programs find the module's kfuncs through its BTF (.BTF), which
# kbuild writes only with the kernel's vmlinux and resolve_btfids at hand:
# Debian's 6.12 headers have them, its 6.1 headers do not, so KVER's
# modules are built against build/cache/kdir-KVER, those headers plus the
# kernel's BTF and resolve_btfids (scripts/kernel-btf.sh).  KDIR= given is
# used as it is.  CNF_XDP says what a cuckoo_nf.ko without .BTF is:
# auto (the default) a one-line note, the module loads and filters at
# netfilter, its kfuncs left out, as an operator on a kernel whose
# headers lack BTF would want rather than no module; y an error (the VM
# targets: their tests need XDP); n XDP not wanted (the plain headers).
KDIR_ORIGIN := $(origin KDIR)
CNF_XDP ?= auto
BTF_SH = CNF_XDP=$(CNF_XDP) bash $(CURDIR)/scripts/kernel-btf.sh
ifeq ($(origin KDIR),undefined)
KDIR := /lib/modules/$(KVER)/build
# For a recipe's shell: KVER's build directory, prepared.
MOD_KDIR = $$($(BTF_SH) kdir $(KVER))
else
MOD_KDIR = $(KDIR)
endif
# In a recipe: KDIR is there, or the error that says what to install.
NEED_HEADERS = bash $(CURDIR)/scripts/need-headers.sh '$(KVER)' '$(KDIR)' '$(KDIR_ORIGIN)'
# The newest Debian kernel is built for in the sid root that has its
# headers and the gcc that configured them (scripts/sid-root.sh): kbuild
# runs there (KBUILD_RUN), its build directory that root's; its headers
# have vmlinux, so the module's BTF needs nothing prepared, and the BTF
# checks read them through the root (BTF_ROOT).
SID_ROOT := $(shell scripts/sid-root.sh path 2>/dev/null)
ifneq ($(SID_ROOT),)
ifeq ($(wildcard /lib/modules/$(KVER)/build),)
ifneq ($(wildcard $(SID_ROOT)/lib/modules/$(KVER)/build),)
KBUILD_RUN := scripts/sid-root.sh run
BTF_ROOT := $(SID_ROOT)
MOD_KDIR = $(KDIR)
NEED_HEADERS = true
endif
endif
endif

# The one version, read by Kbuild and userspace/ too.
CNF_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$$/\1/p' dkms.conf)
DKMS_NAME := cuckoo-nf
DKMS_SRC = $(DESTDIR)/usr/src/$(DKMS_NAME)-$(CNF_VERSION)
# What DKMS builds the module from: no test, no tool, no build product.
DKMS_FILES = dkms.conf Kbuild Makefile $(wildcard module/*.[ch]) \
	uapi/linux/cuckoo_nf.h scripts/kernel-btf.sh scripts/need-headers.sh

PREFIX ?= /usr/local
DESTDIR ?=
MANDIR ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
INCLUDEDIR ?= $(PREFIX)/include
UNITDIR ?= /etc/systemd/system
# The XDP program's object, for ip-link(8) (cuckooctl has its own copy).
XDPDIR ?= $(PREFIX)/lib/cuckoo_nf
# Where iptables loads its extensions from: libxt_cuckoo.so goes there.
XTLIBDIR ?= $(shell pkg-config --variable=xtlibdir xtables 2>/dev/null)
# fail2ban's actions cuckoo_nf and cuckoo_nf-rules (banaction = cuckoo_nf);
# empty: not installed.
FAIL2BAN_ACTIONDIR ?= /etc/fail2ban/action.d
# cuckoo-crowdsec-bouncer's configuration, where CrowdSec's bouncers keep theirs.
CROWDSEC_BOUNCERDIR ?= /etc/crowdsec/bouncers

# Where make install puts the module (kbuild's default for external
# modules); uninstall removes it there, compressed or not.
INSTALL_MOD_DIR ?= extra
MOD_DEST = $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)
MOD_INSTALLED = $(MOD_DEST)/cuckoo_nf.ko $(addprefix $(MOD_DEST)/cuckoo_nf.ko,.xz .zst .gz)

# Evaluated by the shell when a VM recipe runs, after deps installed a kernel.
VM_KVER = $$(scripts/kver)

KBUILD_OPTS = $(if $(W),W=$(W)) $(if $(C),C=$(C))

.PHONY: all help module userspace unit lint selftests bench demo check install uninstall \
	clean distclean deps test-modules selftests-build vm-build bench-vm \
	check-debug bench-report bench-deps check-kernels check-rt \
	check-dkms dkms-install dkms-uninstall deb version check-engines check-install check-deb \
	check-busy

all: module userspace ## the module, cuckooctl and cuckoo-crowdsec-bouncer (build/)

# The rules with a `## ` note, in the order of this file.
help: ## this list
	@echo "make TARGET, with TARGET one of:"
	@awk '/^[a-z][a-z-]*:.*## / { n = index($$0, "## "); \
		printf "  %-16s %s\n", substr($$0, 1, index($$0, ":") - 1), \
		substr($$0, n + 3) }' $(firstword $(MAKEFILE_LIST))

module: ## the module for the running kernel (KVER=, KDIR=, W=1, C=1; CNF_XDP=y|n: XDP required|not wanted)
	@$(NEED_HEADERS)
	@kdir=$(MOD_KDIR) && \
	$(BTF_SH) relink "$(BTF_ROOT)$$kdir" $(CURDIR)/cuckoo_nf.ko && \
	echo "module: against $(BTF_ROOT)$$kdir" && \
	$(KBUILD_RUN) $(MAKE) -C "$$kdir" M=$(CURDIR) $(KBUILD_OPTS) modules && \
	$(BTF_SH) check "$(BTF_ROOT)$$kdir" $(CURDIR)/cuckoo_nf.ko

# Kernel modules of the tests (selftests/modules) and of the benchmarks
# (userspace/bench/kmod), against the same kernel as the module.
KMOD_DIRS := selftests/modules userspace/bench/kmod

test-modules: ## the test and benchmark kernel modules, against the module's kernel
	@$(NEED_HEADERS)
	@kdir=$(MOD_KDIR) && \
	for d in $(KMOD_DIRS); do \
		[ ! -f $$d/Kbuild ] || \
		$(KBUILD_RUN) $(MAKE) -C "$$kdir" M=$(CURDIR)/$$d $(KBUILD_OPTS) modules || exit 1; \
	done

userspace: ## cuckooctl, and the bouncer when libcurl, json-c, libyaml, zlib and libmicrohttpd dev files are there
	$(MAKE) -C userspace

unit: ## host unit tests (SAN=1: with sanitizers)
	$(MAKE) -C userspace unit

# Both benchmarks write their JSON only: docs/benchmarks.md is refreshed
# by make bench-report when a change moves the figures, not at every run.
bench: bench-deps ## userspace benchmarks, into build/bench/core.json
	$(MAKE) -C userspace bench
	@echo "bench: build/bench/core.json; make bench-report writes docs/benchmarks.md"

bench-deps: ## install what the benchmarks need (gnuplot, xdp-tools)
	scripts/deps.sh --bench

bench-report: ## docs/benchmarks.md and the plots, from build/bench/*.json
	python3 scripts/bench-report.py

deps: ## install the missing build and test packages (scripts/deps.sh)
	scripts/deps.sh

# C selftests, into build/selftests/.
selftests-build: ## the C selftests, into build/selftests/
	$(MAKE) -C selftests

# Everything the VM runs, built for the VM's kernel.
vm-build: deps ## everything the VM runs, built for the VM's kernel
	$(MAKE) module test-modules KVER=$(VM_KVER) CNF_XDP=y
	$(MAKE) userspace
	$(MAKE) selftests-build

lint: deps ## checkpatch, sparse, W=1; shellcheck, flake8; the README's table: zero warnings
	scripts/lint.sh

selftests: vm-build ## the kselftest suite in a QEMU VM (TESTS="a.sh b" for some)
	selftests/vm/selftests.sh $(TESTS)

bench-vm: vm-build bench-deps ## packet path vs nftables/ipset/XDP, core vs rhashtable, in a VM
	userspace/bench/vm/bench-vm
	@echo "bench-vm: build/bench/vm.json; make bench-report writes docs/benchmarks.md"

demo: vm-build ## the module at work in a VM, step by step
	selftests/vm/run selftests/demo.sh

check: ## deps, build, unit, lint, selftests; ends "N passed, N failed"
	scripts/check.sh

check-kernels: ## the suite on 6.1, 6.12 and sid's 7.2 cloud, check-rt, check-dkms
	scripts/check-kernels.sh

# make check three times in a row beside stress-ng on every CPU: no
# verdict of the suite may depend on the host's load.
check-busy: ## make check three times beside stress-ng on every CPU
	scripts/check-busy.sh

# Not part of check: python3, fail2ban and crowdsec make the VM's initramfs
# 4.5 times as big, its boot 1.3 s longer (CNF_VM_LAYERS in selftests/vm/run).
check-engines: ## fail2ban and crowdsec tests in a VM with the engines layer
	scripts/deps.sh --engines
	$(MAKE) vm-build
	$(MAKE) -C userspace engine-unit
	@tests=$$(cat build/selftests/engines-list.txt); \
	[ -n "$$tests" ] || { echo "check-engines: no engine test (ENGINE_PROGS in selftests/Makefile)" >&2; exit 1; }; \
	CNF_VM_LAYERS=engines selftests/vm/selftests.sh $$tests

check-rt: ## stress.sh and lifecycle.sh on 6.12 PREEMPT_RT
	scripts/check-kernels.sh --rt

check-dkms: ## DKMS build and modprobe on 6.1, 6.12 and 7.2 cloud, a kernel upgrade; make deb checked
	scripts/check-dkms.sh

check-install: ## make install and uninstall into scratch DESTDIRs, the headers error, signing
	scripts/check-install.sh

check-deb: ## make deb, then install, upgrade, remove and purge the packages in a scratch root
	scripts/check-deb.sh

version: ## print the version (dkms.conf's PACKAGE_VERSION)
	@echo $(CNF_VERSION)

# As WireGuard's and Jool's: the sources go where DKMS looks for them and
# DKMS builds the module for every kernel with headers, now and at each
# kernel update (AUTOINSTALL).  Build for one kernel with
# `dkms install cuckoo-nf/VERSION -k RELEASE`.
dkms-install: ## the module's sources to /usr/src/cuckoo-nf-VERSION, dkms add
	rm -rf $(DKMS_SRC)
	for f in $(DKMS_FILES); do install -D -m 644 $$f $(DKMS_SRC)/$$f || exit 1; done
	$(if $(DESTDIR),,dkms add -m $(DKMS_NAME) -v $(CNF_VERSION))

dkms-uninstall: ## dkms remove from every kernel, and the sources
	if [ -n "$$(dkms status -m $(DKMS_NAME) -v $(CNF_VERSION))" ]; then \
		dkms remove -m $(DKMS_NAME) -v $(CNF_VERSION) --all; \
	fi
	rm -rf $(DKMS_SRC)

deb: ## the source package and cuckoo-nf-dkms, cuckooctl, cuckoo-crowdsec-bouncer .debs (debian/) in build/deb/, lintian
	scripts/deps.sh --pkg
	scripts/mkdeb.sh

# A debug kernel built once (cached in ~/.cache/cuckoo_nf), the whole suite
# under it, kmemleak at the end.  Not part of check: it takes long.
check-debug: ## the suite under a KASAN/lockdep/kmemleak kernel (slow)
	scripts/deps.sh --debug
	scripts/debug-kernel.sh check

# make install signs the module as kbuild's modules_install does, with
# the kernel's own module key, when KDIR has it (CONFIG_MODULE_SIG_KEY and
# certs/signing_key.x509: a kernel built here); Debian's headers have no
# key, and then it says in one line that the module is unsigned, which
# Secure Boot refuses (docs/install.md, Secure Boot).
install: all ## module (+depmod), cuckooctl, iptables extension, XDP/tc objects, man pages, completion, uapi header, units, fail2ban action
	@ko=cuckoo_nf.ko; vm=$$(modinfo -F vermagic $$ko) && [ "$${vm%% *}" = '$(KVER)' ] || \
		{ echo "install: $$ko is built for $${vm%% *}, not $(KVER): make module KVER=$(KVER)" >&2; exit 1; }
	@key=$$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$$/\1/p' $(KDIR)/.config 2>/dev/null); \
	case $$key in /*|pkcs11:*) ;; ?*) key=$(KDIR)/$$key ;; esac; \
	if grep -qx CONFIG_MODULE_SIG=y $(KDIR)/.config 2>/dev/null && \
	   [ -n "$$key" ] && { [ -f "$$key" ] || [ "$${key#pkcs11:}" != "$$key" ]; } && \
	   [ -f $(KDIR)/certs/signing_key.x509 ]; then sig=y; else sig=; fi; \
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) CONFIG_MODULE_SIG_ALL=$$sig \
		modules_install >build/modules_install.log 2>&1 || \
		{ cat build/modules_install.log >&2; exit 1; }; \
	for f in $(MOD_INSTALLED); do [ ! -f $$f ] || inst=$$f; done; \
	[ -n "$$inst" ] || { echo "install: modules_install put no cuckoo_nf.ko in $(MOD_DEST)" >&2; exit 1; }; \
	echo "install: $$inst, for kernel $(KVER)"; \
	signer=$$(modinfo -F signer "$$inst" 2>/dev/null); \
	if [ -n "$$signer" ]; then \
		echo "install: signed with the kernel's module key ($$signer)"; \
	else \
		echo "install: unsigned ($(KDIR) has no module signing key): under Secure Boot (mokutil --sb-state) the kernel refuses it, 'Key was rejected by service'; docs/install.md, Secure Boot"; \
	fi
	$(if $(DESTDIR),,depmod -a $(KVER))
	install -D -m 755 build/cuckooctl $(DESTDIR)$(PREFIX)/sbin/cuckooctl
	install -D -m 644 build/cuckoo_xdp.o $(DESTDIR)$(XDPDIR)/cuckoo_xdp.o
	install -D -m 644 build/cuckoo_tc.o $(DESTDIR)$(XDPDIR)/cuckoo_tc.o
	install -D -m 644 userspace/cuckooctl.8 $(DESTDIR)$(MANDIR)/man8/cuckooctl.8
	install -D -m 644 userspace/xtables/iptables-cuckoo.8 \
		$(DESTDIR)$(MANDIR)/man8/iptables-cuckoo.8
	@# The iptables extension, when built (libxtables-dev).
	@if [ -f build/libxt_cuckoo.so ] && [ -n "$(XTLIBDIR)" ]; then \
		echo "install: libxt_cuckoo.so into $(XTLIBDIR)"; \
		install -D -m 644 build/libxt_cuckoo.so \
			$(DESTDIR)$(XTLIBDIR)/libxt_cuckoo.so; \
	else \
		echo "install: libxt_cuckoo.so not built (no libxtables development files): not installed"; \
	fi
	install -D -m 644 userspace/cuckooctl.bash-completion \
		$(DESTDIR)$(COMPLETIONDIR)/cuckooctl
	install -D -m 644 uapi/linux/cuckoo_nf.h $(DESTDIR)$(INCLUDEDIR)/linux/cuckoo_nf.h
	sed 's,/usr/sbin/cuckooctl,$(PREFIX)/sbin/cuckooctl,g' \
		userspace/systemd/cuckoo_nf.service >build/cuckoo_nf.service
	install -D -m 644 build/cuckoo_nf.service $(DESTDIR)$(UNITDIR)/cuckoo_nf.service
	sed 's,/usr/sbin/cuckooctl,$(PREFIX)/sbin/cuckooctl,' \
		userspace/systemd/cuckoo_nf-metrics.service >build/cuckoo_nf-metrics.service
	install -D -m 644 build/cuckoo_nf-metrics.service \
		$(DESTDIR)$(UNITDIR)/cuckoo_nf-metrics.service
	install -D -m 644 userspace/systemd/cuckoo_nf-metrics.timer \
		$(DESTDIR)$(UNITDIR)/cuckoo_nf-metrics.timer
ifneq ($(FAIL2BAN_ACTIONDIR),)
	sed 's,^cuckooctl = /usr/sbin/cuckooctl$$,cuckooctl = $(PREFIX)/sbin/cuckooctl,' \
		userspace/fail2ban/action.d/cuckoo_nf.conf >build/fail2ban-cuckoo_nf.conf
	install -D -m 644 build/fail2ban-cuckoo_nf.conf \
		$(DESTDIR)$(FAIL2BAN_ACTIONDIR)/cuckoo_nf.conf
	install -D -m 644 userspace/fail2ban/action.d/cuckoo_nf-rules.conf \
		$(DESTDIR)$(FAIL2BAN_ACTIONDIR)/cuckoo_nf-rules.conf
endif
	@# The bouncer, when built; its configuration holds the key: kept
	@# when there, else the template, readable by root only.
	@if [ -x build/cuckoo-crowdsec-bouncer ]; then \
		set -e; \
		echo "install: cuckoo-crowdsec-bouncer"; \
		install -D -m 755 build/cuckoo-crowdsec-bouncer \
			$(DESTDIR)$(PREFIX)/sbin/cuckoo-crowdsec-bouncer; \
		install -D -m 644 userspace/crowdsec/cuckoo-crowdsec-bouncer.8 \
			$(DESTDIR)$(MANDIR)/man8/cuckoo-crowdsec-bouncer.8; \
		sed 's,/usr/sbin/cuckoo-crowdsec-bouncer,$(PREFIX)/sbin/cuckoo-crowdsec-bouncer,; s,/etc/crowdsec/bouncers,$(CROWDSEC_BOUNCERDIR),g' \
			userspace/crowdsec/cuckoo-crowdsec-bouncer.service \
			>build/cuckoo-crowdsec-bouncer.service; \
		install -D -m 644 build/cuckoo-crowdsec-bouncer.service \
			$(DESTDIR)$(UNITDIR)/cuckoo-crowdsec-bouncer.service; \
		conf=$(DESTDIR)$(CROWDSEC_BOUNCERDIR)/cuckoo-crowdsec-bouncer.yaml; \
		if [ -e "$$conf" ]; then echo "install: $$conf kept"; else \
			install -D -m 600 userspace/crowdsec/cuckoo-crowdsec-bouncer.yaml "$$conf"; fi; \
	else \
		echo "install: cuckoo-crowdsec-bouncer not built (no libcurl, json-c, libyaml or zlib development files): not installed"; \
	fi

# What make install installs, with the same variables; the bouncer's
# configuration only when it is still the template (it holds the key
# once set up: then kept, and said so).  Units enabled are not removed:
# it stops and says so.  No headers needed, only KVER.
uninstall: ## remove what make install installed (same PREFIX=, DESTDIR=, KVER=)
	@for u in cuckoo_nf cuckoo-crowdsec-bouncer; do \
		if [ -z '$(DESTDIR)' ] && [ -f $(UNITDIR)/$$u.service ] && \
		   systemctl -q is-enabled $$u.service 2>/dev/null; then \
			echo "uninstall: $$u.service is enabled: systemctl disable --now $$u, then make uninstall again" >&2; \
			exit 1; \
		fi; \
	done
	rm -f $(MOD_INSTALLED)
	$(if $(DESTDIR),,depmod -a $(KVER))
	rm -f $(DESTDIR)$(PREFIX)/sbin/cuckooctl \
		$(DESTDIR)$(XDPDIR)/cuckoo_xdp.o $(DESTDIR)$(XDPDIR)/cuckoo_tc.o \
		$(DESTDIR)$(MANDIR)/man8/cuckooctl.8 \
		$(DESTDIR)$(MANDIR)/man8/iptables-cuckoo.8 \
		$(if $(XTLIBDIR),$(DESTDIR)$(XTLIBDIR)/libxt_cuckoo.so) \
		$(DESTDIR)$(COMPLETIONDIR)/cuckooctl \
		$(DESTDIR)$(INCLUDEDIR)/linux/cuckoo_nf.h \
		$(DESTDIR)$(UNITDIR)/cuckoo_nf.service \
		$(DESTDIR)$(UNITDIR)/cuckoo_nf-metrics.service \
		$(DESTDIR)$(UNITDIR)/cuckoo_nf-metrics.timer \
		$(DESTDIR)$(PREFIX)/sbin/cuckoo-crowdsec-bouncer \
		$(DESTDIR)$(MANDIR)/man8/cuckoo-crowdsec-bouncer.8 \
		$(DESTDIR)$(UNITDIR)/cuckoo-crowdsec-bouncer.service
	-rmdir $(DESTDIR)$(XDPDIR) 2>/dev/null
ifneq ($(FAIL2BAN_ACTIONDIR),)
	rm -f $(DESTDIR)$(FAIL2BAN_ACTIONDIR)/cuckoo_nf.conf \
		$(DESTDIR)$(FAIL2BAN_ACTIONDIR)/cuckoo_nf-rules.conf
endif
	@conf=$(DESTDIR)$(CROWDSEC_BOUNCERDIR)/cuckoo-crowdsec-bouncer.yaml; \
	if [ ! -e "$$conf" ]; then :; \
	elif cmp -s "$$conf" userspace/crowdsec/cuckoo-crowdsec-bouncer.yaml; then \
		rm -f "$$conf"; \
	else \
		echo "uninstall: $$conf kept: set up (it differs from the template); remove it by hand"; \
	fi

# kbuild's clean of an external module is the same with any kernel's
# headers: KDIR's, else the VM kernel's.
clean: ## remove what the build made, but build/cache
	@kdir=$(KDIR); [ -f "$$kdir/Makefile" ] || \
		kdir=/lib/modules/$$(scripts/kver 2>/dev/null)/build; \
	if [ -f "$$kdir/Makefile" ]; then \
		$(MAKE) -C "$$kdir" M=$(CURDIR) clean; \
		for d in $(KMOD_DIRS); do \
			[ ! -f $$d/Kbuild ] || $(MAKE) -C "$$kdir" M=$(CURDIR)/$$d clean; \
		done; \
	fi
	-[ ! -f userspace/Makefile ] || $(MAKE) -C userspace clean
	-[ ! -f selftests/Makefile ] || $(MAKE) -C selftests clean
	find build -mindepth 1 -maxdepth 1 ! -name cache -exec rm -rf {} + 2>/dev/null || true

distclean: clean ## clean, and build/cache too
	rm -rf build
