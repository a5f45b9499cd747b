/*
 * runc_spec.h: what isobox-runc changes in a container's OCI spec before
 * runc reads it (docs/BACKENDS.md, "Hardened runc").
 *
 * Pure: a parsed config.json in, the same object changed or a reason out.
 * isobox-runc.c does the file and the exec.
 */
#ifndef ISOBOX_RUNC_SPEC_H
#define ISOBOX_RUNC_SPEC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "../uids.h" /* SANDBOX_ID, the only user a sandbox runs as; RUNC_HOST_ID */

/*
 * Give the container a user namespace of its own in which
 *   - uid and gid 0 are the host's 0, and nothing else of the host's: runc
 *     sets the container up as root (mounts, the rootfs that only root may
 *     walk to), with capabilities that count in that namespace only;
 *   - uid and gid 65534, the program's, are host_id (RUNC_HOST_ID): a
 *     uid no host user has, so a program that escapes the namespaces is
 *     nobody there.
 * Every other id is unmapped: a file the image has of another owner reads
 * as 65534's "nobody" but is not the program's (the kernel compares the
 * host ids).
 * Mount options that name another owner (docker's gid=5 for /dev/pts)
 * are dropped, and so is docker's net.ipv4.ping_group_range (all groups):
 * the kernel refuses unmapped ids. A world-writable tmpfs (mode=1777:
 * /tmp, /box) is made the sandbox user's (runc would give /box its image
 * mode back, 0755, root's).
 * A memory limit is required: the prestart hook (below) charges the
 * container's socket buffers up to it.
 *
 * Refuses (false, reason in err) a spec that is not a sandbox's: a user
 * other than 65534:65534, other groups, or a user namespace to join.
 */
bool runc_spec_userns(cJSON *spec, unsigned host_id, char *err, size_t errlen);

/*
 * runc 1.1 makes a read-only bind mount in two steps: a bind, then a
 * remount with MS_RDONLY and the spec's flags. In a user namespace the
 * kernel locks the source mount's nosuid, nodev, noexec and atime flags,
 * and a remount that would clear one fails (EPERM): a volume, which
 * isobox-volumed mounts nosuid,nodev,noatime, could not be bound
 * read-only. So every read-only bind gets its source's flags as options
 * (source_flags: statvfs's f_flag of the path; false if it cannot tell);
 * they change nothing, being the mount's already.
 */
void runc_spec_keep_bind_flags(cJSON *spec, bool (*source_flags)(const char *path, unsigned long *flags));

/*
 * Append to the spec's prestart hooks, after docker's own (which sets up
 * the network namespace), `hook_path --isobox-hook=prestart`: isobox-runc
 * run again by runc, with the container's state on stdin, before the
 * program starts. It charges the container's socket buffers to its memory
 * limit and refuses docker's embedded DNS (127.0.0.11) in its network
 * namespace (isobox-runc.c says why).
 */
void runc_spec_prestart_hook(cJSON *spec, const char *hook_path);

#endif
