/*
 * routes.h: the endpoints (the table in routes.c: each row says everything
 * about its route once, see struct route in request.h) and the way in for
 * every request.
 */
#ifndef ISOBOX_ROUTES_H
#define ISOBOX_ROUTES_H

#include "worker.h"

struct request;

/* Answer one request: find its route, check who may call it, run it,
 * count it (admin.c). */
void route_request(struct worker *w, struct http_io *io);

/* GET /runtimes. */
void route_runtimes(struct worker *w, struct request *rq);

#endif
