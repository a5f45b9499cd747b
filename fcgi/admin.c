/*
 * admin.c: the pool's own concerns around each request (admin.h): who may
 * call the status endpoints, the whenBusy gate, counting, the hang
 * backstop's deadline, and GET /healthz and GET /metrics.
 */
#define _GNU_SOURCE
#include "admin.h"
#include "../conf/store/store.h"
#include "auth.h"
#include "errors.h"
#include "metrics.h"
#include "result.h"
#include "queue.h"
#include "reqlog.h"
#include "request.h"
#include "respond.h"
#include "scoreboard.h"
#include "volumes.h"

#include <stdio.h>
#include <string.h>

static const struct cidr_list *acl_of(const struct worker *w, enum route_acl acl)
{
	switch (acl) {
	case ACL_METRICS:
		return &w->conf.access.metrics;
	case ACL_HEALTHZ:
		return &w->conf.access.healthz;
	case ACL_ANYONE:
	case ACL_TENANT: /* auth.c */
		break;
	}
	return NULL;
}

bool admin_admit(struct worker *w, struct request *rq)
{
	const struct route *r = rq->route;
	const struct cidr_list *acl = acl_of(w, r->acl);
	if (acl && !cidr_list_allows(acl, http_param(&rq->io, "REMOTE_ADDR"))) {
		fail(&rq->fault, E_FORBIDDEN, "%s is not open to this address (access: in isobox.yaml)",
		     rq->path);
		respond_fault(rq, "");
		return false;
	}
	/* The status socket's worker answers the status routes only: it must
	 * never be the one that runs a program (or waits for one). */
	if (w->status_only && !(r->flags & ROUTE_STATUS)) {
		fail(&rq->fault, E_NOT_FOUND, "%s is not served on the status socket", rq->path);
		respond_fault(rq, "");
		return false;
	}
	if (r->acl == ACL_TENANT && !auth_admit(w, rq))
		return false;
	if (r->guard && !r->guard(w, rq))
		return false;
	if ((r->flags & ROUTE_RUNS_PROGRAM) && !admin_claim_run(w, rq)) {
		respond_fault(rq, "");
		return false;
	}
	return true;
}

bool admin_claim_run(struct worker *w, struct request *rq)
{
	/* The tenant's share first: a tenant at its own limit hears so (429),
	 * whether or not the pool is full. */
	if (!auth_claim_execution(w, rq))
		return false;
	if (!scoreboard_claim_execution(w->board, w->slot, w->busy_limit))
		return fail(&rq->fault, E_BUSY, "all %d workers are running programs; retry shortly",
			    w->busy_limit);
	return true;
}

/* The status of a request's failure by its code (errors.c), else 200. */
static int status_of(const struct request *rq)
{
	return rq->fault.code ? error_status(rq->fault.code, request_is_piston(rq)) : 200;
}

/* The status the client got (a stream that failed later got 200); its
 * code's own when nothing was sent (the client left). */
static int status_sent(const struct request *rq)
{
	return rq->io.status ? rq->io.status : status_of(rq);
}

void admin_release(struct worker *w, struct request *rq)
{
	if (rq->released)
		return;
	rq->released = true;
	scoreboard_release_execution(w->board, w->slot);
	auth_release(w, rq);
	volumes_release(w, rq);
	/* A step that ended its session, or found it ended (its sandbox gone):
	 * its place in the tenant's share, and its volume, are free at once. */
	if (rq->in_session && (rq->result.session_ended || rq->fault.code == E_SESSION_EXPIRED)) {
		struct fault ignored;
		struct store *s = w->conf.store.backend != STORE_NONE ? worker_store(w, &ignored) : NULL;
		if (s)
			store_session_release(s, rq->session.id);
	}
}

