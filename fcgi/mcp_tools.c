/*
 * mcp_tools.c: the tools that /mcp offers (mcp_tools.h), each the MCP face of a
 * route: execute is a POST /execute, the session tools are /v1/sessions'
 * routes. Each call's arguments are the route's body (the path's id as
 * "session"), read by the same parser, under the same claims (the
 * tenant's share, the pool's slots) and guards (a session kept by another
 * host is refused, as sessions_here does), so that a tool takes exactly
 * what its route takes.
 *
 * Failures come back as tool results with isError (the spec's "tool
 * execution error"), the API's error object as structured content, so
 * that a model reads why and can mend its call.
 */
#define _GNU_SOURCE
#include "mcp_tools.h"
#include "../conf/lib/json.h"
#include "admin.h"
#include "encode.h"
#include "errors.h"
#include "files.h"
#include "job.h"
#include "mcp_call.h"
#include "mcp_commands.h"
#include "request.h"
#include "respond.h"
#include "sessions.h"
#include "volumes.h"

#include <stdio.h>
#include <string.h>

/*
 * The input schemas, compact: docs/openapi.yaml holds the full words. A
 * unit test (test_mcp.c) holds each to its route's schema there (the same
 * fields, required ones, enums), so they cannot drift apart.
 */
#define LIMITS_RUN "\"memoryBytes\":{\"type\":\"integer\",\"minimum\":1},"		\
	"\"cpus\":{\"type\":\"number\",\"exclusiveMinimum\":0},\"pids\":{\"type\":\"integer\",\"minimum\":1}"
#define LIMITS_STEP "\"outputBytes\":{\"type\":\"integer\",\"minimum\":1},"			\
	"\"wallTimeMs\":{\"type\":\"integer\",\"minimum\":1}"
#define FILES "\"files\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":100,\"description\":\"Several files; the "	\
	"first is the entry point.\",\"items\":{\"type\":\"object\",\"additionalProperties\":false,"	\
	"\"required\":[\"content\"],\"properties\":{\"name\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},"	\
	"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]}}}}"
#define SESSION "\"session\":{\"type\":\"string\",\"description\":\"The session's id, from session_create.\"}"
#define VOLUME "\"volume\":{\"type\":\"string\",\"description\":\"One of the tenant's volumes, mounted at /memory.\"}," \
	"\"volumeReadOnly\":{\"type\":\"boolean\"}"
#define NETWORK "\"network\":{\"type\":\"boolean\",\"description\":\"true: firewalled egress to the public "	\
	"internet only, where the operator allows it. Default false.\"}"

/* POST /execute's body (openapi: ExecuteRequest). */
static const char execute_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"language\"],"
	"\"properties\":{"
	"\"language\":{\"type\":\"string\",\"description\":\"A language name or alias (GET /runtimes).\"},"
	"\"version\":{\"type\":\"string\",\"description\":\"A version pin: the highest version it matches "
	"runs (\\\"3\\\" of 3.11, 3.13 and 3.14: 3.14). Absent: the default version.\"},"
	"\"code\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The program as one file. Send "
	"exactly one of code and files.\"}," FILES ","
	"\"stdin\":{\"type\":\"string\",\"description\":\"The program's standard input.\"},"
	"\"args\":{\"type\":\"array\",\"maxItems\":64,\"items\":{\"type\":\"string\"}},"
	"\"limits\":{\"type\":\"object\",\"description\":\"Each clamped to the server's ceiling.\","
	"\"additionalProperties\":false,\"properties\":{" LIMITS_RUN "," LIMITS_STEP ","
	"\"compileTimeMs\":{\"type\":\"integer\",\"minimum\":1}}}," NETWORK ","
	"\"outputs\":{\"type\":\"array\",\"maxItems\":16,\"items\":{\"type\":\"string\"},\"description\":"
	"\"Globs of files to return after the run (\\\"*.png\\\"); PNGs come back as images.\"}," VOLUME "}}";

/* POST /v1/sessions' body (openapi: SessionRequest). */
static const char session_create_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"language\"],"
	"\"properties\":{"
	"\"language\":{\"type\":\"string\",\"description\":\"A language name or alias (GET /runtimes).\"},"
	"\"version\":{\"type\":\"string\",\"description\":\"A version pin, as execute's.\"},"
	"\"type\":{\"type\":\"string\",\"enum\":[\"shell\",\"kernel\"],\"description\":\"shell (the default): "
	"each step runs a program. kernel (python): each step is a notebook cell; variables live on.\"},"
	"\"limits\":{\"type\":\"object\",\"additionalProperties\":false,\"description\":\"For the session's "
	"whole life, clamped to the server's ceilings.\",\"properties\":{" LIMITS_RUN "}}," NETWORK ","
	"\"idleTimeoutMs\":{\"type\":\"integer\",\"minimum\":1000,\"description\":\"It ends after this "
	"long unused (default 10 min).\"},"
	"\"maxLifetimeMs\":{\"type\":\"integer\",\"minimum\":1000,\"description\":\"It ends this long "
	"after its start (default 1 h).\"}," VOLUME "}}";

