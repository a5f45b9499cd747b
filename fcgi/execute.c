/* execute.c: the pipeline that runs a program for a request (execute.h). */
#define _GNU_SOURCE
#include "execute.h"
#include "front.h"
#include "admin.h"
#include "errors.h"
#include "piston.h"
#include "request.h"
#include "result.h"
#include "respond.h"
#include "job.h"
#include "stream.h"
#include "volumes.h"

#include <stdio.h>
#include <string.h>

/*
 * The body, as an isobox request. JSON only, on both routes: a browser
 * sends text/plain, forms and multipart cross-site without asking first
 * (no CORS preflight), so accepting them would let any web page run code
 * here. Real Piston refuses them too (415). The operator may let the
 * Piston route read text/plain as JSON, for the npm piston-client, which
 * sends that (conf piston.acceptTextPlain, and the risk it says).
 */
static bool read_request(struct worker *w, struct request *rq)
{
	bool piston = request_is_piston(rq);
	bool text_ok = piston && w->conf.piston.accept_text_plain && http_is_type(&rq->io, "text/plain");
	if (!http_is_json(&rq->io) && !text_ok)
		return fail(&rq->fault, E_UNSUPPORTED_MEDIA_TYPE,
			    piston ? "requests must be of type application/json"
				   : "send the request as Content-Type: application/json");
	if (!http_read_body(&rq->io, (size_t)w->conf.request.max_body_bytes, &rq->body, &rq->fault))
		return false;
	if (piston) {
		struct buf body = {0};
		if (!piston_translate(&rq->body, &w->reg, (size_t)w->conf.request.max_json_values, &body,
				      &rq->fault)) {
			buf_free(&body);
			return false;
		}
		buf_free(&rq->body);
		rq->body = body;
	}
	return request_parse_execute(rq, &w->conf, &w->reg);
}

void execute_answer(struct worker *w, struct request *rq)
{
	admin_job_accepted(w, rq);
	if (w->conf.queue.role == QUEUE_FRONT && !rq->in_session) {
		front_execute(w, rq); /* run by a runner host, through the queue */
		return;
	}
	if (!request_is_piston(rq) && strstr(http_param(&rq->io, "HTTP_ACCEPT"), "text/event-stream")) {
		stream_execute(w, rq);
		if (rq->fault.code) {
			log_msg("execute failed: %s: %s", error_info(rq->fault.code)->name, rq->fault.message);
			return;
		}
	} else {
		struct sandbox_sink watch = {.hangup_fd = http_hangup_fd(&rq->io)};
		if (!job_run(w, rq, &watch)) {
			if (error_info(rq->fault.code)->server_side)
				log_msg("execute failed: %s: %s", error_info(rq->fault.code)->name,
					rq->fault.message);
			respond_fault(rq, "");
			return;
		}
		cJSON *result = job_result_json(rq);
		http_send_json(&rq->io, 200, "", result);
		cJSON_Delete(result);
	}
	/* Its line in the log, with how it ended: admin_log_request. */
}

void execute_handler(struct worker *w, struct request *rq)
{
	if (read_request(w, rq) && volumes_take(w, rq, NULL))
		execute_answer(w, rq);
	else
		respond_fault(rq, "");
}
