# SPDX-License-Identifier: GPL-2.0
# The fail2ban actions' host test (included by userspace/Makefile):
# test_f2b_actions runs them in Debian's fail2ban-server against cuckooctl
# and an emulated module (tests/ctl_fake_dev.c), with the actions, tool and
# shim copied beside it.  It needs fail2ban, an engine package
# (scripts/deps.sh --engines), so it runs in make engine-unit.
F2B_DIR := fail2ban

$(B)/tests/f2b/test_f2b_actions: $(F2B_DIR)/tests/test_f2b_actions.sh \
				 $(wildcard $(F2B_DIR)/action.d/*.conf) \
				 $(B)/tests/cuckooctl $(B)/tests/ctl_fake_dev.so
	@mkdir -p $(@D)
	cp $(F2B_DIR)/action.d/*.conf $(B)/tests/cuckooctl $(B)/tests/ctl_fake_dev.so $(@D)/
	sed 's,@F2B_TESTDIR@,$(@D),' $< >$@
	chmod +x $@

ENGINE_TESTS += $(B)/tests/f2b/test_f2b_actions
