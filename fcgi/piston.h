/*
 * piston.h: Piston's API (github.com/engineer-man/piston, v2), so that
 * Piston clients work unchanged. A Piston request is translated into an
 * isobox request body and takes the same path as POST /execute
 * (execute.c); the result is shaped back by piston_result.h.
 */
#ifndef ISOBOX_PISTON_H
#define ISOBOX_PISTON_H

#include "worker.h"
#include <cjson/cJSON.h>

struct request;

/*
 * Piston request JSON (body) -> isobox request JSON (text in *out), for a
 * language of reg: found by Piston's name or alias or ours, its version
 * matched by Piston's semver "version" ("3.x", "^3.10", "*"). Pure. On
 * failure f says why, with Piston's message where Piston has one.
 */
bool piston_translate(const struct buf *body, const struct registry *reg, size_t max_values,
		      struct buf *out, struct fault *f);
/* What Piston calls a language of ours ("c++" for cpp). */
const char *piston_language_name(const struct language *l);

/* GET /api/v2/runtimes. */
void piston_runtimes(struct worker *w, struct request *rq);
/* /api/v2/packages and the WebSocket /api/v2/connect: 404 not_supported,
 * and what isobox offers instead. */
void piston_packages(struct worker *w, struct request *rq);
void piston_connect(struct worker *w, struct request *rq);

#endif
