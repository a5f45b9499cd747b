/* json.c: strict cJSON field readers. */
#include "json.h"

#include <math.h>
#include <string.h>

bool json_known_keys(const cJSON *obj, const char *const known[], const char *what, struct fault *f)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, obj) {
		size_t i;
		for (i = 0; known[i]; i++)
			if (!strcmp(c->string, known[i]))
				break;
		if (!known[i])
			return fail(f, 400, "unknown_field", "unknown field \"%.64s\" in %s",
				    c->string, what);
	}
	return true;
}

bool json_object(const cJSON *v, const char *what, struct fault *f)
{
	if (!cJSON_IsObject(v))
		return fail(f, 400, "invalid_type", "%s must be an object", what);
	return true;
}

bool json_string(const cJSON *v, const char *what, const char **out, struct fault *f)
{
	if (!cJSON_IsString(v))
		return fail(f, 400, "invalid_type", "%s must be a string", what);
	*out = v->valuestring;
	return true;
}

bool json_bool(const cJSON *v, const char *what, bool *out, struct fault *f)
{
	if (!cJSON_IsBool(v))
		return fail(f, 400, "invalid_type", "%s must be true or false", what);
	*out = cJSON_IsTrue(v);
	return true;
}

bool json_number(const cJSON *v, const char *what, double *out, struct fault *f)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return fail(f, 400, "invalid_type", "%s must be a number", what);
	*out = v->valuedouble;
	return true;
}

bool json_int(const cJSON *v, const char *what, int64_t min, int64_t max, int64_t *out, struct fault *f)
{
	double d = 0;
	if (!json_number(v, what, &d, f))
		return false;
	if (d != floor(d))
		return fail(f, 400, "invalid_value", "%s must be a whole number", what);
	if (d < (double)min || d > (double)max)
		return fail(f, 400, "invalid_value", "%s must be between %lld and %lld",
			    what, (long long)min, (long long)max);
	*out = (int64_t)d;
	return true;
}

bool json_strings(const cJSON *v, const char *what, size_t max, struct strv *out, struct fault *f)
{
	if (!cJSON_IsArray(v))
		return fail(f, 400, "invalid_type", "%s must be an array of strings", what);
	if ((size_t)cJSON_GetArraySize(v) > max)
		return fail(f, 400, "too_many", "%s has more than %zu entries", what, max);
	const cJSON *c;
	cJSON_ArrayForEach(c, v) {
		if (!cJSON_IsString(c))
			return fail(f, 400, "invalid_type", "%s must contain only strings", what);
		strv_push(out, c->valuestring);
	}
	return true;
}

bool json_text_has_nul_escape(const char *text, size_t len)
{
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = text[i] == '"';
			continue;
		}
		if (text[i] == '"') {
			in_string = false;
		} else if (text[i] == '\\' && i + 1 < len) {
			if (text[i + 1] == 'u' && i + 5 < len &&
			    !memcmp(text + i + 2, "0000", 4))
				return true;
			i++; /* skip the escaped character */
		}
	}
	return false;
}
