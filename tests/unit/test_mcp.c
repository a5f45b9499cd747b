/* /mcp's pure parts: version negotiation, the tool list and its schema
 * against the API's, and an /execute result as a tool result. */
#include "tap.h"
#include "../../conf/lib/yaml_tree.h"
#include "../../fcgi/mcp.h"
#include "../../fcgi/mcp_call.h"
#include "../../fcgi/mcp_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *at(const cJSON *o, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(o, name);
}

static const char *text_of(const cJSON *result, int i)
{
	const cJSON *c = cJSON_GetArrayItem(at(result, "content"), i);
	return cJSON_IsString(at(c, "text")) ? at(c, "text")->valuestring : "";
}

static cJSON *tool_result(const char *execute_json)
{
	cJSON *r = cJSON_Parse(execute_json);
	cJSON *o = mcp_tool_result(r);
	cJSON_Delete(r);
	return o;
}

static const cJSON *tool_named(const cJSON *list, const char *name)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, at(list, "tools"))
		if (cJSON_IsString(at(t, "name")) && !strcmp(at(t, "name")->valuestring, name))
			return t;
	return NULL;
}

static bool in_array(const cJSON *a, const char *s)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, a)
		if (cJSON_IsString(x) && !strcmp(x->valuestring, s))
			return true;
	return false;
}

/* The same enum values, JSON null aside (optional fields in openapi
 * allow null; a tool's schema leaves the field out instead). */
static bool same_enum(const cJSON *tool, const cJSON *api)
{
	const cJSON *x;
	int n_api = 0, n_tool = 0;
	cJSON_ArrayForEach(x, at(api, "enum"))
		if (cJSON_IsString(x)) {
			n_api++;
			if (!in_array(at(tool, "enum"), x->valuestring))
				return false;
		}
	cJSON_ArrayForEach(x, at(tool, "enum"))
		n_tool++;
	return n_api == n_tool;
}

/* How far a tool's schema is from openapi's (its $refs followed): each
 * difference said as a TAP comment. "session" and "commandId" are the
 * tools' own (the path's ids). */
static bool path_id(const char *name)
{
	return !strcmp(name, "session") || !strcmp(name, "commandId");
}

static int shape_differs(const cJSON *tool, const cJSON *api, const cJSON *schemas, const char *where)
{
	if (cJSON_IsString(at(api, "$ref")))
		api = at(schemas, strrchr(at(api, "$ref")->valuestring, '/') + 1);
	int bad = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, at(api, "properties")) {
		char deeper[200];
		snprintf(deeper, sizeof deeper, "%s.%s", where, p->string);
		const cJSON *mine = at(at(tool, "properties"), p->string);
		if (!mine) {
			printf("# %s: missing\n", deeper);
			bad++;
		} else {
			bad += shape_differs(mine, p, schemas, deeper);
		}
	}
	cJSON_ArrayForEach(p, at(tool, "properties"))
		if (!path_id(p->string) && !at(at(api, "properties"), p->string)) {
			printf("# %s.%s: not the API's\n", where, p->string);
			bad++;
		}
	const cJSON *r;
	int n_api = 0, n_tool = 0;
	cJSON_ArrayForEach(r, at(api, "required")) {
		n_api++;
		bad += !in_array(at(tool, "required"), r->valuestring);
	}
	cJSON_ArrayForEach(r, at(tool, "required"))
		n_tool += !path_id(r->valuestring);
	if (n_api != n_tool) {
		printf("# %s: required %d, the API's %d\n", where, n_tool, n_api);
		bad++;
	}
	if ((at(api, "enum") || at(tool, "enum")) && !same_enum(tool, api)) {
		printf("# %s: enum differs\n", where);
		bad++;
	}
	if (at(api, "items"))
		bad += shape_differs(at(tool, "items"), at(api, "items"), schemas, where);
	return bad;
}

