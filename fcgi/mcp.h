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

/* May a page of this origin call /mcp, beside access.corsOrigins? Only
 * this server's own pages ("http://" or "https://" and the Host), and
 * only when the Host was checked against access.hosts. Pure. */
bool mcp_same_origin(const char *origin, const char *host, bool host_checked);

/* Append a notifications/progress event (SSE, "event: message") for
 * this token, with progress and text[0..n) as its message. Pure. */
void mcp_progress_event(struct buf *out, const cJSON *token, int64_t progress, const char *text, size_t n);

/* The tools themselves, and GET /v1/tools: mcp_tools.h. */

#endif
