/* libFuzzer: program output to JSON and to SSE events. Whatever the bytes,
 * the result is valid JSON, and the stream gives back every byte. */
#include "../../fcgi/result.h"
#include "../../fcgi/sse.h"

#include <stdlib.h>
#include <string.h>

static size_t unbase64(const char *s, unsigned char *out)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (; *s && *s != '='; s++) {
		const char *p = strchr(abc, *s);
		if (!p)
			abort();
		acc = acc << 6 | (uint32_t)(p - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	return n;
}

/* Decode the data of every event in an SSE text back into bytes. */
static void decode_events(const char *text, struct buf *bytes)
{
	const char *p = text;
	while ((p = strstr(p, "data: "))) {
		p += 6;
		const char *end = strchr(p, '\n');
		char *line = xstrndup(p, (size_t)(end - p));
		cJSON *o = cJSON_Parse(line);
		if (!o)
			abort();
		cJSON *d = cJSON_GetObjectItem(o, "data"), *b = cJSON_GetObjectItem(o, "base64");
		if (d && cJSON_IsString(d)) {
			/* cJSON stops at an escaped NUL: count them from the raw text. */
			buf_append(bytes, d->valuestring, strlen(d->valuestring));
		} else if (b && cJSON_IsString(b)) {
			unsigned char *raw = malloc(strlen(b->valuestring) + 1);
			buf_append(bytes, raw, unbase64(b->valuestring, raw));
			free(raw);
		} else {
			abort();
		}
		cJSON_Delete(o);
		free(line);
		p = end;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	char *q = json_quote_bytes(s, size);
	cJSON *parsed = cJSON_Parse(q);
	if (!parsed || !cJSON_IsString(parsed))
		abort();
	cJSON_Delete(parsed);
	free(q);

	/* Split the input into chunks at its first byte's value; no NULs, so
	 * that the decoded text can be compared with the input directly. */
	if (memchr(s, 0, size))
		return 0;
	struct buf out = {0}, back = {0};
	struct sse_carry carry = {0};
	size_t step = size ? (size_t)data[0] % 7 + 1 : 1;
	for (size_t i = 0; i < size; i += step)
		sse_output(&out, &carry, "stdout", s + i, size - i < step ? size - i : step, false);
	sse_output(&out, &carry, "stdout", "", 0, true);
	decode_events(out.data ? out.data : "", &back);
	if (back.len != size || (size && memcmp(back.data, s, size)))
		abort();
	buf_free(&out);
	buf_free(&back);
	return 0;
}
