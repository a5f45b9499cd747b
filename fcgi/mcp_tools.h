/*
 * mcp_tools.h: the tools /mcp offers (mcp_tools.c), each the MCP face of
 * a route, and GET /v1/tools, the same tools for function-calling APIs.
 */
#ifndef ISOBOX_MCP_TOOLS_H
#define ISOBOX_MCP_TOOLS_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;
struct sandbox_sink;

/* The tools/list result: execute, and the session tools
 * (session_create, session_exec, session_files_write / _read / _list,
 * session_command_start / _output / _stdin / _signal, session_close),
 * each with its input schema; the registry's language names in
 * execute's description. */
cJSON *mcp_tools_list(const struct registry *reg);
/* The same tools as function-calling definitions ({"tools": [{"type":
 * "function", "function": {name, description, parameters}}]}), the shape
 * OpenAI-style chat APIs take; a call's arguments are then the tool's
 * (execute's: a POST /execute body). */
cJSON *mcp_tools_as_functions(const struct registry *reg);
/* tools/call of the tool `name` with these arguments (an object): its
 * result, a failure included (isError); NULL when there is no such tool.
 * A run tells sink what happens (its output as it comes), or when sink
 * is NULL only watches for the client's hangup. */
cJSON *mcp_tools_call(struct worker *w, struct request *rq, const char *name, const cJSON *args,
		      const struct sandbox_sink *sink);
/* GET /v1/tools: mcp_tools_as_functions. */
void mcp_tools_handler(struct worker *w, struct request *rq);

#endif
