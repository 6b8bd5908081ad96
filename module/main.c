// SPDX-License-Identifier: GPL-2.0
/*
 * cuckoo_nf: drop packets from listed source addresses, looked up in an
 * exact cuckoo filter per network namespace.  Module entry and parameters.
 */
#include "cnf.h"

#include <linux/module.h>

unsigned long cnf_initial_capacity = 256;
module_param_named(initial_capacity, cnf_initial_capacity, ulong, 0444);
MODULE_PARM_DESC(initial_capacity,
		 "Addresses per family a new namespace's filter holds before it grows (default 256)");

unsigned long cnf_mem_limit = 256UL << 20;
module_param_named(mem_limit, cnf_mem_limit, ulong, 0444);
MODULE_PARM_DESC(mem_limit,
		 "Bytes each namespace's filter tables may use; changeable per namespace (default 256 MiB)");

static int cnf_check_params(void)
{
	struct cnf_filter *probe;

	if (!cnf_initial_capacity) {
		pr_err("initial_capacity=0: must be at least 1\n");
		return -EINVAL;
	}
	if (cnf_initial_capacity > cnf_filter_max_capacity()) {
		pr_err("initial_capacity=%lu: at most %llu\n",
		       cnf_initial_capacity, cnf_filter_max_capacity());
		return -EINVAL;
	}
	/* The initial tables must fit in the limit: create one to find out. */
	probe = cnf_filter_create(cnf_initial_capacity, cnf_mem_limit);
	if (!probe)
		return -ENOMEM;
	cnf_filter_lock(probe);
	if (cnf_filter_set_limit(probe, cnf_mem_limit)) {
		cnf_filter_unlock(probe);
		cnf_filter_destroy(probe);
		pr_err("mem_limit=%lu is below what initial_capacity=%lu needs\n",
		       cnf_mem_limit, cnf_initial_capacity);
		return -EINVAL;
	}
	cnf_filter_unlock(probe);
	cnf_filter_destroy(probe);
	return 0;
}

static int __init cnf_init(void)
{
	int err;

	err = cnf_check_params();
	if (err)
		return err;
	err = cnf_expiry_cache_init();
	if (err)
		return err;
	err = cnf_hooks_init();
	if (err)
		goto err_cache;
	err = cnf_xdp_init();
	if (err)
		goto err_hooks;
	err = cnf_xt_init();
	if (err)
		goto err_hooks;
	err = cnf_dev_init();
	if (err)
		goto err_xt;
	return 0;

err_xt:
	cnf_xt_exit();
err_hooks:
	cnf_hooks_exit();
err_cache:
	cnf_expiry_cache_exit();
	return err;
}

static void __exit cnf_exit(void)
{
	cnf_dev_exit();
	cnf_xt_exit();
	cnf_hooks_exit();
	cnf_expiry_cache_exit();
}

module_init(cnf_init);
module_exit(cnf_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Drop packets from listed source addresses (exact cuckoo filter)");
MODULE_AUTHOR("cuckoo_nf developers");
MODULE_VERSION(CNF_VERSION);
