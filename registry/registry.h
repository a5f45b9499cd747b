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
#include "../conf/conf.h"

/*
 * A language may have several versions, each an entry of its own with an
 * image of its own (registry.yaml's `versions`). The entries of one name are
 * next to each other in struct registry, the default (the one listed
 * first) first; they share everything but the version, image and note.
 */
struct language {
	char *name;
	char *id;           /* name@version ("python@3.13"): one version of one
			       language, for the warm pool, metrics and logs */
	struct strv aliases;
	char *version;      /* as pinned in the registry, e.g. "3.11" */
	bool is_default;    /* the version a request without a pin gets */
	char *image;        /* recipe name */
	char *image_id;     /* "sha256:<64 hex>" from the lock; NULL if not built */
	char *full_version; /* found in the image, e.g. "3.11.2"; else = version */
	char *file;         /* entry file name for "code" */
	char *note;         /* what a user should know, shown by /runtimes; or NULL */
	char *sample;       /* a hello-world program: /runtimes shows it, the
			       playground starts from it; or NULL */
	struct strv compile; /* argv template of the compile step; empty if none */
	struct strv run;    /* argv template; see spec.c for the placeholders */
	struct strv env;    /* "KEY=value" */
	struct strv agent;  /* the warm pool's agent command; empty: no warm pool */
	struct strv preload; /* modules the agent imports before a job comes */
	struct strv kernel; /* a kernel session's interpreter; empty: no kernels */
	struct limits defaults; /* compile_time_ms: 0 without a compile step */
	int64_t min_memory_bytes; /* the least its compiler or runtime works in
				     (minMemoryBytes); 0: the conf's floor */
	/* Piston's words for it where they are not ours (piston:), for the
	 * Piston routes only: its language name (NULL: ours), the package
	 * that provides it (its runtimes list's "runtime"; NULL: none), and
	 * its aliases that ours lack. */
	char *piston_name, *piston_runtime;
	struct strv piston_aliases;
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

/* Find by name or alias (case-insensitive) and optional version pin: no
 * pin, the default version; a pin, the highest version it matches (as
 * Piston picks). Fails with 404 unknown_language / unknown_version. */
const struct language *registry_find(const struct registry *r, const char *name,
				     const char *version, struct fault *f);

/* The versions of a language, by name or alias: *n entries from the one
 * returned (the default); NULL if there is no such language. */
const struct language *registry_family(const struct registry *r, const char *name, size_t *n);

/* Of the n versions from first (registry_family), the highest whose full
 * version admits(full, pattern) accepts; NULL if none does. */
const struct language *registry_highest(const struct language *first, size_t n,
					bool (*admits)(const char *full, const char *pattern),
					const char *pattern);

/* The entry with this id ("python@3.13"), or NULL. */
const struct language *registry_by_id(const struct registry *r, const char *id);

/* A run's limits: the request's (those in `set`, limits_parse's mask) over
 * the language's defaults, held between the conf's floors and `ceiling`,
 * with at least the language's min_memory_bytes of memory (raised as the
 * floors raise: below it a compiler thrashes until its time runs out).
 * A ceiling always wins; registry_fits checks that the conf's leave room. */
struct limits language_limits(const struct language *l, const struct limits *asked, unsigned set,
			      const struct conf *c, const struct limits *ceiling);

/* Does every language's least memory fit under the conf's ceilings (the
 * run's and a session's)? Else the reason, for a load that fails. */
bool registry_fits(const struct registry *r, const struct conf *c, char *err, size_t errlen);

/* Is the language's image built (in the lock)? Else 503 image_not_built,
 * naming the recipe that makes it: `make run` builds the versions besides
 * the defaults in the background, and a reload then takes them in. */
bool registry_image_built(const struct language *l, struct fault *f);

/* Does the pin ("3", "3.11", "3.11.2") match this full version? */
bool version_matches(const char *pin, const char *full);

/* Order two full versions by their dot-separated numbers ("3.9" < "3.13");
 * <0, 0, >0 as strcmp. A part that is not a number compares as text. */
int version_compare(const char *a, const char *b);

#endif
