/*
 * json.h: strict readers for cJSON objects, shared by the request parser and
 * the config loaders. Each returns false with a fault that names the field
 * ("limits.cpus must be a number"), so every caller reports errors the same
 * way. `what` is the field's full name as the user wrote it.
 */
#ifndef ISOBOX_JSON_H
#define ISOBOX_JSON_H

#include "base.h"
#include <cjson/cJSON.h>

/* Every key of obj is in known (NULL-terminated); else 400 unknown_field. */
bool json_known_keys(const cJSON *obj, const char *const known[], const char *what, struct fault *f);
bool json_object(const cJSON *v, const char *what, struct fault *f);
/* A member of an object, or NULL when it is absent or JSON null: typed
 * clients (pydantic, TypeScript) send null for the fields they leave out,
 * so in a request an optional field that is null is absent. */
const cJSON *json_field(const cJSON *obj, const char *key);
/* The string member key of obj, or "" when there is none (for reading
 * what we wrote, or what needs no error when it is missing). */
const char *json_text(const cJSON *obj, const char *key);
bool json_string(const cJSON *v, const char *what, const char **out, struct fault *f);
bool json_bool(const cJSON *v, const char *what, bool *out, struct fault *f);
/* An integral number in [min, max]. */
bool json_int(const cJSON *v, const char *what, int64_t min, int64_t max, int64_t *out, struct fault *f);
bool json_number(const cJSON *v, const char *what, double *out, struct fault *f);
/* An array of strings, returned as a strv of copies. */
bool json_strings(const cJSON *v, const char *what, size_t max, struct strv *out, struct fault *f);

/*
 * Parse a request body strictly: no escaped NUL ("\u0000", which cJSON
 * would cut a string at, silently), at most max_values values (checked on
 * the raw text, before parsing: cJSON's memory grows with their number),
 * nothing after the value, and no object with the same key twice (parsers
 * disagree on which one wins: "network" false to one, true to another).
 * *out is the caller's to cJSON_Delete.
 */
bool json_parse_strict(const char *text, size_t len, size_t max_values, cJSON **out, struct fault *f);

#endif
