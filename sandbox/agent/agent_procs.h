/*
 * agent_procs.h: which processes a step started, whatever they did to
 * their session, process group or parent (agent_procs.c).
 *
 * A step's process group is not its processes: setsid, a double fork or
 * nohup leave it. What every one of them keeps is its ancestry: the agent
 * is PID 1 (or a child subreaper), so an orphan is re-parented to it, never
 * out of its tree. So a step's processes are told apart from the others
 * by a snapshot taken as the step starts: a process that is not in it and
 * whose nearest ancestor in it is the agent itself (or the kernel, for a
 * cell) is the step's. Processes that an earlier step left running are in
 * the snapshot and keep what they start.
 *
 * Ownership: a procs_snapshot is the caller's, freed by procs_free.
 */
#ifndef ISOBOX_AGENT_PROCS_H
#define ISOBOX_AGENT_PROCS_H

#include <stdint.h>
#include <sys/types.h>

struct proc_id {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat starttime: a reused pid is another process */
};

struct procs_snapshot {
	struct proc_id *v;
	size_t n;
};

/* The agent's descendants now (replacing what s held). */
void procs_snapshot(struct procs_snapshot *s);
void procs_free(struct procs_snapshot *s);

/*
 * Kill every process the step started (as above; root: the kernel for a
 * cell, else 0), and reap those that are the agent's, until none is left
 * or until `until` (monotonic ms) passes. keep (0: none) is neither killed
 * nor reaped: the kernel itself (its zombies are its own to reap). False:
 * some were still alive at `until`.
 */
bool procs_sweep(const struct procs_snapshot *s, pid_t root, pid_t keep, int64_t until);

#endif