/* POST /v1/sessions/{id}/exec's body (openapi: StepRequest), and the id. */
static const char session_exec_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\"],"
	"\"properties\":{" SESSION ","
	"\"code\":{\"type\":\"string\",\"minLength\":1,\"description\":\"Shell: the program, in the "
	"session's /workspace. Kernel: the cell. Send exactly one of code and files.\"}," FILES ","
	"\"stdin\":{\"type\":\"string\"},"
	"\"args\":{\"type\":\"array\",\"maxItems\":64,\"items\":{\"type\":\"string\"}},"
	"\"limits\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{" LIMITS_STEP "}}}}";

static const char session_only_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\"],"
	"\"properties\":{" SESSION "}}";

#define FILE_PATH "\"path\":{\"type\":\"string\",\"description\":\"Relative to the session's /workspace.\"}"
static const char files_list_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\"],"
	"\"properties\":{" SESSION "," FILE_PATH "}}";
static const char files_read_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\",\"path\"],"
	"\"properties\":{" SESSION "," FILE_PATH "}}";
static const char files_write_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"session\",\"path\",\"content\"],"
	"\"properties\":{" SESSION "," FILE_PATH ","
	"\"content\":{\"type\":\"string\",\"description\":\"The file: text, or base64 with encoding base64.\"},"
	"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"],\"description\":\"Default utf-8.\"}}}";

/* Run rq's parsed job, telling sink (else only watching for a hangup). */
static cJSON *run_job(struct worker *w, struct request *rq, const char *tool, const struct sandbox_sink *sink)
{
	struct sandbox_sink watch = {.hangup_fd = http_hangup_fd(&rq->io)};
	admin_job_accepted(w, rq);
	if (!job_run(w, rq, sink ? sink : &watch))
		return mcp_tool_refused(rq, tool);
	cJSON *result = job_result_json(rq);
	cJSON *o = mcp_tool_result(result);
	cJSON_Delete(result);
	return o;
}

static cJSON *call_execute(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	mcp_tool_body(rq, args);
	if (w->conf.queue.role == QUEUE_FRONT)
		fail(&rq->fault, E_NOT_SUPPORTED, "this host hands runs to runner hosts through the queue, "
		     "which /mcp does not do yet: call POST /execute, or /mcp on a runner host");
	else if (request_parse_execute(rq, &w->conf, &w->reg) && admin_claim_run(w, rq) &&
		 volumes_take(w, rq, NULL))
		return run_job(w, rq, "execute", sink);
	return mcp_tool_refused(rq, "execute");
}

static cJSON *call_session_create(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	(void)sink; /* it runs no program */
	mcp_tool_body(rq, args);
	cJSON *s = admin_claim_run(w, rq) ? mcp_readable_taken(sessions_open(w, rq)) : NULL;
	if (!s)
		return mcp_tool_refused(rq, "session_create");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "id");
	char *text = xasprintf("session %s started (%s %s, %s): run steps with session_exec, end it with "
			       "session_close", cJSON_IsString(id) ? id->valuestring : "?",
			       json_text(s, "language"), json_text(s, "version"), json_text(s, "type"));
	cJSON *r = mcp_tool_made(s, text, false);
	free(text);
	return r;
}

static cJSON *call_session_exec(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	const char *id = mcp_tool_session(w, rq, args);
	mcp_tool_body(rq, args);
	if (id && admin_claim_run(w, rq) && sessions_step_ready(w, rq, id, false))
		return run_job(w, rq, "session_exec", sink);
	return mcp_tool_refused(rq, "session_exec");
}

static cJSON *call_session_close(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	(void)sink; /* it runs no program */
	const char *id = mcp_tool_session(w, rq, args);
	if (!id || !sessions_close(w, rq, id))
		return mcp_tool_refused(rq, "session_close");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "session", id);
	cJSON_AddBoolToObject(o, "closed", true);
	char *text = xasprintf("session %s closed", id);
	cJSON *r = mcp_tool_made(o, text, false);
	free(text);
	return r;
}

