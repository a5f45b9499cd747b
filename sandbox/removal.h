/*
 * removal.h: containers being removed (removal.c), one queue type for
 * every owner: a worker's, for the sandboxes it answered for before their
 * clean-up (lifecycle.c, waited for by sandbox_settle while the worker
 * still counts as busy); the warm pool master's (warm.c, collected at
 * each tick); and a queue of one for a removal waited for at once
 * (removal_now).
 *
 * Each removal is asked of dockerd's API, its connection kept until the
 * answer: a `docker rm` process costs as much CPU as a tenth of a hello's
 * run. When the API cannot be reached, a `docker rm --force` process is
 * started instead: waited for as the answer in a worker; in the pool's
 * master, whose own reaper collects every child it has (waitpid(-1)),
 * started and left to that reaper, as when the master's queue is full. A removal that fails is
 * asked once more, REMOVE_RETRY_MS later: dockerd can fail one that races
 * the container's exit ("unable to remove filesystem ... directory not
 * empty") and leave it "dead", which a second removal clears. One still
 * there after that is logged, and is the reaper's (reap.c) once its owner
 * is gone.
 *
 * Ownership: a queue is its owner's, in its own memory; its connections
 * and processes are that process's (removals_drop in a child). -1
 * is the only "none" of an fd or a pid.
 */
#ifndef ISOBOX_SANDBOX_REMOVAL_H
#define ISOBOX_SANDBOX_REMOVAL_H

#include "sandbox.h"
#include <sys/types.h>

#define REMOVALS_MAX 64 /* as many as a warm pool holds */

struct removal {
	const struct conf *c;
	int fd;            /* the API's connection; -1: none */
	pid_t pid;         /* the docker rm process; -1: none */
	int64_t until;     /* its answer is awaited until then */
	int64_t retry_at;  /* > 0: failed once, asked again then */
	bool retried;
	char name[72];     /* a container's name, or its 64-hex id */
};

/* Told of each container found removed (to free what was its own, such
 * as its cgroup). */
typedef void removal_gone_fn(void *arg, const struct conf *c, const char *name);

struct removals {
	removal_gone_fn *gone; /* NULL: no one to tell */
	void *arg;
	bool master;           /* the process reaps its children itself: never wait on one */
	size_t n;              /* r[0] to r[n - 1] are under way */
	struct removal r[REMOVALS_MAX];
};

void removals_init(struct removals *q, removal_gone_fn *gone, void *arg, bool master);
/* Ask for name's removal. A full queue is waited on first (in a worker;
 * the master starts a docker rm process instead: it must not block). */
void removals_add(struct removals *q, const struct conf *c, const char *name);
/* Take the answers that come by deadline (now or before: only those
 * already in), and ask again those that failed once. true: some are still
 * awaited. */
bool removals_collect(struct removals *q, int64_t deadline);
/* Give up on what is still under way, logged: the connections closed, the
 * processes killed and reaped (a worker's). What stays is the reaper's. */
void removals_abandon(struct removals *q);
bool removals_holds(const struct removals *q, const char *name);
/* Let them go: the connections closed, the processes left to whoever
 * reaps this process's children; the queue empty. In a child after fork
 * (they are the parent's), or when the owner stops (what is left is the
 * reaper's). */
void removals_drop(struct removals *q);
/* Remove name now, by deadline: true if it is gone. */
bool removal_now(const struct conf *c, const char *name, int64_t deadline);

#endif
