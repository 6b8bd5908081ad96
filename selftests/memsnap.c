// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel memory in use, by where it is, for unused_netns.sh.
 *
 *   memsnap       for each line read from stdin, a snapshot on stdout:
 *                  "KEY BYTES" lines, then "end".  KEY is a slab cache
 *                  (its objects in use times their size), vmalloc:CALLER
 *                  (the pages of the vmalloc areas CALLER made) or percpu
 *                  (Percpu of /proc/meminfo: populated per-CPU pages).
 *
 * /proc/slabinfo counts as in use every object of a slab that a CPU holds
 * (SLUB's per-CPU slab and partial slabs), free or not: a cache whose
 * per-CPU slabs were just refilled reads whole slabs higher, for kmalloc-8
 * 512 objects at a time.  Writing 1 to /sys/kernel/slab/NAME/shrink
 * flushes those slabs back to the node lists, where free objects are
 * counted as free; but any allocation from the cache before slabinfo is
 * read takes a slab back.  So every file is opened and the readers warmed
 * up (their buffers grown) once, at start; then each snapshot shrinks
 * every cache and reads slabinfo again, with nothing in between but the
 * writes to the shrink files, which allocate their 2-byte copy from
 * kmalloc-8: that cache is shrunk last, and its copy freed after the flush
 * goes back to the node's list.  Opening files per snapshot would also
 * leave objects that RCU frees seconds later.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLAB_DIR	"/sys/kernel/slab"
#define SLABINFO	"/proc/slabinfo"
#define VMALLOCINFO	"/proc/vmallocinfo"
#define MEMINFO		"/proc/meminfo"
/* Where kernfs copies a write to the shrink file: "1" and its NUL. */
#define LAST_CACHE	"kmalloc-8"

static char buf[1 << 22];
static int *fds, nfd, last_fd, slab_fd, vm_fd, mem_fd;

static void die(const char *what)
{
	fprintf(stderr, "memsnap: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The whole of the file at @fd into buf, from the start; its length. */
static size_t read_all(int fd, const char *name)
{
	size_t len = 0;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		die(name);
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	if (n < 0)
		die(name);
	if (len == sizeof(buf) - 1) {
		errno = EFBIG;
		die(name);
	}
	buf[len] = '\0';
	return len;
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		die(path);
	return fd;
}

static void open_all(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	int cap = 0;
	DIR *d;

	d = opendir(SLAB_DIR);
	if (!d)
		die(SLAB_DIR);
	/* Real caches only: a merged cache's other names are symlinks. */
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (nfd == cap) {
			cap = cap ? 2 * cap : 256;
			fds = realloc(fds, cap * sizeof(*fds));
			if (!fds)
				die("realloc");
		}
		snprintf(path, sizeof(path), SLAB_DIR "/%s/shrink", de->d_name);
		fds[nfd++] = open_or_die(path, O_WRONLY);
	}
	closedir(d);
	last_fd = open_or_die(SLAB_DIR "/" LAST_CACHE "/shrink", O_WRONLY);
	slab_fd = open_or_die(SLABINFO, O_RDONLY);
	vm_fd = open_or_die(VMALLOCINFO, O_RDONLY);
	mem_fd = open_or_die(MEMINFO, O_RDONLY);
	read_all(slab_fd, SLABINFO);
	read_all(vm_fd, VMALLOCINFO);
	read_all(mem_fd, MEMINFO);
}

static void print_slab(void)
{
	char *line, *save;
	int i;

	for (i = 0; i < nfd; i++)
		if (write(fds[i], "1", 1) != 1)
			die("shrink");
	if (write(last_fd, "1", 1) != 1)
		die(SLAB_DIR "/" LAST_CACHE "/shrink");
	read_all(slab_fd, SLABINFO);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long active, total, size;
		char name[128];

		if (sscanf(line, "%127s %llu %llu %llu", name, &active, &total,
			   &size) == 4)
			printf("%s %llu\n", name, active * size);
	}
}

/*
 * "0xSTART-0xEND SIZE CALLER ... pages=N ...": areas without pages
 * (ioremap, vmap of pages counted elsewhere) are left out.  Lines of one
 * caller are summed by the reader.
 */
static void print_vmalloc(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *line, *save, *p;

	read_all(vm_fd, VMALLOCINFO);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long pages;
		char caller[256];

		p = strstr(line, " pages=");
		if (!p || sscanf(p, " pages=%llu", &pages) != 1 ||
		    sscanf(line, "%*s %*s %255s", caller) != 1)
			continue;
		printf("vmalloc:%s %llu\n", caller, pages * page);
	}
}

static void print_percpu(void)
{
	unsigned long long kb;
	char *p;

	read_all(mem_fd, MEMINFO);
	p = strstr(buf, "\nPercpu:");
	if (p && sscanf(p, "\nPercpu: %llu", &kb) == 1)
		printf("percpu %llu\n", kb * 1024);
}

int main(int argc, char **argv)
{
	char line[64];

	if (argc != 1) {
		fprintf(stderr, "usage: memsnap\n");
		return 2;
	}
	open_all();
	while (fgets(line, sizeof(line), stdin)) {
		print_slab();
		print_vmalloc();
		print_percpu();
		printf("end\n");
		fflush(stdout);
	}
	return 0;
}
