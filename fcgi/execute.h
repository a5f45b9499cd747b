/*
 * execute.h: the one pipeline that runs a program for a request, for both
 * POST /execute and Piston's POST /api/v2/execute: read the body, (for
 * Piston: translate it), parse and validate it, run it (as a stream when
 * asked), answer in the route's shape.
 */
#ifndef ISOBOX_EXECUTE_H
#define ISOBOX_EXECUTE_H

#include "worker.h"

struct request;

void execute_handler(struct worker *w, struct request *rq);

/*
 * The parsed rq->job, run and answered: as JSON, or as a stream when the
 * client accepts text/event-stream. In rq->session when rq->in_session
 * (a session step), else as /execute runs it.
 */
void execute_answer(struct worker *w, struct request *rq);
#endif
