/*
 * The sandbox's stderr protocol (sandbox/decoder.c): every transcript gives
 * the same events however its bytes are split, and a broken record is
 * reported, never guessed at.
 */
#include "tap.h"
#include "../../sandbox/decoder.h"

#include <stdio.h>

#define RS "\036"

struct chunk {
	int fd;
	const char *bytes;
	size_t len;
};

struct transcript {
	const char *what;
	bool compiles;
	const char *nonce; /* a warm run's (decoder_expect_end), or NULL */
	struct chunk chunks[6];
	const char *want; /* the events, normalised (see describe) */
};

/* Events as text: output of one kind and fd is merged, whatever the split. */
struct log {
	struct buf text;
	enum dec_kind last;
	int last_fd;
};

static void describe(struct log *l, const struct dec_event *ev)
{
	static const char *const names[] = {
		[DEC_DOCKER] = "docker", [DEC_COMPILE_STARTED] = "compile-started",
		[DEC_COMPILE_ENDED] = "compile-ended", [DEC_COMPILE_OUTPUT] = "compile-out",
		[DEC_COMPILE_DONE] = "compile-done", [DEC_PROGRAM_STARTED] = "program-started",
		[DEC_OUTPUT] = "out", [DEC_GARBLED] = "garbled", [DEC_PROGRAM_ENDED] = "ended",
	};
	bool data = ev->kind == DEC_DOCKER || ev->kind == DEC_COMPILE_OUTPUT || ev->kind == DEC_OUTPUT;
	if (ev->kind == DEC_MORE)
		return;
	if (!(data && l->last == ev->kind && l->last_fd == ev->fd)) {
		buf_printf(&l->text, "%s%s", l->text.len ? " " : "", names[ev->kind]);
		if (data)
			buf_printf(&l->text, "%d:", ev->fd);
		if (ev->kind == DEC_COMPILE_ENDED || ev->kind == DEC_PROGRAM_ENDED)
			buf_printf(&l->text, ":%d", ev->rc);
	}
	for (size_t i = 0; data && i < ev->len; i++) {
		unsigned char c = (unsigned char)ev->data[i];
		if (c < 0x20)
			buf_printf(&l->text, "\\%02x", c);
		else
			buf_append(&l->text, &c, 1);
	}
	l->last = ev->kind;
	l->last_fd = ev->fd;
}

/* Feed p[0..n) the way supervise.c does. */
static void feed(struct decoder *d, struct log *l, int fd, const char *p, size_t n)
{
	struct dec_event ev;
	int guard = 0;
	do {
		size_t used = decoder_feed(d, fd, p, n, &ev);
		describe(l, &ev);
		p += used;
		n -= used;
	} while ((n > 0 || ev.kind != DEC_MORE) && ++guard < 100000);
}

static size_t len_of(const struct chunk *c)
{
	return c->len;
}

/* Feed the transcript, cutting chunk `cut` at `at` (or every chunk into
 * single bytes when cut is -1). */
static char *run(const struct transcript *t, int cut, size_t at)
{
	struct decoder d;
	struct log l = {0};
	decoder_init(&d, t->compiles);
	if (t->nonce)
		decoder_expect_end(&d, t->nonce);
	for (int i = 0; i < 6 && t->chunks[i].bytes; i++) {
		const struct chunk *c = &t->chunks[i];
		size_t n = len_of(c);
		if (cut == -1) {
			for (size_t k = 0; k < n; k++)
				feed(&d, &l, c->fd, c->bytes + k, 1);
		} else if (cut == i) {
			feed(&d, &l, c->fd, c->bytes, at);
			feed(&d, &l, c->fd, c->bytes + at, n - at);
		} else {
			feed(&d, &l, c->fd, c->bytes, n);
		}
	}
	for (int fd = 1; fd <= 2; fd++) { /* both pipes closed, as supervise.c's pump sees */
		struct dec_event ev;
		decoder_flush(&d, fd, &ev);
		describe(&l, &ev);
	}
	buf_append(&l.text, "", 0);
	return l.text.data;
}

/* A chunk of literal bytes (NULs included). */
#define C(fd, s) {fd, s, sizeof(s) - 1}