/* Count the request, once, as answered with `status`. */
static void count(struct worker *w, struct request *rq, int status, int64_t started_ms)
{
	struct metrics *m = w->metrics;
	if (rq->counted)
		return;
	rq->counted = true;
	const struct error_info *e = rq->fault.code ? error_info(rq->fault.code) : NULL;
	char st[16], sent[16];
	snprintf(st, sizeof st, "%d", status_of(rq));
	snprintf(sent, sizeof sent, "%d", status);
	metrics_count(m, M_HTTP_REQUESTS, rq->route ? rq->route->path : "other", sent);
	char tenant[64] = "";
	if (rq->tenant[0]) {
		metrics_tenant_label(m, rq->tenant, w->conf.pool.metrics_tenants, tenant);
		metrics_count(m, M_TENANT_REQUESTS, tenant, sent);
	}
	if (e) {
		metrics_count(m, e->server_side ? M_SANDBOX_FAILURES : M_REJECTED, e->name, st);
	} else if (rq->in_session && (rq->result.has_run || rq->result.has_compile)) {
		const char *type = rq->session.type == SESSION_KERNEL ? "kernel" : "shell";
		metrics_count(m, M_SESSION_STEPS, type, metrics_outcome(&rq->result));
		metrics_add(m, M_SESSION_STEP_MS, type, NULL, (uint64_t)(now_ms() - started_ms));
		if (rq->result.session_ended)
			metrics_count(m, M_SESSIONS_ENDED, "died", NULL);
	} else if (rq->lang && (rq->result.has_run || rq->result.has_compile)) {
		metrics_count(m, M_EXECUTIONS, rq->lang->id, metrics_outcome(&rq->result));
		if (rq->result.warm)
			metrics_count(m, M_WARM_HITS, rq->lang->id, NULL);
		else if (rq->result.warm_miss)
			metrics_count(m, M_WARM_MISSES, rq->lang->id, rq->result.warm_miss);
		metrics_observe_ms(m, rq->lang->id, now_ms() - started_ms);
	}
	if (tenant[0] && (rq->result.has_run || rq->result.has_compile))
		metrics_add(m, M_TENANT_RUN_MS, tenant, NULL, (uint64_t)(now_ms() - started_ms));
}

void admin_answered(struct worker *w, struct request *rq, int status, int64_t started_ms)
{
	admin_release(w, rq);
	count(w, rq, status, started_ms);
}

void admin_done(struct worker *w, struct request *rq, int64_t started_ms)
{
	/* If no answer did (one never sent, or a head of ours). */
	admin_release(w, rq);
	count(w, rq, status_sent(rq), started_ms);
}

void admin_log_request(const struct worker *w, const struct request *rq, int64_t started_ms)
{
	struct reqlog l;
	char method[17];
	snprintf(method, sizeof method, "%s", rq->method); /* the server's word, bounded */
	reqlog_begin(&l, w->conf.pool.request_log_json, "request");
	reqlog_str(&l, "id", rq->id);
	reqlog_str(&l, "method", method);
	reqlog_str(&l, "route", rq->route ? rq->route->path : "none");
	reqlog_int(&l, "status", status_sent(rq));
	reqlog_int(&l, "ms", now_ms() - started_ms);
	reqlog_str(&l, "client", http_param(&rq->io, "REMOTE_ADDR"));
	reqlog_str(&l, "tenant", rq->tenant);
	if (rq->lang) {
		reqlog_str(&l, "language", rq->lang->name);
		reqlog_str(&l, "version", rq->lang->full_version); /* as the result says it */
	}
	if (rq->in_session)
		reqlog_str(&l, "session", rq->session.id);
	const struct sandbox_result *res = &rq->result;
	if (res->has_run || res->has_compile) {
		const struct sandbox_phase *last = res->has_run ? &res->run : &res->compile;
		reqlog_str(&l, "sandbox", rq->in_session ? "session" : res->warm ? "warm" : "cold");
		reqlog_str(&l, "phase", res->has_run ? "run" : "compile");
		reqlog_int(&l, "exit", last->exit_code);
		if (last->signal)
			reqlog_int(&l, "signal", last->signal);
		reqlog_flag(&l, "timed_out", last->timed_out);
		reqlog_flag(&l, "oom", last->oom_killed);
		reqlog_flag(&l, "truncated", last->truncated);
		/* What the sandbox used, as the host counted it (a run's mark holds its compile's). */
		int64_t cpu_ns = (res->has_compile ? res->compile.cpu_ns : 0) + (res->has_run ? res->run.cpu_ns : 0);
		if (last->cpu_ns >= 0 && (!res->has_compile || res->compile.cpu_ns >= 0))
			reqlog_int(&l, "cpu_ms", (cpu_ns + 500000) / 1000000);
		if (last->peak_bytes >= 0)
			reqlog_int(&l, "peak_bytes", last->peak_bytes);
	}
	reqlog_flag(&l, "client_gone", res->client_gone);
	if (rq->fault.code)
		reqlog_str(&l, "error", error_info(rq->fault.code)->name);
	reqlog_int(&l, "bytes_in", (long long)rq->body.len);
	reqlog_int(&l, "bytes_out", (long long)rq->io.sent_bytes);
	char *line = reqlog_end(&l);
	log_msg("%s", line);
	free(line);
}

