/*
 * auth.h: who is calling a route that acts for a tenant (conf/tenants.h),
 * and whether they may, now: the key or the anonymous address, the
 * tenant's requests per minute and running executions (counted in the
 * store, across every worker); and the CORS headers a browser needs.
 */
#ifndef ISOBOX_AUTH_H
#define ISOBOX_AUTH_H

#include "worker.h"

struct request;

/* Who is calling (rq->tenant, rq->share), within its rate? Otherwise the
 * request has been answered: 401 (with WWW-Authenticate), 429
 * (with Retry-After), 503 if the store fails. A keyless caller of a demo
 * route, while the public demo is on (conf/demo.h), is the tenant "demo"
 * (rq->demo); to run a program it needs a Turnstile token that siteverify
 * accepts (else 401, 403 turnstile_failed, 503 turnstile_unavailable). */
bool auth_admit(struct worker *w, struct request *rq);

/* A place among the tenant's concurrentExecutions (rq->claim); false with
 * rq->fault (429, or the store's failure), not answered. */
bool auth_claim_execution(struct worker *w, struct request *rq);
/* Give the place back (every request, at its end; nothing if none). */
void auth_release(struct worker *w, struct request *rq);

/* The CORS headers for this request's Origin into rq->io.always (none if
 * access.corsOrigins does not list it). */
void auth_cors(struct worker *w, struct request *rq);
/* Answer a preflight (OPTIONS) for a path whose methods are `allow`. */
void auth_preflight(struct request *rq, const char *allow);

#endif
