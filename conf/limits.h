/*
 * limits.h: the resource limits of one run, and how a request's limits are
 * merged with a language's defaults and clamped to the operator's ceilings.
 */
#ifndef ISOBOX_LIMITS_H
#define ISOBOX_LIMITS_H

#include "lib/base.h"
#include <cjson/cJSON.h>

struct limits {
	int64_t memory_bytes; /* memory and memory+swap: swap is off */
	double cpus;
	int64_t pids;         /* processes (RLIMIT_NPROC inside the sandbox) */
	int64_t output_bytes; /* stdout + stderr kept; the run is killed past it */
	int64_t wall_time_ms; /* from program start, enforced by the worker */
	int64_t compile_time_ms; /* compiled languages: the compile step's wall
				    time; 0 = no compile step */
};

/* Which fields a partial limits object set. */
enum {
	LIMIT_MEMORY = 1 << 0,
	LIMIT_CPUS = 1 << 1,
	LIMIT_PIDS = 1 << 2,
	LIMIT_OUTPUT = 1 << 3,
	LIMIT_WALL = 1 << 4,
	LIMIT_ALL = (1 << 5) - 1, /* every limit that has a ceiling */
	LIMIT_COMPILE = 1 << 5,   /* bounded by the language's own compile time */
};

/*
 * Read a limits object (JSON names: memoryBytes, cpus, pids, outputBytes,
 * wallTimeMs). Only the fields present are written to *out; *set says which.
 * Values must be positive; they are not clamped here.
 */
bool limits_parse(const cJSON *obj, const char *what, struct limits *out, unsigned *set, struct fault *f);

/* Overlay `req` (fields in `set`) on `defaults`, then clamp into [floor,
 * ceiling]. A requested compile time may only shorten the default one. */
struct limits limits_apply(const struct limits *defaults, const struct limits *req, unsigned set,
			   const struct limits *floor, const struct limits *ceiling);

cJSON *limits_to_json(const struct limits *l);

#endif
