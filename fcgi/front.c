/*
 * front.c: POST /execute on a front host in queue mode (front.h). The
 * request, checked here as it would be for a run here, goes on the queue;
 * a runner takes it and writes what happens to the job's events, which
 * this worker reads as they come (a blocking read of one second at a
 * time) and turns into the answer: the same JSON, or the same stream of
 * Server-Sent Events, as a run here would give.
 *
 * A job runs at least once: when its runner dies, another runs it again
 * from the start. A stream that had begun says so with a "restart" event
 * and goes on with the new run's output.
 */
#define _GNU_SOURCE
#include "front.h"
#include "errors.h"
#include "request.h"
#include "respond.h"
#include "scoreboard.h"
#include "sse.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <string.h>

#define READ_MS 1000

struct follow {
	struct worker *w;
	struct request *rq;
	int64_t bound_ms;       /* how long a run may take, once begun */
	int64_t end_by;         /* the current run's end at the latest */
	bool stream;            /* SSE, else one JSON answer */
	bool started;           /* a runner has begun it (and a stream's headers went out) */
	char attempt[128];      /* the run whose output counts */
	struct sse_carry carry[3];
	bool done;
};

static void on_started(struct follow *fl, const struct queue_event *e)
{
	struct buf b = {0};
	bool head = false;
	if (fl->started && strcmp(fl->attempt, e->attempt) && fl->stream) {
		/* Its runner stopped; another runs it again from the start. */
		sse_event(&b, "restart", "{\"reason\": \"the runner stopped; the program runs again on another\"}");
		fl->carry[1] = fl->carry[2] = (struct sse_carry){0};
	} else if (!fl->started && fl->stream) {
		http_send_head(&fl->rq->io, 200, SSE_HEADERS);
		head = true;
	}
	if (strcmp(fl->attempt, e->attempt)) {
		/* A run begins (again): it has its whole bound from now. */
		fl->end_by = now_ms() + fl->bound_ms;
		scoreboard_busy(fl->w->board, fl->w->slot, fl->end_by + fl->w->conf.pool.hang_margin_ms);
	}
	snprintf(fl->attempt, sizeof fl->attempt, "%s", e->attempt);
	fl->started = true;
	if ((b.len || head) && !http_send_piece(&fl->rq->io, &b)) /* the head too: flushed */
		fl->rq->result.client_gone = true;
}

/* The job's end: its result, or why it failed. */
static void on_end(struct follow *fl, const struct queue_event *e)
{
	struct request *rq = fl->rq;
	fl->done = true;
	bool failed = !strcmp(e->type, "error");
	if (failed) {
		/* {"error": {"code", "message"}}, as fault_to_json wrote it */
		cJSON *o = cJSON_ParseWithLength(e->data.data, e->data.len);
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");
		fail(&rq->fault, cJSON_IsString(code) ? error_code(code->valuestring) : E_INTERNAL, "%s",
		     cJSON_IsString(msg) ? msg->valuestring : "the runner failed");
		cJSON_Delete(o);
	}
	if (!fl->stream || !rq->io.status) {
		if (failed) {
			respond_fault(rq, "");
			return;
		}
		http_send_bytes(&rq->io, 200, "application/json", "", e->data.data, e->data.len, false);
		return;
	}
	struct buf b = {0};
	sse_output(&b, &fl->carry[1], "stdout", "", 0, true);
	sse_output(&b, &fl->carry[2], "stderr", "", 0, true);
	autofree char *data = xstrndup(e->data.data, e->data.len);
	sse_event(&b, failed ? "error" : "result", data);
	http_send_last(&fl->rq->io, &b);
}

