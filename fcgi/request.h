/*
 * request.h: one HTTP request and everything it holds.
 *
 * Ownership: struct request owns the body, the parsed JSON tree, the file
 * table and the argument copies; the sandbox job and the language borrow
 * from it (and from the registry the worker had when the request began).
 * request_free releases everything, on every path.
 */
#ifndef ISOBOX_REQUEST_H
#define ISOBOX_REQUEST_H

#include "http.h"
#include "../sandbox/sandbox.h"

struct worker;
struct request;

/* What a route is; each row of the table in routes.c says it once. */
enum route_flags {
	ROUTE_RUNS_PROGRAM = 1 << 0, /* takes an execution slot: the whenBusy gate */
	ROUTE_PISTON = 1 << 1,       /* Piston's shapes: errors carry "message" and Piston's status */
	ROUTE_STATUS = 1 << 2,       /* served on the status socket too: never waits behind runs */
	ROUTE_DEMO = 1 << 3,         /* open to the public demo's callers (conf/demo.h); a
					route that runs a program asks them for a token */
};

/* Who may call it: ACL_TENANT, a caller with a key or from an anonymous
 * address (auth.h); the status routes, the address ranges of access: in
 * conf; ACL_ANYONE, anyone (the API's documents and the playground). */
enum route_acl { ACL_ANYONE, ACL_TENANT, ACL_METRICS, ACL_HEALTHZ };

struct route {
	/* GET routes answer HEAD too. In a path, "*" is one segment and a
	 * last "**" the rest (one or more segments): the request's params. */
	const char *path, *method;
	void (*handler)(struct worker *w, struct request *rq);
	unsigned flags;
	enum route_acl acl;
	/* Run after the caller is known and before a place is taken; false:
	 * it answered (e.g. sessions_here: a session kept by another host). */
	bool (*guard)(struct worker *w, struct request *rq);
};

/* A request's id: the client's X-Request-Id when it is sane (1-64 of
 * [A-Za-z0-9._:-]: UUIDs, ULIDs, trace ids), else 32 random hex digits. It
 * goes back in the X-Request-Id header and error bodies, on the request's
 * log line, and on its sandbox's isobox.request label. */
#define REQUEST_ID_MAX 64

struct request {
	struct http_io io;
	char id[REQUEST_ID_MAX + 1];
	const char *method; /* borrowed from the server's params */
	char *path;         /* route: "/execute" */
	const struct route *route; /* NULL until routed (routes.c) */
	char *params[2];    /* what the route's "*" and "**" matched, decoded */
	struct buf body;
	cJSON *json;
	const struct language *lang;
	struct sandbox_file *files;
	struct buf *decoded; /* files[i]'s bytes when it came base64-encoded */
	size_t n_decoded;
	struct strv args;
	struct strv outputs; /* globs of files to return */
	bool network;
	struct sandbox_job job;
	struct sandbox_result result;
	struct fault fault;
	struct session session; /* a session step's session */
	bool in_session;
	bool cors;          /* the Origin may call: the CORS headers are in io.always */
	char tenant[TENANT_NAME_MAX + 1]; /* who calls (ACL_TENANT routes); "" otherwise */
	const struct tenant_limits *share; /* its limits, borrowed from the worker's conf */
	bool demo;          /* a caller of the public demo (conf/demo.h): its ceilings */
	int64_t claim;      /* its place among the tenant's running executions; 0: none */
	bool released;      /* its claims are given back (admin_release) */
	bool counted;       /* it is counted in /metrics (admin.c) */
	char volume_name[64]; /* "volume": the tenant's volume to mount ("": none) */
	char volume_id[33];   /* its id, once found in the store (job.volume) */
	char volume_owner[96]; /* who holds its mark in use (volumes.h); "": no mark */
};

void request_free(struct request *rq);

/* May a client's X-Request-Id be ours (REQUEST_ID_MAX)? Pure. */
bool request_id_sane(const char *given);

/* Does rq speak Piston's shapes (its route says so)? */
static inline bool request_is_piston(const struct request *rq)
{
	return rq->route && (rq->route->flags & ROUTE_PISTON);
}

/*
 * The route of a request: PATH_INFO when the server gives one (CGI, or a
 * FastCGI mount under a prefix), else REQUEST_URI without its query,
 * percent-decoded as PATH_INFO is ("" if it does not decode).
 */
char *request_route(const char *path_info, const char *request_uri);

/*
 * Parse and validate a POST /execute body (rq->body) into rq->job. Pure: no
 * I/O. On failure rq->fault says why (400, 403, 404).
 */
bool request_parse_execute(struct request *rq, const struct conf *c, const struct registry *reg);
/* May rq have "network": true (the server's network.enabled, the
 * tenant's share)? 403 network_disabled if not. Pure. */
bool request_network_allowed(const struct request *rq, const struct conf *c, struct fault *f);
/* "volume" and "volumeReadOnly" of a parsed body (rq->volume_name,
 * rq->job.volume_ro); the volume is found later (volumes.h). Pure. */
bool request_parse_volume(struct request *rq, const cJSON *root);
/* "language" and "version" of a parsed body, found in the registry
 * (rq->lang): 400, or 404 for a language or version it lacks. Pure. */
bool request_parse_language(struct request *rq, const cJSON *root, const struct registry *reg);
/*
 * Parse a session step's body (the /execute body without language,
 * version and network) into rq->job for rq->lang; the sandbox keeps the
 * session's memory, cpus and pids (held). Pure.
 */
bool request_parse_step(struct request *rq, const struct conf *c, const struct limits *held);
/*
 * Does the (decoded) path match a route's pattern? Then the "*" and "**"
 * parts go to params (the caller frees them). Pure.
 */
bool request_match(const char *pattern, const char *path, char *params[2]);
/* The value of name=... in a query string, decoded; NULL if absent or
 * broken (the caller frees it). Pure. */
char *request_query_param(const char *query, const char *name);
/* rq->body as rq->json: strict JSON of at most max_values values, an
 * object, with no key but the known ones (what: the body, in errors). */
bool request_parse_object(struct request *rq, size_t max_values, const char *const known[], const char *what);

#endif
