/*
 * sessions.h: the /v1/sessions routes (sessions.c): create, list, read and
 * end sessions, run steps in them, move files in and out. The sessions
 * themselves are sandbox/'s (sandbox.h); this is their HTTP face.
 */
#ifndef ISOBOX_SESSIONS_H
#define ISOBOX_SESSIONS_H

#include "worker.h"
#include "../sandbox/sandbox.h"

struct request;

/* Is the session in the path (params[0]) kept by this host? If not, it
 * has been answered: 410 when its host is gone, 503 while it lives (the
 * balancer could not reach it). */
bool sessions_here(struct worker *w, struct request *rq);

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
