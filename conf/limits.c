/* limits.c: parse, merge and clamp resource limits. */
#include "limits.h"
#include "lib/json.h"

#include <math.h>
#include <stdio.h>

#define HUGE_LIMIT ((int64_t)1 << 53) /* largest integer a double holds exactly */
#define MOST_CPUS 1024.0              /* more than any host has */

/*
 * The one rule for a limit, wherever it is written (a request, a session,
 * the conf's ceilings; docs/API.md "Limits" states it): a positive number,
 * whole for all but cpus. Any such value is taken and then clamped into
 * the server's floor and ceiling, so a large one is never refused; one too
 * large to hold first saturates at MOST (no conversion can overflow).
 * Zero, negatives, fractions of whole-number limits and non-numbers are
 * refused.
 */
static bool positive(const cJSON *v, const char *name, bool whole, double most, double *out,
		     struct fault *f)
{
	double d = 0;
	if (!json_number(v, name, &d, f))
		return false;
	if (!(d > 0))
		return fail(f, E_INVALID_VALUE, "%s must be above 0", name);
	if (whole && d != floor(d))
		return fail(f, E_INVALID_VALUE, "%s must be a whole number", name);
	*out = d < most ? d : most;
	return true;
}

bool limits_parse(const cJSON *obj, const char *what, struct limits *out, unsigned *set, struct fault *f)
{
	static const char *const known[] = {"memoryBytes", "cpus", "pids", "outputBytes", "wallTimeMs",
		"compileTimeMs", NULL};
	char name[96];
	double d;
	*set = 0;
	if (!json_object(obj, what, f) || !json_known_keys(obj, known, what, f))
		return false;
	const cJSON *v;
#define FIELD(key, flag, dst)                                                        \
	if ((v = json_field(obj, key))) {                                         \
		snprintf(name, sizeof name, "%s.%s", what, key);                     \
		if (!positive(v, name, true, (double)HUGE_LIMIT, &d, f))             \
			return false;                                                \
		out->dst = (int64_t)d;                                               \
		*set |= flag;                                                        \
	}
	FIELD("memoryBytes", LIMIT_MEMORY, memory_bytes)
	FIELD("pids", LIMIT_PIDS, pids)
	FIELD("outputBytes", LIMIT_OUTPUT, output_bytes)
	FIELD("wallTimeMs", LIMIT_WALL, wall_time_ms)
	FIELD("compileTimeMs", LIMIT_COMPILE, compile_time_ms)
#undef FIELD
	if ((v = json_field(obj, "cpus"))) {
		snprintf(name, sizeof name, "%s.cpus", what);
		if (!positive(v, name, false, MOST_CPUS, &out->cpus, f))
			return false;
		*set |= LIMIT_CPUS;
	}
	return true;
}

#define CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))

struct limits limits_apply(const struct limits *defaults, const struct limits *req, unsigned set,
			   const struct limits *floor, const struct limits *ceiling)
{
	struct limits l = *defaults;
	if (set & LIMIT_MEMORY) l.memory_bytes = req->memory_bytes;
	if (set & LIMIT_CPUS) l.cpus = req->cpus;
	if (set & LIMIT_PIDS) l.pids = req->pids;
	if (set & LIMIT_OUTPUT) l.output_bytes = req->output_bytes;
	if (set & LIMIT_WALL) l.wall_time_ms = req->wall_time_ms;
	if ((set & LIMIT_COMPILE) && l.compile_time_ms)
		l.compile_time_ms = CLAMP(req->compile_time_ms, floor->wall_time_ms, l.compile_time_ms);
	l.memory_bytes = CLAMP(l.memory_bytes, floor->memory_bytes, ceiling->memory_bytes);
	l.cpus = CLAMP(l.cpus, floor->cpus, ceiling->cpus);
	l.pids = CLAMP(l.pids, floor->pids, ceiling->pids);
	l.output_bytes = CLAMP(l.output_bytes, floor->output_bytes, ceiling->output_bytes);
	l.wall_time_ms = CLAMP(l.wall_time_ms, floor->wall_time_ms, ceiling->wall_time_ms);
	return l;
}

cJSON *limits_to_json(const struct limits *l)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "memoryBytes", (double)l->memory_bytes);
	cJSON_AddNumberToObject(o, "cpus", l->cpus);
	cJSON_AddNumberToObject(o, "pids", (double)l->pids);
	cJSON_AddNumberToObject(o, "outputBytes", (double)l->output_bytes);
	cJSON_AddNumberToObject(o, "wallTimeMs", (double)l->wall_time_ms);
	if (l->compile_time_ms)
		cJSON_AddNumberToObject(o, "compileTimeMs", (double)l->compile_time_ms);
	return o;
}
