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

/* Read at once at most this much of each of stdout and stderr, unless
 * asked (the agent keeps AGENT_COMMAND_LOG of each). */
#define COMMAND_READ_DEFAULT (64 * 1024)

void commands_start(struct worker *w, struct request *rq);
void commands_list(struct worker *w, struct request *rq);
void commands_get(struct worker *w, struct request *rq);
void commands_stdin(struct worker *w, struct request *rq);
void commands_signal(struct worker *w, struct request *rq);
void commands_delete(struct worker *w, struct request *rq);

/*
 * The routes' own work, for /mcp's tools too (mcp_commands.c): rq->body
 * holds the route's body, if it has one; nothing is answered. Each returns the answer's
 * JSON (the caller's), or NULL (false) with rq->fault saying why.
 */
cJSON *commands_started(struct worker *w, struct request *rq, const char *session);
cJSON *commands_listed(struct worker *w, struct request *rq, const char *session);
cJSON *commands_output_json(struct worker *w, struct request *rq, const char *session, const char *command,
			    const uint64_t from[2], uint64_t max, bool b64);
cJSON *commands_written(struct worker *w, struct request *rq, const char *session, const char *command);
bool commands_signalled(struct worker *w, struct request *rq, const char *session, const char *command);
bool commands_deleted(struct worker *w, struct request *rq, const char *session, const char *command);

#endif
