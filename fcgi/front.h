/*
 * front.h: POST /execute on a front host in queue mode (front.c): the job
 * goes on the queue and its answer comes from the runner that takes it.
 */
#ifndef ISOBOX_FRONT_H
#define ISOBOX_FRONT_H

#include "worker.h"

struct request;

/* Queue rq's parsed job and answer with what its run does (JSON or SSE). */
void front_execute(struct worker *w, struct request *rq);

#endif