static const struct transcript transcripts[] = {
	{"interpreted: docker's warning, then the program (which may write RS)", false, NULL,
	 {C(2, "WARNING: no swap\n" RS "err" RS "!"), C(1, "out")},
	 "docker2:WARNING: no swap\\0a program-started out2:err\\1e! out1:out"},
	{"compiled: compile output, then the program", true, NULL,
	 {C(2, RS), C(2, RS "0 3 2\nabcde" RS), C(1, "hi\n"), C(2, "warn")},
	 "compile-started compile-ended:0 compile-out1:abc compile-out2:de compile-done "
	 "program-started out1:hi\\0a out2:warn"},
	{"compiled: a failed compile has no program", true, NULL,
	 {C(2, RS RS "1 0 4\noops")},
	 "compile-started compile-ended:1 compile-out2:oops compile-done"},
	{"compiled: an empty compile result", true, NULL,
	 {C(2, RS "noise from the script" RS "0 0 0\n" RS "e")},
	 "compile-started compile-ended:0 compile-done program-started out2:e"},
	{"stdout first: the program started before stderr said so", false, NULL,
	 {C(1, "early"), C(2, "docker says" RS "late")},
	 "program-started out1:early docker2:docker says out2:late"},
	{"a garbled compile result", true, NULL,
	 {C(2, RS RS "x 1 2\n"), C(2, "more" RS), C(1, "out")},
	 "compile-started garbled"},
	{"a compile's death by signal 9 (agent_protocol.h's end status)", true, NULL,
	 {C(2, RS RS "265 0 0\n" RS)},
	 "compile-started compile-ended:265 compile-done program-started"},
	{"a compile status out of range", true, NULL,
	 {C(2, RS RS "321 0 0\n" RS)},
	 "compile-started garbled"},
	{"a negative length", true, NULL,
	 {C(2, RS RS "0 -1 0\n")},
	 "compile-started garbled"},
	{"an overlong compile result", true, NULL,
	 {C(2, RS RS "0 00000000000000000000000000000000000000000000000000000000000000000000000 0\n")},
	 "compile-started garbled"},
	{"NUL bytes are output like any other", false, NULL,
	 {C(2, RS "a\0b"), C(1, "\0")},
	 "program-started out2:a\\00b out1:\\00"},
	{"warm: the agent's marks on both pipes end the program with its status", false, "ab12",
	 {C(2, RS "hello err"), C(1, "out" RS "ab12\n" "late"), C(2, RS "ab12 3\n" "after")},
	 "program-started out2:hello err out1:out ended:3"},
	{"warm: bytes that begin like a mark and are not one are output, in order", false, "ab12",
	 {C(2, RS "x" RS "ab1" RS "ab13 0\n" RS), C(1, RS "ab" "\n")},
	 "program-started out2:x\\1eab1\\1eab13 0\\0a out1:\\1eab\\0a out2:\\1e"},
	{"warm: a mark with a broken tail", false, "ab12",
	 {C(2, RS RS "ab12 x\n"), C(1, "out")},
	 "program-started garbled"},
	{"the reporter's marks: a death by signal 11 is 256 + 11", false, "ab12",
	 {C(2, RS RS "ab12 267\n"), C(1, RS "ab12\n")},
	 "program-started ended:267"},
	{"warm: a status out of range", false, "ab12",
	 {C(2, RS RS "ab12 321\n")},
	 "program-started garbled"},
	{"warm: one mark is not the end", false, "ab12",
	 {C(2, RS), C(1, "o" RS "ab12\n"), C(2, "e")},
	 "program-started out1:o out2:e"},
	{"cold: the same bytes are only output", false, NULL,
	 {C(2, RS), C(1, RS "ab12\n"), C(2, RS "ab12 0\n")},
	 "program-started out1:\\1eab12\\0a out2:\\1eab12 0\\0a"},
};

UNIT_TEST(test_decoder)
{
	for (size_t t = 0; t < sizeof transcripts / sizeof transcripts[0]; t++) {
		const struct transcript *tr = &transcripts[t];
		char *whole = run(tr, -2, 0);
		is_str(whole, tr->want, "decoder: %s (got \"%s\")", tr->what, whole);
		char *bytes = run(tr, -1, 0);
		is_str(bytes, tr->want, "decoder: %s, one byte at a time", tr->what);
		free(bytes);
		bool same = true;
		for (int i = 0; i < 6 && tr->chunks[i].bytes; i++) {
			for (size_t at = 0; at <= len_of(&tr->chunks[i]); at++) {
				char *split = run(tr, i, at);
				if (strcmp(split, tr->want)) {
					same = false;
					printf("#   split chunk %d at %zu: %s\n", i, at, split);
				}
				free(split);
			}
		}
		ok(same, "decoder: %s, split at every offset", tr->what);
		free(whole);
	}

	/* What the supervisor reads off the decoder. */
	struct decoder d;
	struct dec_event ev;
	decoder_init(&d, true);
	decoder_feed(&d, 2, RS, 1, &ev);
	ok(ev.kind == DEC_COMPILE_STARTED && decoder_compiling(&d) && !d.program_started,
	   "decoder: compiling after the first RS of a compiled language");
	struct log l = {0};
	feed(&d, &l, 2, RS "0 0 0\n", 7);
	ok(!decoder_compiling(&d) && d.compile_ended && !d.program_started,
	   "decoder: a compile result ends compiling; the program has not started");
	buf_free(&l.text);
}
