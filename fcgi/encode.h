/*
 * encode.h: bytes as text, for JSON answers and Server-Sent Events (pure;
 * unit-tested in test_result.c and test_sse.c).
 *
 * Program output is arbitrary bytes. JSON strings are Unicode, so output is
 * encoded like this: valid UTF-8 passes through, NUL and other control
 * bytes become \u00XX escapes (lossless), and each byte that is not part of
 * valid UTF-8 becomes U+FFFD (lossy, and the only loss). Documented in
 * docs/API.md. Where no loss is allowed (a stream's chunks), base64.
 */
#ifndef ISOBOX_ENCODE_H
#define ISOBOX_ENCODE_H

#include "../conf/lib/base.h"
#include <cjson/cJSON.h>

/* A JSON string literal, quotes included, for bytes p[0..n). Caller frees. */
char *json_quote_bytes(const char *p, size_t n);

/* Add key: p[0..n) to o as a JSON string, encoded as above. */
void json_add_bytes(cJSON *o, const char *key, const char *p, size_t n);

/* Is p[0..n) entirely valid UTF-8? */
bool utf8_valid(const char *p, size_t n);

/* A wall-clock time (ms since the epoch) as "2026-11-30T22:43:10.123Z". */
void json_add_time(cJSON *o, const char *key, int64_t ms);
/* How many bytes at the end of p[0..n) begin a UTF-8 sequence that the
 * next chunk may complete (0-3). */
size_t utf8_incomplete_tail(const char *p, size_t n);

/* Base64 (RFC 4648, padded) of p[0..n). Caller frees. */
char *base64_encode(const char *p, size_t n);
/* The bytes of a base64 text into *out; false unless it is exact RFC 4648 base64. */
bool base64_decode(const char *text, struct buf *out);
/* The bytes of a hex text ("00ff", either case) into *out; false unless it
 * is pairs of hex digits and nothing else. */
bool hex_decode(const char *text, struct buf *out);

#endif
