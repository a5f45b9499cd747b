/* libFuzzer: the attached stream's demultiplexer (sandbox/demux.c).
 * Whatever the bytes, it never points outside them, always makes progress,
 * and says the same fed whole or one byte at a time. */
#include "../../conf/lib/base.h"
#include "../../sandbox/demux.h"

#include <stdlib.h>
#include <string.h>

static void feed(struct demux *d, struct buf *log, const char *p, size_t n)
{
	const char *end = p + n;
	while (n > 0) {
		int fd;
		const char *data;
		size_t len;
		size_t used = demux_feed(d, p, n, &fd, &data, &len);
		if (!used || used > n || (len && (data < p || data + len > end)) || (len && fd != 1 && fd != 2))
			abort();
		for (size_t i = 0; i < len; i++) /* one byte, with its stream */
			buf_printf(log, "%d%c", fd, data[i]);
		p += used;
		n -= used;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct demux d1 = {0}, d2 = {0};
	struct buf a = {0}, b = {0};
	feed(&d1, &a, (const char *)data, size);
	for (size_t i = 0; i < size; i++)
		feed(&d2, &b, (const char *)data + i, 1);
	if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len)))
		abort();
	buf_free(&a);
	buf_free(&b);
	return 0;
}
