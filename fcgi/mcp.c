/*
 * mcp.c: the Model Context Protocol, served at POST /mcp (mcp.h).
 *
 * The Streamable HTTP transport, kept stateless: each JSON-RPC message
 * comes in a POST of its own and its answer goes back in that POST's
 * response, as application/json. The server gives no Mcp-Session-Id (the
 * spec lets it keep no session), so any worker answers any message, as
 * for /execute; GET /mcp, a stream for what the server would say unasked,
 * is 405, the spec's answer from a server that never does.
 *
 * A tools/call of "execute" is a POST /execute whose body is the call's
 * arguments: parsed by the same request_parse_execute, under the same
 * claim on the tenant's share and the pool's slots, run by the same
 * job_run. So the tool takes exactly what the API takes, and the same
 * keys, tenants, limits and quotas hold.
 *
 * Two kinds of failure, as the spec has them: a message that is not
 * JSON-RPC, or names a method or tool that does not exist, is a JSON-RPC
 * error; a run that was refused or failed is a tool result with isError,
 * so that the model reads why and can mend its call.
 */
#define _GNU_SOURCE
#include "mcp.h"
#include "../conf/lib/json.h"
#include "admin.h"
#include "encode.h"
#include "errors.h"
#include "job.h"
#include "request.h"
#include "respond.h"
#include "volumes.h"

#include <stdio.h>
#include <string.h>

/* JSON-RPC 2.0's error codes. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
};

/* Newest first: what initialize answers to a version it does not know. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

bool mcp_version_supported(const char *v)
{
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
		if (v && !strcmp(v, versions[i]))
			return true;
	return false;
}

const char *mcp_negotiate(const char *asked)
{
	return mcp_version_supported(asked) ? asked : versions[0];
}

/*
 * The execute tool's input: POST /execute's body, as docs/openapi.yaml's
 * ExecuteRequest has it (a unit test holds the two to the same fields).
 * The language list comes from the registry.
 */
static const char execute_schema[] =
	"{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"language\"],"
	"\"properties\":{"
	"\"language\":{\"type\":\"string\",\"description\":\"A language name or alias (GET /runtimes).\"},"
	"\"version\":{\"type\":\"string\",\"description\":\"A version pin: the highest version it matches "
	"runs (\\\"3\\\" of 3.11, 3.13 and 3.14: 3.14). Absent: the default version.\"},"
	"\"code\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The program as one file. Send "
	"exactly one of code and files.\"},"
	"\"files\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":100,\"description\":\"Several files; the "
	"first is the entry point.\",\"items\":{\"type\":\"object\",\"required\":[\"content\"],"
	"\"properties\":{\"name\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},"
	"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf8\",\"base64\"]}}}},"
	"\"stdin\":{\"type\":\"string\",\"description\":\"The program's standard input.\"},"
	"\"args\":{\"type\":\"array\",\"maxItems\":64,\"items\":{\"type\":\"string\"}},"
	"\"limits\":{\"type\":\"object\",\"description\":\"Each clamped to the server's ceiling.\","
	"\"additionalProperties\":false,\"properties\":{"
	"\"memoryBytes\":{\"type\":\"integer\",\"minimum\":1},\"cpus\":{\"type\":\"number\",\"exclusiveMinimum\":0},"
	"\"pids\":{\"type\":\"integer\",\"minimum\":1},\"outputBytes\":{\"type\":\"integer\",\"minimum\":1},"
	"\"wallTimeMs\":{\"type\":\"integer\",\"minimum\":1},\"compileTimeMs\":{\"type\":\"integer\",\"minimum\":1}}},"
	"\"network\":{\"type\":\"boolean\",\"description\":\"true: firewalled egress to the public "
	"internet only, where the operator allows it. Default false.\"},"
	"\"outputs\":{\"type\":\"array\",\"maxItems\":16,\"items\":{\"type\":\"string\"},\"description\":"
	"\"Globs of files to return after the run (\\\"*.png\\\"); PNGs come back as images.\"},"
	"\"volume\":{\"type\":\"string\",\"description\":\"One of the tenant's volumes, mounted at /memory.\"},"
	"\"volumeReadOnly\":{\"type\":\"boolean\"}}}";

