// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_xdp: loads and attaches the XDP programs of bench_xdp.bpf.c (the
 * object OBJ, built with clang -target bpf) for pktgen_bench.sh, with
 * libbpf, which the VM has for cuckooctl.
 *
 *   bpf_xdp drop OBJ IFNAME PIN      XDP_DROP for every packet (the floor)
 *   bpf_xdp pass OBJ IFNAME PIN      XDP_PASS for every packet
 *   bpf_xdp hash OBJ IFNAME PIN FILE a BPF hash map (key: IPv4 source, 4
 *                                    bytes; value 4 bytes) of the dotted
 *                                    addresses in FILE, one a line, and a
 *                                    program dropping the packets whose
 *                                    source it holds
 *   bpf_xdp info PINNED              the map pinned at PINNED (xdp-filter's)
 *
 * The program is attached to IFNAME in native (driver) mode by a BPF
 * link pinned at PIN on a bpffs: it stays attached after bpf_xdp exits,
 * until PIN is removed.  Prints one JSON object: for hash, the map's
 * entries, its memlock (fdinfo: what the kernel charges for it), the
 * kernel memory it took (Slab + VmallocUsed of /proc/meminfo, before the
 * map was made and after it was filled) and the seconds the fill took.
 * Errors name the value that failed: "bpf_xdp: WHAT VALUE: reason".
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Addresses per BPF_MAP_UPDATE_BATCH call. */
#define BATCH 65536

static void die(const char *what, const char *value, int err)
{
	fprintf(stderr, "bpf_xdp: %s %s: %s\n", what, value, strerror(err));
	exit(1);
}

/*
 * Open OBJ, load its program bench_MODE (with the hash map @map when it is
 * not -1) and attach it to IFNAME natively by a link pinned at PIN.
 */
static void attach(const char *obj_file, const char *mode,
		   const char *ifname, const char *pin, int map)
{
	unsigned int ifindex = if_nametoindex(ifname);
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	struct bpf_link *link;
	char name[32];

	if (!ifindex)
		die("interface", ifname, errno);
	obj = bpf_object__open_file(obj_file, NULL);
	if (!obj)
		die("open", obj_file, errno);
	snprintf(name, sizeof(name), "bench_%s", mode);
	prog = bpf_object__find_program_by_name(obj, name);
	if (!prog)
		die("program", name, ENOENT);
	/* Only the program measured is loaded. */
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	if (map >= 0 &&
	    bpf_map__reuse_fd(bpf_object__find_map_by_name(obj,
						"cnf_bench_hash"), map))
		die("reuse of", "cnf_bench_hash", errno);
	if (bpf_object__load(obj))
		die("load", obj_file, errno);
	link = bpf_program__attach_xdp(prog, (int)ifindex);
	if (!link)
		die("native XDP attach to", ifname, errno);
	if (bpf_link__pin(link, pin))
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

/*
 * A hash map of the @n addresses @keys, filled in batches; the kernel
 * memory that took, and the seconds, in *@kbytes and *@sec.
 */
static int hash_map(const uint32_t *keys, unsigned int n, long long *kbytes,
		    double *sec)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t *vals = calloc(BATCH, sizeof(*vals));
	long long before = kernel_bytes();
	double t0 = now();
	unsigned int i, k;
	__u32 count;
	int map;

	if (!vals)
		die("fill", "cnf_bench_hash", ENOMEM);
	map = bpf_map_create(BPF_MAP_TYPE_HASH, "cnf_bench_hash", 4, 4, n,
			     NULL);
	if (map < 0)
		die("BPF_MAP_CREATE", "cnf_bench_hash", errno);
	for (i = 0; i < n; i += k) {
		k = n - i < BATCH ? n - i : BATCH;
		count = k;
		if (bpf_map_update_batch(map, keys + i, vals, &count, &o) ||
		    count != k)
			die("BPF_MAP_UPDATE_BATCH", "cnf_bench_hash",
			    errno ? errno : EIO);
	}
	*sec = now() - t0;
	*kbytes = kernel_bytes() - before;
	free(vals);
	return map;
}

static int usage(void)
{
	fputs("usage: bpf_xdp drop|pass OBJ IFNAME PIN | "
	      "hash OBJ IFNAME PIN FILE | info PINNED\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long long kbytes;
	unsigned int n;
	uint32_t *keys;
	double sec;
	int map;

	if (!strcmp(mode, "info") && argc == 3) {
		map = bpf_obj_get(argv[2]);
		if (map < 0)
			die("pinned map", argv[2], errno);
		printf("{\"map_type\":%lld,\"key_size\":%lld,\"value_size\":%lld,"
		       "\"max_entries\":%lld,\"memlock\":%lld}\n",
		       fdinfo(map, "map_type"), fdinfo(map, "key_size"),
		       fdinfo(map, "value_size"), fdinfo(map, "max_entries"),
		       fdinfo(map, "memlock"));
		return 0;
	}
	if ((!strcmp(mode, "drop") || !strcmp(mode, "pass")) && argc == 5) {
		attach(argv[2], mode, argv[3], argv[4], -1);
		printf("{\"program\":\"%s\"}\n", mode);
		return 0;
	}
	if (strcmp(mode, "hash") || argc != 6)
		return usage();
	keys = read_addrs(argv[5], &n);
	map = hash_map(keys, n, &kbytes, &sec);
	attach(argv[2], mode, argv[3], argv[4], map);
	printf("{\"program\":\"hash\",\"entries\":%u,\"max_entries\":%lld,"
	       "\"memlock\":%lld,\"kernel_bytes\":%lld,\"fill_sec\":%.3f}\n",
	       n, fdinfo(map, "max_entries"), fdinfo(map, "memlock"), kbytes,
	       sec);
	free(keys);
	return 0;
}
