/*
 * agent_base.h: what every file of the session agent uses (agent_base.c):
 * its limits, a growable buffer, the reason a file request failed, and the
 * fatal exit. The agent is agent.c (the loop, the steps and the kernel),
 * agent_wire.c (the protocol), agent_files.c (the workspace),
 * agent_spawn.c (starting programs), agent_procs.c (a step's processes)
 * and agent_cmds.c (background commands), compiled into one static binary.
 */
#ifndef ISOBOX_AGENT_BASE_H
#define ISOBOX_AGENT_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../agent_protocol.h" /* AGENT_TAG_LEN, AGENT_MAX_HEADER, AGENT_MAX_CHUNK */

#define MAX_PAYLOAD (64ULL << 20)   /* one file, stdin, code, or all the args */
#define MAX_FILES 1000
#define MAX_ARGV 4096
#define MAX_PATH 4096
#define MAX_RESULT (MAX_PAYLOAD + 4096) /* a cell's JSON, images included */
#define MAX_DISCARDED 16
#define DRAIN_MAX (1 << 20)         /* read from a pipe when its step ends */
#define INT_GRACE_MS 1000           /* a cell's time to stop after SIGINT */
#define START_GRACE_MS 3000         /* an interrupted cell's to begin (kernel start-up) */
#define SWEEP_MS 2000               /* an interrupted run's group: killed until gone */

struct buf {
	char *p;
	size_t len, cap;
};

/* A failed file request: its errno and the message that is its answer. */
struct why {
	int err;
	char msg[256];
};

/* Fatal: the worker reads the exit as the end of the session. */
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Record the first failure of a file request in *w; returns false. */
bool set_why(struct why *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void buf_add(struct buf *b, const void *p, size_t n);
void fd_close(int *fd);

#endif
