/* Result JSON: byte-safe output encoding. */
#include "tap.h"
#include "../../fcgi/result.h"

#include <stdlib.h>

static void quotes(const char *in, size_t n, const char *want, const char *what)
{
	char *got = json_quote_bytes(in, n);
	is_str(got, want, "quote: %s (got %s)", what, got);
	free(got);
}

UNIT_TEST(test_result)
{
	quotes("hi\n", 3, "\"hi\\n\"", "newline escaped");
	quotes("a\0b", 3, "\"a\\u0000b\"", "NUL kept as \\u0000");
	quotes("\"\\", 2, "\"\\\"\\\\\"", "quote and backslash");
	quotes("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"", "control bytes");
	quotes("\xc3\xa9", 2, "\"\xc3\xa9\"", "valid UTF-8 passes");
	quotes("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\"", "4-byte UTF-8 passes");
	quotes("\xff", 1, "\"\\ufffd\"", "invalid byte replaced");
	quotes("\xc3", 1, "\"\\ufffd\"", "cut sequence replaced");
	quotes("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"", "overlong form replaced");
	quotes("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"", "surrogate replaced");
	quotes("", 0, "\"\"", "empty");

	/* Every byte value: the output parses as JSON and gives a string. */
	char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	char *q = json_quote_bytes(all, sizeof all);
	cJSON *parsed = cJSON_Parse(q);
	ok(parsed && cJSON_IsString(parsed), "quote: all 256 byte values give valid JSON");
	cJSON_Delete(parsed);
	free(q);

	struct language lang = {.name = "python", .full_version = "3.11.2"};
	struct sandbox_result res = {.has_run = true, .backend = "gvisor",
		.run = {.exit_code = 137, .timed_out = true, .duration_ms = 1003}};
	buf_append(&res.run.out, "4950\n", 5);
	struct limits l = {.memory_bytes = 1, .cpus = 1, .pids = 1, .output_bytes = 1, .wall_time_ms = 1};
	cJSON *r = result_to_json(&lang, &res, &l);
	char *text = cJSON_PrintUnformatted(r);
	cJSON *back = cJSON_Parse(text);
	cJSON *rn = cJSON_GetObjectItem(back, "run");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItem(back, "backend")), "gvisor", "result: backend");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItem(back, "version")), "3.11.2", "result: full version");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItem(rn, "stdout")), "4950\n", "result: stdout");
	ok(cJSON_GetObjectItem(rn, "exitCode")->valueint == 137 &&
	   cJSON_IsTrue(cJSON_GetObjectItem(rn, "timedOut")) &&
	   cJSON_IsFalse(cJSON_GetObjectItem(rn, "oomKilled")) &&
	   cJSON_IsFalse(cJSON_GetObjectItem(rn, "truncated")) &&
	   cJSON_GetObjectItem(rn, "durationMs")->valueint == 1003, "result: flags and numbers");
	ok(cJSON_GetObjectItem(back, "limits") != NULL, "result: applied limits included");
	ok(cJSON_GetObjectItem(back, "compile") == NULL, "result: no compile object for interpreters");
	ok(cJSON_GetObjectItem(back, "coldReason") == NULL, "result: no coldReason without a warm pool");
	cJSON_Delete(back);
	free(text);
	cJSON_Delete(r);

	res.warm_miss = "memory";
	r = result_to_json(&lang, &res, &l);
	is_str(cJSON_GetStringValue(cJSON_GetObjectItem(r, "coldReason")), "memory", "result: why it ran cold");
	cJSON_Delete(r);
	res.warm = true;
	r = result_to_json(&lang, &res, &l);
	ok(cJSON_GetObjectItem(r, "coldReason") == NULL && cJSON_IsTrue(cJSON_GetObjectItem(r, "warm")),
	   "result: no coldReason when warm");
	cJSON_Delete(r);
	res.warm = false;
	res.warm_miss = NULL;

	res.has_compile = true;
	res.has_run = false;
	res.compile.exit_code = 1;
	buf_append(&res.compile.err, "error: x", 8);
	r = result_to_json(&lang, &res, &l);
	text = cJSON_PrintUnformatted(r);
	back = cJSON_Parse(text);
	ok(cJSON_GetObjectItem(back, "run") == NULL, "result: failed compile has no run");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "compile"), "stderr")),
	       "error: x", "result: compile diagnostics");
	cJSON_Delete(back);
	free(text);
	cJSON_Delete(r);
	sandbox_result_free(&res);
}
