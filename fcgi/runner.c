/*
 * runner.c: a worker of a runner host in queue mode (runner.h). Instead of
 * accepting FastCGI requests it takes jobs from the queue, runs each as a
 * POST /execute would run here, and writes what happens to the job's
 * events, which the front that queued it turns into the answer.
 *
 * A job is parsed and checked again here (the front checked it too): the
 * runner trusts nothing it reads from Redis more than a request.
 */
#define _GNU_SOURCE
#include "runner.h"
#include "admin.h"
#include "errors.h"
#include "job.h"
#include "request.h"
#include "respond.h"
#include "result.h"
#include "scoreboard.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A runner shows life at least this often while it runs a job. */
#define TOUCH_EVERY_MS 1000

struct run {
	struct worker *w;
	struct store *s;
	const struct queue_job *job;
	const char *consumer;
	char attempt[128];
	int64_t touched_ms;
	bool lost;              /* another runner has taken the job */
	bool cancelled;         /* lost, or its front gave up: stop */
};

static void emit(struct run *r, const char *type, const void *data, size_t len)
{
	queue_emit(r->s, r->job->job_id, r->attempt, type, data, len);
}

/* o as text (NULL for none); o is freed. */
static char *text_of(cJSON *o)
{
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return text;
}

/* The run's end and the job's removal, while the job is still ours. */
static bool finish(struct run *r, const char *type, cJSON *o)
{
	char *text = text_of(o);
	bool ours = queue_finish(r->s, r->job, r->consumer, r->attempt, type, text, text ? strlen(text) : 0);
	free(text);
	return ours;
}

/* Keep the job (its idle time restarts), and hear if its front gave up. */
static bool alive(struct run *r)
{
	int64_t now = now_ms();
	if (now - r->touched_ms >= TOUCH_EVERY_MS) {
		r->touched_ms = now;
		r->lost = !queue_touch(r->s, r->job->entry, r->consumer);
		r->cancelled = r->lost || queue_cancelled(r->s, r->job->job_id);
	}
	return !r->cancelled;
}

static void on_started(void *ctx)
{
	emit(ctx, "started", "", 0);
}

static void on_compiled(void *ctx, const struct sandbox_phase *compile)
{
	char *text = text_of(phase_to_json(compile));
	emit(ctx, "compile", text, strlen(text));
	free(text);
}

static bool on_output(void *ctx, int fd, const char *p, size_t n)
{
	emit(ctx, fd == 1 ? "stdout" : "stderr", p, n);
	return alive(ctx);
}

static bool on_idle(void *ctx)
{
	return alive(ctx);
}

static void run_job(struct worker *w, struct store *s, const struct queue_job *job, const char *consumer)
{
	struct run r = {.w = w, .s = s, .job = job, .consumer = consumer, .touched_ms = now_ms()};
	snprintf(r.attempt, sizeof r.attempt, "%.96s/%lld", consumer, (long long)(now_ms() % 1000000000));
	/* The route only says which shape the answer takes. */
	static const struct route piston = {.path = "/api/v2/execute", .method = "POST", .flags = ROUTE_PISTON};
	struct request rq = {.route = job->piston ? &piston : NULL};
	snprintf(rq.tenant, sizeof rq.tenant, "%s", job->tenant);
	rq.share = tenants_limits(&w->conf.tenants, rq.tenant);
	buf_append(&rq.body, job->body.data, job->body.len);
	struct sandbox_sink sink = {.started = on_started, .compiled = on_compiled, .output = on_output,
				    .idle = on_idle, .idle_ms = TOUCH_EVERY_MS, .ctx = &r, .hangup_fd = -1};
	/* Any job's bound until this one is parsed (a compile included). */
	scoreboard_busy(w->board, w->slot, now_ms() + admin_hang_bound_ms(w));
	/* A job queued longer ago than any front waits for it (a job that
	 * kills its runners, re-taken again and again): nobody is there. */
	int64_t queued_ms = strtoll(job->entry, NULL, 10);
	int64_t too_old = w->conf.queue.wait_ms + 3 * admin_hang_bound_ms(w);
	bool ok = (wall_ms() - queued_ms < too_old ||
		   fail(&rq.fault, E_SANDBOX_FAILED, "the job waited too long: it was queued %lld s ago",
			(long long)(wall_ms() - queued_ms) / 1000)) &&
		  !queue_cancelled(s, job->job_id) && request_parse_execute(&rq, &w->conf, &w->reg) &&
		  (!rq.volume_name[0] || fail(&rq.fault, E_INVALID_REQUEST, "a run in queue mode cannot "
					      "mount a volume (volumes live on one host)")) &&
		  job_run(w, &rq, &sink);
	/* A run cut short because the job was lost has no end worth telling:
	 * the run that replaced it answers. */
	bool ours = !r.lost && (ok ? finish(&r, "result", job_result_json(&rq)) :
				rq.fault.code ? finish(&r, "error", fault_to_json(&rq.fault)) : finish(&r, NULL, NULL));
	log_msg("queue job %s%s: %s %s", job->job_id, job->again ? " (again)" : "", rq.lang ? rq.lang->id : "-",
		!ours ? "lost (another runner has it, or the store is away)" : ok ? "done" : rq.fault.code ? error_info(rq.fault.code)->name :
		"cancelled");
	sandbox_settle();
	scoreboard_busy(w->board, w->slot, 0);
	w->served++;
	request_free(&rq);
}

int runner_serve(struct worker *w)
{
	char consumer[96];
	snprintf(consumer, sizeof consumer, "%s-%d", w->conf.instance, (int)getpid());
	log_msg("runner %s taking jobs", consumer);
	char cursor[48] = "";
	while (!sandbox_stop_requested) {
		struct fault f = {0};
		struct store *s = worker_store(w, &f);
		struct queue_job job;
		bool got = false;
		if (!s || !queue_take(s, consumer, w->conf.queue.claim_after_ms, 1000, cursor, &job, &got, &f)) {
			sleep(1); /* Redis away: logged by the store; try again */
			continue;
		}
		if (!got)
			continue;
		run_job(w, s, &job, consumer);
		queue_job_free(&job);
	}
	return 0;
}