UNIT_TEST(test_mcp)
{
	is_str(mcp_negotiate("2025-06-18"), "2025-06-18", "mcp: a version it speaks is the one it answers");
	is_str(mcp_negotiate("2024-11-05"), "2025-11-25", "mcp: an older one gets the newest");
	is_str(mcp_negotiate(""), "2025-11-25", "mcp: none asked gets the newest");
	ok(mcp_version_supported("2025-03-26") && !mcp_version_supported("2099-01-01") &&
	   !mcp_version_supported(NULL), "mcp: MCP-Protocol-Version is one of three");

	ok(mcp_same_origin("http://127.0.0.1:8090", "127.0.0.1:8090", true) &&
	   mcp_same_origin("https://LOCALHOST:8443", "localhost:8443", true),
	   "mcp: a page of this server's own origin may call it");
	ok(!mcp_same_origin("http://evil.example", "evil.example", false),
	   "mcp: not when the Host was not checked (DNS rebinding: both are the attacker's name)");
	ok(!mcp_same_origin("http://evil.example", "127.0.0.1:8090", true) &&
	   !mcp_same_origin("http://127.0.0.1:8091", "127.0.0.1:8090", true) &&
	   !mcp_same_origin("null", "127.0.0.1:8090", true) && !mcp_same_origin("http://x", "", true) &&
	   !mcp_same_origin("ftp://127.0.0.1:8090", "127.0.0.1:8090", true),
	   "mcp: nor another origin, port or scheme");

	struct buf ev = {0};
	cJSON *token = cJSON_CreateString("t1");
	mcp_progress_event(&ev, token, 3, "line\n\x01", 6);
	is_str(ev.data, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	       "\"params\":{\"progressToken\":\"t1\",\"progress\":3,\"message\":\"line\\n\\u0001\"}}\n\n",
	       "mcp: a progress notification is one SSE event, its text escaped onto one line");
	cJSON_Delete(token);
	buf_free(&ev);

	/* Each tool's schema against its route's in docs/openapi.yaml: the
	 * same fields at every depth, the same required ones and enums. */
	struct registry reg = {0};
	cJSON *list = mcp_tools_list(&reg);
	char err[256] = "";
	cJSON *api = yaml_load_file("docs/openapi.yaml", err, sizeof err);
	const cJSON *schemas = at(at(api, "components"), "schemas");
	ok(schemas != NULL, "mcp: openapi.yaml read (%s)", err);
	static const struct {
		const char *tool, *api_schema;
	} pairs[] = {
		{"execute", "ExecuteRequest"}, {"session_create", "SessionRequest"},
		{"session_exec", "StepRequest"}, {"session_command_start", "CommandRequest"},
		{"session_command_stdin", "CommandStdinRequest"}, {"session_command_signal", "CommandSignalRequest"},
	};
	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		const cJSON *schema = at(tool_named(list, pairs[k].tool), "inputSchema");
		ok(cJSON_IsObject(at(schema, "properties")), "mcp: %s's inputSchema parses", pairs[k].tool);
		int bad = shape_differs(schema, at(schemas, pairs[k].api_schema), schemas, pairs[k].tool);
		ok(bad == 0, "mcp: %s takes what openapi's %s has: the same fields, required and enums (%d apart)",
		   pairs[k].tool, pairs[k].api_schema, bad);
	}
	const cJSON *write = at(at(tool_named(list, "session_files_write"), "inputSchema"), "properties");
	ok(same_enum(at(write, "encoding"), at(at(at(schemas, "File"), "properties"), "encoding")),
	   "mcp: session_files_write's encodings are a file's (utf-8, base64)");
	static const char *const named[] = {"execute", "session_create", "session_exec", "session_files_write",
		"session_files_read", "session_files_list", "session_command_start", "session_command_output",
		"session_command_stdin", "session_command_signal", "session_command_list", "session_command_delete",
		"session_close"};
	int with_session = 0;
	for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
		const cJSON *schema = at(tool_named(list, named[k]), "inputSchema");
		with_session += k >= 2 && in_array(at(schema, "required"), "session");
	}
	ok(cJSON_GetArraySize(at(list, "tools")) == 13 && with_session == 11,
	   "mcp: thirteen tools; each session tool requires the session's id");
	const cJSON *tool = cJSON_GetArrayItem(at(list, "tools"), 0);
	const cJSON *schema = at(tool, "inputSchema");
	cJSON_Delete(api);
	cJSON *fns = mcp_tools_as_functions(&reg);
	const cJSON *fn = at(cJSON_GetArrayItem(at(fns, "tools"), 0), "function");
	ok(!strcmp(at(cJSON_GetArrayItem(at(fns, "tools"), 0), "type")->valuestring, "function") &&
	   !strcmp(at(fn, "name")->valuestring, "execute") && cJSON_Compare(at(fn, "parameters"), schema, true) &&
	   cJSON_Compare(at(fn, "description"), at(tool, "description"), true),
	   "mcp: /v1/tools gives the same tool as a function definition");
	cJSON_Delete(fns);
	cJSON_Delete(list);

	cJSON *o = tool_result("{\"language\":\"python\",\"run\":{\"stdout\":\"4\\n\",\"stderr\":\"\","
			       "\"exitCode\":0,\"timedOut\":false,\"oomKilled\":false,\"truncated\":false}}");
	is_str(text_of(o, 0), "4\n", "mcp: a run's stdout is its text");
	ok(cJSON_IsFalse(at(o, "isError")), "mcp: exit 0 is no error");
	ok(cJSON_IsObject(at(o, "structuredContent")) &&
	   !strcmp(at(at(o, "structuredContent"), "language")->valuestring, "python"),
	   "mcp: the whole result is its structured content");
	cJSON_Delete(o);

	o = tool_result("{\"run\":{\"stdout\":\"\",\"stderr\":\"boom\\n\",\"exitCode\":3,\"timedOut\":true,"
			"\"oomKilled\":false,\"truncated\":false}}");
	is_str(text_of(o, 0), "[run stderr]\nboom\n\n[run: exit 3, timed out]",
	       "mcp: stderr and how it ended are said");
	ok(cJSON_IsTrue(at(o, "isError")), "mcp: a non-zero exit is an error");
	cJSON_Delete(o);

	o = tool_result("{\"compile\":{\"stdout\":\"\",\"stderr\":\"main.c:1: error\\n\",\"exitCode\":1,"
			"\"timedOut\":false,\"oomKilled\":false,\"truncated\":false}}");
	ok(cJSON_IsTrue(at(o, "isError")) && strstr(text_of(o, 0), "[compile stderr]\nmain.c:1: error"),
	   "mcp: a compile error is an error, with the compiler's words");
	cJSON_Delete(o);

	o = tool_result("{\"run\":{\"stdout\":\"\",\"stderr\":\"\",\"exitCode\":0},\"outputs\":["
			"{\"name\":\"plot.png\",\"encoding\":\"base64\",\"content\":\"iVBORw0K\"},"
			"{\"name\":\"notes.txt\",\"encoding\":\"utf-8\",\"content\":\"hi\"}]}");
	is_str(text_of(o, 0), "(no output)", "mcp: a silent run says so");
	const cJSON *img = cJSON_GetArrayItem(at(o, "content"), 1);
	ok(img && !strcmp(at(img, "type")->valuestring, "image") && !strcmp(at(img, "data")->valuestring, "iVBORw0K") &&
	   !strcmp(at(img, "mimeType")->valuestring, "image/png"), "mcp: a PNG output is image content");
	ok(cJSON_GetArraySize(at(o, "content")) == 2, "mcp: other outputs stay in the structured content only");
	cJSON_Delete(o);

	/* A kernel cell: its value as Out:, its exception when stderr did not
	 * already say it, its figures as images, and a session's end. */
	o = tool_result("{\"run\":{\"stdout\":\"hi\\n\",\"stderr\":\"\",\"exitCode\":1},\"session\":{\"id\":\"s\","
			"\"type\":\"kernel\",\"ended\":\"it ran out of memory\"},\"kernel\":{\"value\":null,"
			"\"error\":{\"name\":\"NameError\",\"value\":\"x\",\"traceback\":\"NameError: x\"},"
			"\"images\":[{\"type\":\"image/png\",\"data\":\"iVBO\"}],\"restarted\":false}}");
	is_str(text_of(o, 0), "hi\n\n[run: exit 1]\nNameError: x\n[the session ended: it ran out of memory]",
	       "mcp: a cell's exception and the session's end are said");
	img = cJSON_GetArrayItem(at(o, "content"), 1);
	ok(img && !strcmp(at(img, "data")->valuestring, "iVBO") && cJSON_IsTrue(at(o, "isError")),
	   "mcp: a cell's figure is image content; a cell that raised is an error");
	cJSON_Delete(o);
	o = tool_result("{\"run\":{\"stdout\":\"a\\n\",\"stderr\":\"\",\"exitCode\":0},\"kernel\":{\"value\":\"1\","
			"\"error\":null,\"images\":[{\"type\":\"image/png\",\"data\":\"FIG\"}],\"restarted\":false,"
			"\"outputs\":[{\"output_type\":\"stream\",\"name\":\"stdout\",\"text\":\"a\\n\"},"
			"{\"output_type\":\"display_data\",\"data\":{\"text/html\":\"<t>\",\"text/plain\":\"   x\\n0  1\"}},"
			"{\"output_type\":\"display_data\",\"data\":{\"image/png\":\"IMG\",\"text/plain\":\"<Image>\"}},"
			"{\"output_type\":\"execute_result\",\"data\":{\"text/plain\":\"1\"}},"
			"{\"output_type\":\"display_data\",\"data\":{\"image/png\":\"FIG\"}}]}}");
	is_str(text_of(o, 0), "a\n\n   x\n0  1\nOut: 1", "mcp: a cell's displays are said by their text");
	ok(cJSON_GetArraySize(at(o, "content")) == 3 && !strcmp(at(cJSON_GetArrayItem(at(o, "content"), 1), "data")->valuestring, "IMG") &&
	   !strcmp(at(cJSON_GetArrayItem(at(o, "content"), 2), "data")->valuestring, "FIG"),
	   "mcp: a cell's images in order, each once (its figures are among its outputs)");
	cJSON_Delete(o);
	o = tool_result("{\"run\":{\"stdout\":\"\",\"stderr\":\"\",\"exitCode\":0},\"kernel\":{\"value\":\"42\","
			"\"error\":null,\"images\":[],\"restarted\":false}}");
	is_str(text_of(o, 0), "Out: 42", "mcp: a cell's value is its Out:");
	cJSON_Delete(o);

	cJSON *e = cJSON_Parse("{\"error\":{\"code\":\"unknown_language\",\"message\":\"no language intercal\"}}");
	o = mcp_tool_error(e);
	is_str(text_of(o, 0), "unknown_language: no language intercal", "mcp: a refusal is said as code: message");
	ok(cJSON_IsTrue(at(o, "isError")), "mcp: and is an error");
	cJSON_Delete(o);
	cJSON_Delete(e);
}
