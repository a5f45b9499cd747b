/*
 * uids.h: the host ids that a sandbox's files belong to, per backend.
 *
 * Inside every sandbox the program is uid and gid 65534 (spec.c:
 * --user=65534:65534). On gVisor that is the host's 65534 as well; on
 * runc, a user namespace of the container's own makes it RUNC_HOST_ID, an
 * id that no host user has (runc/runc_spec.h; docker's own userns-remap
 * would give 100000 + 65534 too). A volume is formatted for one backend's
 * id (volumed/volumed.c), so it serves that backend only.
 */
#ifndef ISOBOX_SANDBOX_UIDS_H
#define ISOBOX_SANDBOX_UIDS_H

#define SANDBOX_ID 65534u
#define RUNC_HOST_ID 165534u

#endif
