/* errors.c: the HTTP meaning of each fault code (see errors.h). */
#include "errors.h"

#include <stdio.h>
#include <string.h>

#define ROW(code, name, status, piston, server) \
	[code] = {name, status, piston ? piston : status, server, 0}
/* A refusal that a retry can end: the client is told when to try again. */
#define ROW_RETRY(code, name, status, server, seconds) \
	[code] = {name, status, status, server, seconds}

static const struct error_info table[E_COUNT] = {
	ROW(E_BAD_REQUEST, "bad_request", 400, 0, false),
	ROW(E_BAD_JSON, "bad_json", 400, 0, false),
	ROW(E_DUPLICATE_KEY, "duplicate_key", 400, 0, false),
	ROW(E_UNKNOWN_FIELD, "unknown_field", 400, 0, false),
	ROW(E_MISSING_FIELD, "missing_field", 400, 0, false),
	ROW(E_INVALID_TYPE, "invalid_type", 400, 0, false),
	ROW(E_INVALID_VALUE, "invalid_value", 400, 0, false),
	ROW(E_INVALID_REQUEST, "invalid_request", 400, 0, false),
	ROW(E_TOO_MANY, "too_many", 400, 0, false),
	ROW(E_TOO_MANY_FILES, "too_many_files", 400, 0, false),
	ROW(E_EMPTY_CODE, "empty_code", 400, 0, false),
	ROW(E_BAD_FILE_NAME, "bad_file_name", 400, 0, false),
	ROW(E_BODY_TOO_LARGE, "body_too_large", 413, 0, false),
	ROW(E_FILE_TOO_LARGE, "file_too_large", 413, 0, false),
	ROW(E_STDIN_TOO_LARGE, "stdin_too_large", 413, 0, false),
	ROW(E_UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", 415, 0, false),
	/* Piston says "<language>-<version> runtime is unknown" with a 400. */
	ROW(E_UNKNOWN_LANGUAGE, "unknown_language", 404, 400, false),
	ROW(E_UNKNOWN_VERSION, "unknown_version", 404, 400, false),
	ROW(E_NOT_A_FILE, "not_a_file", 400, 0, false),
	ROW(E_NOT_FOUND, "not_found", 404, 0, false),
	ROW(E_METHOD_NOT_ALLOWED, "method_not_allowed", 405, 0, false),
	ROW(E_MISDIRECTED, "misdirected_request", 421, 0, false),
	ROW(E_FORBIDDEN, "forbidden", 403, 0, false),
	ROW(E_NETWORK_DISABLED, "network_disabled", 403, 0, false),
	ROW(E_CLIENT_GONE, "client_gone", 499, 0, false),
	/* A route of Piston's that isobox does not offer, by design: a 4xx,
	 * for a 5xx here means that the server failed. */
	ROW(E_NOT_SUPPORTED, "not_supported", 404, 0, false),
	ROW_RETRY(E_BUSY, "busy", 503, false, 1),
	ROW(E_SESSIONS_OFF, "sessions_disabled", 403, 0, false),
	ROW(E_SESSION_NOT_FOUND, "session_not_found", 404, 0, false),
	ROW(E_SESSION_EXPIRED, "session_expired", 410, 0, false),
	ROW(E_SESSION_BUSY, "session_busy", 409, 0, false),
	ROW_RETRY(E_SESSION_ELSEWHERE, "session_elsewhere", 503, true, 1),
	ROW(E_FILE_NOT_FOUND, "file_not_found", 404, 0, false),
	ROW(E_TOO_MANY_SESSIONS, "too_many_sessions", 429, 0, false),
	ROW(E_SESSION_MEMORY_FULL, "session_memory_full", 507, 0, true),
	ROW(E_WORKSPACE_FULL, "workspace_full", 507, 0, true),
	ROW(E_COMMAND_NOT_FOUND, "command_not_found", 404, 0, false),
	ROW(E_TOO_MANY_COMMANDS, "too_many_commands", 409, 0, false),
	ROW(E_STDIN_CLOSED, "stdin_closed", 409, 0, false),
	ROW(E_UNAUTHORIZED, "unauthorized", 401, 0, false),
	ROW(E_RATE_LIMITED, "rate_limited", 429, 0, false),
	ROW_RETRY(E_TOO_MANY_EXECUTIONS, "too_many_executions", 429, false, 1),
	ROW(E_QUOTA_EXCEEDED, "quota_exceeded", 403, 0, false),
	ROW(E_TURNSTILE_FAILED, "turnstile_failed", 403, 0, false),
	ROW(E_VOLUMES_OFF, "volumes_disabled", 403, 0, false),
	ROW(E_VOLUME_NOT_FOUND, "volume_not_found", 404, 0, false),
	ROW(E_VOLUME_EXISTS, "volume_exists", 409, 0, false),
	ROW(E_VOLUME_BUSY, "volume_busy", 409, 0, false),
	ROW(E_VOLUME_ELSEWHERE, "volume_elsewhere", 421, 0, false),
	ROW(E_VOLUME_OTHER_BACKEND, "volume_other_backend", 409, 0, false),
	ROW(E_KEY_NOT_FOUND, "key_not_found", 404, 0, false),
	ROW(E_PRECONDITION_FAILED, "precondition_failed", 412, 0, false),
	ROW(E_INTERNAL, "internal", 500, 0, true),
	/* An image of another version may be building in the background
	 * (make run): a python image takes about 2 minutes here. */
	ROW_RETRY(E_IMAGE_NOT_BUILT, "image_not_built", 503, true, 60),
	ROW(E_IMAGE_MISSING, "image_missing", 503, 0, true),
	ROW(E_DOCKER_UNAVAILABLE, "docker_unavailable", 503, 0, true),
	ROW(E_SANDBOX_START_TIMEOUT, "sandbox_start_timeout", 503, 0, true),
	ROW(E_SANDBOX_FAILED, "sandbox_failed", 503, 0, true),
	ROW(E_SANDBOX_UNAVAILABLE, "sandbox_unavailable", 503, 0, true),
	ROW(E_WORKER_STOPPING, "worker_stopping", 503, 0, true),
	ROW(E_NETWORK_UNAVAILABLE, "network_unavailable", 503, 0, true),
	ROW(E_METRICS_UNAVAILABLE, "metrics_unavailable", 503, 0, true),
	ROW(E_STORE_UNAVAILABLE, "store_unavailable", 503, 0, true),
	/* Cloudflare's siteverify: a moment's outage is the usual cause. */
	ROW_RETRY(E_TURNSTILE_UNAVAILABLE, "turnstile_unavailable", 503, true, 5),
};

enum fault_code error_code(const char *name)
{
	for (int code = E_NONE + 1; code < E_COUNT; code++)
		if (table[code].name && !strcmp(table[code].name, name))
			return (enum fault_code)code;
	return E_INTERNAL;
}

const struct error_info *error_info(enum fault_code code)
{
	if (code <= E_NONE || code >= E_COUNT || !table[code].name)
		return &table[E_INTERNAL];
	return &table[code];
}

int error_status(enum fault_code code, bool piston)
{
	const struct error_info *e = error_info(code);
	return piston ? e->piston_status : e->status;
}

void errors_print(void)
{
	for (int c = E_NONE + 1; c < E_COUNT; c++) {
		const struct error_info *e = error_info((enum fault_code)c);
		printf("{\"code\": \"%s\", \"status\": %d, \"pistonStatus\": %d, \"serverSide\": %s, "
		       "\"retryAfter\": %d}\n", e->name, e->status, e->piston_status,
		       e->server_side ? "true" : "false", e->retry_after);
	}
}
