/*
 * commands.c: /v1/sessions/{id}/commands (commands.h). A step answers when
 * its program ends; a command answers at once and goes on in the session's
 * sandbox, within the session's limits and life, its output kept by the
 * session's agent to be read from an offset, as often as wanted.
 */
#define _GNU_SOURCE
#include "commands.h"
#include "encode.h"
#include "request.h"
#include "respond.h"
#include "result.h"
#include "../conf/lib/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The route's body into rq->body: the handlers' part (/mcp gives it there). */
static bool read_body(struct worker *w, struct request *rq)
{
	return http_read_json_body(&rq->io, (size_t)w->conf.request.max_body_bytes, &rq->body, &rq->fault);
}

/* rq->body as an object of these keys. */
static bool body_object(struct worker *w, struct request *rq, const char *const known[], const char *what)
{
	return request_parse_object(rq, (size_t)w->conf.request.max_json_values, known, what);
}

static cJSON *args_json(const struct strv *args)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < args->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(args->v[i]));
	return a;
}

static void add_exit(cJSON *o, bool running, int code, int sig)
{
	cJSON_AddBoolToObject(o, "running", running);
	if (running)
		cJSON_AddNullToObject(o, "exitCode");
	else
		cJSON_AddNumberToObject(o, "exitCode", code);
	signal_to_json(o, running ? 0 : sig);
}

/* {"command": "a shell line"} or {"args": [...]}, stdin, stdinOpen. */
static bool parse_start(struct worker *w, struct request *rq, struct strv *argv, const char **in,
			bool *open)
{
	static const char *const known[] = {"command", "args", "stdin", "stdinOpen", NULL};
	const struct conf *c = &w->conf;
	struct fault *f = &rq->fault;
	const cJSON *cmd, *args, *v;
	const char *line;
	*in = "";
	*open = false;
	if (!body_object(w, rq, known, "a command"))
		return false;
	cmd = json_field(rq->json, "command");
	args = json_field(rq->json, "args");
	if (!!cmd == !!args)
		return fail(f, cmd ? E_INVALID_REQUEST : E_MISSING_FIELD, "send command (a shell line) or args "
			    "(a program and its arguments), one of them");
	if (cmd) {
		if (!json_string(cmd, "command", &line, f))
			return false;
		if (!line[0])
			return fail(f, E_EMPTY_CODE, "command is empty");
		/* Run by the sandbox's sh, inside it: the caller's own program. */
		strv_push(argv, "sh");
		strv_push(argv, "-c");
		strv_push(argv, line);
	} else {
		if (!json_strings(args, "args", (size_t)c->request.max_args, argv, f))
			return false;
		if (argv->n == 0 || !argv->v[0][0])
			return fail(f, E_INVALID_VALUE, "args: the first is the program, and it is not empty");
	}
	for (size_t i = 0; i < argv->n; i++)
		if ((int64_t)strlen(argv->v[i]) > c->request.max_arg_bytes)
			return fail(f, E_TOO_MANY, "an argument is over %lld bytes", (long long)c->request.max_arg_bytes);
	if ((v = json_field(rq->json, "stdin")) && !json_string(v, "stdin", in, f))
		return false;
	if ((int64_t)strlen(*in) > c->request.max_stdin_bytes)
		return fail(f, E_STDIN_TOO_LARGE, "stdin is over %lld bytes", (long long)c->request.max_stdin_bytes);
	if ((v = json_field(rq->json, "stdinOpen")) && !json_bool(v, "stdinOpen", open, f))
		return false;
	if (*open && (*in)[0])
		return fail(f, E_INVALID_REQUEST, "stdin with stdinOpen: write it with POST "
			    "/v1/sessions/{id}/commands/{commandId}/stdin once the command has started");
	return true;
}