static cJSON *call_files_list(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	(void)sink; /* it runs no program */
	const char *id = mcp_tool_session(w, rq, args);
	struct files_place p = {.tenant = rq->tenant, .session = id};
	cJSON *o = id ? mcp_readable_taken(files_listing(w, rq, &p, json_text(args, "path"))) : NULL;
	if (!o)
		return mcp_tool_refused(rq, "session_files_list");
	struct buf t = {0};
	const cJSON *e;
	buf_printf(&t, "%s:", json_text(o, "path"));
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "entries")) {
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
		buf_printf(&t, "\n%s%s", json_text(e, "name"), !strcmp(json_text(e, "type"), "directory") ? "/" : "");
		if (!strcmp(json_text(e, "type"), "file") && cJSON_IsNumber(size))
			buf_printf(&t, " (%.0f bytes)", size->valuedouble);
	}
	if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "entries")))
		buf_printf(&t, " (empty)");
	cJSON *r = mcp_tool_made(o, t.data, false);
	buf_free(&t);
	return r;
}

static cJSON *call_files_read(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	(void)sink; /* it runs no program */
	const char *id = mcp_tool_session(w, rq, args), *path = json_text(args, "path");
	struct files_place p = {.tenant = rq->tenant, .session = id};
	struct buf data = {0};
	if (!id || !files_read(w, rq, &p, path, &data)) {
		buf_free(&data);
		return mcp_tool_refused(rq, "session_files_read");
	}
	/* Text as text; other bytes as base64 (a PNG as an image too). */
	buf_append(&data, "", 0); /* data.data a C string (buf_append ends it), an empty file's too */
	bool text = utf8_valid(data.data, data.len) && !memchr(data.data, 0, data.len);
	char *b64 = text ? NULL : base64_encode(data.data, data.len);
	cJSON *r = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(r, "content");
	cJSON *o = cJSON_AddObjectToObject(r, "structuredContent");
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "size", (double)data.len);
	cJSON_AddStringToObject(o, "encoding", text ? "utf-8" : "base64");
	if (text) {
		cJSON_AddStringToObject(o, "content", data.data);
		mcp_add_text(content, data.data);
	} else {
		cJSON_AddStringToObject(o, "content", b64);
		if (mcp_png_name(path)) {
			mcp_add_png(content, b64);
		} else {
			char *say = xasprintf("%s: %zu bytes, not text (base64 in the structured content)", path,
					      data.len);
			mcp_add_text(content, say);
			free(say);
		}
	}
	cJSON_AddBoolToObject(r, "isError", false);
	free(b64);
	buf_free(&data);
	return r;
}

static cJSON *call_files_write(struct worker *w, struct request *rq, const cJSON *args,
				 const struct sandbox_sink *sink)
{
	(void)sink; /* it runs no program */
	const char *id = mcp_tool_session(w, rq, args), *path = json_text(args, "path");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(args, "content");
	const char *encoding = json_text(args, "encoding");
	struct files_place p = {.tenant = rq->tenant, .session = id};
	struct buf data = {0};
	if (!id) {
	} else if (!cJSON_IsString(content)) {
		fail(&rq->fault, E_INVALID_REQUEST, "content: the file's text (or base64) is required");
	} else if (encoding[0] && strcmp(encoding, "utf-8") && strcmp(encoding, "base64")) {
		fail(&rq->fault, E_INVALID_VALUE, "encoding must be \"utf-8\" or \"base64\"");
	} else if (!strcmp(encoding, "base64") && !base64_decode(content->valuestring, &data)) {
		fail(&rq->fault, E_INVALID_VALUE, "content is not base64");
	} else {
		if (strcmp(encoding, "base64"))
			buf_append(&data, content->valuestring, strlen(content->valuestring));
		if (files_write(w, rq, &p, path, data.data ? data.data : "", data.len)) {
			cJSON *o = cJSON_CreateObject();
			json_add_bytes(o, "path", path, strlen(path));
			cJSON_AddNumberToObject(o, "size", (double)data.len);
			char *text = xasprintf("wrote %s (%zu bytes)", path, data.len);
			cJSON *r = mcp_tool_made(mcp_readable_taken(o), text, false);
			free(text);
			buf_free(&data);
			return r;
		}
	}
	buf_free(&data);
	return mcp_tool_refused(rq, "session_files_write");
}

