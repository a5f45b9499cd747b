/*
 * routes.h: the endpoints, each a row that says everything about it once:
 * its path and method, its handler, and what the pool does around it.
 */
#ifndef ISOBOX_ROUTES_H
#define ISOBOX_ROUTES_H

#include "worker.h"

struct request;

enum route_flags {
	ROUTE_RUNS_PROGRAM = 1 << 0, /* takes an execution slot: the whenBusy gate */
	ROUTE_PISTON = 1 << 1,       /* Piston's shapes: errors carry "message" and Piston's status */
	ROUTE_STATUS = 1 << 2,       /* served on the status socket too: never waits behind runs */
};

/* Who may call it (access: in conf); ACL_ANYONE for the API itself. */
enum route_acl { ACL_ANYONE, ACL_METRICS, ACL_HEALTHZ };

struct route {
	const char *path, *method; /* GET routes answer HEAD too */
	void (*handler)(struct worker *w, struct request *rq);
	unsigned flags;
	enum route_acl acl;
};

/* Answer one request: find its route, check who may call it, run it,
 * count it (admin.c). */
void route_request(struct worker *w, struct http_io *io);

/* Answer rq's fault as JSON, in the shape and with the status of its
 * route (Piston's or ours); extra_headers is "" or "Name: v\r\n"... */
void route_answer_fault(struct request *rq, const char *extra_headers);

/* GET /runtimes. */
void route_runtimes(struct worker *w, struct request *rq);

#endif
