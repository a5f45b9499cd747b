/* routes.c: the endpoints, and what happens to every request on its way in. */
#define _GNU_SOURCE
#include "routes.h"
#include "admin.h"
#include "assets.h"
#include "auth.h"
#include "commands.h"
#include "errors.h"
#include "execute.h"
#include "health.h"
#include "mcp.h"
#include "mcp_tools.h"
#include "memory.h"
#include "piston.h"
#include "respond.h"
#include "result.h"
#include "sessions.h"
#include "volumes.h"

#include <stdio.h>
#include <string.h>

static const struct route routes[] = {
	{"/execute", "POST", execute_handler, ROUTE_RUNS_PROGRAM | ROUTE_DEMO, ACL_TENANT, NULL},
	{"/runtimes", "GET", route_runtimes, ROUTE_DEMO, ACL_TENANT, NULL},
	{"/healthz", "GET", health_handler, ROUTE_STATUS, ACL_HEALTHZ, NULL},
	{"/metrics", "GET", admin_metrics, ROUTE_STATUS, ACL_METRICS, NULL},
	{"/api/v2/execute", "POST", execute_handler, ROUTE_RUNS_PROGRAM | ROUTE_PISTON | ROUTE_DEMO, ACL_TENANT, NULL},
	{"/api/v2/runtimes", "GET", piston_runtimes, ROUTE_PISTON | ROUTE_DEMO, ACL_TENANT, NULL},
	{"/api/v2/packages", "GET", piston_packages, ROUTE_PISTON, ACL_TENANT, NULL},
	{"/api/v2/packages", "POST", piston_packages, ROUTE_PISTON, ACL_TENANT, NULL},
	{"/api/v2/packages", "DELETE", piston_packages, ROUTE_PISTON, ACL_TENANT, NULL},
	{"/api/v2/connect", "GET", piston_connect, ROUTE_PISTON, ACL_TENANT, NULL},
	{"/", "GET", asset_serve, 0, ACL_ANYONE, NULL},
	{"/openapi.yaml", "GET", asset_serve, 0, ACL_ANYONE, NULL},
	{"/llms.txt", "GET", asset_serve, 0, ACL_ANYONE, NULL},
	/* Runs programs (tools/call) but claims for itself: initialize and
	 * tools/list must not wait behind the whenBusy gate. */
	{"/mcp", "POST", mcp_handler, 0, ACL_TENANT, NULL},
	{"/v1/tools", "GET", mcp_tools_handler, 0, ACL_TENANT, NULL},
	{"/v1/sessions", "POST", sessions_create, ROUTE_RUNS_PROGRAM, ACL_TENANT, NULL},
	{"/v1/sessions", "GET", sessions_list, 0, ACL_TENANT, NULL},
	{"/v1/sessions/*", "GET", sessions_get, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*", "DELETE", sessions_delete, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/exec", "POST", sessions_exec, ROUTE_RUNS_PROGRAM, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/files", "GET", sessions_files_list, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/files/**", "GET", sessions_file_get, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/files/**", "PUT", sessions_file_put, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/files/**", "DELETE", sessions_file_delete, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/commands", "POST", commands_start, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/commands", "GET", commands_list, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/commands/*", "GET", commands_get, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/commands/*", "DELETE", commands_delete, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/commands/*/stdin", "POST", commands_stdin, 0, ACL_TENANT, sessions_here},
	{"/v1/sessions/*/commands/*/signal", "POST", commands_signal, 0, ACL_TENANT, sessions_here},
	{"/v1/volumes", "POST", volumes_create, ROUTE_RUNS_PROGRAM, ACL_TENANT, NULL},
	{"/v1/volumes", "GET", volumes_list, 0, ACL_TENANT, NULL},
	{"/v1/volumes/*", "GET", volumes_get, 0, ACL_TENANT, NULL},
	{"/v1/volumes/*", "DELETE", volumes_delete, 0, ACL_TENANT, NULL},
	{"/v1/volumes/*/files", "GET", volumes_files_list, ROUTE_RUNS_PROGRAM, ACL_TENANT, NULL},
	{"/v1/volumes/*/files/**", "GET", volumes_file_get, ROUTE_RUNS_PROGRAM, ACL_TENANT, NULL},
	{"/v1/volumes/*/files/**", "PUT", volumes_file_put, ROUTE_RUNS_PROGRAM, ACL_TENANT, NULL},
	{"/v1/volumes/*/files/**", "DELETE", volumes_file_delete, ROUTE_RUNS_PROGRAM, ACL_TENANT, NULL},
	{"/v1/memory", "GET", memory_list, 0, ACL_TENANT, NULL},
	{"/v1/memory/**", "GET", memory_get, 0, ACL_TENANT, NULL},
	{"/v1/memory/**", "PUT", memory_put, 0, ACL_TENANT, NULL},
	{"/v1/memory/**", "DELETE", memory_delete, 0, ACL_TENANT, NULL},
};

void route_runtimes(struct worker *w, struct request *rq)
{
	cJSON *o = cJSON_CreateObject();
	backend_to_json(o, &w->conf, &w->runtime);
	cJSON *list = cJSON_AddArrayToObject(o, "runtimes");
	for (size_t i = 0; i < w->reg.n; i++) {
		const struct language *l = &w->reg.langs[i];
		cJSON *r = language_to_json(l);
		cJSON_AddBoolToObject(r, "available", l->image_id != NULL);
		cJSON_AddItemToObject(r, "limits", limits_to_json(&l->defaults));
		if (l->min_memory_bytes)
			cJSON_AddNumberToObject(r, "minMemoryBytes", (double)l->min_memory_bytes);
		cJSON_AddItemToArray(list, r);
	}
	cJSON_AddItemToObject(o, "ceilings", limits_to_json(&w->conf.ceilings));
	/* Whether egress runs would work now: the firewall is checked (I/O). */
	struct fault why = {0};
	char mode[16] = "none";
	bool enabled = w->conf.network.enabled;
	bool ready = enabled && sandbox_egress_ready(&w->conf, mode, sizeof mode, &why);
	cJSON_AddItemToObject(o, "network", network_to_json(enabled, ready, mode, &why));
	/* The playground's widget needs the (public) site key. */
	if (w->conf.demo.enabled) {
		cJSON *demo = cJSON_AddObjectToObject(o, "demo");
		cJSON_AddStringToObject(demo, "turnstileSiteKey", w->conf.demo.site_key);
		cJSON_AddItemToObject(demo, "ceilings", limits_to_json(&w->conf.demo.ceilings));
	}
	http_send_json(&rq->io, 200, "", o);
	cJSON_Delete(o);
}

static bool method_allowed(const struct route *r, const char *method)
{
	return !strcmp(method, r->method) || (!strcmp(method, "HEAD") && !strcmp(r->method, "GET"));
}

/*
 * The route for this path and method, with its params in rq. NULL when
 * none: then *allow lists the methods the path has ("" if it has none)
 * and *other is the first route of the path (its shape answers the 405).
 */
static const struct route *find(struct request *rq, char *allow, size_t allow_len,
				const struct route **other)
{
	allow[0] = '\0';
	*other = NULL;
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		char *params[2];
		if (!request_match(routes[i].path, rq->path, params))
			continue;
		if (method_allowed(&routes[i], rq->method)) {
			rq->params[0] = params[0];
			rq->params[1] = params[1];
			return &routes[i];
		}
		free(params[0]);
		free(params[1]);
		if (!*other)
			*other = &routes[i];
		size_t used = strlen(allow);
		snprintf(allow + used, allow_len - used, "%s%s", used ? ", " : "", routes[i].method);
	}
	return NULL;
}