/* The tools, in the order tools/list gives them. */
static const struct tool {
	const char *name, *title, *description, *schema;
	bool read_only, destructive, idempotent;
	cJSON *(*call)(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);
} tools[] = {
	{"execute", "Run code in a sandbox", NULL, execute_schema, false, false, false, call_execute},
	{"session_create", "Start a session",
	 "Start a sandbox that lives across calls (a /workspace whose files stay, and for a python "
	 "kernel its variables), for work in steps. Returns its id; it ends after idleTimeoutMs unused, "
	 "at maxLifetimeMs, or on session_close.",
	 session_create_schema, false, false, false, call_session_create},
	{"session_exec", "Run a step in a session",
	 "Run a program (shell session) or a cell (kernel session) in the session's sandbox; files and "
	 "state from earlier steps are there. Returns the output as execute does, and a kernel cell's value.",
	 session_exec_schema, false, false, false, call_session_exec},
	{"session_files_write", "Write a file into a session",
	 "Write a file into the session's /workspace (over one of the same name).",
	 files_write_schema, false, true, true, call_files_write},
	{"session_files_read", "Read a file of a session",
	 "Read a file from the session's /workspace: text as text, other bytes as base64, a PNG as an image.",
	 files_read_schema, true, false, true, call_files_read},
	{"session_files_list", "List a session's files",
	 "List a directory of the session's /workspace (path: relative, default the top).",
	 files_list_schema, true, false, true, call_files_list},
	{"session_command_start", "Start a background command in a session",
	 "Start a program that goes on in the session's sandbox after this call returns (a server, a "
	 "long build, a watcher): its output is kept, to read with session_command_output.",
	 mcp_command_start_schema, false, false, false, mcp_command_start},
	{"session_command_output", "Read a background command's output",
	 "Read a command's stdout and stderr from byte offsets (0: from the start), and whether it runs "
	 "or how it ended; read on from the offsets it gives.",
	 mcp_command_output_schema, true, false, true, mcp_command_output},
	{"session_command_stdin", "Write to a background command's stdin",
	 "Write text to the stdin of a command started with stdinOpen, and close it if asked.",
	 mcp_command_stdin_schema, false, false, false, mcp_command_stdin},
	{"session_command_signal", "Signal a background command",
	 "Send a signal (SIGTERM by default, SIGINT, SIGKILL, ...) to a command and its processes.",
	 mcp_command_signal_schema, false, true, false, mcp_command_signal},
	{"session_command_list", "List a session's background commands",
	 "List the session's commands, running or ended: each one's id, what it runs, whether it runs "
	 "or how it ended, and how much output it has written.",
	 session_only_schema, true, false, true, mcp_command_list},
	{"session_command_delete", "Delete a background command",
	 "Kill a command if it runs, and forget it and its output.",
	 mcp_command_delete_schema, false, true, true, mcp_command_delete},
	{"session_close", "End a session", "End the session and free its sandbox; its files are gone.",
	 session_only_schema, false, true, true, call_session_close},
};

cJSON *mcp_tools_list(const struct registry *reg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(o, "tools");
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		const struct tool *x = &tools[i];
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "name", x->name);
		cJSON_AddStringToObject(t, "title", x->title);
		if (x->description) {
			cJSON_AddStringToObject(t, "description", x->description);
		} else { /* execute: with the languages */
			struct buf d = {0};
			buf_printf(&d, "Run a program once in a fresh gVisor sandbox (no network unless asked) "
				   "and return its stdout, stderr, exit code and limits. Languages:");
			for (size_t j = 0; j < reg->n; j++)
				if (reg->langs[j].is_default)
					buf_printf(&d, " %s", reg->langs[j].name);
			buf_printf(&d, ".");
			cJSON_AddStringToObject(t, "description", d.data);
			buf_free(&d);
		}
		cJSON_AddItemToObject(t, "inputSchema", cJSON_Parse(x->schema));
		cJSON *hints = cJSON_AddObjectToObject(t, "annotations");
		cJSON_AddBoolToObject(hints, "readOnlyHint", x->read_only);
		cJSON_AddBoolToObject(hints, "destructiveHint", x->destructive);
		cJSON_AddBoolToObject(hints, "idempotentHint", x->idempotent);
		cJSON_AddBoolToObject(hints, "openWorldHint", false);
		cJSON_AddItemToArray(list, t);
	}
	return o;
}

cJSON *mcp_tools_call(struct worker *w, struct request *rq, const char *name, const cJSON *args,
		      const struct sandbox_sink *sink)
{
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!strcmp(name, tools[i].name))
			return tools[i].call(w, rq, args, sink);
	return NULL;
}

cJSON *mcp_tools_as_functions(const struct registry *reg)
{
	cJSON *list = mcp_tools_list(reg);
	cJSON *o = cJSON_CreateObject();
	cJSON *functions = cJSON_AddArrayToObject(o, "tools");
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(list, "tools")) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "type", "function");
		cJSON *fn = cJSON_AddObjectToObject(f, "function");
		cJSON_AddItemToObject(fn, "name", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "name"), true));
		cJSON_AddItemToObject(fn, "description",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "description"), true));
		cJSON_AddItemToObject(fn, "parameters",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "inputSchema"), true));
		cJSON_AddItemToArray(functions, f);
	}
	cJSON_Delete(list);
	return o;
}

void mcp_tools_handler(struct worker *w, struct request *rq)
{
	respond_json(rq, 200, mcp_tools_as_functions(&w->reg));
}
