/* pool.h: the pool master (pool.c). */
#ifndef ISOBOX_POOL_H
#define ISOBOX_POOL_H

#include "worker.h"

/*
 * Fork `workers` workers on the FastCGI socket (fd 0), and one more for the
 * status socket when status_fd >= 0; keep them running, reap after them,
 * kill hung ones. Returns when stopped (SIGTERM): the exit status.
 */
int pool_run(struct worker *w, int workers, int status_fd);

#endif