static void on_event(struct follow *fl, const struct queue_event *e)
{
	if (!strcmp(e->type, "started")) {
		on_started(fl, e);
		return;
	}
	/* Only the current run's end counts: a run whose runner lost the
	 * job may still finish. (An error before any run began, a job the
	 * runner refused, counts.) */
	if (!strcmp(e->type, "result") || !strcmp(e->type, "error")) {
		if (!fl->started || !strcmp(fl->attempt, e->attempt))
			on_end(fl, e);
		return;
	}
	/* Output of a run that stopped, after another began: not ours. */
	if (!fl->stream || !fl->started || strcmp(fl->attempt, e->attempt))
		return;
	struct buf b = {0};
	if (!strcmp(e->type, "compile")) {
		autofree char *data = xstrndup(e->data.data, e->data.len);
		sse_event(&b, "compile", data);
	} else {
		int fd = !strcmp(e->type, "stdout") ? 1 : 2;
		sse_output(&b, &fl->carry[fd], e->type, e->data.data, e->data.len, false);
	}
	if (b.len && !http_send_piece(&fl->rq->io, &b))
		fl->rq->result.client_gone = true;
}

void front_execute(struct worker *w, struct request *rq)
{
	const struct conf_queue *q = &w->conf.queue;
	struct follow fl = {.w = w, .rq = rq, .stream = !request_is_piston(rq) &&
				strstr(http_param(&rq->io, "HTTP_ACCEPT"), "text/event-stream")};
	if (rq->volume_name[0]) {
		fail(&rq->fault, E_INVALID_REQUEST, "a run in queue mode cannot mount a volume (volumes live "
		     "on one host): send it to a host that runs programs itself");
		respond_fault(rq, "");
		return;
	}
	char job_id[QUEUE_JOB_ID_LEN + 1];
	random_hex(job_id, QUEUE_JOB_ID_LEN / 2);
	struct store *s = worker_store(w, &rq->fault);
	if (!s || !queue_push(s, job_id, rq->tenant, request_is_piston(rq), rq->body.data, rq->body.len,
			      q->max_length, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	/* A runner has wait_ms to begin it; then it has as long as a run here. */
	int64_t start_by = now_ms() + q->wait_ms;
	fl.bound_ms = sandbox_bound_ms(&w->conf, &rq->job.limits);
	fl.end_by = start_by + fl.bound_ms;
	scoreboard_busy(w->board, w->slot, fl.end_by + w->conf.pool.hang_margin_ms);
	char last[48] = "0";
	int64_t heard = now_ms();
	while (!fl.done) {
		struct queue_event *ev;
		size_t n;
		if (!queue_events(s, job_id, last, READ_MS, &ev, &n, &rq->fault)) {
			queue_cancel(s, job_id); /* nobody will follow it: best effort */
			break; /* the store failed: 503 (or the stream ends) */
		}
		for (size_t i = 0; i < n && !fl.done; i++)
			on_event(&fl, &ev[i]);
		queue_events_free(ev, n);
		if (fl.done)
			break;
		if (n)
			heard = now_ms();
		if (rq->result.client_gone || fd_hung_up(http_hangup_fd(&rq->io))) {
			queue_cancel(s, job_id);
			queue_withdraw(s, job_id);
			rq->result.client_gone = true;
			return;
		}
		/* Not begun in time, and still in the queue (no runner has it:
		 * one that has it is starting it, and is waited for). */
		if (!fl.started && now_ms() > start_by && queue_withdraw(s, job_id)) {
			fail(&rq->fault, E_BUSY, "no runner began this job within %lld ms (queue.waitMs): "
			     "retry shortly", (long long)q->wait_ms);
			break;
		}
		if (now_ms() > fl.end_by) {
			queue_cancel(s, job_id);
			fail(&rq->fault, E_SANDBOX_FAILED, "the job's runner went silent");
			break;
		}
		if (fl.stream && fl.started && now_ms() - heard >= READ_MS) {
			if (!http_send_text(&rq->io, SSE_KEEPALIVE))
				rq->result.client_gone = true;
		}
	}
	if (fl.done)
		return;
	if (!rq->io.status) {
		respond_fault(rq, "");
		return;
	}
	struct buf b = {0};
	cJSON *o = fault_to_json(&rq->fault);
	char *json = cJSON_PrintUnformatted(o);
	sse_event(&b, "error", json);
	free(json);
	cJSON_Delete(o);
	http_send_last(&rq->io, &b);
}
