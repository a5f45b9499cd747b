/*
 * stream.c: POST /execute with Accept: text/event-stream.
 *
 * Headers go out only when the program has started, so that every error
 * found before that (bad request, image missing, docker down) is still an
 * ordinary JSON error response. From then on each chunk of output is an
 * event, flushed at once; a comment is written during silent stretches. A
 * failed write, or a hangup on the connection, means the client left: the
 * sandbox is killed at once.
 */
#include "stream.h"
#include "job.h"
#include "request.h"
#include "result.h"
#include "respond.h"
#include "sse.h"

#define HEARTBEAT_MS 1000

struct stream {
	struct request *rq;
	struct sse_carry carry[3]; /* [1] stdout, [2] stderr */
};

static void on_started(void *ctx)
{
	struct stream *st = ctx;
	struct buf b = {0};
	http_send_head(&st->rq->io, 200, SSE_HEADERS);
	http_send_piece(&st->rq->io, &b); /* flushed */
}

static bool on_output(void *ctx, int fd, const char *p, size_t n)
{
	struct stream *st = ctx;
	struct buf b = {0};
	sse_output(&b, &st->carry[fd], fd == 1 ? "stdout" : "stderr", p, n, false);
	return b.len == 0 ? !st->rq->io.failed : http_send_piece(&st->rq->io, &b);
}

/* One event whose data is o (freed), flushed at once. */
static void send_json_event(struct stream *st, const char *name, cJSON *o)
{
	struct buf b = {0};
	char *json = cJSON_PrintUnformatted(o);
	sse_event(&b, name, json);
	free(json);
	cJSON_Delete(o);
	if (!http_send_piece(&st->rq->io, &b))
		st->rq->result.client_gone = true;
}

/* The compile step's output arrives whole when it ends: one event. */
static void on_compiled(void *ctx, const struct sandbox_phase *compile)
{
	send_json_event(ctx, "compile", phase_to_json(compile));
}

/* A kernel cell's display, as it happens (the result has them all too). */
static void on_display(void *ctx, const char *json, size_t len)
{
	cJSON *o = job_display_json(json, len);
	if (o)
		send_json_event(ctx, "display", o);
}

static bool on_idle(void *ctx)
{
	struct stream *st = ctx;
	return http_send_text(&st->rq->io, SSE_KEEPALIVE);
}

void stream_execute(struct worker *w, struct request *rq)
{
	struct stream st = {.rq = rq};
	struct sandbox_sink sink = {.started = on_started, .compiled = on_compiled,
				    .output = on_output, .idle = on_idle, .display = on_display,
				    .idle_ms = HEARTBEAT_MS, .ctx = &st,
				    .hangup_fd = http_hangup_fd(&rq->io)};
	bool ok = job_run(w, rq, &sink);
	if (!rq->io.status) {
		respond_fault(rq, "");
		return;
	}
	struct buf b = {0};
	sse_output(&b, &st.carry[1], "stdout", "", 0, true);
	sse_output(&b, &st.carry[2], "stderr", "", 0, true);
	cJSON *body = ok ? job_result_json(rq) : fault_to_json(&rq->fault);
	char *json = cJSON_PrintUnformatted(body);
	sse_event(&b, ok ? "result" : "error", json);
	free(json);
	cJSON_Delete(body);
	http_send_last(&rq->io, &b);
}
