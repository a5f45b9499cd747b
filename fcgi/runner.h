/*
 * runner.h: queue mode's runner (runner.c): a worker that takes jobs from
 * the Redis stream instead of FastCGI requests (conf queue.role: runner).
 */
#ifndef ISOBOX_RUNNER_H
#define ISOBOX_RUNNER_H

#include "worker.h"

/* Take and run jobs until the worker is told to stop; its exit code. */
int runner_serve(struct worker *w);

#endif
