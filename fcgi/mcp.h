/*
 * mcp.h: the Model Context Protocol at POST /mcp (mcp.c): an agent's MCP
 * client calls isobox's tools with the same keys, limits and quotas as
 * the HTTP API.
 */
#ifndef ISOBOX_MCP_H
#define ISOBOX_MCP_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;

/* POST /mcp: one JSON-RPC message in, its answer (or 202) out. */
void mcp_handler(struct worker *w, struct request *rq);

/* The protocol version the server speaks to a client that asked for
 * `asked` (initialize): that one when supported, else the newest. Pure. */
const char *mcp_negotiate(const char *asked);
/* Is `v` a version a client may name in MCP-Protocol-Version? Pure. */
bool mcp_version_supported(const char *v);

/* The tools/list result: the tools, each with its input schema; the
 * registry's language names in the execute tool's. */
cJSON *mcp_tools_list(const struct registry *reg);
/* The same tools as function-calling definitions ({"tools": [{"type":
 * "function", "function": {name, description, parameters}}]}), the shape
 * OpenAI-style chat APIs take; the call's arguments are then a POST
 * /execute body. */
cJSON *mcp_tools_as_functions(const struct registry *reg);
/* GET /v1/tools: mcp_tools_as_functions. */
void mcp_tools_handler(struct worker *w, struct request *rq);

/*
 * A tools/call result from an execute result (the /execute object, owned
 * by the caller): the program's output as text content, each PNG among
 * its outputs as image content, the whole object as structured content,
 * and isError when the program failed (did not compile, exited non-zero,
 * timed out or was killed). Pure.
 */
cJSON *mcp_tool_result(const cJSON *execute_result);
/* A tools/call result for a run that was refused or failed before it
 * ran (the error object of an /execute answer, owned by the caller). */
cJSON *mcp_tool_error(const cJSON *error_body);

#endif
