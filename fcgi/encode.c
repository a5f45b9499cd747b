/*
 * encode.c: bytes as text (encode.h): UTF-8 checks, JSON string literals
 * for arbitrary bytes, base64.
 */
#define _GNU_SOURCE
#include "encode.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
		return (c | 0x20) - 'a' + 10;
	return -1;
}

bool hex_decode(const char *in, struct buf *out)
{
	size_t n = strlen(in);
	if (n % 2)
		return false;
	buf_append(out, "", 0);
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_value(in[i]), lo = hex_value(in[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		char c = (char)(hi << 4 | lo);
		buf_append(out, &c, 1);
	}
	return true;
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

void json_add_time(cJSON *o, const char *key, int64_t ms)
{
	char text[40];
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(text + n, sizeof text - n, ".%03dZ", (int)(ms % 1000));
	cJSON_AddStringToObject(o, key, text);
}
