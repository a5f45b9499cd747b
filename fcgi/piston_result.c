/*
 * piston_result.c: results in Piston's shape (piston_result.h). Keys come
 * in Piston's order. Its status codes: null (exit 0), RE (exit not 0), SG
 * (a fatal signal), TO (time), OL / EL (stdout / stderr length), XX
 * (internal).
 */
#include "piston_result.h"
#include "encode.h"
#include "piston.h"
#include "request.h"
#include "result.h"

#include <stdio.h>

/* How a stage ended, in Piston's terms. code < 0: null. */
struct ending {
	const char *signal, *status;
	int code;
	char message[160];
	char name[16]; /* the signal's, when it is not SIGKILL */
};

/*
 * The flags first: they are authoritative (a kill by the deadline, the
 * OOM killer or the output cap exits 137 too). Only the run is stopped at
 * the output cap; a compile's output past it is cut, and the compile
 * goes on.
 */
static struct ending ending_of(const struct sandbox_phase *p, bool run, const struct limits *l)
{
	struct ending e = {.code = -1};
	int code = p->exit_code;
	if (p->timed_out) {
		e.signal = "SIGKILL";
		e.status = "TO";
		snprintf(e.message, sizeof e.message, "Time limit exceeded (wall clock)");
	} else if (p->oom_killed) {
		e.signal = "SIGKILL";
		e.status = "SG";
		snprintf(e.message, sizeof e.message, "Memory limit exceeded (%lld bytes): caught fatal signal 9",
			 (long long)l->memory_bytes);
	} else if (p->truncated && run) {
		/* Our cap is on stdout and stderr together: which overflowed
		 * is known only when the other is empty. */
		bool err_only = p->err.len && !p->out.len, both = p->err.len && p->out.len;
		e.signal = "SIGKILL";
		e.status = err_only ? "EL" : "OL";
		snprintf(e.message, sizeof e.message, "%s length exceeded (%lld bytes of stdout and stderr together)",
			 err_only ? "stderr" : both ? "output" : "stdout", (long long)l->output_bytes);
	} else if (code < 0) {
		e.status = "XX";
		snprintf(e.message, sizeof e.message, "the sandbox gave no exit status");
	} else if (p->signal) { /* read from the wait status: exit(139) is not SIGSEGV */
		e.signal = signal_name(p->signal, e.name, sizeof e.name);
		e.status = "SG";
		snprintf(e.message, sizeof e.message, "Caught fatal signal %d", p->signal);
	} else if (code) {
		e.code = code;
		e.status = "RE";
		snprintf(e.message, sizeof e.message, "Exited with error status %d", code);
	} else {
		e.code = 0;
	}
	return e;
}

static void add_or_null(cJSON *o, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

cJSON *piston_stage(const struct sandbox_phase *p, bool run, const struct limits *l)
{
	struct ending e = ending_of(p, run, l);
	cJSON *o = cJSON_CreateObject();
	struct buf both = {0};
	add_or_null(o, "signal", e.signal);
	json_add_bytes(o, "stdout", p->out.data, p->out.len);
	json_add_bytes(o, "stderr", p->err.data, p->err.len);
	if (e.code >= 0)
		cJSON_AddNumberToObject(o, "code", e.code);
	else
		cJSON_AddNullToObject(o, "code");
	/* The two pipes keep no common order: stdout, then stderr. */
	buf_append(&both, p->out.data, p->out.len);
	buf_append(&both, p->err.data, p->err.len);
	json_add_bytes(o, "output", both.data, both.len);
	buf_free(&both);
	peak_memory_to_json(o, "memory", p);
	add_or_null(o, "message", e.message[0] ? e.message : NULL);
	add_or_null(o, "status", e.status);
	cpu_time_to_json(o, "cpu_time", p);
	cJSON_AddNumberToObject(o, "wall_time", (double)p->duration_ms);
	return o;
}

cJSON *piston_result(const struct request *rq)
{
	const struct sandbox_result *res = &rq->result;
	const struct limits *l = &rq->job.limits;
	cJSON *o = cJSON_CreateObject();
	if (res->has_compile)
		cJSON_AddItemToObject(o, "compile", piston_stage(&res->compile, false, l));
	if (res->has_run)
		cJSON_AddItemToObject(o, "run", piston_stage(&res->run, true, l));
	else if (res->has_compile) /* a failed compile: Piston's run is the compile's result */
		cJSON_AddItemToObject(o, "run", piston_stage(&res->compile, false, l));
	cJSON_AddStringToObject(o, "language", piston_language_name(rq->lang));
	cJSON_AddStringToObject(o, "version", rq->lang->full_version);
	return o;
}
