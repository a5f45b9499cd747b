/*
 * worker.h: a FastCGI worker (one request at a time) and the pool master
 * that keeps N of them running.
 */
#ifndef ISOBOX_WORKER_H
#define ISOBOX_WORKER_H

#include "http.h"
#include "../conf/conf.h"
#include "../registry/registry.h"

struct metrics;

/* What one worker process holds between requests. */
struct worker {
	char *conf_path;
	struct conf conf;
	struct registry reg;
	int64_t started_ms;
	int64_t served;
	char reload_error[512]; /* "" when the last reload worked */
	/* The pool (pool.c; all zero/NULL for CGI). Fixed when the pool starts:
	 * whenBusy and workers need a restart, not a reload. */
	struct metrics *metrics; /* shared by the whole pool; owned by the master */
	int slot;                /* this worker's slot in it; -1: none */
	int exec_slots;          /* programs the pool runs at once */
	int busy_limit;          /* whenBusy: reject -> exec_slots; wait -> 0 */
	bool pooled;             /* a master respawns us: maxRequests applies */
};

/* A worker that served pool.maxRequests exits with this: respawn at once. */
#define WORKER_EXIT_RECYCLED 75

/* Load conf and registry; false with err set (the old ones are untouched). */
bool worker_load(struct worker *w, char *err, size_t errlen);

void worker_free(struct worker *w);

/* SIGHUP: reload between requests; SIGTERM: stop (kills a run in flight). */
void worker_install_handlers(void);

/* Serve FastCGI requests on fd 0 until stopped (0) or recycled
 * (WORKER_EXIT_RECYCLED): the process's exit status. */
int worker_serve(struct worker *w);
/* Serve the one CGI request of this process. */
void worker_serve_cgi(struct worker *w);

/* Answer one request (routes.c). */
void route_request(struct worker *w, struct http_io *io);

/* Run rq's job, streaming it as Server-Sent Events (stream.c). */
struct request;
void stream_execute(struct worker *w, struct request *rq);

/* The Piston-compatible endpoints (piston.c). */
void piston_execute(struct worker *w, struct request *rq);
void piston_runtimes(struct worker *w, struct request *rq);

/*
 * The pool's own concerns around each request (admin.c). admin_admit runs
 * before the handler: access lists for /metrics and /healthz, and the
 * whenBusy gate for executions; false: it has answered (403, 503 busy).
 * admin_done runs after it: counts the request. started_ms: when it began.
 */
bool admin_admit(struct worker *w, struct request *rq);
void admin_done(struct worker *w, struct request *rq, bool route_known, int64_t started_ms);
/* GET /metrics. */
void admin_metrics(struct worker *w, struct request *rq);
/* How long a request may take before its worker counts as hung (ms). */
int64_t admin_hang_bound_ms(const struct worker *w);
/* Once the job is parsed: its own limits replace that pool-wide bound. */
void admin_job_accepted(struct worker *w, const struct request *rq);

/* Fork `n` workers on fd 0, keep them running, reap after them (pool.c). */
int pool_run(struct worker *w, int n);

#endif
