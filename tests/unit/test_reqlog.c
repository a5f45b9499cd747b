/* A request's id (the client's X-Request-Id when sane) and its log line. */
#include "tap.h"
#include "../../fcgi/reqlog.h"
#include "../../fcgi/request.h"

#include <stdlib.h>

static void line_is(struct reqlog *l, const char *want, const char *what)
{
	char *got = reqlog_end(l);
	is_str(got, want, "request log: %s", what);
	if (!tap_streq(got, want))
		printf("#   got  %s\n#   want %s\n", got, want);
	free(got);
}

UNIT_TEST(test_reqlog)
{
	ok(request_id_sane("0f9b6c1e-2d3a-4b5c-8d7e-6f5a4b3c2d1e"), "request id: a UUID is kept");
	ok(request_id_sane("01HQ3Z8K2V6W8Y0A1B2C3D4E5F") && request_id_sane("trace:span.1_a"),
	   "request id: a ULID, and letters, digits and ._:- are kept");
	char sixty_four[65], sixty_five[66];
	memset(sixty_four, 'a', 64);
	sixty_four[64] = '\0';
	memset(sixty_five, 'a', 65);
	sixty_five[65] = '\0';
	ok(request_id_sane(sixty_four) && !request_id_sane(sixty_five), "request id: at most 64 characters");
	ok(!request_id_sane(""), "request id: an empty one is replaced");
	ok(!request_id_sane("a b") && !request_id_sane("a\"b") && !request_id_sane("a=b") &&
	   !request_id_sane("a\r\nX-Evil: 1") && !request_id_sane("caf\xc3\xa9") && !request_id_sane("a/b"),
	   "request id: spaces, quotes, =, line breaks, non-ASCII and / are replaced");

	struct reqlog l;
	reqlog_begin(&l, false, "request");
	reqlog_str(&l, "id", "abc");
	reqlog_str(&l, "route", "/execute");
	reqlog_int(&l, "status", 200);
	reqlog_str(&l, "tenant", "");   /* unknown: left out */
	reqlog_str(&l, "language", NULL);
	reqlog_flag(&l, "oom", false);  /* rare flags: only when true */
	reqlog_flag(&l, "timed_out", true);
	line_is(&l, "request id=abc route=/execute status=200 timed_out=true", "logfmt, fields in order");

	reqlog_begin(&l, false, "request");
	reqlog_str(&l, "method", "GET x=1 \"y\"\n\\");
	reqlog_str(&l, "client", "caf\xc3\xa9");
	line_is(&l, "request method=\"GET x=1 \\\"y\\\"\\x0a\\\\\" client=\"caf\xc3\xa9\"",
		"logfmt quotes a value with a space, =, quote, backslash, line break or non-ASCII");

	reqlog_begin(&l, true, "request");
	reqlog_str(&l, "id", "abc");
	reqlog_int(&l, "ms", 12);
	reqlog_flag(&l, "oom", true);
	reqlog_str(&l, "method", "a\"\n\xff");
	line_is(&l, "{\"msg\":\"request\",\"id\":\"abc\",\"ms\":12,\"oom\":true,\"method\":\"a\\\"\\n\\ufffd\"}",
		"json: one object, a client's bytes kept valid UTF-8");
}
