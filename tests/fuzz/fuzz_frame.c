/* libFuzzer: the session agent's frame decoder (sandbox/frame.c) and the
 * parsers of its listings (session_files.c) and of what it says of its
 * commands (session_commands.c). Whatever the bytes, the decoder never
 * reads outside them, always makes progress, and says the same fed whole
 * or one byte at a time; the parsers never read past their input, and
 * what they accept is within it. */
#include "../../sandbox/frame.h"
#include "../../sandbox/sandbox.h"
#include "../../sandbox/session_commands.h"
#include "../../sandbox/session_files.h"

#include <stdlib.h>
#include <string.h>

/* What was said, with pieces of one frame's bytes merged. */
struct said {
	struct buf log;
	int last; /* kind of the last event logged, to merge pieces */
};

static void feed(struct frame_decoder *d, struct said *s, const char *p, size_t n)
{
	const char *end = p + n;
	struct frame_event ev;
	int rounds = 0;
	do {
		size_t used = frame_feed(d, p, n, &ev);
		if (used > n || ++rounds > 100000)
			abort();
		if (ev.len && (ev.data < p || ev.data + ev.len > end))
			abort();
		if (ev.kind != FRAME_MORE) {
			if ((int)ev.kind != s->last || ev.kind == FRAME_READY || ev.kind == FRAME_GARBLED)
				buf_printf(&s->log, "|%d %d %s %lld:", ev.kind, ev.fd, ev.tag, ev.code);
			buf_append(&s->log, ev.data, ev.len);
			s->last = (ev.kind == FRAME_END || ev.kind == FRAME_DISPLAY) && !ev.more ? -1 : (int)ev.kind;
		}
		p += used;
		n -= used;
	} while (n > 0 || ev.kind != FRAME_MORE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_decoder d1, d2;
	struct said a = {.last = -1}, b = {.last = -1};
	frame_init(&d1, 4096);
	frame_init(&d2, 4096);
	feed(&d1, &a, (const char *)data, size);
	for (size_t i = 0; i < size; i++)
		feed(&d2, &b, (const char *)data + i, 1);
	if (a.log.len != b.log.len || (a.log.len && memcmp(a.log.data, b.log.data, a.log.len)))
		abort();
	buf_free(&a.log);
	buf_free(&b.log);
	/* The same bytes as a listing (a copy exactly as long: ASan sees overreads). */
	char *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	struct session_entry *e;
	size_t n;
	struct fault f;
	if (session_parse_listing(copy, size, 64, &e, &n, &f))
		session_entries_free(e, n);
	struct session_command *cmds;
	if (session_parse_commands(copy, size, &cmds, &n, &f)) {
		if (n > AGENT_MAX_COMMANDS)
			abort();
		session_commands_free(cmds, n);
	}
	struct command_output o;
	if (session_parse_output(copy, size, 64, &o)) {
		if (o.out[0].len > 64 || o.out[1].len > 64 || o.out[0].len + o.out[1].len >= size ||
		    o.from[0] + o.out[0].len > o.written[0] || o.from[1] + o.out[1].len > o.written[1])
			abort();
		command_output_free(&o);
	}
	free(copy);
	return 0;
}
