/*
 * job.h: a request's parsed job, run where it belongs and answered in its
 * route's shape (job.c).
 */
#ifndef ISOBOX_JOB_H
#define ISOBOX_JOB_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;
struct sandbox_sink;

/* Run rq->job: in rq->session when rq->in_session (a session step), else
 * as /execute runs it. The sink hears about it; false with rq->fault. */
bool job_run(struct worker *w, struct request *rq, const struct sandbox_sink *sink);
/*
 * Its result, in the route's shape: Piston's, or the /execute result; a
 * session step adds "session" {id, type, ended (why, if the session did
 * not survive the step)} and for a cell "kernel" {value, error, images,
 * restarted}, checked field by field (the sandbox wrote it).
 */
cJSON *job_result_json(const struct request *rq);
/*
 * A kernel's word on a cell (its JSON, as the sandbox wrote it) as the
 * result's "kernel": only the fields we know, of the types we expect
 * (value, error, images, outputs, restarted), strings kept valid UTF-8,
 * an output's MIME types checked. Pure.
 */
cJSON *job_kernel_json(const struct buf *raw);
/* One display of a cell, as the sink heard it (sandbox.h), checked as the
 * result's outputs are: {"output_type", "data", "metadata"}; NULL when it
 * is not a display. */
cJSON *job_display_json(const char *json, size_t len);

#endif
