/* routes.c: the endpoints. */
#define _GNU_SOURCE
#include "worker.h"
#include "request.h"
#include "result.h"
#include "assets.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static void method_not_allowed(struct request *rq, const char *allow)
{
	char headers[64];
	snprintf(headers, sizeof headers, "Allow: %s\r\n", allow);
	fail(&rq->fault, 405, "method_not_allowed", "%s %s is not allowed; use %s",
	     rq->method, rq->path, allow);
	http_send_fault(&rq->io, &rq->fault, headers);
}

static bool is_json(const char *content_type)
{
	size_t n = strcspn(content_type, ";");
	while (n > 0 && content_type[n - 1] == ' ')
		n--;
	return n == 16 && !strncasecmp(content_type, "application/json", 16);
}

static void execute(struct worker *w, struct request *rq)
{
	if (!is_json(http_param(&rq->io, "CONTENT_TYPE"))) {
		fail(&rq->fault, 415, "unsupported_media_type",
		     "send the request as Content-Type: application/json");
		goto error;
	}
	if (!http_read_body(&rq->io, (size_t)w->conf.request.max_body_bytes, &rq->body, &rq->fault) ||
	    !request_parse_execute(rq, &w->conf, &w->reg))
		goto error;
	admin_job_accepted(w, rq);
	if (strstr(http_param(&rq->io, "HTTP_ACCEPT"), "text/event-stream")) {
		stream_execute(w, rq);
	} else {
		struct sandbox_sink watch = {.hangup_fd = http_hangup_fd(&rq->io)};
		if (!sandbox_run(&w->conf, &rq->job, &watch, &rq->result, &rq->fault))
			goto error;
		cJSON *result = result_to_json(rq->lang, &rq->result, &rq->job.limits);
		http_send_json(&rq->io, 200, "", result);
		cJSON_Delete(result);
	}
	if (rq->fault.code) {
		log_msg("execute failed: %s: %s", rq->fault.code, rq->fault.message);
		return;
	}
	const struct sandbox_result *res = &rq->result;
	const struct sandbox_phase *last = res->has_run ? &res->run : &res->compile;
	log_msg("execute %s: %s exit %d%s%s%s%s %lldms", rq->lang->name,
		res->has_run ? "run" : "compile", last->exit_code,
		last->timed_out ? " timed-out" : "", last->oom_killed ? " oom" : "",
		last->truncated ? " truncated" : "", res->client_gone ? " client-gone" : "",
		(long long)last->duration_ms);
	return;
error:
	if (rq->fault.status >= 500)
		log_msg("execute failed: %s: %s", rq->fault.code, rq->fault.message);
	http_send_fault(&rq->io, &rq->fault, "");
}

static void runtimes(struct worker *w, struct request *rq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "backend", "gvisor");
	cJSON *list = cJSON_AddArrayToObject(o, "runtimes");
	for (size_t i = 0; i < w->reg.n; i++) {
		const struct language *l = &w->reg.langs[i];
		cJSON *r = language_to_json(l);
		cJSON_AddBoolToObject(r, "available", l->image_id != NULL);
		cJSON_AddItemToObject(r, "limits", limits_to_json(&l->defaults));
		cJSON_AddItemToArray(list, r);
	}
	cJSON_AddItemToObject(o, "ceilings", limits_to_json(&w->conf.ceilings));
	cJSON_AddItemToObject(o, "network", network_to_json(&w->conf));
	http_send_json(&rq->io, 200, "", o);
	cJSON_Delete(o);
}

static void healthz(struct worker *w, struct request *rq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", "ok");
	cJSON_AddNumberToObject(o, "pid", getpid());
	cJSON_AddNumberToObject(o, "served", (double)w->served);
	cJSON_AddNumberToObject(o, "uptimeMs", (double)(now_ms() - w->started_ms));
	cJSON_AddNumberToObject(o, "languages", (double)w->reg.n);
	if (w->reload_error[0])
		cJSON_AddStringToObject(o, "reloadError", w->reload_error);
	http_send_json(&rq->io, 200, "", o);
	cJSON_Delete(o);
}

static const struct route {
	const char *path, *method;
	void (*handler)(struct worker *, struct request *);
} routes[] = {
	{"/execute", "POST", execute},
	{"/runtimes", "GET", runtimes},
	{"/healthz", "GET", healthz},
	{"/api/v2/execute", "POST", piston_execute},
	{"/api/v2/runtimes", "GET", piston_runtimes},
	{"/metrics", "GET", admin_metrics},
	{"/", "GET", asset_serve},
	{"/openapi.yaml", "GET", asset_serve},
	{"/llms.txt", "GET", asset_serve},
};

void route_request(struct worker *w, struct http_io *io)
{
	struct request rq = {.io = *io};
	int64_t started_ms = now_ms();
	rq.method = http_param(io, "REQUEST_METHOD");
	rq.path = request_route(http_param(io, "PATH_INFO"), http_param(io, "REQUEST_URI"));
	size_t i;
	for (i = 0; i < sizeof routes / sizeof routes[0]; i++)
		if (!strcmp(rq.path, routes[i].path))
			break;
	if (i == sizeof routes / sizeof routes[0]) {
		fail(&rq.fault, 404, "not_found", "no such endpoint: %.100s", rq.path);
		http_send_fault(&rq.io, &rq.fault, "");
	} else if (!strcmp(rq.method, routes[i].method) ||
		   (!strcmp(rq.method, "HEAD") && !strcmp(routes[i].method, "GET"))) {
		if (admin_admit(w, &rq))
			routes[i].handler(w, &rq);
	} else {
		method_not_allowed(&rq, routes[i].method);
	}
	admin_done(w, &rq, i < sizeof routes / sizeof routes[0], started_ms);
	w->served++;
	request_free(&rq);
}
