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
 * The tools are mcp_tools.c's: each the face of a route (execute, the
 * session routes), taking what the route takes, under the same keys,
 * tenants, limits and quotas.
 *
 * Two kinds of failure, as the spec has them: a message that is not
 * JSON-RPC, or names a method or tool that does not exist, is a JSON-RPC
 * error; a run that was refused or failed is a tool result with isError,
 * so that the model reads why and can mend its call.
 */
#define _GNU_SOURCE
#include "mcp.h"
#include "mcp_tools.h"
#include "../conf/lib/json.h"
#include "encode.h"
#include "errors.h"
#include "request.h"
#include "respond.h"
#include "sse.h"

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

void mcp_progress_event(struct buf *out, const cJSON *token, int64_t progress, const char *text, size_t n)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", "notifications/progress");
	cJSON *p = cJSON_AddObjectToObject(o, "params");
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(token, false));
	cJSON_AddNumberToObject(p, "progress", (double)progress);
	json_add_bytes(p, "message", text, n);
	char *json = cJSON_PrintUnformatted(o);
	sse_event(out, "message", json);
	free(json);
	cJSON_Delete(o);
}

/*
 * A tools/call whose client asked for progress (params._meta.progressToken)
 * and takes a stream: once the program has started, the answer is an
 * event stream (the transport lets a POST's answer be one), each chunk of
 * output a notifications/progress whose message is the text, comments in
 * silent stretches (so proxies keep an idle call open), and the result
 * last. Refusals before the start stay plain JSON answers.
 */
struct progress {
	struct request *rq;
	const cJSON *token;
	int64_t sent;
	struct sse_carry carry[3]; /* [1] stdout, [2] stderr */
};

static void progress_started(void *ctx)
{
	struct progress *pr = ctx;
	struct buf b = {0};
	http_send_head(&pr->rq->io, 200, SSE_HEADERS);
	http_send_piece(&pr->rq->io, &b);
}

static bool progress_output(void *ctx, int fd, const char *p, size_t n)
{
	struct progress *pr = ctx;
	struct buf joined = {0}, b = {0};
	size_t whole = sse_carry_join(&pr->carry[fd == 2 ? 2 : 1], p, n, false, &joined);
	if (whole)
		mcp_progress_event(&b, pr->token, ++pr->sent, joined.data, whole);
	buf_free(&joined);
	return whole ? http_send_piece(&pr->rq->io, &b) : !pr->rq->io.failed;
}

static void progress_compiled(void *ctx, const struct sandbox_phase *compile)
{
	struct progress *pr = ctx;
	struct buf b = {0};
	char text[64];
	int n = snprintf(text, sizeof text, "compiled (exit %d)", compile->exit_code);
	mcp_progress_event(&b, pr->token, ++pr->sent, text, (size_t)n);
	if (!http_send_piece(&pr->rq->io, &b))
		pr->rq->result.client_gone = true;
}

static bool progress_idle(void *ctx)
{
	struct progress *pr = ctx;
	return http_send_text(&pr->rq->io, SSE_KEEPALIVE);
}

/* A request's result, or NULL with *code and *why for its error; a
 * tools/call runs with sink when there is one. */
static cJSON *answer(struct worker *w, struct request *rq, const char *method, const cJSON *params,
		     const struct sandbox_sink *sink, int *code, const char **why)
{
	if (!strcmp(method, "ping"))
		return cJSON_CreateObject();
	if (!strcmp(method, "initialize")) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "protocolVersion",
					mcp_negotiate(json_text(params, "protocolVersion")));
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
		if (args && !cJSON_IsObject(args))
			return *code = RPC_INVALID_PARAMS, *why = "arguments must be an object", NULL;
		cJSON *none = args ? NULL : cJSON_CreateObject();
		cJSON *o = mcp_tools_call(w, rq, json_text(params, "name"), args ? args : none, sink);
		cJSON_Delete(none);
		if (!o)
			return *code = RPC_INVALID_PARAMS, *why = "no such tool (tools/list names them)", NULL;
		return o;
	}
	return *code = RPC_METHOD_NOT_FOUND, *why = "no such method", NULL;
}

bool mcp_same_origin(const char *origin, const char *host, bool host_checked)
{
	/* Under DNS rebinding the page's origin and the Host are both the
	 * attacker's name: only a Host checked against access.hosts makes an
	 * Origin equal to it safe (a page this server itself served). */
	if (!host_checked || !host[0])
		return false;
	const char *rest = !strncmp(origin, "http://", 7) ? origin + 7 :
			   !strncmp(origin, "https://", 8) ? origin + 8 : NULL;
	return rest && !strcasecmp(rest, host);
}

void mcp_handler(struct worker *w, struct request *rq)
{
	/* A page's script may not reach a server on the user's machine
	 * (DNS rebinding): an Origin must be one the operator allows, or this
	 * server itself. The Host was checked on the way in (access.hosts). */
	const char *origin = http_param(&rq->io, "HTTP_ORIGIN");
	if (origin[0] && !rq->cors &&
	    !mcp_same_origin(origin, http_param(&rq->io, "HTTP_HOST"), w->conf.access.hosts.n > 0)) {
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
	if (!cJSON_IsObject(msg) || strcmp(json_text(msg, "jsonrpc"), "2.0") ||
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
	const cJSON *token = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(params, "_meta"),
							      "progressToken");
	struct progress pr = {.rq = rq, .token = token};
	struct sandbox_sink sink = {.started = progress_started, .compiled = progress_compiled,
				    .output = progress_output, .idle = progress_idle, .idle_ms = 1000,
				    .ctx = &pr, .hangup_fd = http_hangup_fd(&rq->io)};
	bool stream = (cJSON_IsString(token) || cJSON_IsNumber(token)) &&
		      strstr(http_param(&rq->io, "HTTP_ACCEPT"), "text/event-stream");
	cJSON *result = answer(w, rq, method->valuestring, params, stream ? &sink : NULL, &code, &why);
	if (!result) {
		send_error(rq, 200, id, code, why);
		goto out;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, false));
	cJSON_AddItemToObject(o, "result", result);
	if (!rq->io.status) {
		respond_json(rq, 200, o);
	} else { /* the stream began: what was held back, then the answer */
		struct buf b = {0};
		for (int fd = 1; fd <= 2; fd++) {
			struct buf joined = {0};
			size_t whole = sse_carry_join(&pr.carry[fd], "", 0, true, &joined);
			if (whole)
				mcp_progress_event(&b, token, ++pr.sent, joined.data, whole);
			buf_free(&joined);
		}
		char *json = cJSON_PrintUnformatted(o);
		sse_event(&b, "message", json);
		free(json);
		cJSON_Delete(o);
		http_send_last(&rq->io, &b);
	}
out:
	cJSON_Delete(msg);
	buf_free(&raw);
}
