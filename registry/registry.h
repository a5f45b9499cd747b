/*
 * registry.h: the languages isobox runs (registry/registry.yaml) joined with
 * the image lock (deploy/images/build.sh), which pins each image by ID.
 *
 * Ownership: registry_load fills a struct registry that owns every string in
 * it; registry_free releases them. Pointers to a struct language stay valid
 * until that registry is freed, so a request keeps the registry it started
 * with even if a reload happens afterwards.
 */
#ifndef ISOBOX_REGISTRY_H
#define ISOBOX_REGISTRY_H

#include "../conf/lib/base.h"
#include "../conf/limits.h"

struct language {
	char *name;
	struct strv aliases;
	char *version;      /* as pinned in the registry, e.g. "3.11" */
	char *image;        /* recipe name */
	char *image_id;     /* "sha256:<64 hex>" from the lock; NULL if not built */
	char *full_version; /* found in the image, e.g. "3.11.2"; else = version */
	char *file;         /* entry file name for "code" */
	char *note;         /* what a user should know, shown by /runtimes; or NULL */
	struct strv compile; /* argv template of the compile step; empty if none */
	struct strv run;    /* argv template; see argv.c for the placeholders */
	struct strv env;    /* "KEY=value" */
	struct strv agent;  /* the warm pool's agent command; empty: no warm pool */
	struct strv preload; /* modules the agent imports before a job comes */
	struct strv kernel; /* a kernel session's interpreter; empty: no kernels */
	struct limits defaults; /* compile_time_ms: 0 without a compile step */
};

struct registry {
	struct language *langs;
	size_t n;
};

/* Load the registry file and the image lock (a missing lock means no image
 * is built yet: languages load, but none can run). */
bool registry_load(const char *path, const char *lock_path, struct registry *out,
		   char *err, size_t errlen);
bool registry_parse(const char *text, size_t len, const char *lock_text, size_t lock_len,
		    struct registry *out, char *err, size_t errlen);
void registry_free(struct registry *r);

/* Find by name or alias (case-insensitive) and optional version pin.
 * Fails with 404 unknown_language / unknown_version. */
const struct language *registry_find(const struct registry *r, const char *name,
				     const char *version, struct fault *f);

/* Does the pin ("3", "3.11", "3.11.2") match this full version? */
bool version_matches(const char *pin, const char *full);

#endif
