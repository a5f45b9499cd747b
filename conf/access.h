/*
 * access.h: who may call the pool's own endpoints (/metrics, /healthz).
 *
 * conf/isobox.yaml lists address ranges per endpoint (conf/cidr.h); a
 * request is allowed when REMOTE_ADDR (the peer the web server saw) is
 * inside one of them. Parsing is strict: a bad range is a config error,
 * never a silently open door.
 */
#ifndef ISOBOX_ACCESS_H
#define ISOBOX_ACCESS_H

#include "base.h"
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
};

/* Is the textual address `addr` (REMOTE_ADDR) allowed? NULL/garbage: no. */
bool cidr_list_allows(const struct cidr_list *l, const char *addr);

/*
 * The `access:` section (may be NULL: the defaults). Defaults: metrics
 * loopback only (127.0.0.0/8, ::1/128), healthz open. Ownership: *a owns
 * its arrays; access_free releases them.
 */
bool access_parse(const cJSON *section, struct access *a, struct fault *f);
void access_free(struct access *a);

#endif
