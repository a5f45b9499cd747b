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
bool json_string(const cJSON *v, const char *what, const char **out, struct fault *f);
bool json_bool(const cJSON *v, const char *what, bool *out, struct fault *f);
/* An integral number in [min, max]. */
bool json_int(const cJSON *v, const char *what, int64_t min, int64_t max, int64_t *out, struct fault *f);
bool json_number(const cJSON *v, const char *what, double *out, struct fault *f);
/* An array of strings, returned as a strv of copies. */
bool json_strings(const cJSON *v, const char *what, size_t max, struct strv *out, struct fault *f);

/*
 * cJSON cuts a string at an escaped NUL ("\u0000"), silently. Scan the raw
 * text for such an escape first, so that it is refused instead.
 */
bool json_text_has_nul_escape(const char *text, size_t len);

#endif
