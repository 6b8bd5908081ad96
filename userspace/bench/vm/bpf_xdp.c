// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_xdp: the XDP programs pktgen_bench.sh measures beside cuckoo_nf's,
 * written as raw BPF instructions and loaded with the bpf() system call
 * alone (no libbpf, no compiler for the BPF target): the VM needs only
 * this binary.
 *
 *   bpf_xdp drop IFNAME PIN        XDP_DROP for every packet (the floor)
 *   bpf_xdp pass IFNAME PIN        XDP_PASS for every packet
 *   bpf_xdp hash IFNAME PIN FILE   a BPF hash map (key: IPv4 source, 4
 *                                  bytes; value 4 bytes) of the dotted
 *                                  addresses in FILE, one a line, and a
 *                                  program dropping the packets whose
 *                                  source it holds
 *   bpf_xdp info PINNED            the map pinned at PINNED (xdp-filter's)
 *
 * The program is attached to IFNAME in native (driver) mode by a BPF
 * link pinned at PIN on a bpffs: it stays attached after bpf_xdp exits,
 * until PIN is removed.  Prints one JSON object: for hash, the map's
 * entries, its memlock (fdinfo: what the kernel charges for it), the
 * kernel memory it took (Slab + VmallocUsed of /proc/meminfo, before the
 * map was made and after it was filled) and the seconds the fill took.
 * Errors name the value that failed: "bpf_xdp: WHAT VALUE: reason".
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Addresses per BPF_MAP_UPDATE_BATCH call. */
#define BATCH 65536

static void die(const char *what, const char *value, int err)
{
	fprintf(stderr, "bpf_xdp: %s %s: %s\n", what, value, strerror(err));
	exit(1);
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* The instructions, as the kernel's filter.h spells them. */
#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define JGT_REG(d, s, o) INSN(BPF_JMP | BPF_JGT | BPF_X, d, s, o, 0)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* ld_imm64 of a map fd: two instructions. */
#define LD_MAP_FD(d, fd) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
	INSN(0, 0, 0, 0, 0)

static int prog_load(const struct bpf_insn *insns, unsigned int n)
{
	static char log[65536];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		int err = errno;

		fputs(log, stderr);
		die("BPF_PROG_LOAD", "xdp", err);
	}
	return fd;
}

/* The program of MODE ("drop", "pass", or "hash" with the map MAP). */
static int load(const char *mode, int map)
{
	const struct bpf_insn verdict[] = {
		MOV_IMM(BPF_REG_0, strcmp(mode, "drop") ? XDP_PASS : XDP_DROP),
		EXIT(),
	};
	/*
	 * r2 = data, r3 = data_end; an Ethernet header and an IPv4 header up
	 * to its source address (14 + 16 bytes) or pass; not IPv4: pass.
	 * The source (big-endian, as the map's keys) to the stack, looked up.
	 */
	const struct bpf_insn hash[] = {
		LDX(BPF_W, BPF_REG_2, BPF_REG_1, offsetof(struct xdp_md, data)),
		LDX(BPF_W, BPF_REG_3, BPF_REG_1,
		    offsetof(struct xdp_md, data_end)),
		MOV_REG(BPF_REG_4, BPF_REG_2),
		ADD_IMM(BPF_REG_4, 30),
		JGT_REG(BPF_REG_4, BPF_REG_3, 12),
		LDX(BPF_H, BPF_REG_5, BPF_REG_2, 12),
		JNE_IMM(BPF_REG_5, htons(0x0800), 10),
		LDX(BPF_W, BPF_REG_5, BPF_REG_2, 26),
		STX(BPF_W, BPF_REG_10, BPF_REG_5, -4),
		MOV_REG(BPF_REG_2, BPF_REG_10),
		ADD_IMM(BPF_REG_2, -4),
		LD_MAP_FD(BPF_REG_1, map),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 2),
		MOV_IMM(BPF_REG_0, XDP_DROP),
		EXIT(),
		MOV_IMM(BPF_REG_0, XDP_PASS),
		EXIT(),
	};

	if (map >= 0)
		return prog_load(hash, sizeof(hash) / sizeof(hash[0]));
	return prog_load(verdict, sizeof(verdict) / sizeof(verdict[0]));
}

/* Attach PROG to IFNAME natively by a link, pinned at PIN. */
static void attach(int prog, const char *ifname, const char *pin)
{
	union bpf_attr a;
	unsigned int ifindex = if_nametoindex(ifname);
	int link;

	if (!ifindex)
		die("interface", ifname, errno);
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog;
	a.link_create.target_ifindex = ifindex;
	a.link_create.attach_type = BPF_XDP;
	a.link_create.flags = XDP_FLAGS_DRV_MODE;
	link = sys_bpf(BPF_LINK_CREATE, &a);
	if (link < 0)
		die("native XDP attach to", ifname, errno);
	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)pin;
	a.bpf_fd = link;
	if (sys_bpf(BPF_OBJ_PIN, &a))
		die("pin", pin, errno);
}

