/* Server-Sent Events framing. */
#include "tap.h"
#include "../../fcgi/sse.h"
#include "../../fcgi/result.h"

#include <stdlib.h>

static void b64(const char *in, size_t n, const char *want)
{
	char *got = base64_encode(in, n);
	is_str(got, want, "base64: %zu bytes -> %s", n, want);
	free(got);
}

UNIT_TEST(test_sse)
{
	b64("", 0, "");
	b64("f", 1, "Zg==");
	b64("fo", 2, "Zm8=");
	b64("foo", 3, "Zm9v");
	b64("foobar", 6, "Zm9vYmFy");
	b64("\xff\x00", 2, "/wA=");

	struct buf dec = {0};
	ok(base64_decode("Zm9vYmFy", &dec) && dec.len == 6 && !memcmp(dec.data, "foobar", 6),
	   "base64: decode");
	buf_free(&dec);
	ok(base64_decode("/wA=", &dec) && dec.len == 2 && dec.data[0] == '\xff' && dec.data[1] == 0,
	   "base64: decode binary with padding");
	buf_free(&dec);
	ok(!base64_decode("no!", &dec), "base64: refuses a non-base64 character");
	buf_free(&dec);
	ok(!base64_decode("Zm9v=YmFy", &dec), "base64: refuses data after '=' (it used to stop there)");
	buf_free(&dec);
	ok(!base64_decode("Zm9vYh==", &dec), "base64: refuses bits left over in the last group");
	buf_free(&dec);
	ok(!base64_decode("Zm9vY===", &dec) && !base64_decode("Z", &dec) && !base64_decode("Zg=", &dec),
	   "base64: refuses padding that does not complete a group");
	buf_free(&dec);
	ok(base64_decode("Zm9vYg", &dec) && dec.len == 4 && !memcmp(dec.data, "foob", 4),
	   "base64: takes an unpadded last group");
	buf_free(&dec);

	char *j = sse_chunk_json("a\0b\n", 4);
	is_str(j, "{\"data\":\"a\\u0000b\\n\"}", "chunk: valid UTF-8 as text, NUL escaped");
	free(j);
	j = sse_chunk_json("\xff", 1);
	is_str(j, "{\"base64\":\"/w==\"}", "chunk: invalid UTF-8 as base64");
	free(j);

	struct buf out = {0};
	sse_event(&out, "stdout", "{\"data\":\"x\"}");
	is_str(out.data, "event: stdout\ndata: {\"data\":\"x\"}\n\n", "event framing");
	buf_free(&out);

	ok(utf8_incomplete_tail("ab\xc3", 3) == 1, "tail: cut 2-byte sequence");
	ok(utf8_incomplete_tail("\xe2\x82", 2) == 2, "tail: cut 3-byte sequence");
	ok(utf8_incomplete_tail("\xf0\x9f\x98", 3) == 3, "tail: cut 4-byte sequence");
	ok(utf8_incomplete_tail("\xc3\xa9", 2) == 0, "tail: complete sequence");
	ok(utf8_incomplete_tail("abc", 3) == 0, "tail: ASCII");
	ok(utf8_incomplete_tail("\xff", 1) == 0, "tail: invalid byte is not held");

	struct sse_carry carry = {0};
	sse_output(&out, &carry, "stdout", "x\xc3", 2, false);
	is_str(out.data, "event: stdout\ndata: {\"data\":\"x\"}\n\n", "carry: cut byte held back");
	ok(carry.len == 1, "carry: one byte kept");
	buf_free(&out);
	sse_output(&out, &carry, "stdout", "\xa9", 1, false);
	is_str(out.data, "event: stdout\ndata: {\"data\":\"\xc3\xa9\"}\n\n", "carry: joined with the next chunk");
	ok(carry.len == 0, "carry: emptied");
	buf_free(&out);
	sse_output(&out, &carry, "stderr", "\xe2", 1, false);
	ok(out.len == 0, "carry: nothing sent for a lone lead byte");
	sse_output(&out, &carry, "stderr", "", 0, true);
	is_str(out.data, "event: stderr\ndata: {\"base64\":\"4g==\"}\n\n", "carry: flushed at the end as base64");
	buf_free(&out);
}