cJSON *mcp_tools_list(const struct registry *reg)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *tools = cJSON_AddArrayToObject(o, "tools");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "name", "execute");
	cJSON_AddStringToObject(t, "title", "Run code in a sandbox");
	struct buf d = {0};
	buf_printf(&d, "Run a program once in a fresh gVisor sandbox (no network unless asked) and "
		   "return its stdout, stderr, exit code and limits. Languages:");
	for (size_t i = 0; i < reg->n; i++)
		if (reg->langs[i].is_default)
			buf_printf(&d, " %s", reg->langs[i].name);
	buf_printf(&d, ".");
	cJSON_AddStringToObject(t, "description", d.data);
	buf_free(&d);
	cJSON_AddItemToObject(t, "inputSchema", cJSON_Parse(execute_schema));
	cJSON *hints = cJSON_AddObjectToObject(t, "annotations");
	cJSON_AddBoolToObject(hints, "readOnlyHint", false);
	cJSON_AddBoolToObject(hints, "destructiveHint", false);
	cJSON_AddBoolToObject(hints, "idempotentHint", false);
	cJSON_AddBoolToObject(hints, "openWorldHint", false);
	cJSON_AddItemToArray(tools, t);
	return o;
}

cJSON *mcp_tools_as_functions(const struct registry *reg)
{
	cJSON *list = mcp_tools_list(reg);
	cJSON *o = cJSON_CreateObject();
	cJSON *tools = cJSON_AddArrayToObject(o, "tools");
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
		cJSON_AddItemToArray(tools, f);
	}
	cJSON_Delete(list);
	return o;
}

void mcp_tools_handler(struct worker *w, struct request *rq)
{
	respond_json(rq, 200, mcp_tools_as_functions(&w->reg));
}

static void add_text(cJSON *content, const char *text)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "text");
	cJSON_AddStringToObject(c, "text", text);
	cJSON_AddItemToArray(content, c);
}

static const char *string_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static bool flag_of(const cJSON *o, const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/* One phase (compile or run) as text: its output, then how it ended when
 * that was not a plain exit 0. True when it failed. */
static bool phase_text(struct buf *t, const char *name, const cJSON *p)
{
	if (!cJSON_IsObject(p))
		return false;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(p, "exitCode");
	int exit_code = cJSON_IsNumber(code) ? code->valueint : -1;
	bool failed = exit_code != 0 || flag_of(p, "timedOut") || flag_of(p, "oomKilled");
	const char *out = string_of(p, "stdout"), *err = string_of(p, "stderr");
	if (out[0])
		buf_printf(t, "%s%s", t->len ? "\n" : "", out);
	if (err[0])
		buf_printf(t, "%s[%s stderr]\n%s", t->len ? "\n" : "", name, err);
	if (failed || flag_of(p, "truncated"))
		buf_printf(t, "%s[%s: exit %d%s%s%s]", t->len ? "\n" : "", name, exit_code,
			   flag_of(p, "timedOut") ? ", timed out" : "", flag_of(p, "oomKilled") ? ", out of memory" : "",
			   flag_of(p, "truncated") ? ", output truncated" : "");
	return failed;
}

cJSON *mcp_tool_result(const cJSON *execute_result)
{
	/* The result's texts are raw JSON literals (encode.h's json_add_bytes):
	 * read them back as strings. */
	char *printed = cJSON_PrintUnformatted(execute_result);
	cJSON *read_back = cJSON_Parse(printed);
	free(printed);
	execute_result = read_back;
	cJSON *o = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(o, "content");
	struct buf t = {0};
	bool failed = phase_text(&t, "compile", cJSON_GetObjectItemCaseSensitive(execute_result, "compile"));
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(execute_result, "run");
	if (!run)
		failed = true; /* it did not compile, so nothing ran */
	else
		failed = phase_text(&t, "run", run) || failed;
	add_text(content, t.len ? t.data : "(no output)");
	buf_free(&t);
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(execute_result, "outputs")) {
		const char *name = string_of(x, "name");
		size_t n = strlen(name);
		if (n < 4 || strcasecmp(name + n - 4, ".png") || strcmp(string_of(x, "encoding"), "base64"))
			continue;
		cJSON *img = cJSON_CreateObject();
		cJSON_AddStringToObject(img, "type", "image");
		cJSON_AddStringToObject(img, "data", string_of(x, "content"));
		cJSON_AddStringToObject(img, "mimeType", "image/png");
		cJSON_AddItemToArray(content, img);
	}
	cJSON_AddItemToObject(o, "structuredContent", read_back);
	cJSON_AddBoolToObject(o, "isError", failed);
	return o;
}

