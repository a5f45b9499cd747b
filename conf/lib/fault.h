/*
 * fault.h: why something could not be done, as every layer reports it: a
 * stable code (what went wrong) and a message for people.
 *
 * Lower layers say what went wrong and never how to answer it: fcgi/errors.c
 * alone maps each code to its name in the API ("bad_json"), its HTTP
 * status, where /metrics counts it and what the Piston route answers.
 * A new code is a line here and a row there (a unit test checks that every
 * code has its row).
 */
#ifndef ISOBOX_FAULT_H
#define ISOBOX_FAULT_H

#include <stdbool.h>

enum fault_code {
	E_NONE = 0,
	/* The request: what the caller sent. */
	E_BAD_REQUEST,          /* unreadable (the body could not be read) */
	E_BAD_JSON,
	E_DUPLICATE_KEY,
	E_UNKNOWN_FIELD,
	E_MISSING_FIELD,
	E_INVALID_TYPE,
	E_INVALID_VALUE,
	E_INVALID_REQUEST,      /* fields that do not go together */
	E_TOO_MANY,             /* too many elements, args, ... */
	E_TOO_MANY_FILES,
	E_EMPTY_CODE,
	E_BAD_FILE_NAME,
	E_BODY_TOO_LARGE,
	E_FILE_TOO_LARGE,
	E_STDIN_TOO_LARGE,
	E_UNSUPPORTED_MEDIA_TYPE,
	E_UNKNOWN_LANGUAGE,
	E_UNKNOWN_VERSION,
	E_NOT_A_FILE,           /* a directory or a link where a file was named */
	/* Where it was sent, and by whom. */
	E_NOT_FOUND,
	E_METHOD_NOT_ALLOWED,
	E_MISDIRECTED,          /* a Host this server does not serve */
	E_FORBIDDEN,
	E_NETWORK_DISABLED,
	E_CLIENT_GONE,          /* the caller left before anything ran */
	E_NOT_SUPPORTED,        /* a route of Piston's API that isobox does not offer */
	E_BUSY,
	/* Sessions. */
	E_SESSIONS_OFF,
	E_SESSION_NOT_FOUND,
	E_SESSION_EXPIRED,      /* it existed and ended: idle, lifetime, died */
	E_SESSION_BUSY,         /* another request holds it */
	E_SESSION_ELSEWHERE,    /* it lives on another host, alive, that did not get this request */
	E_FILE_NOT_FOUND,
	E_TOO_MANY_SESSIONS,
	E_SESSION_MEMORY_FULL,  /* sessions.memoryBudgetBytes */
	E_WORKSPACE_FULL,
	E_COMMAND_NOT_FOUND,
	E_TOO_MANY_COMMANDS,    /* a session keeps AGENT_MAX_COMMANDS */
	E_STDIN_CLOSED,         /* a command's stdin, closed on request */
	/* Tenants: who calls, and their share (conf/tenants.h). */
	E_UNAUTHORIZED,         /* no key where one is needed, or a key that is not valid */
	E_RATE_LIMITED,         /* requestsPerMinute */
	E_TOO_MANY_EXECUTIONS,  /* concurrentExecutions */
	E_QUOTA_EXCEEDED,       /* sessions, memory, volumes: what a tenant may hold */
	E_TURNSTILE_FAILED,     /* the demo: siteverify refused the caller's token */
	/* Volumes. */
	E_VOLUMES_OFF,
	E_VOLUME_NOT_FOUND,
	E_VOLUME_EXISTS,
	E_VOLUME_BUSY,          /* mounted by a run or a session */
	E_VOLUME_ELSEWHERE,     /* its bytes are on another host */
	E_VOLUME_OTHER_BACKEND, /* its files are another backend's sandbox user's */
	/* The memory store. */
	E_KEY_NOT_FOUND,
	E_PRECONDITION_FAILED,  /* If-Match / If-None-Match */
	/* The server: what failed on our side. */
	E_INTERNAL,
	E_IMAGE_NOT_BUILT,
	E_IMAGE_MISSING,
	E_DOCKER_UNAVAILABLE,
	E_SANDBOX_START_TIMEOUT,
	E_SANDBOX_FAILED,
	E_SANDBOX_UNAVAILABLE,
	E_WORKER_STOPPING,
	E_NETWORK_UNAVAILABLE,
	E_METRICS_UNAVAILABLE,
	E_STORE_UNAVAILABLE,
	E_TURNSTILE_UNAVAILABLE, /* the demo: siteverify did not answer, or not in its shape */
	E_COUNT
};

struct fault {
	enum fault_code code; /* E_NONE: no fault */
	char message[400];
};

/* Fill *f and return false, so that callers can write `return fail(...)`. */
bool fail(struct fault *f, enum fault_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
