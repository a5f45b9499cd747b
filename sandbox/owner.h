/* owner.h: who made a container or work dir (owner.c; sandbox_owner_id is in sandbox.h). */
#ifndef ISOBOX_SANDBOX_OWNER_H
#define ISOBOX_SANDBOX_OWNER_H

#include <stdbool.h>

/* Is the process named by "PID.STARTTIME" still the one running? */
bool owner_alive(const char *owner);

#endif
