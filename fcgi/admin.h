/*
 * admin.h: the pool's own concerns around each request: who may call the
 * status endpoints, the whenBusy gate in front of programs, counting every
 * request into the shared metrics and the log, the hang backstop's deadline,
 * and GET /metrics (GET /healthz: health.h).
 */
#ifndef ISOBOX_ADMIN_H
#define ISOBOX_ADMIN_H

#include "worker.h"

struct request;

/*
 * Before the handler: the route's access list, and for routes that run
 * programs the whenBusy gate. false: it has answered (403, 503 busy).
 */
bool admin_admit(struct worker *w, struct request *rq);
/* What a route that runs programs claims before it runs one (admin_admit
 * does it for them; /mcp's tools/call for itself): a place in the
 * tenant's share, then an execution slot (the whenBusy gate). false with
 * rq->fault (429, 503 busy), not answered. admin_release gives both back. */
bool admin_claim_run(struct worker *w, struct request *rq);
/*
 * Give back what the request holds for others to count: its execution
 * slot, its place in the tenant's share, its volume's mark, and the
 * share of a session that has ended. Once; before the answer's end
 * (http_io.before_end, set by routes.c), so that a client that sends
 * its next request the moment it reads an answer is never refused for
 * the one it has been answered; admin_done does it if no answer did.
 */
void admin_release(struct worker *w, struct request *rq);
/* The answer (of this status) is about to end: admin_release, and count
 * the request in /metrics (started_ms: when it began), once; so a client
 * that reads /metrics the moment it has its answer finds it counted. */
void admin_answered(struct worker *w, struct request *rq, int status, int64_t started_ms);
/* After it: the same, if no answer did. */
void admin_done(struct worker *w, struct request *rq, int64_t started_ms);
/* Then its one line in the log (reqlog.h): who asked what, what ran, how
 * it ended, how long it took and how many bytes went each way. */
void admin_log_request(const struct worker *w, const struct request *rq, int64_t started_ms);

/* How long any request may take before its worker counts as hung (ms):
 * also the least read timeout a web server in front needs (--print-conf
 * answer_bound_ms; deploy/pool.sh gives it to Caddy). */
int64_t admin_hang_bound_ms(const struct worker *w);
/* Once the job is parsed: its own limits replace that pool-wide bound. */
void admin_job_accepted(struct worker *w, const struct request *rq);

void admin_metrics(struct worker *w, struct request *rq);

#endif
