/* result.c: execution results as JSON. */
#include "result.h"

#include <stdio.h>

cJSON *language_to_json(const struct language *l)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "language", l->name);
	cJSON_AddStringToObject(r, "version", l->full_version);
	cJSON *aliases = cJSON_AddArrayToObject(r, "aliases");
	for (size_t j = 0; j < l->aliases.n; j++)
		cJSON_AddItemToArray(aliases, cJSON_CreateString(l->aliases.v[j]));
	return r;
}

cJSON *network_to_json(bool enabled, bool ready, const char *mode, const struct fault *why)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "enabled", enabled);
	cJSON_AddBoolToObject(o, "available", ready);
	cJSON_AddStringToObject(o, "mode", mode);
	if (enabled && !ready)
		cJSON_AddStringToObject(o, "reason", why->message);
	return o;
}

cJSON *phase_to_json(const struct sandbox_phase *p)
{
	cJSON *o = cJSON_CreateObject();
	json_add_bytes(o, "stdout", p->out.data, p->out.len);
	json_add_bytes(o, "stderr", p->err.data, p->err.len);
	cJSON_AddNumberToObject(o, "exitCode", p->exit_code);
	cJSON_AddBoolToObject(o, "timedOut", p->timed_out);
	cJSON_AddBoolToObject(o, "oomKilled", p->oom_killed);
	cJSON_AddBoolToObject(o, "truncated", p->truncated);
	cJSON_AddNumberToObject(o, "durationMs", (double)p->duration_ms);
	return o;
}

cJSON *result_to_json(const struct language *lang, const struct sandbox_result *res,
		      const struct limits *applied)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "language", lang->name);
	cJSON_AddStringToObject(o, "version", lang->full_version);
	cJSON_AddStringToObject(o, "backend", "gvisor");
	cJSON_AddBoolToObject(o, "warm", res->warm); /* a sandbox started ahead (only faster) */
	if (res->has_compile)
		cJSON_AddItemToObject(o, "compile", phase_to_json(&res->compile));
	if (res->has_run)
		cJSON_AddItemToObject(o, "run", phase_to_json(&res->run));
	cJSON_AddItemToObject(o, "limits", limits_to_json(applied));
	return o;
}
