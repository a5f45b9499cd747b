/*
 * warm.h: the inside of the warm pool (warm.c), for lifecycle.c and exec.c.
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
 * Take a ready sandbox for this job (a worker). False, with *miss naming
 * why, when there is none to take: "empty", "limits" (the job's memory,
 * cpus or pids are not the pool's), "network"; *miss stays NULL when the
 * language has no warm pool at all.
 */
bool warm_take(struct warm_pool *wp, const struct sandbox_job *job, struct warm_lease *lease,
	       const char **miss);
/* The wait status of its docker client (= the container's exit), as the
 * master reaped it; -1 if that takes longer than wait_ms. */
int warm_exit_status(const struct warm_lease *lease, int64_t wait_ms);
/* Done with it, whatever happened: the master removes the container. */
void warm_release(struct warm_pool *wp, struct warm_lease *lease);

/* The job as the agent reads it (sandbox/agent/python.py): the nonce of
 * its end marks (decoder.h), files, args, then the program's stdin. Pure. */
void warm_job_frame(const struct sandbox_job *job, const char *nonce, struct buf *out);

#endif
