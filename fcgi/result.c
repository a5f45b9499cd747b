/* result.c: execution results as JSON. */
#define _GNU_SOURCE /* sigabbrev_np */
#include "result.h"

#include <stdio.h>
#include <string.h>

cJSON *language_to_json(const struct language *l)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "language", l->name);
	cJSON_AddStringToObject(r, "version", l->full_version);
	cJSON_AddStringToObject(r, "id", l->id);
	cJSON_AddBoolToObject(r, "default", l->is_default);
	cJSON *aliases = cJSON_AddArrayToObject(r, "aliases");
	for (size_t j = 0; j < l->aliases.n; j++)
		cJSON_AddItemToArray(aliases, cJSON_CreateString(l->aliases.v[j]));
	if (l->note)
		cJSON_AddStringToObject(r, "note", l->note);
	if (l->sample)
		cJSON_AddStringToObject(r, "sample", l->sample);
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

void backend_to_json(cJSON *o, const struct conf *c, const struct sandbox_runtime *rt)
{
	cJSON_AddStringToObject(o, "backend", conf_backend_name(c));
	if (conf_backend_warning(c))
		cJSON_AddStringToObject(o, "warning", conf_backend_warning(c));
	if (rt && rt->program[0]) {
		cJSON *r = cJSON_AddObjectToObject(o, "runtime");
		cJSON_AddStringToObject(r, "program", rt->program);
		cJSON_AddStringToObject(r, "version", rt->version);
		if (rt->platform[0])
			cJSON_AddStringToObject(r, "platform", rt->platform);
	}
}

const char *signal_name(int sig, char *buf, size_t n)
{
	if (sig <= 0)
		return NULL;
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, n, "SIG%s", abbrev);
	else
		snprintf(buf, n, "SIG%d", sig); /* glibc's own real-time ones (32, 33) */
	return buf;
}

void signal_to_json(cJSON *o, int sig)
{
	char name[16];
	if (sig > 0)
		cJSON_AddStringToObject(o, "signal", signal_name(sig, name, sizeof name));
	else
		cJSON_AddNullToObject(o, "signal");
}

void cpu_time_to_json(cJSON *o, const char *key, const struct sandbox_phase *p)
{
	if (p->cpu_ns >= 0)
		cJSON_AddNumberToObject(o, key, (double)((p->cpu_ns + 500000) / 1000000));
	else
		cJSON_AddNullToObject(o, key);
}

void peak_memory_to_json(cJSON *o, const char *key, const struct sandbox_phase *p)
{
	if (p->peak_bytes >= 0)
		cJSON_AddNumberToObject(o, key, (double)p->peak_bytes);
	else
		cJSON_AddNullToObject(o, key);
}

cJSON *phase_to_json(const struct sandbox_phase *p)
{
	cJSON *o = cJSON_CreateObject();
	json_add_bytes(o, "stdout", p->out.data, p->out.len);
	json_add_bytes(o, "stderr", p->err.data, p->err.len);
	cJSON_AddNumberToObject(o, "exitCode", p->exit_code);
	signal_to_json(o, p->signal);
	cJSON_AddBoolToObject(o, "timedOut", p->timed_out);
	cJSON_AddBoolToObject(o, "oomKilled", p->oom_killed);
	cJSON_AddBoolToObject(o, "truncated", p->truncated);
	cJSON_AddNumberToObject(o, "durationMs", (double)p->duration_ms);
	cpu_time_to_json(o, "cpuTimeMs", p);
	peak_memory_to_json(o, "peakMemoryBytes", p);
	return o;
}

cJSON *result_to_json(const struct language *lang, const struct sandbox_result *res,
		      const struct limits *applied)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "language", lang->name);
	cJSON_AddStringToObject(o, "version", lang->full_version);
	cJSON_AddStringToObject(o, "backend", res->backend);
	cJSON_AddBoolToObject(o, "warm", res->warm); /* a sandbox started ahead (only faster) */
	if (!res->warm && res->warm_miss) /* its language has a warm pool: why not */
		cJSON_AddStringToObject(o, "coldReason", res->warm_miss);
	if (res->has_compile)
		cJSON_AddItemToObject(o, "compile", phase_to_json(&res->compile));
	if (res->has_run)
		cJSON_AddItemToObject(o, "run", phase_to_json(&res->run));
	cJSON_AddItemToObject(o, "limits", limits_to_json(applied));
	return o;
}

void outputs_to_json(cJSON *o, const struct sandbox_result *res)
{
	cJSON *list = cJSON_AddArrayToObject(o, "outputs");
	for (size_t i = 0; i < res->n_outputs; i++) {
		const struct sandbox_output *out = &res->outputs[i];
		const char *p = out->data.data ? out->data.data : "";
		cJSON *x = cJSON_CreateObject();
		json_add_bytes(x, "name", out->name, strlen(out->name));
		cJSON_AddNumberToObject(x, "size", (double)out->data.len);
		/* Text as text; anything else (a NUL, not UTF-8) as base64. */
		if (utf8_valid(p, out->data.len) && !memchr(p, '\0', out->data.len)) {
			cJSON_AddStringToObject(x, "encoding", "utf-8");
			json_add_bytes(x, "content", p, out->data.len);
		} else {
			char *b64 = base64_encode(p, out->data.len);
			cJSON_AddStringToObject(x, "encoding", "base64");
			cJSON_AddStringToObject(x, "content", b64);
			free(b64);
		}
		cJSON_AddItemToArray(list, x);
	}
	cJSON_AddBoolToObject(o, "outputsTruncated", res->outputs_truncated);
}
