/* sse.c: Server-Sent Events framing. */
#include "sse.h"
#include "result.h"

#include <string.h>

void sse_event(struct buf *out, const char *name, const char *data)
{
	buf_printf(out, "event: %s\ndata: %s\n\n", name, data);
}

static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool base64_decode(const char *in, struct buf *out)
{
	/* Strict RFC 4648: the alphabet only, '=' only as the padding that
	 * completes the last group (or none at all), and no bits left over:
	 * one text, one meaning. */
	size_t n = strlen(in), pad = 0;
	while (pad < 2 && n > pad && in[n - 1 - pad] == '=')
		pad++;
	size_t body = n - pad;
	if (body % 4 == 1 || (pad && body % 4 + pad != 4))
		return false;
	uint32_t acc = 0;
	int bits = 0;
	buf_append(out, "", 0);
	for (size_t i = 0; i < body; i++) {
		const char *p = strchr(abc, in[i]);
		if (!p)
			return false;
		acc = acc << 6 | (uint32_t)(p - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			char c = (char)(acc >> bits & 0xff);
			buf_append(out, &c, 1);
		}
	}
	return (acc & ((1u << bits) - 1)) == 0;
}

char *base64_encode(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n) v |= p[i + 2];
		*o++ = abc[v >> 18 & 63];
		*o++ = abc[v >> 12 & 63];
		*o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? abc[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

char *sse_chunk_json(const char *p, size_t n)
{
	bool text = utf8_valid(p, n);
	char *inner = text ? json_quote_bytes(p, n) : base64_encode(p, n);
	char *json = text ? xasprintf("{\"data\":%s}", inner) : xasprintf("{\"base64\":\"%s\"}", inner);
	free(inner);
	return json;
}

void sse_output(struct buf *out, struct sse_carry *carry, const char *name,
		const char *p, size_t n, bool final)
{
	struct buf joined = {0};
	buf_append(&joined, carry->tail, carry->len);
	buf_append(&joined, p, n);
	size_t keep = final ? 0 : utf8_incomplete_tail(joined.data, joined.len);
	carry->len = keep;
	memcpy(carry->tail, joined.data + joined.len - keep, keep);
	if (joined.len > keep) {
		char *json = sse_chunk_json(joined.data, joined.len - keep);
		sse_event(out, name, json);
		free(json);
	}
	buf_free(&joined);
}
