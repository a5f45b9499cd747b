/* limits.c: parse, merge and clamp resource limits. */
#include "limits.h"
#include "lib/json.h"

#include <stdio.h>

#define HUGE_LIMIT ((int64_t)1 << 53) /* largest integer a double holds exactly */

bool limits_parse(const cJSON *obj, const char *what, struct limits *out, unsigned *set, struct fault *f)
{
	static const char *const known[] = {"memoryBytes", "cpus", "pids", "outputBytes", "wallTimeMs",
		"compileTimeMs", NULL};
	char name[96];
	*set = 0;
	if (!json_object(obj, what, f) || !json_known_keys(obj, known, what, f))
		return false;
	const cJSON *v;
#define FIELD(key, flag, dst)                                                   \
	if ((v = cJSON_GetObjectItemCaseSensitive(obj, key))) {                 \
		snprintf(name, sizeof name, "%s.%s", what, key);                \
		if (!json_int(v, name, 1, HUGE_LIMIT, &out->dst, f))            \
			return false;                                           \
		*set |= flag;                                                   \
	}
	FIELD("memoryBytes", LIMIT_MEMORY, memory_bytes)
	FIELD("pids", LIMIT_PIDS, pids)
	FIELD("outputBytes", LIMIT_OUTPUT, output_bytes)
	FIELD("wallTimeMs", LIMIT_WALL, wall_time_ms)
	FIELD("compileTimeMs", LIMIT_COMPILE, compile_time_ms)
#undef FIELD
	if ((v = cJSON_GetObjectItemCaseSensitive(obj, "cpus"))) {
		snprintf(name, sizeof name, "%s.cpus", what);
		if (!json_number(v, name, &out->cpus, f))
			return false;
		if (!(out->cpus > 0) || out->cpus > 1024)
			return fail(f, E_INVALID_VALUE, "%s must be above 0", name);
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
