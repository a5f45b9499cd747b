/* /mcp's pure parts: version negotiation, the tool list and its schema
 * against the API's, and an /execute result as a tool result. */
#include "tap.h"
#include "../../conf/yaml_tree.h"
#include "../../fcgi/mcp.h"

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

UNIT_TEST(test_mcp)
{
	is_str(mcp_negotiate("2025-06-18"), "2025-06-18", "mcp: a version it speaks is the one it answers");
	is_str(mcp_negotiate("2024-11-05"), "2025-11-25", "mcp: an older one gets the newest");
	is_str(mcp_negotiate(""), "2025-11-25", "mcp: none asked gets the newest");
	ok(mcp_version_supported("2025-03-26") && !mcp_version_supported("2099-01-01") &&
	   !mcp_version_supported(NULL), "mcp: MCP-Protocol-Version is one of three");

	/* The execute tool's schema: the API's request fields, no more, no
	 * fewer (docs/openapi.yaml's ExecuteRequest), with the same required. */
	struct registry reg = {0};
	cJSON *list = mcp_tools_list(&reg);
	const cJSON *tool = cJSON_GetArrayItem(at(list, "tools"), 0);
	is_str(cJSON_IsString(at(tool, "name")) ? at(tool, "name")->valuestring : "", "execute",
	       "mcp: tools/list names execute");
	const cJSON *schema = at(tool, "inputSchema");
	ok(cJSON_IsObject(schema) && cJSON_IsObject(at(schema, "properties")), "mcp: its inputSchema parses");
	char err[256] = "";
	cJSON *api = yaml_load_file("docs/openapi.yaml", err, sizeof err);
	const cJSON *req = at(at(at(api, "components"), "schemas"), "ExecuteRequest");
	ok(req != NULL, "mcp: openapi.yaml has ExecuteRequest (%s)", err);
	int same = 0, n = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, at(req, "properties")) {
		n++;
		same += at(at(schema, "properties"), p->string) != NULL;
	}
	ok(n > 0 && cJSON_GetArraySize(at(schema, "properties")) == n, "mcp: as many fields as the API's request (%d)", n);
	ok(same == n, "mcp: each of the API's request fields is in the tool's schema");
	char *want = cJSON_PrintUnformatted(at(req, "required"));
	char *got = cJSON_PrintUnformatted(at(schema, "required"));
	is_str(got, want, "mcp: the same required fields");
	free(want);
	free(got);
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

	cJSON *e = cJSON_Parse("{\"error\":{\"code\":\"unknown_language\",\"message\":\"no language cobol\"}}");
	o = mcp_tool_error(e);
	is_str(text_of(o, 0), "unknown_language: no language cobol", "mcp: a refusal is said as code: message");
	ok(cJSON_IsTrue(at(o, "isError")), "mcp: and is an error");
	cJSON_Delete(o);
	cJSON_Delete(e);
}
