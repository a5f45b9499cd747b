/*
 * owner.c: who made a container or work dir.
 *
 * Every container and work dir carries its owner, "PID.STARTTIME" of the
 * worker process that made it (process_id, conf/lib/base.h: the store names
 * the holders of its marks the same way). The start time makes the owner
 * unique even when the kernel reuses the pid, so the reaper (reap.c) can
 * tell a live owner from a dead one.
 */
#define _GNU_SOURCE
#include "owner.h"
#include "sandbox.h"

#include <stdio.h>

const char *sandbox_owner_id(void)
{
	return process_id();
}

bool owner_alive(const char *owner)
{
	return process_alive(owner);
}

void sandbox_container_name(const char *instance, const char *tag, char *out, size_t n)
{
	char rnd[17];
	if (!tag) {
		random_hex(rnd, 8);
		tag = rnd;
	}
	snprintf(out, n, "isobox-%s-%s", instance, tag);
}