cJSON *commands_started(struct worker *w, struct request *rq, const char *session)
{
	struct strv argv = {0};
	const char *in;
	bool open;
	char id[17];
	if (!parse_start(w, rq, &argv, &in, &open) ||
	    !command_start(&w->conf, rq->tenant, session, argv.v, argv.n, in, strlen(in), open, id, &rq->fault)) {
		strv_free(&argv);
		return NULL;
	}
	log_msg("session %s: command %s started", session, id);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddItemToObject(o, "args", args_json(&argv));
	add_exit(o, true, -1, 0);
	cJSON_AddBoolToObject(o, "stdinOpen", open);
	strv_free(&argv);
	return o;
}

void commands_start(struct worker *w, struct request *rq)
{
	cJSON *o = read_body(w, rq) ? commands_started(w, rq, rq->params[0]) : NULL;
	if (o)
		respond_json(rq, 201, o);
	else
		respond_fault(rq, "");
}

cJSON *commands_listed(struct worker *w, struct request *rq, const char *session)
{
	struct session_command *all;
	size_t n;
	if (!command_list(&w->conf, rq->tenant, session, &all, &n, &rq->fault))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(o, "commands");
	for (size_t i = 0; i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "id", all[i].id);
		cJSON_AddItemToObject(x, "args", args_json(&all[i].args));
		add_exit(x, all[i].running, all[i].exit_code, all[i].signal);
		cJSON_AddNumberToObject(x, "stdoutBytes", (double)all[i].stdout_bytes);
		cJSON_AddNumberToObject(x, "stderrBytes", (double)all[i].stderr_bytes);
		cJSON_AddItemToArray(list, x);
	}
	session_commands_free(all, n);
	return o;
}

void commands_list(struct worker *w, struct request *rq)
{
	cJSON *o = commands_listed(w, rq, rq->params[0]);
	if (o)
		respond_json(rq, 200, o);
	else
		respond_fault(rq, "");
}

/* A query's number, absent: dflt; else digits up to max. */
static bool query_number(const char *query, const char *name, uint64_t dflt, uint64_t max, uint64_t *out,
			 struct fault *f)
{
	autofree char *text = request_query_param(query, name);
	char *end;
	*out = dflt;
	if (!text)
		return true;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (!text[0] || *end || errno || text[0] < '0' || text[0] > '9' || v > max)
		return fail(f, E_INVALID_VALUE, "%s: a whole number of bytes from 0 to %llu", name,
			    (unsigned long long)max);
	*out = v;
	return true;
}

cJSON *commands_output_json(struct worker *w, struct request *rq, const char *session, const char *command,
			    const uint64_t from[2], uint64_t max, bool b64)
{
	struct command_output o;
	if (!command_output(&w->conf, rq->tenant, session, command, from, (size_t)max, &o, &rq->fault))
		return NULL;
	cJSON *x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "id", command);
	add_exit(x, o.running, o.exit_code, o.signal);
	cJSON_AddStringToObject(x, "encoding", b64 ? "base64" : "utf-8");
	static const char *const names[2][3] = {{"stdout", "stdoutFrom", "stdoutNext"},
						{"stderr", "stderrFrom", "stderrNext"}};
	for (int i = 0; i < 2; i++) {
		size_t n = o.out[i].len;
		/* In text, a character cut at the end waits for the next read. */
		if (!b64)
			n -= utf8_incomplete_tail(o.out[i].data, n);
		if (b64) {
			autofree char *text = base64_encode(o.out[i].data, n);
			cJSON_AddStringToObject(x, names[i][0], text);
		} else {
			json_add_bytes(x, names[i][0], o.out[i].data, n);
		}
		cJSON_AddNumberToObject(x, names[i][1], (double)o.from[i]);
		cJSON_AddNumberToObject(x, names[i][2], (double)(o.from[i] + n));
	}
	command_output_free(&o);
	return x;
}

