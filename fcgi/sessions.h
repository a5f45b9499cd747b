/*
 * sessions.h: the /v1/sessions routes (sessions.c): create, list, read and
 * end sessions, run steps in them, move files in and out. The sessions
 * themselves are sandbox/'s (sandbox.h); this is their HTTP face.
 */
#ifndef ISOBOX_SESSIONS_H
#define ISOBOX_SESSIONS_H

#include "worker.h"
#include "../sandbox/sandbox.h"
#include <cjson/cJSON.h>

struct request;

/* Is the session in the path (params[0]) kept by this host? If not, it
 * has been answered: 410 when its host is gone, 503 while it lives (the
 * balancer could not reach it). */
bool sessions_here(struct worker *w, struct request *rq);

/*
 * What the routes do, without answering, for /mcp's session tools too.
 * Each is false (NULL) with rq->fault on failure; the caller answers.
 */
/* Is session id kept by this host? (sessions_here without the answer.) */
bool sessions_at_home(struct worker *w, struct request *rq, const char *id);
/* Start the session that rq->body asks for (a POST /v1/sessions body):
 * its object, as the route answers it (the caller's). */
cJSON *sessions_open(struct worker *w, struct request *rq);
/* Make rq a step of session id (rq->session, rq->job, rq->in_session),
 * from the body: read first when read_body, else rq->body as it is. Then
 * job_run runs it. */
bool sessions_step_ready(struct worker *w, struct request *rq, const char *id, bool read_body);
/* End session id (DELETE /v1/sessions/{id}). */
bool sessions_close(struct worker *w, struct request *rq, const char *id);

void sessions_create(struct worker *w, struct request *rq);
void sessions_list(struct worker *w, struct request *rq);
void sessions_get(struct worker *w, struct request *rq);
void sessions_delete(struct worker *w, struct request *rq);
void sessions_exec(struct worker *w, struct request *rq);
void sessions_files_list(struct worker *w, struct request *rq);
void sessions_file_get(struct worker *w, struct request *rq);
void sessions_file_put(struct worker *w, struct request *rq);
void sessions_file_delete(struct worker *w, struct request *rq);

#endif
