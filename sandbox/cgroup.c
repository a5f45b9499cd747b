/*
 * cgroup.c: a sandbox's cgroups (cgroup.h). Every path is made here from
 * the conf's parent and a name we chose (a container's id, a warm
 * sandbox's container name): nothing a sandbox says names a file.
 */
#define _GNU_SOURCE
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CFS_PERIOD_US 100000 /* the kernel's default period; quota = cpus * period */

static bool unified(void)
{
	return access(CGROUP_ROOT "/cgroup.controllers", F_OK) == 0;
}

bool cgroup_own_possible(const struct conf *c)
{
	return c->cgroup_parent && c->cgroup_parent[0] == '/';
}

/* The directory of rel in the hierarchy of controller ctl (v1), or in the
 * one hierarchy (v2). */
static char *dir_of(const struct conf *c, const char *ctl, const char *rel)
{
	return unified() ? xasprintf(CGROUP_ROOT "%s/%s", c->cgroup_parent, rel)
			 : xasprintf(CGROUP_ROOT "/%s%s/%s", ctl, c->cgroup_parent, rel);
}

static bool read_number(const char *dir, const char *file, int64_t *out)
{
	char path[512], text[32];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (n <= 0)
		return false;
	text[n] = '\0';
	*out = strtoll(text, NULL, 10);
	return true;
}

/* One value into a cgroup file; missing files (memsw without swap
 * accounting) are ENOENT, for the caller to judge. */
__attribute__((format(printf, 3, 4)))
static bool write_value(const char *dir, const char *file, const char *fmt, ...)
{
	char path[512], text[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	snprintf(path, sizeof path, "%s/%s", dir, file);
	autoclose int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd >= 0 && write(fd, text, (size_t)n) == n;
}

int64_t cgroup_memory_used(const struct conf *c, const char *rel)
{
	if (!cgroup_own_possible(c))
		return -1;
	autofree char *dir = dir_of(c, "memory", rel);
	int64_t used;
	return read_number(dir, unified() ? "memory.current" : "memory.usage_in_bytes", &used) ? used : -1;
}

/* v2's cpu.stat: "usage_usec N" among its lines. */
static bool read_usage_usec(const char *dir, int64_t *out)
{
	char path[512], text[512];
	snprintf(path, sizeof path, "%s/cpu.stat", dir);
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (n <= 0)
		return false;
	text[n] = '\0';
	const char *p = strstr(text, "usage_usec ");
	if (!p || (p != text && p[-1] != '\n'))
		return false;
	*out = strtoll(p + strlen("usage_usec "), NULL, 10);
	return true;
}

bool cgroup_usage_read(const struct conf *c, const char *rel, struct cgroup_usage *out)
{
	*out = (struct cgroup_usage){-1, -1};
	if (!cgroup_own_possible(c) || !rel[0])
		return false;
	autofree char *mem = dir_of(c, "memory", rel);
	if (unified()) {
		int64_t usec;
		if (read_usage_usec(mem, &usec))
			out->cpu_ns = usec * 1000;
		read_number(mem, "memory.peak", &out->peak_bytes); /* before Linux 5.19: none */
	} else {
		autofree char *cpu = dir_of(c, "cpuacct", rel);
		read_number(cpu, "cpuacct.usage", &out->cpu_ns); /* each stays -1 if unread */
		read_number(mem, "memory.max_usage_in_bytes", &out->peak_bytes);
	}
	return out->cpu_ns >= 0 || out->peak_bytes >= 0;
}

bool cgroup_peak_reset(const struct conf *c, const char *rel)
{
	if (!cgroup_own_possible(c))
		return false;
	autofree char *mem = dir_of(c, "memory", rel);
	/* v1: any write sets it to the usage now; v2 (Linux 6.12 on) likewise. */
	return write_value(mem, unified() ? "memory.peak" : "memory.max_usage_in_bytes", "0");
}

/* v1: memory+swap may never be below memory, so the order depends on the
 * way the limit moves; without swap accounting there is no memsw file. */
static bool set_memory_v1(const char *dir, int64_t bytes, struct fault *why)
{
	int64_t now = 0;
	bool down = read_number(dir, "memory.limit_in_bytes", &now) && bytes < now;
	const char *first = down ? "memory.limit_in_bytes" : "memory.memsw.limit_in_bytes";
	const char *second = down ? "memory.memsw.limit_in_bytes" : "memory.limit_in_bytes";
	for (int i = 0; i < 2; i++) {
		const char *file = i ? second : first;
		if (!write_value(dir, file, "%lld", (long long)bytes) &&
		    !(errno == ENOENT && strstr(file, "memsw")))
			return fail(why, E_SANDBOX_UNAVAILABLE, "%s/%s: %s", dir, file, strerror(errno));
	}
	return true;
}

static bool set_limits(const struct conf *c, const char *rel, int64_t memory_bytes, double cpus,
		       struct fault *why)
{
	long long quota = (long long)(cpus * CFS_PERIOD_US + 0.5);
	autofree char *mem = dir_of(c, "memory", rel), *cpu = dir_of(c, "cpu", rel);
	if (unified()) {
		if (!write_value(mem, "memory.max", "%lld", (long long)memory_bytes) ||
		    (!write_value(mem, "memory.swap.max", "0") && errno != ENOENT) ||
		    !write_value(cpu, "cpu.max", "%lld %d", quota, CFS_PERIOD_US))
			return fail(why, E_SANDBOX_UNAVAILABLE, "%s: %s", mem, strerror(errno));
		return true;
	}
	if (!set_memory_v1(mem, memory_bytes, why))
		return false;
	if (!write_value(cpu, "cpu.cfs_period_us", "%d", CFS_PERIOD_US) ||
	    !write_value(cpu, "cpu.cfs_quota_us", "%lld", quota))
		return fail(why, E_SANDBOX_UNAVAILABLE, "%s: %s", cpu, strerror(errno));
	return true;
}

bool cgroup_own_make(const struct conf *c, const char *rel, int64_t memory_bytes, double cpus)
{
	struct fault why = {0};
	static const char *const ctls[] = {"memory", "cpu"};
	for (size_t i = 0; i < (unified() ? 1 : 2); i++) {
		autofree char *dir = dir_of(c, ctls[i], rel);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			log_msg("cannot make cgroup %s: %s", dir, strerror(errno));
			return false;
		}
		/* v2: the container's cgroup below ours gets these controllers. */
		if (unified())
			write_value(dir, "cgroup.subtree_control", "+memory +cpu +pids");
	}
	if (!set_limits(c, rel, memory_bytes, cpus, &why)) {
		log_msg("cannot set the limits of cgroup %s: %s", rel, why.message);
		return false;
	}
	return true;
}

