/*
 * warm.h: the inside of the warm pool (warm.c), for lifecycle.c and exec_warm.c.
 * The face (what the master and a worker call) is in sandbox.h.
 */
#ifndef ISOBOX_SANDBOX_WARM_H
#define ISOBOX_SANDBOX_WARM_H

#include "sandbox.h"

/*
 * One warm sandbox a worker took. Ownership: the worker holds the three
 * pipe ends (the agent's stdin, stdout and stderr through the master's
 * `docker run -i` client) until warm_release, which also hands the
 * container back to the master for removal.
 */
struct warm_lease {
	struct warm_pool *wp;
	int slot;
	int fds[3];
	char name[64];
};

/*
 * Take a ready sandbox for this job (a worker), with the job's memory and
 * cpus set on it (warm.c says how). False, with *miss naming why, when
 * there is none to take: "empty"; "limits" (pids other than the default,
 * or, with no cgroup of its own, memory or cpus too); "memory" (what its
 * preloads hold and the job's memory do not fit what it started with);
 * "cgroup" (its limits could not be set: it is not used); "network",
 * "outputs", "volume". *miss stays NULL when the language has no warm
 * pool at all.
 */
bool warm_take(const struct conf *c, struct warm_pool *wp, const struct sandbox_job *job,
	       struct warm_lease *lease, const char **miss);
/* The wait status of its client (= the container's exit), as the
 * master reaped it; -1 if that takes longer than wait_ms. */
int warm_exit_status(const struct warm_lease *lease, int64_t wait_ms);
/* Done with it, whatever happened: the master removes the container. */
void warm_release(struct warm_pool *wp, struct warm_lease *lease);

/* Is name a sandbox of the pool's slots, or one it is removing (the
 * master's; false for a NULL pool)? The reaper leaves its cgroup alone. */
bool warm_holds(const struct warm_pool *wp, const char *name);

/* The job as the agent reads it (sandbox/agent/python.py): the nonce of
 * its end marks (decoder.h), files, args, then the program's stdin. Pure. */
void warm_job_frame(const struct sandbox_job *job, const char *nonce, struct buf *out);

#endif