/* Slab + VmallocUsed of /proc/meminfo, in bytes. */
static long long kernel_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long long kb, sum = 0;

	if (!f)
		die("open", "/proc/meminfo", errno);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lld", &kb) == 1 ||
		    sscanf(line, "VmallocUsed: %lld", &kb) == 1)
			sum += kb;
	fclose(f);
	return sum * 1024;
}

/* The "KEY:" figure of FD's /proc/self/fdinfo, -1 without one. */
static long long fdinfo(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		die("open", path, errno);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* The addresses of FILE, in network order; their count in *n. */
static uint32_t *read_addrs(const char *file, unsigned int *n)
{
	FILE *f = fopen(file, "r");
	uint32_t *a = NULL;
	unsigned int cap = 0;
	char line[64];
	struct in_addr in;

	if (!f)
		die("open", file, errno);
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		if (inet_pton(AF_INET, line, &in) != 1)
			die("address", line, EINVAL);
		if (*n == cap) {
			cap = cap ? 2 * cap : 4096;
			a = realloc(a, cap * sizeof(*a));
			if (!a)
				die("read", file, ENOMEM);
		}
		a[(*n)++] = in.s_addr;
	}
	fclose(f);
	if (!*n)
		die("read", file, ENOENT);
	return a;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A hash map of FILE's addresses, filled in batches. */
static int hash_map(const char *file, unsigned int *n, long long *kbytes,
		    double *sec)
{
	uint32_t *keys = read_addrs(file, n), *vals;
	long long before = kernel_bytes();
	double t0 = now();
	union bpf_attr a;
	unsigned int i, k;
	int map;

	vals = calloc(BATCH, sizeof(*vals));
	if (!vals)
		die("read", file, ENOMEM);
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = *n;
	strcpy(a.map_name, "cnf_bench_hash");
	map = sys_bpf(BPF_MAP_CREATE, &a);
	if (map < 0)
		die("BPF_MAP_CREATE", "hash", errno);
	for (i = 0; i < *n; i += k) {
		k = *n - i < BATCH ? *n - i : BATCH;
		memset(&a, 0, sizeof(a));
		a.batch.map_fd = map;
		a.batch.keys = (uintptr_t)(keys + i);
		a.batch.values = (uintptr_t)vals;
		a.batch.count = k;
		if (sys_bpf(BPF_MAP_UPDATE_BATCH, &a) || a.batch.count != k)
			die("BPF_MAP_UPDATE_BATCH", file, errno ? errno : EIO);
	}
	*sec = now() - t0;
	*kbytes = kernel_bytes() - before;
	free(keys);
	free(vals);
	return map;
}

static int usage(void)
{
	fputs("usage: bpf_xdp drop|pass IFNAME PIN | hash IFNAME PIN FILE | "
	      "info PINNED\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	union bpf_attr a;
	unsigned int n;
	long long kbytes;
	double sec;
	int map;

	if (!strcmp(mode, "info") && argc == 3) {
		memset(&a, 0, sizeof(a));
		a.pathname = (uintptr_t)argv[2];
		map = sys_bpf(BPF_OBJ_GET, &a);
		if (map < 0)
			die("pinned map", argv[2], errno);
		printf("{\"map_type\":%lld,\"key_size\":%lld,\"value_size\":%lld,"
		       "\"max_entries\":%lld,\"memlock\":%lld}\n",
		       fdinfo(map, "map_type"), fdinfo(map, "key_size"),
		       fdinfo(map, "value_size"), fdinfo(map, "max_entries"),
		       fdinfo(map, "memlock"));
		return 0;
	}
	if ((!strcmp(mode, "drop") || !strcmp(mode, "pass")) && argc == 4) {
		attach(load(mode, -1), argv[2], argv[3]);
		printf("{\"program\":\"%s\"}\n", mode);
		return 0;
	}
	if (strcmp(mode, "hash") || argc != 5)
		return usage();
	map = hash_map(argv[4], &n, &kbytes, &sec);
	attach(load(mode, map), argv[2], argv[3]);
	printf("{\"program\":\"hash\",\"entries\":%u,\"max_entries\":%lld,"
	       "\"memlock\":%lld,\"kernel_bytes\":%lld,\"fill_sec\":%.3f}\n",
	       n, fdinfo(map, "max_entries"), fdinfo(map, "memlock"), kbytes,
	       sec);
	return 0;
}
