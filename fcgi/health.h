/* health.h: GET /healthz (health.c). */
#ifndef ISOBOX_HEALTH_H
#define ISOBOX_HEALTH_H

#include "worker.h"

struct request;

void health_handler(struct worker *w, struct request *rq);

#endif
