/*
 * piston_result.h: a run's result in Piston's shape, {compile, run,
 * language, version}, each stage with Piston's fields (docs/API.md,
 * Piston-compatible API, says what each holds here).
 */
#ifndef ISOBOX_PISTON_RESULT_H
#define ISOBOX_PISTON_RESULT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

struct request;
struct sandbox_phase;
struct limits;

/* The result of rq (its language, result and limits), as Piston answers. */
cJSON *piston_result(const struct request *rq);
/* One stage: compile (run false) or run. Pure. */
cJSON *piston_stage(const struct sandbox_phase *p, bool run, const struct limits *l);

#endif