/* The sandbox's own bound for the longest thing any request may ask of
 * it: a run at the ceilings, or another call (a volume, a file). */
int64_t admin_hang_bound_ms(const struct worker *w)
{
	struct limits most = w->conf.ceilings;
	most.compile_time_ms = 0;
	if (w->conf.sessions.dir && w->conf.sessions.max_step_ms > most.wall_time_ms)
		most.wall_time_ms = w->conf.sessions.max_step_ms; /* a session's step */
	for (size_t i = 0; i < w->reg.n; i++)
		if (w->reg.langs[i].defaults.compile_time_ms > most.compile_time_ms)
			most.compile_time_ms = w->reg.langs[i].defaults.compile_time_ms;
	int64_t run = sandbox_bound_ms(&w->conf, &most), call = sandbox_call_bound_ms(&w->conf);
	return (run > call ? run : call) + w->conf.pool.hang_margin_ms;
}

void admin_job_accepted(struct worker *w, const struct request *rq)
{
	scoreboard_busy(w->board, w->slot,
			now_ms() + sandbox_bound_ms(&w->conf, &rq->job.limits) + w->conf.pool.hang_margin_ms);
}

/* The store's part of a scrape: a few round trips, on the status worker. */
static void render_store(struct worker *w, struct buf *out)
{
	struct fault f = {0};
	struct store *s = worker_store(w, &f);
	struct metrics_store ms = {.backend = store_backend_name(&w->conf.store),
				   .queue = w->conf.queue.role != QUEUE_OFF};
	ms.up = s && store_hosts_alive(s, &ms.hosts, &f) &&
		(!ms.queue || queue_stats(s, &ms.jobs, &ms.pending, &f));
	metrics_render_store(&ms, out);
	strv_free(&ms.hosts);
}

void admin_metrics(struct worker *w, struct request *rq)
{
	if (!w->metrics) {
		/* A CGI process lives for one request: it has no pool to report on. */
		if (w->pooled)
			fail(&rq->fault, E_METRICS_UNAVAILABLE,
			     "the pool could not map its metrics at start (see the log)");
		else
			fail(&rq->fault, E_NOT_FOUND,
			     "/metrics is served by the FastCGI pool, not by a CGI process");
		respond_fault(rq, "");
		return;
	}
	struct buf out = {0};
	http_send_head(&rq->io, 200, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
				     "Cache-Control: no-store\r\n");
	if (strcmp(rq->method, "HEAD")) {
		metrics_render_build_info(ISOBOX_VERSION, conf_backend_name(&w->conf), w->runtime.program,
					  w->runtime.version, &out);
		metrics_render(w->metrics, w->board, w->exec_slots, w->warm,
			       w->conf.sessions.dir ? session_count(&w->conf) : -1, &out);
	}
	if (strcmp(rq->method, "HEAD") && w->conf.store.backend != STORE_NONE)
		render_store(w, &out);
	http_write(&rq->io, out.data, out.len);
	buf_free(&out);
}
