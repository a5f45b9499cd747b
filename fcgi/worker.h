/*
 * worker.h: a FastCGI worker (one request at a time) and the pool master
 * that keeps N of them running.
 */
#ifndef ISOBOX_WORKER_H
#define ISOBOX_WORKER_H

#include "http.h"
#include "../conf/conf.h"
#include "../registry/registry.h"

/* What one worker process holds between requests. */
struct worker {
	char *conf_path;
	struct conf conf;
	struct registry reg;
	int64_t started_ms;
	int64_t served;
	char reload_error[512]; /* "" when the last reload worked */
};

/* Load conf and registry; false with err set (the old ones are untouched). */
bool worker_load(struct worker *w, char *err, size_t errlen);

void worker_free(struct worker *w);

/* Serve FastCGI requests on fd 0 until stopped. */
void worker_serve(struct worker *w);
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

/* Fork `n` workers on fd 0, keep them running, reap after them (pool.c). */
int pool_run(struct worker *w, int n);

#endif