cJSON *mcp_tool_error(const cJSON *error_body)
{
	char *printed = cJSON_PrintUnformatted(error_body); /* as above */
	cJSON *read_back = cJSON_Parse(printed);
	free(printed);
	error_body = read_back;
	cJSON *o = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(o, "content");
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(error_body, "error");
	char *text = xasprintf("%s: %s", string_of(e, "code"), string_of(e, "message"));
	add_text(content, text);
	free(text);
	cJSON_AddItemToObject(o, "structuredContent", read_back);
	cJSON_AddBoolToObject(o, "isError", true);
	return o;
}

/* Answer with a JSON-RPC error (id: the request's, or null). */
static void send_error(struct request *rq, int status, const cJSON *id, int code, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, false) : cJSON_CreateNull());
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	json_add_bytes(e, "message", message, strlen(message));
	cJSON *data = cJSON_AddObjectToObject(e, "data");
	if (rq->fault.code)
		cJSON_AddStringToObject(data, "code", error_info(rq->fault.code)->name);
	cJSON_AddStringToObject(data, "requestId", rq->id);
	respond_json(rq, status, o);
}

/* The fault of a message that could not be read, as a JSON-RPC error
 * with the HTTP status of its code (413, 415, 400, 403). */
static void send_fault(struct request *rq, int code)
{
	send_error(rq, error_status(rq->fault.code, false), NULL, code, rq->fault.message);
}

/* tools/call "execute": the arguments as the body of a POST /execute. */
static cJSON *call_execute(struct worker *w, struct request *rq, const cJSON *arguments)
{
	char *body = cJSON_PrintUnformatted(arguments);
	buf_append(&rq->body, body, strlen(body));
	free(body);
	struct sandbox_sink watch = {.hangup_fd = http_hangup_fd(&rq->io)};
	if (w->conf.queue.role == QUEUE_FRONT)
		fail(&rq->fault, E_NOT_SUPPORTED, "this host hands runs to runner hosts through the queue, "
		     "which /mcp does not do yet: call POST /execute, or /mcp on a runner host");
	else if (request_parse_execute(rq, &w->conf, &w->reg) && admin_claim_run(w, rq) &&
		 volumes_take(w, rq, NULL)) {
		admin_job_accepted(w, rq);
		if (job_run(w, rq, &watch)) {
			cJSON *result = job_result_json(rq);
			cJSON *o = mcp_tool_result(result);
			cJSON_Delete(result);
			return o;
		}
	}
	if (error_info(rq->fault.code)->server_side)
		log_msg("mcp execute failed: %s: %s", error_info(rq->fault.code)->name, rq->fault.message);
	cJSON *err = fault_to_json(&rq->fault);
	cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(err, "error"), "requestId", rq->id);
	cJSON *o = mcp_tool_error(err);
	cJSON_Delete(err);
	return o;
}

