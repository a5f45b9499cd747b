/* owner.h: who made a container or work dir (owner.c). */
#ifndef ISOBOX_SANDBOX_OWNER_H
#define ISOBOX_SANDBOX_OWNER_H

#include <stdbool.h>
#include <stddef.h>

/* "PID.STARTTIME" of this process: who owns what it makes. */
const char *sandbox_owner_id(void);

/* Is the process named by "PID.STARTTIME" still the one running? */
bool owner_alive(const char *owner);

/*
 * "isobox-<instance>-<tag>" into out (n bytes, 128 hold any): the name of
 * every container isobox makes, so the reaper (reap.c) finds an instance's
 * own by its prefix (tag ""). A NULL tag is 16 random hex digits: unique,
 * and it says nothing of the host (the owner is in a label, which the
 * sandbox cannot read).
 */
void sandbox_container_name(const char *instance, const char *tag, char *out, size_t n);

#endif
