// SPDX-License-Identifier: GPL-2.0
/*
 * cuckooctl xdp: attach cuckoo_nf's XDP program (xdp/cuckoo_xdp.bpf.c,
 * embedded in cuckooctl by ctl_xdp_obj.S) to a device, detach it, and list
 * the devices it is attached to.  The program calls cuckoo_nf.ko's kfuncs,
 * which libbpf finds in the module's BTF when the program is loaded.
 *
 * A device holds one program per mode, and native and generic cannot be
 * active at once: cuckooctl replaces only its own program (by name) and
 * never another's, and detaches only its own.  Attach, replace and detach
 * name the program they expect to find (XDP_FLAGS_UPDATE_IF_NOEXIST or
 * XDP_FLAGS_REPLACE), so a program attached meanwhile by someone else is
 * refused by the kernel rather than overwritten.
 *
 * libbpf is opened here, by the xdp commands alone: every other command (a
 * blocklist load from cron, a ban from fail2ban) starts without it and the
 * libraries it brings (libelf, libz), whose loading was half of what a
 * load of a thousand prefixes took.
 */
#include <dlfcn.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ctl.h"

/* The object, between these two symbols (ctl_xdp_obj.S). */
extern const char ctl_xdp_obj[], ctl_xdp_obj_end[];

/* The program's name in the kernel: cuckooctl's, whoever loaded it. */
#define XDP_PROG_NAME	"cuckoo_xdp"

/* The libbpf functions cuckooctl calls, each as a pointer of its own type. */
#define CTL_BPF_FUNCS(X)						\
	X(libbpf_set_print) X(bpf_prog_get_fd_by_id)			\
	X(bpf_obj_get_info_by_fd) X(bpf_xdp_query) X(bpf_xdp_attach)	\
	X(bpf_xdp_detach) X(bpf_object__open_mem) X(bpf_object__load)	\
	X(bpf_object__find_program_by_name) X(bpf_program__fd)		\
	X(bpf_object__close)

static struct {
#define CTL_BPF_POINTER(f) __typeof__(f) *f;
	CTL_BPF_FUNCS(CTL_BPF_POINTER)
#undef CTL_BPF_POINTER
} lib;

/* libbpf's soname: the ABI of the functions above. */
#define CTL_LIBBPF	"libbpf.so.1"

