/*
 * owner.c: who made a container or work dir.
 *
 * Every container and work dir carries its owner, "PID.STARTTIME" of the
 * worker process that made it. The start time makes the owner unique even
 * when the kernel reuses the pid, so the reaper (reap.c) can tell a live
 * owner from a dead one.
 */
#define _GNU_SOURCE
#include "owner.h"
#include "sandbox.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

/* Field 22 of /proc/PID/stat: start time in clock ticks since boot. */
static bool start_time(pid_t pid, unsigned long long *out)
{
	char path[64], data[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, data, sizeof data - 1);
	if (n <= 0)
		return false;
	data[n] = '\0';
	char *p = strrchr(data, ')'); /* the command name may hold spaces */
	if (!p)
		return false;
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", out) == 1;
}

const char *sandbox_owner_id(void)
{
	static char id[48];
	static pid_t for_pid;
	pid_t self = getpid();
	if (for_pid != self) {
		unsigned long long st = 0;
		start_time(self, &st);
		snprintf(id, sizeof id, "%d.%llu", (int)self, st);
		for_pid = self;
	}
	return id;
}

bool owner_alive(const char *owner)
{
	int pid;
	unsigned long long want, have;
	if (sscanf(owner, "%d.%llu", &pid, &want) != 2 || pid <= 0)
		return false;
	return start_time(pid, &have) && have == want;
}
