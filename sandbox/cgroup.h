/*
 * cgroup.h: a sandbox's cgroups under the conf's cgroup parent
 * (cgroup.c): what one holds, and the limits of a warm sandbox's own
 * parent.
 *
 * docker update does not work on runsc (it has no update command), so the
 * limits of a sandbox that is already up cannot go through docker. A warm
 * sandbox is started under a cgroup of its own below the parent, made by
 * the service user (the parent's directory is its own: deploy/setup.sh),
 * so that its files are the service user's to write: the request that
 * takes it sets its memory and CPU there, with no root and no docker call.
 * Only where the parent is a path (docker's cgroupfs driver), v1 or v2.
 */
#ifndef ISOBOX_SANDBOX_CGROUP_H
#define ISOBOX_SANDBOX_CGROUP_H

#include "sandbox.h"

/* Can sandboxes have cgroups of our own below the parent here? */
bool cgroup_own_possible(const struct conf *c);

/* The memory a cgroup below the parent holds now (rel: a container's id,
 * or a warm sandbox's own cgroup); -1 when unknown. */
int64_t cgroup_memory_used(const struct conf *c, const char *rel);

/*
 * What a sandbox's cgroup (rel, as above) has used: its CPU time, user and
 * system, and its memory's high-water mark, gVisor's kernel included (the
 * figure its memory limit is held to). The counters are the host's: no
 * program can forge them. -1 in a field the host does not keep; false when
 * the cgroup cannot be read (none of ours here, or gone with its sandbox).
 */
struct cgroup_usage {
	int64_t cpu_ns;
	int64_t peak_bytes;
};
bool cgroup_usage_read(const struct conf *c, const char *rel, struct cgroup_usage *out);
/* Start rel's high-water mark again from what it holds now (a warm
 * sandbox's own cgroup as its run begins); false where it cannot be. */
bool cgroup_peak_reset(const struct conf *c, const char *rel);

/* Make rel (a warm sandbox's own cgroup) and give it these limits. */
bool cgroup_own_make(const struct conf *c, const char *rel, int64_t memory_bytes, double cpus);
/* Set the limits of rel, up or down (lower memory than it holds fails). */
bool cgroup_own_set(const struct conf *c, const char *rel, int64_t memory_bytes, double cpus);
/* Remove rel in every hierarchy, with what a dead container left in it:
 * false while something still lives in it (try again later). */
bool cgroup_own_remove(const struct conf *c, const char *rel);

/* The parent's directory in each hierarchy: v2 has one, v1 one per mounted
 * hierarchy (those runsc does not use have no such dir). */
void cgroup_parents(const struct conf *c, struct strv *out);

#endif
