/* internal.h: what the files of sandbox/ share, and nobody else. */
#ifndef ISOBOX_SANDBOX_INTERNAL_H
#define ISOBOX_SANDBOX_INTERNAL_H

#include "sandbox.h"
#include <sys/types.h>

/*
 * Start argv[0] (an absolute path) with a clean environment, every other fd
 * closed, and SIGKILL if the worker dies. fds[i] receives our end of a pipe
 * for the child's fd i, or the child's fd i is /dev/null when fds[i] is NULL.
 * Returns the pid, or -1 with errno set.
 */
pid_t subproc_spawn(char *const argv[], int *fds[3]);

/*
 * Run argv to completion (killed after timeout_ms), capturing stdout (and
 * stderr, if err is not NULL) up to 64 KiB each. Returns the exit status
 * (0-255), or -1 if it could not run or was killed.
 */
int subproc_capture(char *const argv[], int64_t timeout_ms, struct buf *out, struct buf *err);

/* Wait for pid, at most timeout_ms, then SIGKILL it. Returns the wait status. */
int subproc_wait(pid_t pid, int64_t timeout_ms);

/*
 * Make <work_dir>/<instance>.<owner>.XXXXXX holding the job's files, written
 * with O_NOFOLLOW|O_EXCL into a directory nothing else writes. *dir_out gets
 * its full path.
 */
bool workdir_create(const struct conf *c, const struct sandbox_job *job, char **dir_out,
		    struct fault *f);

/* Remove a tree the worker made (no symlink is ever followed). */
void workdir_remove(const char *path);

#endif
