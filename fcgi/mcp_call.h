/*
 * mcp_call.h: what every MCP tool call shares (mcp_call.c), for the files
 * that hold tools (mcp_tools.c, mcp_commands.c).
 */
#ifndef ISOBOX_MCP_CALL_H
#define ISOBOX_MCP_CALL_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;

/*
 * A tools/call result from an execute result (the /execute object, or a
 * session step's, owned by the caller): the program's output as text
 * content (and a kernel cell's value and exception, and why the session
 * ended if it did), each PNG among its outputs and a cell's figures as
 * image content, the whole object as structured content, and isError
 * when the program failed (did not compile, exited non-zero, timed out or
 * was killed). Pure.
 */
cJSON *mcp_tool_result(const cJSON *execute_result);
/* A tools/call result for a run that was refused or failed before it
 * ran (the error object of an /execute answer, owned by the caller). */
cJSON *mcp_tool_error(const cJSON *error_body);

/*
 * A tool's result: text for the model, then `structured` (taken) as its
 * structured content (more content, images, may follow the text). A
 * refused call's: rq->fault as the API's error object. A route's answer
 * (taken) made readable: its raw JSON literals (encode.h) as strings
 * (NULL for NULL). Content: a text, a PNG (base64); is this name a PNG's?
 */
cJSON *mcp_tool_made(cJSON *structured, const char *text, bool is_error);
cJSON *mcp_tool_refused(struct request *rq, const char *tool);
cJSON *mcp_readable_taken(cJSON *o);
void mcp_add_text(cJSON *content, const char *text);
void mcp_add_png(cJSON *content, const char *base64);
bool mcp_png_name(const char *name);

/*
 * The call's arguments, less the path's ids ("session", "commandId"), as
 * the route's body (rq->body). The session a call names, checked as the
 * route's path would be: a string, and kept by this host (NULL: rq->fault
 * says why).
 */
void mcp_tool_body(struct request *rq, const cJSON *args);
const char *mcp_tool_session(struct worker *w, struct request *rq, const cJSON *args);

#endif