void commands_get(struct worker *w, struct request *rq)
{
	const char *query = http_param(&rq->io, "QUERY_STRING");
	struct fault *f = &rq->fault;
	uint64_t from[2], max;
	autofree char *encoding = request_query_param(query, "encoding");
	bool b64 = encoding && !strcmp(encoding, "base64");
	cJSON *x = NULL;
	if (encoding && !b64 && strcmp(encoding, "utf-8"))
		fail(f, E_INVALID_VALUE, "encoding: utf-8 (the default) or base64");
	else if (query_number(query, "stdoutFrom", 0, (1ULL << 53), &from[0], f) &&
		 query_number(query, "stderrFrom", 0, (1ULL << 53), &from[1], f) &&
		 query_number(query, "maxBytes", COMMAND_READ_DEFAULT, AGENT_COMMAND_LOG, &max, f))
		x = commands_output_json(w, rq, rq->params[0], rq->params[1], from, max, b64);
	if (x)
		respond_json(rq, 200, x);
	else
		respond_fault(rq, "");
}

cJSON *commands_written(struct worker *w, struct request *rq, const char *session, const char *command)
{
	static const char *const known[] = {"data", "close", NULL};
	struct fault *f = &rq->fault;
	const cJSON *v;
	const char *data = "";
	bool close_it = false;
	size_t written = 0;
	if (!body_object(w, rq, known, "a write to a command's stdin") ||
	    ((v = json_field(rq->json, "data")) && !json_string(v, "data", &data, f)) ||
	    ((v = json_field(rq->json, "close")) && !json_bool(v, "close", &close_it, f)))
		return NULL;
	size_t len = strlen(data);
	if ((len && !command_stdin(&w->conf, rq->tenant, session, command, data, len, &written, f)) ||
	    (close_it && written == len &&
	     !command_stdin(&w->conf, rq->tenant, session, command, "", 0, &(size_t){0}, f)))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "written", (double)written);
	/* What did not fit (a pipe's worth goes at once) is the caller's to
	 * send again; it is not closed before all is written. */
	cJSON_AddBoolToObject(o, "closed", close_it && written == len);
	return o;
}

void commands_stdin(struct worker *w, struct request *rq)
{
	cJSON *o = read_body(w, rq) ? commands_written(w, rq, rq->params[0], rq->params[1]) : NULL;
	if (o)
		respond_json(rq, 200, o);
	else
		respond_fault(rq, "");
}

/* SIGTERM, SIGINT, ... by name (as `kill -l` says them), 1 to 64. */
static int signal_by_name(const char *name)
{
	for (int sig = 1; sig <= 64 && !strncmp(name, "SIG", 3); sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcmp(name + 3, abbrev))
			return sig;
	}
	return 0;
}

bool commands_signalled(struct worker *w, struct request *rq, const char *session, const char *command)
{
	static const char *const known[] = {"signal", NULL};
	struct fault *f = &rq->fault;
	const cJSON *v;
	const char *name = "SIGTERM";
	if (!body_object(w, rq, known, "a signal") ||
	    ((v = json_field(rq->json, "signal")) && !json_string(v, "signal", &name, f)))
		return false;
	int sig = signal_by_name(name);
	if (!sig)
		return fail(f, E_INVALID_VALUE, "signal: a name such as SIGTERM, SIGINT or SIGKILL");
	return command_kill(&w->conf, rq->tenant, session, command, sig, f);
}

void commands_signal(struct worker *w, struct request *rq)
{
	if (read_body(w, rq) && commands_signalled(w, rq, rq->params[0], rq->params[1]))
		http_send_empty(&rq->io, 204, "");
	else
		respond_fault(rq, "");
}

bool commands_deleted(struct worker *w, struct request *rq, const char *session, const char *command)
{
	if (!command_delete(&w->conf, rq->tenant, session, command, &rq->fault))
		return false;
	log_msg("session %s: command %s deleted", session, command);
	return true;
}

void commands_delete(struct worker *w, struct request *rq)
{
	if (commands_deleted(w, rq, rq->params[0], rq->params[1]))
		http_send_empty(&rq->io, 204, "");
	else
		respond_fault(rq, "");
}