bool cgroup_own_set(const struct conf *c, const char *rel, int64_t memory_bytes, double cpus)
{
	struct fault why = {0};
	if (set_limits(c, rel, memory_bytes, cpus, &why))
		return true;
	log_msg("cannot set the limits of cgroup %s: %s", rel, why.message);
	return false;
}

void cgroup_parents(const struct conf *c, struct strv *out)
{
	if (!cgroup_own_possible(c))
		return; /* none, or systemd's driver */
	if (unified()) {
		strv_pushf(out, CGROUP_ROOT "%s", c->cgroup_parent);
		return;
	}
	DIR *d = opendir(CGROUP_ROOT);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			strv_pushf(out, CGROUP_ROOT "/%s%s", e->d_name, c->cgroup_parent);
	if (d)
		closedir(d);
}

/* rmdir dir and the empty cgroups in it (never recursively: a cgroup that
 * holds a process stays). */
static bool remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			autofree char *sub = xasprintf("%s/%s", dir, e->d_name);
			rmdir(sub);
		}
	closedir(d);
	return rmdir(dir) == 0 || errno == ENOENT;
}

bool cgroup_own_remove(const struct conf *c, const char *rel)
{
	struct strv parents = {0};
	bool gone = true;
	cgroup_parents(c, &parents);
	for (size_t i = 0; i < parents.n; i++) {
		autofree char *dir = xasprintf("%s/%s", parents.v[i], rel);
		gone = remove_dir(dir) && gone;
	}
	strv_free(&parents);
	return gone;
}
