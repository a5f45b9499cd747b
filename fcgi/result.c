/* result.c: execution results as JSON. */
#include "result.h"

#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not valid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
	else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
	else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
	else return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* No overlong forms, no surrogates, nothing past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (!len)
			return false;
		i += len;
	}
	return true;
}

size_t utf8_incomplete_tail(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	/* Look back at most 3 bytes for a lead byte whose sequence is cut. */
	for (size_t back = 1; back <= 3 && back <= n; back++) {
		unsigned char c = p[n - back];
		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: keep looking for the lead */
		size_t need = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 :
			      c >= 0xc2 && c <= 0xdf ? 2 : 1;
		return need > back ? back : 0;
	}
	return 0;
}

char *json_quote_bytes(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	struct buf b = {0};
	buf_append(&b, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t len = utf8_seq(p + i, n - i);
		if (len == 0) {
			buf_append(&b, "\\ufffd", 6);
			i++;
			continue;
		}
		if (len > 1) {
			buf_append(&b, p + i, len);
		} else if (c == '"' || c == '\\') {
			char esc[2] = {'\\', (char)c};
			buf_append(&b, esc, 2);
		} else if (c == '\n') {
			buf_append(&b, "\\n", 2);
		} else if (c == '\t') {
			buf_append(&b, "\\t", 2);
		} else if (c == '\r') {
			buf_append(&b, "\\r", 2);
		} else if (c < 0x20 || c == 0x7f) {
			buf_printf(&b, "\\u%04x", c);
		} else {
			buf_append(&b, &c, 1);
		}
		i += len;
	}
	buf_append(&b, "\"", 1);
	return b.data;
}

void json_add_bytes(cJSON *o, const char *key, const char *p, size_t n)
{
	char *q = json_quote_bytes(p ? p : "", n);
	cJSON_AddRawToObject(o, key, q);
	free(q);
}

cJSON *language_to_json(const struct language *l)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "language", l->name);
	cJSON_AddStringToObject(r, "version", l->full_version);
	cJSON *aliases = cJSON_AddArrayToObject(r, "aliases");
	for (size_t j = 0; j < l->aliases.n; j++)
		cJSON_AddItemToArray(aliases, cJSON_CreateString(l->aliases.v[j]));
	return r;
}

cJSON *network_to_json(bool enabled, bool ready, const char *mode, const struct fault *why)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "enabled", enabled);
	cJSON_AddBoolToObject(o, "available", ready);
	cJSON_AddStringToObject(o, "mode", mode);
	if (enabled && !ready)
		cJSON_AddStringToObject(o, "reason", why->message);
	return o;
}

cJSON *phase_to_json(const struct sandbox_phase *p)
{
	cJSON *o = cJSON_CreateObject();
	json_add_bytes(o, "stdout", p->out.data, p->out.len);
	json_add_bytes(o, "stderr", p->err.data, p->err.len);
	cJSON_AddNumberToObject(o, "exitCode", p->exit_code);
	cJSON_AddBoolToObject(o, "timedOut", p->timed_out);
	cJSON_AddBoolToObject(o, "oomKilled", p->oom_killed);
	cJSON_AddBoolToObject(o, "truncated", p->truncated);
	cJSON_AddNumberToObject(o, "durationMs", (double)p->duration_ms);
	return o;
}

cJSON *result_to_json(const struct language *lang, const struct sandbox_result *res,
		      const struct limits *applied)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "language", lang->name);
	cJSON_AddStringToObject(o, "version", lang->full_version);
	cJSON_AddStringToObject(o, "backend", "gvisor");
	if (res->has_compile)
		cJSON_AddItemToObject(o, "compile", phase_to_json(&res->compile));
	if (res->has_run)
		cJSON_AddItemToObject(o, "run", phase_to_json(&res->run));
	cJSON_AddItemToObject(o, "limits", limits_to_json(applied));
	return o;
}