/* Fill @lib: 0, or an exit code after saying what is missing. */
static int open_libbpf(void)
{
	void *h = dlopen(CTL_LIBBPF, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		ctl_err("xdp: cannot load %s: %s (install libbpf1)",
			CTL_LIBBPF, dlerror());
		return CTL_EXIT_FAIL;
	}
#define CTL_BPF_RESOLVE(f)						\
	lib.f = (__typeof__(f) *)dlsym(h, #f);				\
	if (!lib.f) {							\
		ctl_err("xdp: %s has no %s: libbpf 0.8 or later needed",	\
			CTL_LIBBPF, #f);				\
		return CTL_EXIT_FAIL;					\
	}
	CTL_BPF_FUNCS(CTL_BPF_RESOLVE)
#undef CTL_BPF_RESOLVE
	return 0;
}

/* libbpf's messages, kept to explain a failure (and shown with it). */
static char bpf_log[8192];
static size_t bpf_log_len;

static int keep_bpf_log(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	int n;

	if (level == LIBBPF_DEBUG || bpf_log_len >= sizeof(bpf_log) - 1)
		return 0;
	n = vsnprintf(bpf_log + bpf_log_len, sizeof(bpf_log) - bpf_log_len,
		      fmt, ap);
	if (n > 0)
		bpf_log_len += (size_t)n < sizeof(bpf_log) - bpf_log_len ?
			       (size_t)n : sizeof(bpf_log) - bpf_log_len - 1;
	return 0;
}

/* What one device has attached, per mode. */
struct xdp_dev {
	const char *name;
	unsigned int ifindex;
	__u32 id[2];		/* program ids: [0] native, [1] generic */
	bool ours[2];		/* id[i] is cuckoo_nf's */
	char prog[2][BPF_OBJ_NAME_LEN];	/* their names */
};

static const char *const mode_name[2] = { "native", "generic" };
static const __u32 mode_flag[2] = { XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE };

static const char *errno_text(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return "permission denied: needs CAP_BPF and CAP_NET_ADMIN (CAP_SYS_ADMIN to inspect attached programs) in the initial user namespace";
	case ENODEV:
		return "no such device";
	}
	return strerror(err);
}

/*
 * A usage error of "xdp SUB": "cuckooctl: xdp SUB [V1 [V2]]: message"
 * (the values shortened to 64 characters each).
 */
static int xdp_usage(const char *sub, const char *v1, const char *v2,
		     const char *msg)
{
	char what[160];

	snprintf(what, sizeof(what), "%s%s%.64s%s%.64s", sub, v1 ? " " : "",
		 v1 ? v1 : "", v2 ? " " : "", v2 ? v2 : "");
	return ctl_usage_error("xdp", what, "%s", msg);
}

static int xdp_fail(const char *cmd, const char *dev, int err)
{
	ctl_err("xdp %s %s: %s", cmd, dev, errno_text(err));
	return err == EPERM || err == EACCES ? CTL_EXIT_PERM : CTL_EXIT_FAIL;
}

/* The name of program @id into @name: 0 or an errno. */
static int prog_name(__u32 id, char *name, size_t len)
{
	struct bpf_prog_info info;
	__u32 size = sizeof(info);
	int fd, err = 0;

	fd = lib.bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return errno;
	memset(&info, 0, sizeof(info));
	if (lib.bpf_obj_get_info_by_fd(fd, &info, &size))
		err = errno;
	else
		snprintf(name, len, "%s", info.name);
	close(fd);
	return err;
}

/* What @d (name set) has attached: 0 or an errno. */
static int query_dev(struct xdp_dev *d)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int m, err;

	d->ifindex = if_nametoindex(d->name);
	if (!d->ifindex)
		return errno == ENXIO ? ENODEV : errno;
	err = lib.bpf_xdp_query((int)d->ifindex, 0, &q);
	if (err)
		return -err;
	d->id[0] = q.drv_prog_id;
	d->id[1] = q.skb_prog_id;
	for (m = 0; m < 2; m++) {
		d->ours[m] = false;
		d->prog[m][0] = '\0';
		if (!d->id[m])
			continue;
		err = prog_name(d->id[m], d->prog[m], sizeof(d->prog[m]));
		if (err)
			return err;
		d->ours[m] = !strcmp(d->prog[m], XDP_PROG_NAME);
	}
	return 0;
}

/*
 * Open and load the embedded program: its fd in *@fd and the object in
 * *@obj, or an exit code after saying why it failed.
 */
static int load_prog(const char *dev, struct bpf_object **obj, int *fd)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = XDP_PROG_NAME);
	struct bpf_program *prog;
	int err;

	*obj = lib.bpf_object__open_mem(ctl_xdp_obj,
				    (size_t)(ctl_xdp_obj_end - ctl_xdp_obj),
				    &oo);
	if (!*obj) {
		ctl_err("xdp attach %s: the embedded program does not open: %s",
			dev, strerror(errno));
		return CTL_EXIT_FAIL;
	}
	prog = lib.bpf_object__find_program_by_name(*obj, XDP_PROG_NAME);
	if (!prog) {
		ctl_err("xdp attach %s: no program %s in the embedded object",
			dev, XDP_PROG_NAME);
		return CTL_EXIT_FAIL;
	}
	err = lib.bpf_object__load(*obj);
	if (!err) {
		*fd = lib.bpf_program__fd(prog);
		return CTL_EXIT_OK;
	}
	err = -err;
	if (err == EPERM || err == EACCES)
		return xdp_fail("attach", dev, err);
	/* libbpf: "extern (func ksym) 'bpf_cnf_lookup4': not found in kernel or module BTFs". */
	if (err == ESRCH || strstr(bpf_log, "not found in kernel or module BTFs")) {
		if (access("/sys/module/" CNF_DEVICE_NAME, F_OK))
			ctl_err("xdp attach %s: the kfuncs bpf_cnf_lookup4/6 are not in the kernel: the module is not loaded (modprobe cuckoo_nf)",
				dev);
		else
			ctl_err("xdp attach %s: the kfuncs bpf_cnf_lookup4/6 are not in the kernel: cuckoo_nf was built without BTF (no /sys/kernel/btf/" CNF_DEVICE_NAME "; see cuckooctl(8), XDP)",
				dev);
		return CTL_EXIT_NODEV;
	}
	ctl_err("xdp attach %s: the program was not loaded: %s%s%.*s", dev,
		strerror(err), bpf_log_len ? "; libbpf said:\n" : "",
		(int)bpf_log_len, bpf_log);
	return CTL_EXIT_FAIL;
}

