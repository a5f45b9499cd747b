/*
 * decoder.h: what the sandbox says on its output pipes, decoded.
 *
 * The entry script (spec.c) talks to the worker on stderr with the byte
 * \036 (RS):
 *   RS                           the compile starts (compiled languages)
 *   RS "end outlen errlen" LF    the compile ended (end: its end status,
 *   <stdout bytes><stderr bytes>   agent_protocol.h); then outlen bytes of
 *                                  its stdout and errlen bytes of its stderr
 *   RS                           the program starts: from here on, stderr
 *                                  is the program's own
 * Before the first RS, stderr is docker's own (warnings, "No such image").
 * Only the program writes to stdout, so stdout data means it has started,
 * whatever stderr has shown so far (the two pipes keep no common order).
 *
 * The reporter that starts a cold or warm sandbox's program
 * (agent/agent_reap.c) also says when the program has ended, on both
 * pipes, so that the worker need not wait for the sandbox's teardown to
 * see them close, and how, from its wait status. Each mark carries the
 * job's nonce N (decoder_expect_end):
 *   stdout: RS N LF
 *   stderr: RS N " end" LF      end: the program's end status
 * A program that digs N out (a cold run's is on the reporter's command
 * line) can end its own output early and choose its exit status or a
 * signal, which it can anyway by exiting or killing itself; the sandbox is
 * removed after it like after any other. Bytes that could begin a mark are held back
 * until they are known not to, and given as output then.
 *
 * The decoder is pure: bytes in, events out. It starts nothing, kills
 * nothing and keeps no clock; the supervisor (supervise.c) acts on what it
 * reports. Nothing here is trusted for time: code that runs during a
 * compile can write a forged record to the entry script's stderr, so the
 * supervisor bounds the sandbox's whole life whatever the decoder says.
 */
#ifndef ISOBOX_SANDBOX_DECODER_H
#define ISOBOX_SANDBOX_DECODER_H

#include "../conf/lib/base.h"
#include "agent_protocol.h" /* end statuses */

enum dec_kind {
	DEC_MORE,            /* nothing to report for the bytes consumed */
	DEC_DOCKER,          /* data, len: docker's own message (before the sandbox is up) */
	DEC_COMPILE_STARTED, /* the sandbox is up and compiling */
	DEC_COMPILE_ENDED,   /* rc: the compile step's end status; its output follows */
	DEC_COMPILE_OUTPUT,  /* fd, data, len: what the compile step wrote */
	DEC_COMPILE_DONE,    /* all of the compile step's output has been given */
	DEC_PROGRAM_STARTED, /* the program runs (the sandbox is up) */
	DEC_OUTPUT,          /* fd, data, len: the program's output */
	DEC_PROGRAM_ENDED,   /* rc: both end marks came (decoder_expect_end), the end status */
	DEC_GARBLED,         /* the protocol was broken: stop the sandbox (reason) */
};

struct dec_event {
	enum dec_kind kind;
	int fd;              /* 1 or 2 */
	int rc;
	const char *data;    /* points into the bytes given to decoder_feed */
	size_t len;
	const char *reason;
};

#define DEC_NONCE_MAX AGENT_NONCE_MAX

/* Where the stderr protocol stands. */
enum dec_stage {
	DEC_STARTING,  /* docker's own messages, until the first RS */
	DEC_COMPILING, /* the compile step runs; its output goes to files */
	DEC_HEADER,    /* reading "rc outlen errlen" LF */
	DEC_BODY,      /* reading the compile step's stdout, then stderr */
	DEC_WAIT_RUN,  /* compiled; waiting for the RS that starts the program */
	DEC_RUNNING,   /* stderr is the program's */
};

struct decoder {
	bool compiles;         /* the language has a compile step */
	enum dec_stage stage;  /* of stderr */
	bool program_started;  /* seen on either pipe */
	bool compile_ended;    /* DEC_COMPILE_ENDED was reported */
	bool garbled;          /* reported once; everything after is dropped */
	char header[64];
	size_t header_len;
	size_t body_out, body_err; /* compile output bytes still to come */
	/* End marks (decoder_expect_end), per pipe (index 1, 2). */
	char end_mark[DEC_NONCE_MAX + 2]; /* RS N */
	size_t end_mark_len;               /* 0: none expected (a cold run) */
	size_t end_held[3];                /* bytes held back: the mark's first ones */
	enum { END_NO, END_TAIL, END_SEEN } end[3];
	char end_tail[3][8];               /* after the mark, up to LF */
	size_t end_tail_len[3];
	int end_rc;
};

void decoder_init(struct decoder *d, bool compiles);

/*
 * Decode p[0..n) read from fd (1: stdout, 2: stderr). Returns how many
 * bytes it consumed (possibly 0) and what they mean in *ev. Call it again
 * with the rest, until it consumed everything and reported DEC_MORE:
 *
 *	do {
 *		size_t used = decoder_feed(&d, fd, p, n, &ev);
 *		act_on(&ev);
 *		p += used, n -= used;
 *	} while (n > 0 || ev.kind != DEC_MORE);
 *
 * Any split of the same bytes gives the same events, but for output that
 * arrives in more pieces.
 */
size_t decoder_feed(struct decoder *d, int fd, const char *p, size_t n, struct dec_event *ev);

/* Expect the reporter's end marks with this nonce (hex, at most
 * DEC_NONCE_MAX characters). */
void decoder_expect_end(struct decoder *d, const char *nonce);

/*
 * fd (1 or 2) has closed, or nothing more will be read from it: the bytes
 * held back as the possible start of an end mark are output after all.
 * Reports them (DEC_OUTPUT, data points into the decoder) or DEC_MORE.
 */
void decoder_flush(struct decoder *d, int fd, struct dec_event *ev);

/* Has the compile step begun and not yet handed over its result? */
bool decoder_compiling(const struct decoder *d);

#endif
