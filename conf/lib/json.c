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
			return fail(f, E_UNKNOWN_FIELD, "unknown field \"%.64s\" in %s",
				    c->string, what);
	}
	return true;
}

bool json_object(const cJSON *v, const char *what, struct fault *f)
{
	if (!cJSON_IsObject(v))
		return fail(f, E_INVALID_TYPE, "%s must be an object", what);
	return true;
}

const cJSON *json_field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNull(v) ? NULL : v;
}

const char *json_text(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

bool json_string(const cJSON *v, const char *what, const char **out, struct fault *f)
{
	if (!cJSON_IsString(v))
		return fail(f, E_INVALID_TYPE, "%s must be a string", what);
	*out = v->valuestring;
	return true;
}

bool json_bool(const cJSON *v, const char *what, bool *out, struct fault *f)
{
	if (!cJSON_IsBool(v))
		return fail(f, E_INVALID_TYPE, "%s must be true or false", what);
	*out = cJSON_IsTrue(v);
	return true;
}

bool json_number(const cJSON *v, const char *what, double *out, struct fault *f)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return fail(f, E_INVALID_TYPE, "%s must be a number", what);
	*out = v->valuedouble;
	return true;
}

bool json_int(const cJSON *v, const char *what, int64_t min, int64_t max, int64_t *out, struct fault *f)
{
	double d = 0;
	if (!json_number(v, what, &d, f))
		return false;
	if (d != floor(d))
		return fail(f, E_INVALID_VALUE, "%s must be a whole number", what);
	if (d < (double)min || d > (double)max)
		return fail(f, E_INVALID_VALUE, "%s must be between %lld and %lld",
			    what, (long long)min, (long long)max);
	*out = (int64_t)d;
	return true;
}

bool json_strings(const cJSON *v, const char *what, size_t max, struct strv *out, struct fault *f)
{
	if (!cJSON_IsArray(v))
		return fail(f, E_INVALID_TYPE, "%s must be an array of strings", what);
	if ((size_t)cJSON_GetArraySize(v) > max)
		return fail(f, E_TOO_MANY, "%s has more than %zu entries", what, max);
	const cJSON *c;
	cJSON_ArrayForEach(c, v) {
		if (!cJSON_IsString(c))
			return fail(f, E_INVALID_TYPE, "%s must contain only strings", what);
		strv_push(out, c->valuestring);
	}
	return true;
}

/*
 * One pass over the raw text, outside strings: is there an escaped NUL
 * ("\u0000", which cJSON would cut a string at, silently), and how many
 * values does it hold (the root, one per ':' in an object, one per array
 * element)? cJSON spends some 100 bytes of memory per value, so the count
 * is checked before it parses anything. Deeper than the stack of
 * container kinds, arrays are assumed: the count only grows.
 */
/* JSON's whitespace (a NUL is not: strchr would find the terminator). */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void scan(const char *text, size_t len, bool *nul, size_t *values)
{
	unsigned char is_array[128] = {0}; /* a bit per nesting level */
	size_t depth = 0;
	bool in_string = false;
	*nul = false;
	*values = 1;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		bool array = depth == 0 || depth > 8 * sizeof is_array ||
			     (is_array[(depth - 1) / 8] >> ((depth - 1) % 8) & 1);
		if (!in_string) {
			in_string = c == '"';
			if (c == ':' || (c == ',' && array)) {
				(*values)++;
			} else if (c == '[' || c == '{') {
				depth++;
				if (depth <= 8 * sizeof is_array) {
					unsigned char bit = (unsigned char)(1u << ((depth - 1) % 8));
					is_array[(depth - 1) / 8] = c == '[' ? is_array[(depth - 1) / 8] | bit
									     : is_array[(depth - 1) / 8] & ~bit;
				}
				size_t j = i + 1;
				while (j < len && is_space(text[j]))
					j++;
				*values += c == '[' && (j >= len || text[j] != ']'); /* its first element */
			} else if ((c == ']' || c == '}') && depth > 0) {
				depth--;
			}
		} else if (c == '"') {
			in_string = false;
		} else if (c == '\\' && i + 1 < len) {
			if (text[i + 1] == 'u' && i + 5 < len && !memcmp(text + i + 2, "0000", 4))
				*nul = true;
			i++; /* skip the escaped character */
		}
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key that an object of the tree holds twice, or NULL. Sorted
 * per object: a flat object of many keys costs n log n, not n squared. */
static const char *duplicate_key(const cJSON *v)
{
	const char *dup = NULL;
	size_t n = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, v) n++;
	if (cJSON_IsObject(v) && n > 1) {
		const char **names = xcalloc(n, sizeof *names);
		size_t i = 0;
		cJSON_ArrayForEach(c, v) names[i++] = c->string;
		qsort(names, n, sizeof *names, by_name);
		for (i = 1; i < n && !dup; i++)
			if (!strcmp(names[i - 1], names[i]))
				dup = names[i];
		free(names);
	}
	cJSON_ArrayForEach(c, v) {
		if (dup)
			break;
		dup = duplicate_key(c);
	}
	return dup;
}

bool json_parse_strict(const char *text, size_t len, size_t max_values, cJSON **out, struct fault *f)
{
	bool nul;
	size_t values;
	*out = NULL;
	scan(text, len, &nul, &values);
	if (nul)
		return fail(f, E_INVALID_VALUE,
			    "strings must not contain NUL (\\u0000); send binary data in files");
	if (values > max_values)
		return fail(f, E_TOO_MANY, "the body holds more than %zu JSON values", max_values);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		size_t at = end ? (size_t)(end - text) : 0;
		return fail(f, E_BAD_JSON, "the body is not valid JSON (near byte %zu)", at);
	}
	for (; end && end < text + len; end++)
		if (!is_space(*end)) {
			cJSON_Delete(root);
			return fail(f, E_BAD_JSON, "the body has data after the JSON value");
		}
	const char *dup = duplicate_key(root);
	if (dup) {
		fail(f, E_DUPLICATE_KEY, "the key \"%.64s\" appears twice in one object", dup);
		cJSON_Delete(root);
		return false;
	}
	*out = root;
	return true;
}
