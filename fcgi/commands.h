/*
 * commands.h: /v1/sessions/{id}/commands (commands.c): programs that
 * outlive a step in a session's sandbox, started at once, read from an
 * offset, written to, signalled, deleted. The commands themselves are
 * sandbox/'s (sandbox.h, session_command); this is their HTTP face.
 */
#ifndef ISOBOX_COMMANDS_H
#define ISOBOX_COMMANDS_H

#include "worker.h"

struct request;

void commands_start(struct worker *w, struct request *rq);
void commands_list(struct worker *w, struct request *rq);
void commands_get(struct worker *w, struct request *rq);
void commands_stdin(struct worker *w, struct request *rq);
void commands_signal(struct worker *w, struct request *rq);
void commands_delete(struct worker *w, struct request *rq);

#endif
