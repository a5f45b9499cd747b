/*
 * mcp_call.c: what every MCP tool call shares (mcp_call.h): its arguments
 * as the route's body, the session it names, and its result as MCP
 * content (text, images, the route's answer as structured content).
 */
#define _GNU_SOURCE
#include "mcp_call.h"
#include "../conf/lib/json.h"
#include "errors.h"
#include "request.h"
#include "respond.h"
#include "sessions.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void mcp_add_text(cJSON *content, const char *text)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "text");
	cJSON_AddStringToObject(c, "text", text);
	cJSON_AddItemToArray(content, c);
}

void mcp_add_png(cJSON *content, const char *base64)
{
	cJSON *img = cJSON_CreateObject();
	cJSON_AddStringToObject(img, "type", "image");
	cJSON_AddStringToObject(img, "data", base64);
	cJSON_AddStringToObject(img, "mimeType", "image/png");
	cJSON_AddItemToArray(content, img);
}

bool mcp_png_name(const char *name)
{
	size_t n = strlen(name);
	return n >= 4 && !strcasecmp(name + n - 4, ".png");
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
	const char *out = json_text(p, "stdout"), *err = json_text(p, "stderr");
	if (out[0])
		buf_printf(t, "%s%s", t->len ? "\n" : "", out);
	if (err[0])
		buf_printf(t, "%s[%s stderr]\n%s", t->len ? "\n" : "", name, err);
	const char *sig = json_text(p, "signal");
	if (failed || flag_of(p, "truncated"))
		buf_printf(t, "%s[%s: exit %d%s%s%s%s%s]", t->len ? "\n" : "", name, exit_code, sig[0] ? ", " : "", sig,
			   flag_of(p, "timedOut") ? ", timed out" : "", flag_of(p, "oomKilled") ? ", out of memory" : "",
			   flag_of(p, "truncated") ? ", output truncated" : "");
	return failed;
}

/*
 * A copy of o whose texts are strings: the API's objects hold raw JSON
 * literals (encode.h's json_add_bytes), which cJSON cannot read as
 * strings, so they are printed and read back. The caller's.
 */
static cJSON *readable(const cJSON *o)
{
	char *printed = cJSON_PrintUnformatted(o);
	cJSON *read_back = cJSON_Parse(printed);
	free(printed);
	return read_back;
}

cJSON *mcp_tool_made(cJSON *structured, const char *text, bool is_error)
{
	cJSON *r = cJSON_CreateObject();
	mcp_add_text(cJSON_AddArrayToObject(r, "content"), text);
	cJSON_AddItemToObject(r, "structuredContent", structured);
	cJSON_AddBoolToObject(r, "isError", is_error);
	return r;
}

cJSON *mcp_tool_result(const cJSON *execute_result)
{
	cJSON *read_back = readable(execute_result);
	execute_result = read_back;
	struct buf t = {0};
	bool failed = phase_text(&t, "compile", cJSON_GetObjectItemCaseSensitive(execute_result, "compile"));
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(execute_result, "run");
	if (!run)
		failed = true; /* it did not compile, so nothing ran */
	else
		failed = phase_text(&t, "run", run) || failed;
	/* A kernel cell's value and exception, as a notebook shows them. */
	const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(execute_result, "kernel");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(kernel, "value");
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(kernel, "error");
	/* A cell's displays, as their text (their images follow). */
	const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(kernel, "outputs"), *x;
	if (!cJSON_IsArray(outputs))
		outputs = NULL;
	cJSON_ArrayForEach(x, outputs) {
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(x, "data");
		if (!strcmp(json_text(x, "output_type"), "display_data") &&
		    !cJSON_GetObjectItemCaseSensitive(data, "image/png") && json_text(data, "text/plain")[0])
			buf_printf(&t, "%s%s", t.len ? "\n" : "", json_text(data, "text/plain"));
	}
	if (cJSON_IsString(value))
		buf_printf(&t, "%sOut: %s", t.len ? "\n" : "", value->valuestring);
	if (cJSON_IsObject(error) && !strstr(json_text(run, "stderr"), json_text(error, "traceback")))
		buf_printf(&t, "%s%s", t.len ? "\n" : "", json_text(error, "traceback")[0] ?
			   json_text(error, "traceback") : json_text(error, "name"));
	const char *ended = json_text(cJSON_GetObjectItemCaseSensitive(execute_result, "session"), "ended");
	if (ended[0])
		buf_printf(&t, "%s[the session ended: %s]", t.len ? "\n" : "", ended);
	cJSON *o = mcp_tool_made(read_back, t.len ? t.data : "(no output)", failed);
	cJSON *content = cJSON_GetObjectItemCaseSensitive(o, "content");
	buf_free(&t);
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(execute_result, "outputs")) {
		if (mcp_png_name(json_text(x, "name")) && !strcmp(json_text(x, "encoding"), "base64"))
			mcp_add_png(content, json_text(x, "content"));
	}
	/* A cell's images: those of its outputs (its figures among them), or
	 * from a kernel that gives no outputs, its figures. */
	if (outputs) {
		cJSON_ArrayForEach(x, outputs)
			if (json_text(cJSON_GetObjectItemCaseSensitive(x, "data"), "image/png")[0])
				mcp_add_png(content, json_text(cJSON_GetObjectItemCaseSensitive(x, "data"), "image/png"));
	} else {
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(kernel, "images"))
			mcp_add_png(content, json_text(x, "data"));
	}
	return o;
}

cJSON *mcp_tool_error(const cJSON *error_body)
{
	cJSON *read_back = readable(error_body);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(read_back, "error");
	char *text = xasprintf("%s: %s", json_text(e, "code"), json_text(e, "message"));
	cJSON *o = mcp_tool_made(read_back, text, true);
	free(text);
	return o;
}


/* The tool result of a failure: rq->fault as the API's error object. */
cJSON *mcp_tool_refused(struct request *rq, const char *tool)
{
	if (error_info(rq->fault.code)->server_side)
		log_msg("mcp %s failed: %s: %s", tool, error_info(rq->fault.code)->name, rq->fault.message);
	cJSON *err = fault_to_json(&rq->fault);
	cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(err, "error"), "requestId", rq->id);
	cJSON *o = mcp_tool_error(err);
	cJSON_Delete(err);
	return o;
}

void mcp_tool_body(struct request *rq, const cJSON *args)
{
	cJSON *copy = cJSON_Duplicate(args, true);
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "session");
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "commandId");
	char *body = cJSON_PrintUnformatted(copy);
	buf_append(&rq->body, body, strlen(body));
	free(body);
	cJSON_Delete(copy);
}

cJSON *mcp_readable_taken(cJSON *o)
{
	cJSON *r = o ? readable(o) : NULL;
	cJSON_Delete(o);
	return r;
}

const char *mcp_tool_session(struct worker *w, struct request *rq, const cJSON *args)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "session");
	if (!cJSON_IsString(v) || !v->valuestring[0]) {
		fail(&rq->fault, E_INVALID_REQUEST, "session: the session's id (from session_create) is required");
		return NULL;
	}
	return sessions_at_home(w, rq, v->valuestring) ? v->valuestring : NULL;
}
