/*
 * access.h: who may call what.
 *
 * The pool's own endpoints (/metrics, /healthz): conf/isobox.yaml lists
 * address ranges per endpoint (conf/cidr.h); a request is allowed when
 * REMOTE_ADDR (the peer the web server saw) is inside one of them.
 *
 * Every endpoint: the Host header must name this service (access.hosts),
 * so that a web page whose name was re-pointed at this host (DNS
 * rebinding) cannot drive the API from a browser that can reach it.
 * Web pages of other origins may read our answers only when
 * access.corsOrigins lists them (off by default).
 *
 * Parsing is strict: a bad entry is a config error, never a silently open
 * door.
 */
#ifndef ISOBOX_ACCESS_H
#define ISOBOX_ACCESS_H

#include "lib/base.h"
#include "cidr.h"
#include <cjson/cJSON.h>

/* A list of ranges. `open` (no list configured): everyone is allowed. */
struct cidr_list {
	struct cidr *v;
	size_t n;
	bool open;
};

struct access {
	struct cidr_list metrics, healthz;
	struct strv hosts; /* lower-case names; empty: any Host ("*") */
	struct strv cors_origins; /* web pages that may call the API from a browser; empty: none */
};

/*
 * May a request with this Host header be served? The port is ignored, and
 * so is the case. No Host at all (HTTP/1.0) is served: a browser always
 * sends one.
 */
bool access_host_allowed(const struct access *a, const char *host);

/* May a web page from this Origin read our answers (CORS)? */
bool access_origin_allowed(const struct access *a, const char *origin);

/* A YAML list of ranges ("10.0.0.0/8", "::1"), for `what` in errors. */
bool cidr_list_parse(const cJSON *v, const char *what, struct cidr_list *l, struct fault *f);

/* Is the textual address `addr` (REMOTE_ADDR) allowed? NULL/garbage: no. */
bool cidr_list_allows(const struct cidr_list *l, const char *addr);

/*
 * The `access:` section (may be NULL: the defaults). Defaults: metrics
 * loopback only (127.0.0.0/8, ::1/128), healthz open, hosts localhost,
 * 127.0.0.1 and [::1]. Ownership: *a owns its arrays; access_free
 * releases them.
 */
bool access_parse(const cJSON *section, struct access *a, struct fault *f);
void access_free(struct access *a);

#endif
