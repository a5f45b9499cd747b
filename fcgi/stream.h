/* stream.h: running a request's job as Server-Sent Events (stream.c). */
#ifndef ISOBOX_STREAM_H
#define ISOBOX_STREAM_H

#include "worker.h"

struct request;

/* Run rq's job, streaming its output; errors before the first event are
 * ordinary JSON answers, later ones an `error` event. */
void stream_execute(struct worker *w, struct request *rq);

#endif
