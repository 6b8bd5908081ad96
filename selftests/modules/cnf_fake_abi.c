// SPDX-License-Identifier: GPL-2.0
/*
 * cnf_fake_abi: a stand-in for cuckoo_nf's control device, for the checks
 * cuckooctl makes of the module it talks to (selftests/cuckooctl.sh).  It
 * registers /dev/cnf_fake_abi, which answers CNF_IOC_VERSION with ABI
 * @abi and version "0.0-fake", or, with abi=0, like a module older than
 * that call: -ENOTTY.  Every other call gets -ENOTTY.
 *
 *   insmod cnf_fake_abi.ko abi=N
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <linux/cuckoo_nf.h>

static uint abi = CNF_ABI_VERSION + 1;
module_param(abi, uint, 0444);
MODULE_PARM_DESC(abi, "ABI to report; 0: no CNF_IOC_VERSION (default: one past the known ABI)");

static long cnf_fake_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct cnf_version v;

	if (cmd != CNF_IOC_VERSION || !abi)
		return -ENOTTY;
	memset(&v, 0, sizeof(v));
	v.abi = abi;
	strscpy(v.version, "0.0-fake", sizeof(v.version));
	if (copy_to_user((void __user *)arg, &v, sizeof(v)))
		return -EFAULT;
	return 0;
}

static const struct file_operations cnf_fake_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= cnf_fake_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice cnf_fake_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "cnf_fake_abi",
	.fops	= &cnf_fake_fops,
	.mode	= 0600,
};

module_misc_device(cnf_fake_misc);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cuckoo_nf selftests: a control device reporting another ABI");