/* Is this request for this server, to a route that exists, with its
 * method? Otherwise it has been answered (421, 404, 405). */
static bool routed(struct worker *w, struct request *rq)
{
	const char *host = http_param(&rq->io, "HTTP_HOST");
	if (!access_host_allowed(&w->conf.access, host)) {
		fail(&rq->fault, E_MISDIRECTED, "this server does not answer to the name \"%.100s\" "
		     "(access.hosts in isobox.yaml)", host);
		respond_fault(rq, "");
		return false;
	}
	char allow[64];
	const struct route *other;
	rq->route = find(rq, allow, sizeof allow, &other);
	if (!rq->route && !allow[0]) {
		if (!rq->path[0])
			fail(&rq->fault, E_NOT_FOUND, "the path does not decode (a broken %%-escape or an escaped NUL)");
		else
			fail(&rq->fault, E_NOT_FOUND, "no such endpoint: %.100s", rq->path);
		respond_fault(rq, "");
		return false;
	}
	if (!rq->route && !strcmp(rq->method, "OPTIONS")) {
		auth_preflight(rq, allow);
		return false;
	}
	if (!rq->route) {
		char headers[96];
		rq->route = other;
		snprintf(headers, sizeof headers, "Allow: %s\r\n", allow);
		fail(&rq->fault, E_METHOD_NOT_ALLOWED, "%.16s %.100s is not allowed; use %s", rq->method,
		     rq->path, allow);
		respond_fault(rq, headers);
		return false;
	}
	return true;
}

/* What the answer's end gives back and counts (http.h before_end,
 * admin_answered). */
struct held {
	struct worker *w;
	struct request *rq;
	int64_t started_ms;
};

static void answered(void *ctx, int status)
{
	struct held *h = ctx;
	admin_answered(h->w, h->rq, status, h->started_ms);
}

void route_request(struct worker *w, struct http_io *io)
{
	int64_t started_ms = now_ms();
	struct request rq = {.io = *io};
	struct held held = {.w = w, .rq = &rq, .started_ms = started_ms};
	rq.io.before_end = answered;
	rq.io.end_ctx = &held;
	rq.method = http_param(io, "REQUEST_METHOD");
	rq.path = request_route(http_param(io, "PATH_INFO"), http_param(io, "REQUEST_URI"));
	const char *given = http_param(io, "HTTP_X_REQUEST_ID");
	if (request_id_sane(given))
		snprintf(rq.id, sizeof rq.id, "%s", given);
	else
		random_hex(rq.id, 16);
	snprintf(rq.io.always, sizeof rq.io.always, "X-Request-Id: %s\r\n", rq.id);
	auth_cors(w, &rq);
	if (routed(w, &rq) && admin_admit(w, &rq))
		rq.route->handler(w, &rq);
	admin_done(w, &rq, started_ms);
	admin_log_request(w, &rq, started_ms);
	w->served++;
	request_free(&rq);
}