/* A request's result, or NULL with *code and *why for its error. */
static cJSON *answer(struct worker *w, struct request *rq, const char *method, const cJSON *params,
		     int *code, const char **why)
{
	if (!strcmp(method, "ping"))
		return cJSON_CreateObject();
	if (!strcmp(method, "initialize")) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "protocolVersion",
					mcp_negotiate(string_of(params, "protocolVersion")));
		cJSON *tools = cJSON_AddObjectToObject(cJSON_AddObjectToObject(o, "capabilities"), "tools");
		cJSON_AddBoolToObject(tools, "listChanged", false);
		cJSON *info = cJSON_AddObjectToObject(o, "serverInfo");
		cJSON_AddStringToObject(info, "name", "isobox");
		cJSON_AddStringToObject(info, "version", ISOBOX_VERSION);
		cJSON_AddStringToObject(o, "instructions",
					"isobox runs untrusted code in gVisor sandboxes. Call execute with a language "
					"and code; each call is a fresh sandbox, with no network unless asked.");
		return o;
	}
	if (!strcmp(method, "tools/list"))
		return mcp_tools_list(&w->reg);
	if (!strcmp(method, "tools/call")) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
		if (strcmp(string_of(params, "name"), "execute"))
			return *code = RPC_INVALID_PARAMS, *why = "no such tool (tools/list names them)", NULL;
		if (args && !cJSON_IsObject(args))
			return *code = RPC_INVALID_PARAMS, *why = "arguments must be an object", NULL;
		cJSON *none = args ? NULL : cJSON_CreateObject();
		cJSON *o = call_execute(w, rq, args ? args : none);
		cJSON_Delete(none);
		return o;
	}
	return *code = RPC_METHOD_NOT_FOUND, *why = "no such method", NULL;
}

void mcp_handler(struct worker *w, struct request *rq)
{
	/* A page's script may not reach a server on the user's machine
	 * (DNS rebinding): an Origin must be one the operator allows. The
	 * Host was checked on the way in (access.hosts). */
	const char *origin = http_param(&rq->io, "HTTP_ORIGIN");
	if (origin[0] && !rq->cors) {
		fail(&rq->fault, E_FORBIDDEN, "pages from %.100s may not call this server "
		     "(access.corsOrigins in isobox.yaml)", origin);
		send_fault(rq, RPC_INVALID_REQUEST);
		return;
	}
	const char *version = http_param(&rq->io, "HTTP_MCP_PROTOCOL_VERSION");
	if (version[0] && !mcp_version_supported(version)) {
		fail(&rq->fault, E_INVALID_VALUE, "MCP-Protocol-Version %.40s is not one this server "
		     "speaks (2025-03-26, 2025-06-18, 2025-11-25)", version);
		send_fault(rq, RPC_INVALID_REQUEST);
		return;
	}
	struct buf raw = {0};
	cJSON *msg = NULL;
	if (!http_read_json_body(&rq->io, (size_t)w->conf.request.max_body_bytes, &raw, &rq->fault)) {
		send_fault(rq, RPC_INVALID_REQUEST);
		goto out;
	}
	if (!json_parse_strict(raw.data, raw.len, (size_t)w->conf.request.max_json_values, &msg, &rq->fault)) {
		send_fault(rq, RPC_PARSE_ERROR);
		goto out;
	}
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	if (!cJSON_IsObject(msg) || strcmp(string_of(msg, "jsonrpc"), "2.0") ||
	    (method && !cJSON_IsString(method)) || (params && !cJSON_IsObject(params))) {
		fail(&rq->fault, E_INVALID_REQUEST, cJSON_IsArray(msg) ?
		     "one JSON-RPC message per POST (batches left MCP in 2025-06-18)" :
		     "not a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\")");
		send_fault(rq, RPC_INVALID_REQUEST);
		goto out;
	}
	/* A notification, or a client's answer to a request (this server sends
	 * none): nothing to say back. */
	if (!id || !method) {
		if (!method && !cJSON_GetObjectItemCaseSensitive(msg, "result") &&
		    !cJSON_GetObjectItemCaseSensitive(msg, "error")) {
			fail(&rq->fault, E_INVALID_REQUEST, "a message needs a method, or a result or error");
			send_fault(rq, RPC_INVALID_REQUEST);
		} else {
			http_send_empty(&rq->io, 202, "");
		}
		goto out;
	}
	if (!cJSON_IsString(id) && !cJSON_IsNumber(id)) {
		fail(&rq->fault, E_INVALID_REQUEST, "a request's id is a string or a number");
		send_fault(rq, RPC_INVALID_REQUEST);
		goto out;
	}
	int code = 0;
	const char *why = NULL;
	cJSON *result = answer(w, rq, method->valuestring, params, &code, &why);
	if (!result) {
		send_error(rq, 200, id, code, why);
		goto out;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, false));
	cJSON_AddItemToObject(o, "result", result);
	respond_json(rq, 200, o);
out:
	cJSON_Delete(msg);
	buf_free(&raw);
}
