/* deadline.h: every time bound of a run, and the deadline of an exec (deadline.c). */
#ifndef ISOBOX_SANDBOX_DEADLINE_H
#define ISOBOX_SANDBOX_DEADLINE_H

#include "decoder.h"
#include "sandbox.h"

#include <stddef.h>

/*
 * Time bounds, each in one place; deadline.c sums them into the longest a
 * run can take (sandbox_bound_ms), which the pool's hang backstop uses.
 */
/* From the sandbox's first sign of life, the entry script's own steps
 * (between the compile step and the program) may take this long. */
#define START_ALLOWANCE_MS 2000
/* After a kill, the pipes are read (and discarded) this long at most. */
#define DRAIN_AFTER_KILL_MS 5000
/* After the run: the docker client's exit, the kill, inspect, OOM events. */
#define COLLECT_MS 15000
/* A run with outputs: listing and reading its files after the program. */
#define OUTPUTS_MS 15000
/* Removing the container (docker rm --force). */
#define REMOVE_MS 10000
#define REMOVE_RETRY_MS 250 /* before a failed removal is asked again */
/* The reaper: listing an instance's containers, and removing them. */
#define REAP_LIST_MS 15000
#define REAP_REMOVE_MS 30000
/* How often the master looks for containers of sessions that are gone (a
 * removal that failed while dockerd was away, an ender that died). */
#define SESSION_ORPHANS_EVERY_MS 10000
/* isobox-volumed's answer: formatting a large volume takes this long;
 * nothing else it does comes near. */
#define VOLUMED_MS 120000
/* A file request to a session's agent, plus a second per 4 MiB it moves. */
#define FILE_REQUEST_MS 10000
#define FILE_REQUEST_MS_PER_4MIB 1000

/* When the current exec began, came up, and entered its current phase
 * (monotonic ms; up_ms is 0 until the sandbox shows a sign of life), and
 * the end of the sandbox it runs in, when that is set from outside (a
 * session's maxLifetimeMs; 0: none): no phase runs past it. */
struct exec_clock {
	int64_t spawned_ms, up_ms, phase_ms;
	int64_t end_by_ms;
};

/* How long a file request that moves this many bytes may take. */
int64_t file_request_ms(size_t moved);

/* The deadline of an exec now (monotonic ms). Pure. */
int64_t exec_deadline(const struct conf *c, const struct limits *l, const struct decoder *d,
		      const struct exec_clock *t);

#endif
