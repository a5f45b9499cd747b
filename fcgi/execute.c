/* execute.c: the pipeline that runs a program for a request (execute.h). */
#define _GNU_SOURCE
#include "execute.h"
#include "admin.h"
#include "errors.h"
#include "piston.h"
#include "request.h"
#include "result.h"
#include "respond.h"
#include "stream.h"

#include <string.h>
#include <strings.h>

static bool is_json(const char *content_type)
{
	size_t n = strcspn(content_type, ";");
	while (n > 0 && content_type[n - 1] == ' ')
		n--;
	return n == 16 && !strncasecmp(content_type, "application/json", 16);
}

/*
 * The body, as an isobox request. JSON only, on both routes: a browser
 * sends text/plain, forms and multipart cross-site without asking first
 * (no CORS preflight), so accepting them would let any web page run code
 * here. Real Piston refuses them too (415).
 */
static bool read_request(struct worker *w, struct request *rq)
{
	bool piston = request_is_piston(rq);
	if (!is_json(http_param(&rq->io, "CONTENT_TYPE")))
		return fail(&rq->fault, E_UNSUPPORTED_MEDIA_TYPE,
			    piston ? "requests must be of type application/json"
				   : "send the request as Content-Type: application/json");
	if (!http_read_body(&rq->io, (size_t)w->conf.request.max_body_bytes, &rq->body, &rq->fault))
		return false;
	if (piston) {
		struct buf body = {0};
		if (!piston_translate(&rq->body, (size_t)w->conf.request.max_json_values, &body,
				      &rq->fault)) {
			buf_free(&body);
			return false;
		}
		buf_free(&rq->body);
		rq->body = body;
	}
	return request_parse_execute(rq, &w->conf, &w->reg);
}

static void log_result(const struct request *rq)
{
	const struct sandbox_result *res = &rq->result;
	const struct sandbox_phase *last = res->has_run ? &res->run : &res->compile;
	log_msg("execute %s: %s exit %d%s%s%s%s %lldms", rq->lang->name,
		res->has_run ? "run" : "compile", last->exit_code,
		last->timed_out ? " timed-out" : "", last->oom_killed ? " oom" : "",
		last->truncated ? " truncated" : "", res->client_gone ? " client-gone" : "",
		(long long)last->duration_ms);
}

void execute_handler(struct worker *w, struct request *rq)
{
	bool piston = request_is_piston(rq);
	if (!read_request(w, rq))
		goto error;
	admin_job_accepted(w, rq);
	if (!piston && strstr(http_param(&rq->io, "HTTP_ACCEPT"), "text/event-stream")) {
		stream_execute(w, rq);
		if (rq->fault.code) {
			log_msg("execute failed: %s: %s", error_info(rq->fault.code)->name, rq->fault.message);
			return;
		}
	} else {
		struct sandbox_sink watch = {.hangup_fd = http_hangup_fd(&rq->io)};
		if (!sandbox_run(&w->conf, w->warm, &rq->job, &watch, &rq->result, &rq->fault))
			goto error;
		cJSON *result = piston ? piston_result(rq)
				       : result_to_json(rq->lang, &rq->result, &rq->job.limits);
		http_send_json(&rq->io, 200, "", result);
		cJSON_Delete(result);
	}
	log_result(rq);
	return;
error:
	if (error_info(rq->fault.code)->server_side)
		log_msg("execute failed: %s: %s", error_info(rq->fault.code)->name, rq->fault.message);
	respond_fault(rq, "");
}
