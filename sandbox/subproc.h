/* subproc.h: starting and waiting for the sandboxes' clients and docker's commands (subproc.c). */
#ifndef ISOBOX_SANDBOX_SUBPROC_H
#define ISOBOX_SANDBOX_SUBPROC_H

#include "../conf/lib/base.h"
#include <sys/types.h>

/*
 * Start argv[0] (an absolute path) with a clean environment,
 * every other fd closed, and SIGKILL if the worker dies. fds[i] receives
 * our end of a pipe for the child's fd i, or the child's fd i is /dev/null
 * when fds[i] is NULL. Returns the pid, or -1 with errno set.
 */
pid_t subproc_spawn(char *const argv[], int *fds[3]);
/*
 * The same, with child(arg) in place of running argv: it runs in the new
 * process once its fds are set, and ends in subproc_exec or _exit (where
 * a spawn's caller must not wait: the warm pool's master, warm.c).
 */
pid_t subproc_spawn_with(int *fds[3], void (*child)(void *), void *arg);
/* In such a child: run argv[0] with the clean environment; never returns. */
void subproc_exec(char *const argv[]) __attribute__((noreturn));
/*
 * Start argv[0] detached: in a session of its own, with fds[i] as its fd i,
 * every other fd closed and no signal when the worker dies (a session's
 * `docker run` client must outlive the worker that started it).
 */
bool subproc_detach(char *const argv[], const int fds[3]);
/*
 * Run argv to completion (killed after timeout_ms), capturing stdout (and
 * stderr, if err is not NULL) up to 64 KiB each. Returns the exit status
 * (0-255), or -1 if it could not run or was killed.
 */
int subproc_capture(char *const argv[], int64_t timeout_ms, struct buf *out, struct buf *err);
/* Wait for pid, at most timeout_ms, then SIGKILL it. Returns the wait status;
 * -1 if pid is not a child of ours. */
int subproc_wait(pid_t pid, int64_t timeout_ms);

#endif