/* attach DEV [native|generic] */
static int xdp_attach(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	struct xdp_dev d = { .name = argv[0] };
	struct bpf_object *obj = NULL;
	int m, want = -1, fd = -1, rc, err, old = -1;
	__u32 flags;

	if (argc > 2)
		return xdp_usage("attach", argv[2], NULL, "unexpected argument");
	if (argc == 2) {
		for (m = 0; m < 2; m++)
			if (!strcmp(argv[1], mode_name[m]))
				want = m;
		if (want < 0)
			return xdp_usage("attach", argv[0], argv[1],
					 "not a mode: native or generic");
	}
	err = query_dev(&d);
	if (err)
		return xdp_fail("attach", d.name, err);
	for (m = 0; m < 2; m++) {
		if (!d.id[m] || d.ours[m])
			continue;
		ctl_err("xdp attach %s: another XDP program is attached (%s, id %u, %s mode): not replaced; detach it first (ip link set dev %s xdp off)",
			d.name, d.prog[m][0] ? d.prog[m] : "no name", d.id[m],
			mode_name[m], d.name);
		return CTL_EXIT_FAIL;
	}
	/* Ours in the other mode: the kernel takes one mode at a time. */
	for (m = 0; m < 2; m++) {
		if (d.id[m] && want >= 0 && m != want) {
			ctl_err("xdp attach %s: cuckoo_nf's program is attached in %s mode: detach it first (cuckooctl xdp detach %s)",
				d.name, mode_name[m], d.name);
			return CTL_EXIT_FAIL;
		}
		if (d.id[m] && want < 0)
			want = m;
	}
	rc = load_prog(d.name, &obj, &fd);
	if (rc)
		goto out;
	/* Without a mode the kernel picks native when the driver has it. */
	flags = want < 0 ? 0 : mode_flag[want];
	if (want >= 0 && d.id[want]) {
		/* A newer cuckooctl's program replaces the one in place. */
		old = lib.bpf_prog_get_fd_by_id(d.id[want]);
		if (old < 0) {
			rc = xdp_fail("attach", d.name, errno);
			goto out;
		}
		ao.old_prog_fd = old;
		flags |= XDP_FLAGS_REPLACE;
	} else {
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	}
	err = -lib.bpf_xdp_attach((int)d.ifindex, fd, flags, &ao);
	if (err == EBUSY || err == EEXIST) {
		ctl_err("xdp attach %s: another XDP program was attached meanwhile: not replaced",
			d.name);
		rc = CTL_EXIT_FAIL;
	} else if (err == EOPNOTSUPP && want == 0) {
		ctl_err("xdp attach %s: the driver has no native XDP: use generic mode (cuckooctl xdp attach %s generic)",
			d.name, d.name);
		rc = CTL_EXIT_FAIL;
	} else if (err) {
		rc = xdp_fail("attach", d.name, err);
	} else if (!query_dev(&d)) {
		for (m = 0; m < 2; m++)
			if (d.ours[m])
				printf("%s: cuckoo_nf's XDP program attached, %s mode (id %u)\n",
				       d.name, mode_name[m], d.id[m]);
	}
out:
	if (old >= 0)
		close(old);
	lib.bpf_object__close(obj);
	return rc;
}

