/*
 * mcp_commands.c: a session's background commands as MCP tools
 * (mcp_commands.h). Each call takes its route's body, parsed by the
 * route's own code (commands.h), with the path's ids as the arguments
 * "session" and "commandId"; a model that started a server or a long
 * build reads its output later from the offsets each read gives.
 */
#define _GNU_SOURCE
#include "mcp_commands.h"
#include "../conf/lib/json.h"
#include "commands.h"
#include "mcp_call.h"
#include "request.h"

#include <stdio.h>
#include <string.h>

#define SESSION "\"session\":{\"type\":\"string\",\"description\":\"The session's id, from session_create.\"}"
#define COMMAND_ID "\"commandId\":{\"type\":\"string\",\"description\":\"The command's id, from " \
	"session_command_start.\"}"

/* POST /v1/sessions/{id}/commands' body (openapi: CommandRequest). */
const char mcp_command_start_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\"],"
	"\"properties\":{" SESSION ","
	"\"command\":{\"type\":\"string\",\"description\":\"A line for the sandbox's sh -c. Send exactly "
	"one of command and args.\"},"
	"\"args\":{\"type\":\"array\",\"minItems\":1,\"items\":{\"type\":\"string\"},\"description\":"
	"\"The program and its arguments, as they are (no shell).\"},"
	"\"stdin\":{\"type\":\"string\",\"description\":\"Its stdin, then end of file.\"},"
	"\"stdinOpen\":{\"type\":\"boolean\",\"description\":\"Its stdin stays open for "
	"session_command_stdin (not with stdin).\"}}}";

/* GET /v1/sessions/{id}/commands/{commandId}'s query. */
const char mcp_command_output_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\",\"commandId\"],"
	"\"properties\":{" SESSION "," COMMAND_ID ","
	"\"stdoutFrom\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Read stdout from this byte "
	"(the last read's stdoutNext; default 0).\"},"
	"\"stderrFrom\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Read stderr from this byte "
	"(the last read's stderrNext; default 0).\"},"
	"\"maxBytes\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1048576,\"description\":\"At most "
	"this much of each (default 65536).\"}}}";

/* POST .../stdin's body (openapi: CommandStdinRequest). */
const char mcp_command_stdin_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\",\"commandId\"],"
	"\"properties\":{" SESSION "," COMMAND_ID ","
	"\"data\":{\"type\":\"string\",\"description\":\"The text to write.\"},"
	"\"close\":{\"type\":\"boolean\",\"description\":\"End its stdin once all of data is written.\"}}}";

/* POST .../signal's body (openapi: CommandSignalRequest). */
const char mcp_command_signal_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\",\"commandId\"],"
	"\"properties\":{" SESSION "," COMMAND_ID ","
	"\"signal\":{\"type\":\"string\",\"description\":\"SIGTERM (the default), SIGINT, SIGKILL, "
	"SIGHUP, ...\"}}}";

/* DELETE /v1/sessions/{id}/commands/{commandId}'s ids. */
const char mcp_command_delete_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\",\"commandId\"],"
	"\"properties\":{" SESSION "," COMMAND_ID "}}";

/* The command a call names: a string (its shape is checked below, in
 * sandbox/, as a path's would be). */
static const char *command_of(struct request *rq, const cJSON *args)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "commandId");
	if (cJSON_IsString(v) && v->valuestring[0])
		return v->valuestring;
	fail(&rq->fault, E_INVALID_REQUEST, "commandId: the command's id (from session_command_start) is required");
	return NULL;
}

cJSON *mcp_command_start(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink)
{
	(void)sink; /* it answers at once */
	const char *session = mcp_tool_session(w, rq, args);
	mcp_tool_body(rq, args);
	cJSON *o = session ? mcp_readable_taken(commands_started(w, rq, session)) : NULL;
	if (!o)
		return mcp_tool_refused(rq, "session_command_start");
	char *text = xasprintf("command %s started in session %s: read its output with session_command_output",
			       json_text(o, "id"), session);
	cJSON *r = mcp_tool_made(o, text, false);
	free(text);
	return r;
}

/* An optional whole number argument, absent: dflt. */
static bool number_of(const cJSON *args, const char *name, int64_t dflt, int64_t max, uint64_t *out,
		      struct fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
	int64_t n = dflt;
	if (v && !json_int(v, name, 0, max, &n, f))
		return false;
	*out = (uint64_t)n;
	return true;
}

