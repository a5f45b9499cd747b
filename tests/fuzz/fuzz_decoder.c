/* libFuzzer: the sandbox's stderr protocol decoder (sandbox/decoder.c).
 * Whatever the bytes, it never reads outside them, always makes progress,
 * and gives the same events fed whole as fed one byte at a time. */
#include "../../sandbox/decoder.h"

#include <stdlib.h>
#include <string.h>

/* The events, with output of one kind and fd merged whatever the split. */
struct events {
	enum dec_kind kind[4096];
	int fd[4096], rc[4096];
	struct buf data[4096];
	size_t n;
};

static void record(struct events *e, const struct dec_event *ev)
{
	bool data = ev->kind == DEC_DOCKER || ev->kind == DEC_COMPILE_OUTPUT || ev->kind == DEC_OUTPUT;
	if (ev->kind == DEC_MORE)
		return;
	if (!(data && e->n && e->kind[e->n - 1] == ev->kind && e->fd[e->n - 1] == ev->fd)) {
		if (e->n == 4096)
			abort(); /* the input cannot make that many: a bug */
		e->kind[e->n] = ev->kind;
		e->fd[e->n] = ev->fd;
		e->rc[e->n] = ev->rc;
		e->data[e->n] = (struct buf){0};
		e->n++;
	}
	if (data)
		buf_append(&e->data[e->n - 1], ev->data, ev->len);
}

static void feed(struct decoder *d, struct events *e, int fd, const char *p, size_t n)
{
	const char *end = p + n;
	struct dec_event ev;
	int rounds = 0;
	do {
		size_t used = decoder_feed(d, fd, p, n, &ev);
		if (used > n || ++rounds > 100000)
			abort();
		bool held = ev.data >= d->end_mark && ev.data + ev.len <= d->end_mark + sizeof d->end_mark;
		if (ev.len && !held && (ev.data < p || ev.data + ev.len > end))
			abort(); /* an event's bytes are inside what it was given, or held back */
		record(e, &ev);
		p += used;
		n -= used;
	} while (n > 0 || ev.kind != DEC_MORE);
}

/* The input: a flag byte (bit 0: compiles; bit 1: a warm run, whose end
 * marks have the nonce "ab12"), then chunks: a byte giving the fd (low
 * bit) and the length (the rest), then that many bytes. */
static void run(const uint8_t *data, size_t size, bool bytewise, struct events *e)
{
	struct decoder d;
	decoder_init(&d, data[0] & 1);
	if (data[0] & 2)
		decoder_expect_end(&d, "ab12");
	for (size_t i = 1; i < size;) {
		int fd = (data[i] & 1) ? 1 : 2;
		size_t len = data[i] >> 1;
		i++;
		if (len > size - i)
			len = size - i;
		if (bytewise)
			for (size_t k = 0; k < len; k++)
				feed(&d, e, fd, (const char *)data + i + k, 1);
		else
			feed(&d, e, fd, (const char *)data + i, len);
		i += len;
	}
	for (int fd = 1; fd <= 2; fd++) { /* end of file: held bytes are output */
		struct dec_event ev;
		decoder_flush(&d, fd, &ev);
		record(e, &ev);
	}
}

static struct events a, b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	a.n = b.n = 0;
	run(data, size, false, &a);
	run(data, size, true, &b);
	if (a.n != b.n)
		abort();
	for (size_t i = 0; i < a.n; i++) {
		if (a.kind[i] != b.kind[i] || a.fd[i] != b.fd[i] || a.rc[i] != b.rc[i] ||
		    a.data[i].len != b.data[i].len ||
		    (a.data[i].len && memcmp(a.data[i].data, b.data[i].data, a.data[i].len)))
			abort();
		buf_free(&a.data[i]);
		buf_free(&b.data[i]);
	}
	return 0;
}
