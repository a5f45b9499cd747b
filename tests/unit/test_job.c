/* job.c's pure part: a kernel's word on a cell, checked field by field. */
#include "tap.h"
#include "../../fcgi/job.h"

#include <stdlib.h>
#include <string.h>

static char *kernel_of(const char *raw)
{
	struct buf b = {0};
	buf_append(&b, raw, strlen(raw));
	cJSON *o = job_kernel_json(&b);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	buf_free(&b);
	return text;
}

UNIT_TEST(test_job)
{
	char *t = kernel_of("{\"value\":\"42\",\"error\":null,\"images\":[],\"restarted\":false,\"outputs\":["
			    "{\"output_type\":\"stream\",\"name\":\"stdout\",\"text\":\"hi\\n\"},"
			    "{\"output_type\":\"display_data\",\"data\":{\"text/html\":\"<b>x</b>\","
			    "\"application/json\":{\"a\":[1]},\"text/plain\":\"x\"},\"metadata\":{}},"
			    "{\"output_type\":\"execute_result\",\"data\":{\"text/plain\":\"42\"},\"metadata\":{}}]}");
	is_str(t, "{\"value\":\"42\",\"error\":null,\"images\":[],\"outputs\":["
	       "{\"output_type\":\"stream\",\"name\":\"stdout\",\"text\":\"hi\\n\"},"
	       "{\"output_type\":\"display_data\",\"data\":{\"text/html\":\"<b>x</b>\",\"application/json\":{\"a\":[1]},"
	       "\"text/plain\":\"x\"},\"metadata\":{}},"
	       "{\"output_type\":\"execute_result\",\"data\":{\"text/plain\":\"42\"},\"metadata\":{}}],"
	       "\"restarted\":false}", "kernel: a cell's outputs pass as a notebook keeps them");
	free(t);

	t = kernel_of("{\"outputs\":[{\"output_type\":\"stream\",\"name\":\"/etc/passwd\",\"text\":\"x\"},"
		      "{\"output_type\":\"error\",\"ename\":\"x\"},{\"output_type\":\"display_data\",\"data\":"
		      "{\"Text/HTML\":\"a\",\"text\":\"b\",\"a/b/c\":\"c\",\"image/png\":7,\"text/plain\":{\"x\":1},"
		      "\"application/vnd.x+json\":{\"ok\":true},\"text/x\":\"\\u0000\"},\"metadata\":{\"evil\":1}},"
		      "7,\"s\"]}");
	is_str(t, "{\"value\":null,\"error\":null,\"images\":[],\"outputs\":[{\"output_type\":\"display_data\","
	       "\"data\":{\"application/vnd.x+json\":{\"ok\":true},\"text/x\":\"\"},\"metadata\":{}}],"
	       "\"restarted\":false}",
	       "kernel: other streams, output types, MIME names, and non-text values (but JSON's) are left out");
	free(t);

	t = kernel_of("not json");
	is_str(t, "{\"value\":null,\"error\":null,\"images\":[],\"outputs\":[],\"restarted\":false}",
	       "kernel: a cell whose word does not parse has none");
	free(t);
}