cJSON *mcp_command_output(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink)
{
	(void)sink; /* it answers at once */
	static const char *const known[] = {"session", "commandId", "stdoutFrom", "stderrFrom", "maxBytes", NULL};
	struct fault *f = &rq->fault;
	const char *session = mcp_tool_session(w, rq, args), *command = session ? command_of(rq, args) : NULL;
	uint64_t from[2], max;
	cJSON *o = NULL;
	if (command && json_known_keys(args, known, "session_command_output's arguments", f) &&
	    number_of(args, "stdoutFrom", 0, (int64_t)1 << 53, &from[0], f) &&
	    number_of(args, "stderrFrom", 0, (int64_t)1 << 53, &from[1], f) &&
	    number_of(args, "maxBytes", COMMAND_READ_DEFAULT, AGENT_COMMAND_LOG, &max, f))
		o = mcp_readable_taken(commands_output_json(w, rq, session, command, from, max, false));
	if (!o)
		return mcp_tool_refused(rq, "session_command_output");
	/* Its output, then where it stands and where to read on. */
	struct buf t = {0};
	const char *out = json_text(o, "stdout"), *err = json_text(o, "stderr");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "exitCode");
	if (out[0])
		buf_printf(&t, "%s", out);
	if (err[0])
		buf_printf(&t, "%s[stderr]\n%s", t.len ? "\n" : "", err);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "running")))
		buf_printf(&t, "%s[running", t.len ? "\n" : "");
	else
		buf_printf(&t, "%s[ended: exit %d", t.len ? "\n" : "", cJSON_IsNumber(code) ? code->valueint : -1);
	buf_printf(&t, "; read on from stdoutFrom %.0f, stderrFrom %.0f]",
		   cJSON_GetObjectItemCaseSensitive(o, "stdoutNext")->valuedouble,
		   cJSON_GetObjectItemCaseSensitive(o, "stderrNext")->valuedouble);
	cJSON *r = mcp_tool_made(o, t.data, false);
	buf_free(&t);
	return r;
}

cJSON *mcp_command_stdin(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink)
{
	(void)sink; /* it answers at once */
	const char *session = mcp_tool_session(w, rq, args), *command = session ? command_of(rq, args) : NULL;
	mcp_tool_body(rq, args);
	cJSON *o = command ? mcp_readable_taken(commands_written(w, rq, session, command)) : NULL;
	if (!o)
		return mcp_tool_refused(rq, "session_command_stdin");
	char *text = xasprintf("wrote %.0f bytes to command %s%s", cJSON_GetObjectItemCaseSensitive(o, "written")->valuedouble,
			       command, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "closed")) ?
			       "; its stdin is closed" : "");
	cJSON *r = mcp_tool_made(o, text, false);
	free(text);
	return r;
}

cJSON *mcp_command_signal(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink)
{
	(void)sink; /* it answers at once */
	const char *session = mcp_tool_session(w, rq, args), *command = session ? command_of(rq, args) : NULL;
	mcp_tool_body(rq, args);
	if (!command || !commands_signalled(w, rq, session, command))
		return mcp_tool_refused(rq, "session_command_signal");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "commandId", command);
	cJSON_AddStringToObject(o, "signal", json_text(rq->json, "signal")[0] ? json_text(rq->json, "signal") : "SIGTERM");
	char *text = xasprintf("sent %s to command %s", json_text(o, "signal"), command);
	cJSON *r = mcp_tool_made(o, text, false);
	free(text);
	return r;
}

cJSON *mcp_command_list(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink)
{
	(void)sink; /* it answers at once */
	static const char *const known[] = {"session", NULL};
	const char *session = mcp_tool_session(w, rq, args);
	cJSON *o = NULL;
	if (session && json_known_keys(args, known, "session_command_list's arguments", &rq->fault))
		o = mcp_readable_taken(commands_listed(w, rq, session));
	if (!o)
		return mcp_tool_refused(rq, "session_command_list");
	/* A line each: its id, running or how it ended, and what it runs. */
	struct buf t = {0};
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "commands")) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(c, "exitCode"), *arg;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "running")))
			buf_printf(&t, "%s running:", json_text(c, "id"));
		else
			buf_printf(&t, "%s ended, exit %d:", json_text(c, "id"), cJSON_IsNumber(code) ? code->valueint : -1);
		cJSON_ArrayForEach(arg, cJSON_GetObjectItemCaseSensitive(c, "args"))
			buf_printf(&t, " %s", cJSON_IsString(arg) ? arg->valuestring : "?");
		buf_printf(&t, "\n");
	}
	if (!t.len)
		buf_printf(&t, "no commands in session %s", session);
	cJSON *r = mcp_tool_made(o, t.data, false);
	buf_free(&t);
	return r;
}

cJSON *mcp_command_delete(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink)
{
	(void)sink; /* it answers at once */
	static const char *const known[] = {"session", "commandId", NULL};
	const char *session = mcp_tool_session(w, rq, args), *command = session ? command_of(rq, args) : NULL;
	if (!command || !json_known_keys(args, known, "session_command_delete's arguments", &rq->fault) ||
	    !commands_deleted(w, rq, session, command))
		return mcp_tool_refused(rq, "session_command_delete");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "commandId", command);
	cJSON_AddBoolToObject(o, "deleted", true);
	char *text = xasprintf("command %s deleted: killed if it ran, its output gone", command);
	cJSON *r = mcp_tool_made(o, text, false);
	free(text);
	return r;
}