/* detach DEV: cuckoo_nf's program, in whichever mode it is attached. */
static int xdp_detach(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	struct xdp_dev d = { .name = argv[0] };
	int m, err, rc = CTL_EXIT_OK, found = 0;

	if (argc > 1)
		return xdp_usage("detach", argv[1], NULL, "unexpected argument");
	err = query_dev(&d);
	if (err)
		return xdp_fail("detach", d.name, err);
	for (m = 0; m < 2; m++) {
		if (!d.id[m])
			continue;
		if (!d.ours[m]) {
			ctl_err("xdp detach %s: the XDP program attached (%s, id %u, %s mode) is not cuckoo_nf's: left attached",
				d.name, d.prog[m][0] ? d.prog[m] : "no name",
				d.id[m], mode_name[m]);
			rc = CTL_EXIT_FAIL;
			continue;
		}
		found++;
		ao.old_prog_fd = lib.bpf_prog_get_fd_by_id(d.id[m]);
		if (ao.old_prog_fd < 0)
			return xdp_fail("detach", d.name, errno);
		err = -lib.bpf_xdp_detach((int)d.ifindex,
				      mode_flag[m] | XDP_FLAGS_REPLACE, &ao);
		close(ao.old_prog_fd);
		if (err == EEXIST || err == EBUSY) {
			ctl_err("xdp detach %s: another XDP program was attached meanwhile: left attached",
				d.name);
			rc = CTL_EXIT_FAIL;
		} else if (err) {
			rc = xdp_fail("detach", d.name, err);
		}
	}
	if (!found && rc == CTL_EXIT_OK) {
		ctl_err("xdp detach %s: cuckoo_nf's XDP program is not attached",
			d.name);
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

/* status: every device of the namespace with cuckoo_nf's program. */
static int xdp_status(const struct ctl_opts *o, int argc, char **argv)
{
	struct if_nameindex *ifs, *i;
	int m, err, rc = CTL_EXIT_OK, n = 0;

	if (argc)
		return xdp_usage("status", argv[0], NULL, "unexpected argument");
	ifs = if_nameindex();
	if (!ifs) {
		ctl_err("xdp status: the devices cannot be listed: %s",
			strerror(errno));
		return CTL_EXIT_FAIL;
	}
	if (o->json)
		fputs("{\"devices\":[", stdout);
	else
		printf("%-16s %-8s %s\n", "device", "mode", "program");
	for (i = ifs; i->if_index; i++) {
		struct xdp_dev d = { .name = i->if_name };

		err = query_dev(&d);
		if (err == ENODEV)	/* gone since the list was read */
			continue;
		if (err) {
			rc = xdp_fail("status", d.name, err);
			break;
		}
		for (m = 0; m < 2; m++) {
			if (!d.ours[m])
				continue;
			if (o->json)
				printf("%s{\"device\":\"%s\",\"ifindex\":%u,\"mode\":\"%s\",\"id\":%u}",
				       n ? "," : "", d.name, d.ifindex,
				       mode_name[m], d.id[m]);
			else
				printf("%-16s %-8s %u\n", d.name,
				       mode_name[m], d.id[m]);
			n++;
		}
	}
	if (o->json)
		fputs("]}\n", stdout);
	if_freenameindex(ifs);
	return rc;
}

/* The subcommands, named once: refused before libbpf opens, then run. */
enum xdp_sub { XDP_ATTACH, XDP_DETACH, XDP_STATUS, XDP_NSUBS };

static const char *const xdp_sub_names[XDP_NSUBS] = {
	[XDP_ATTACH] = "attach",
	[XDP_DETACH] = "detach",
	[XDP_STATUS] = "status",
};

static int xdp_sub_of(const char *name)
{
	int i;

	for (i = 0; i < XDP_NSUBS; i++)
		if (!strcmp(name, xdp_sub_names[i]))
			return i;
	return -1;
}

int ctl_cmd_xdp(const struct ctl_opts *o, int argc, char **argv)
{
	int rc, sub;

	if (!argc)
		return ctl_usage_error("xdp", NULL,
				       "attach, detach or status needed");
	sub = xdp_sub_of(argv[0]);
	if (sub < 0)
		return xdp_usage(argv[0], NULL, NULL,
				 "not a subcommand: attach, detach or status");
	rc = open_libbpf();
	if (rc)
		return rc;
	lib.libbpf_set_print(keep_bpf_log);
	if (sub == XDP_STATUS)
		return xdp_status(o, argc - 1, argv + 1);
	if (argc < 2)
		return xdp_usage(argv[0], NULL, NULL, "a device needed");
	if (o->json)
		return xdp_usage(argv[0], NULL, NULL, "-j is for status only");
	if (sub == XDP_ATTACH)
		return xdp_attach(argc - 1, argv + 1);
	return xdp_detach(argc - 1, argv + 1);
}
