/*
 * respond.h: answering a request that failed: {"error": {"code",
 * "message"}} with the status errors.c gives its code, in its route's shape
 * (Piston's routes add Piston's "message" and use Piston's status).
 */
#ifndef ISOBOX_RESPOND_H
#define ISOBOX_RESPOND_H

#include "request.h"

/* {"error": {"code": ..., "message": ...}} */
cJSON *fault_to_json(const struct fault *f);

/* Answer with o, as JSON, and free it (a success: 200, 201). */
void respond_json(struct request *rq, int status, cJSON *o);

/* Answer rq->fault; extra_headers is "" or "Name: v\r\n"... */
void respond_fault(struct request *rq, const char *extra_headers);

#endif
