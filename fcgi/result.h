/*
 * result.h: the result object of an execution, as JSON (pure; unit-tested).
 *
 * Program output is arbitrary bytes. JSON strings are Unicode, so output is
 * encoded like this: valid UTF-8 passes through, NUL and other control
 * bytes become \u00XX escapes (lossless), and each byte that is not part of
 * valid UTF-8 becomes U+FFFD (lossy, and the only loss). Documented in
 * docs/API.md.
 */
#ifndef ISOBOX_RESULT_H
#define ISOBOX_RESULT_H

#include "../sandbox/sandbox.h"
#include <cjson/cJSON.h>

/* A JSON string literal, quotes included, for bytes p[0..n). Caller frees. */
char *json_quote_bytes(const char *p, size_t n);

/* Add key: p[0..n) to o as a JSON string, encoded as above. */
void json_add_bytes(cJSON *o, const char *key, const char *p, size_t n);

/* Is p[0..n) entirely valid UTF-8? */
bool utf8_valid(const char *p, size_t n);
/* How many bytes at the end of p[0..n) begin a UTF-8 sequence that the
 * next chunk may complete (0-3). */
size_t utf8_incomplete_tail(const char *p, size_t n);

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

/* One phase: {"stdout", "stderr", "exitCode", "timedOut", ...} */
cJSON *phase_to_json(const struct sandbox_phase *p);

/* {"language", "version", "backend", ["compile": {...},] ["run": {...},]
 *  "limits": {...}}: no "run" when the compile failed. */
cJSON *result_to_json(const struct language *lang, const struct sandbox_result *res,
		      const struct limits *applied);

#endif
