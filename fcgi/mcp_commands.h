/*
 * mcp_commands.h: the MCP tools of a session's background commands
 * (mcp_commands.c), each the face of a /v1/sessions/{id}/commands route
 * (commands.h), for mcp_tools.c's table.
 */
#ifndef ISOBOX_MCP_COMMANDS_H
#define ISOBOX_MCP_COMMANDS_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;
struct sandbox_sink;

extern const char mcp_command_start_schema[], mcp_command_output_schema[], mcp_command_stdin_schema[],
	mcp_command_signal_schema[], mcp_command_delete_schema[];

cJSON *mcp_command_start(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);
cJSON *mcp_command_output(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);
cJSON *mcp_command_stdin(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);
cJSON *mcp_command_signal(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);
cJSON *mcp_command_list(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);
cJSON *mcp_command_delete(struct worker *w, struct request *rq, const cJSON *args, const struct sandbox_sink *sink);

#endif
