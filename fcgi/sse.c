/* sse.c: Server-Sent Events framing. */
#include "sse.h"

#include <string.h>

void sse_event(struct buf *out, const char *name, const char *data)
{
	buf_printf(out, "event: %s\ndata: %s\n\n", name, data);
}

char *sse_chunk_json(const char *p, size_t n)
{
	bool text = utf8_valid(p, n);
	char *inner = text ? json_quote_bytes(p, n) : base64_encode(p, n);
	char *json = text ? xasprintf("{\"data\":%s}", inner) : xasprintf("{\"base64\":\"%s\"}", inner);
	free(inner);
	return json;
}

size_t sse_carry_join(struct sse_carry *carry, const char *p, size_t n, bool final, struct buf *joined)
{
	buf_append(joined, carry->tail, carry->len);
	buf_append(joined, p, n);
	size_t keep = final ? 0 : utf8_incomplete_tail(joined->data, joined->len);
	carry->len = keep;
	memcpy(carry->tail, joined->data + joined->len - keep, keep);
	return joined->len - keep;
}

void sse_output(struct buf *out, struct sse_carry *carry, const char *name,
		const char *p, size_t n, bool final)
{
	struct buf joined = {0};
	size_t whole = sse_carry_join(carry, p, n, final, &joined);
	if (whole) {
		char *json = sse_chunk_json(joined.data, whole);
		sse_event(out, name, json);
		free(json);
	}
	buf_free(&joined);
}
