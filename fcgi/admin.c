/*
 * admin.c: the pool's own concerns around each request: who may read
 * /metrics and /healthz, the whenBusy gate in front of executions, counting
 * every request into the pool's shared metrics, and GET /metrics itself.
 */
#define _GNU_SOURCE
#include "worker.h"
#include "request.h"
#include "metrics.h"

#include <stdio.h>
#include <string.h>

static bool runs_program(const char *path)
{
	return !strcmp(path, "/execute") || !strcmp(path, "/api/v2/execute");
}

bool admin_admit(struct worker *w, struct request *rq)
{
	const struct cidr_list *acl = NULL;
	if (!strcmp(rq->path, "/metrics"))
		acl = &w->conf.access.metrics;
	else if (!strcmp(rq->path, "/healthz"))
		acl = &w->conf.access.healthz;
	if (acl && !cidr_list_allows(acl, http_param(&rq->io, "REMOTE_ADDR"))) {
		fail(&rq->fault, 403, "forbidden", "%s is not open to this address (access: in isobox.yaml)",
		     rq->path);
		http_send_fault(&rq->io, &rq->fault, "");
		return false;
	}
	if (runs_program(rq->path) && !metrics_claim_execution(w->metrics, w->slot, w->busy_limit)) {
		fail(&rq->fault, 503, "busy", "all %d workers are running programs; retry shortly",
		     w->busy_limit);
		/* Piston clients read {"message": ...}, as piston.c answers them. */
		cJSON *e = fault_to_json(&rq->fault);
		if (!strncmp(rq->path, "/api/v2/", 8))
			cJSON_AddStringToObject(e, "message", rq->fault.message);
		http_send_json(&rq->io, 503, "Retry-After: 1\r\n", e);
		cJSON_Delete(e);
		return false;
	}
	return true;
}

void admin_done(struct worker *w, struct request *rq, bool route_known, int64_t started_ms)
{
	struct metrics *m = w->metrics;
	metrics_release_execution(m, w->slot);
	int status = rq->fault.code ? rq->fault.status : 200;
	char st[16], sent[16];
	snprintf(st, sizeof st, "%d", status);
	/* Requests by the status the client got: a stream that failed later got 200. */
	snprintf(sent, sizeof sent, "%d", rq->status_sent ? rq->status_sent : status);
	metrics_count(m, M_HTTP_REQUESTS, route_known ? rq->path : "other", sent);
	if (rq->fault.code) {
		bool server_side = status >= 500 && strcmp(rq->fault.code, "busy");
		metrics_count(m, server_side ? M_SANDBOX_FAILURES : M_REJECTED, rq->fault.code, st);
	} else if (rq->lang && (rq->result.has_run || rq->result.has_compile)) {
		metrics_count(m, M_EXECUTIONS, rq->lang->name, metrics_outcome(&rq->result));
		metrics_observe_ms(m, rq->lang->name, now_ms() - started_ms);
	}
}

void admin_metrics(struct worker *w, struct request *rq)
{
	if (!w->metrics) {
		/* A CGI process lives for one request: it has no pool to report on. */
		if (w->pooled)
			fail(&rq->fault, 503, "metrics_unavailable",
			     "the pool could not map its metrics at start (see the log)");
		else
			fail(&rq->fault, 404, "not_found",
			     "/metrics is served by the FastCGI pool, not by a CGI process");
		http_send_fault(&rq->io, &rq->fault, "");
		return;
	}
	struct buf out = {0};
	buf_printf(&out, "Status: 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			 "Cache-Control: no-store\r\n\r\n");
	if (strcmp(rq->method, "HEAD"))
		metrics_render(w->metrics, w->exec_slots, &out);
	http_write(&rq->io, out.data, out.len);
	buf_free(&out);
}

/* The sandbox's own bound for the longest run any request may ask for. */
int64_t admin_hang_bound_ms(const struct worker *w)
{
	struct limits most = w->conf.ceilings;
	most.compile_time_ms = 0;
	for (size_t i = 0; i < w->reg.n; i++)
		if (w->reg.langs[i].defaults.compile_time_ms > most.compile_time_ms)
			most.compile_time_ms = w->reg.langs[i].defaults.compile_time_ms;
	return sandbox_bound_ms(&w->conf, &most) + w->conf.pool.hang_margin_ms;
}

void admin_job_accepted(struct worker *w, const struct request *rq)
{
	metrics_slot_busy(w->metrics, w->slot,
			  now_ms() + sandbox_bound_ms(&w->conf, &rq->job.limits) + w->conf.pool.hang_margin_ms);
}
