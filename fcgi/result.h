/*
 * result.h: the result object of an execution, as JSON (pure; unit-tested).
 * Program output is arbitrary bytes, written as JSON text by encode.h.
 */
#ifndef ISOBOX_RESULT_H
#define ISOBOX_RESULT_H

#include "encode.h"
#include "../sandbox/sandbox.h"
#include <cjson/cJSON.h>

/* {"language", "version", "aliases"}: a runtime, as /runtimes lists it. */
cJSON *language_to_json(const struct language *l);

/*
 * {"enabled", "available", "mode", "reason"}: may a request ask for
 * "network": true here, does the installed firewall match (the caller
 * asked sandbox_egress_ready: ready and why not), and which gVisor network
 * stack egress runs use ("host": the host kernel's, in the container's own
 * namespace; "sandbox": gVisor's own).
 */
cJSON *network_to_json(bool enabled, bool ready, const char *mode, const struct fault *why);
/* "backend", "warning" where it has one, and "runtime" (program,
 * version, platform) where rt knows it: /runtimes and /healthz. */
void backend_to_json(cJSON *o, const struct conf *c, const struct sandbox_runtime *rt);

/* A signal's name as `kill -l` gives it, with SIG ("SIGSEGV" for 11), in
 * buf (at least 16 bytes); NULL for 0, no signal. */
const char *signal_name(int sig, char *buf, size_t n);
/* "signal": its name, or null (0). */
void signal_to_json(cJSON *o, int sig);

/* A phase's CPU time (whole ms), and its memory high-water mark (bytes),
 * under key (ours or Piston's name); null where not measured. */
void cpu_time_to_json(cJSON *o, const char *key, const struct sandbox_phase *p);
void peak_memory_to_json(cJSON *o, const char *key, const struct sandbox_phase *p);
/* One phase: {"stdout", "stderr", "exitCode", "signal", "timedOut", ...} */
cJSON *phase_to_json(const struct sandbox_phase *p);

/* {"language", "version", "backend", ["compile": {...},] ["run": {...},]
 *  "limits": {...}}: no "run" when the compile failed. */
cJSON *result_to_json(const struct language *lang, const struct sandbox_result *res,
		      const struct limits *applied);
/* "outputs": [{"name", "size", "encoding": "utf-8"|"base64", "content"}]
 * and "outputsTruncated", added to a result. */
void outputs_to_json(cJSON *o, const struct sandbox_result *res);

#endif
