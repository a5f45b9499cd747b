/*
 * piston.h: Piston's shapes, so that existing Piston clients work
 * unchanged. A Piston request is translated into an isobox request body
 * and takes the same path as POST /execute (execute.c); the result is
 * translated back.
 */
#ifndef ISOBOX_PISTON_H
#define ISOBOX_PISTON_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;

/* Piston request JSON (body) -> isobox request JSON (text in *out). */
bool piston_translate(const struct buf *body, size_t max_values, struct buf *out, struct fault *f);
/* The result in Piston's shape. */
cJSON *piston_result(const struct request *rq);
/* GET /api/v2/runtimes. */
void piston_runtimes(struct worker *w, struct request *rq);

#endif
