/*
 * assets.h: the static files the worker serves (GET /, /openapi.yaml,
 * /llms.txt), embedded in the binary at build time.
 *
 * The sources stay legible in the tree (fcgi/www/index.html,
 * docs/openapi.yaml, docs/llms.txt); the Makefile turns them into byte
 * arrays (bin/assets_data.h, made with `xxd -i`), so a deployment is one
 * binary with nothing to install next to it and nothing that can drift.
 */
#ifndef ISOBOX_ASSETS_H
#define ISOBOX_ASSETS_H

#include <stdbool.h>
#include <stddef.h>

struct asset {
	const char *path;         /* the route: "/openapi.yaml" */
	const char *content_type;
	const unsigned char *bytes; /* static; not NUL-terminated */
	size_t len;
};

/* The embedded file served at `path`, or NULL. */
const struct asset *asset_find(const char *path);

/* Strong validator of an asset's bytes: "\"<16 hex digits>\"" (FNV-1a 64). */
#define ASSET_ETAG_SIZE 20
void asset_etag(const struct asset *a, char out[ASSET_ETAG_SIZE]);

/* Does an If-None-Match header value ("*", a list, W/ tags) match etag? */
bool etag_matches(const char *if_none_match, const char *etag);

/* The route handler for every embedded file (ETag, 304, HEAD). */
struct worker;
struct request;
void asset_serve(struct worker *w, struct request *rq);

#endif
