/* owner.h: who made a container or work dir (owner.c). */
#ifndef ISOBOX_SANDBOX_OWNER_H
#define ISOBOX_SANDBOX_OWNER_H

#include <stdbool.h>

/* "PID.STARTTIME" of this process: who owns what it makes. */
const char *sandbox_owner_id(void);

/* Is the process named by "PID.STARTTIME" still the one running? */
bool owner_alive(const char *owner);

#endif
