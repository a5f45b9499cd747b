/*
 * sse.h: Server-Sent Events framing for streamed runs (pure; unit-tested).
 *
 * Events (each data line is one JSON value, so it never holds a newline):
 *   event: stdout | stderr   data: {"data": "<text>"} when the chunk is
 *                            valid UTF-8 (NUL and newlines as JSON escapes),
 *                            else {"base64": "<bytes>"}: lossless either way
 *   event: result            data: the result object of the sync call
 *   event: error             data: {"error": {...}} if the run failed late
 *   ": keepalive"            a comment during silent stretches
 * A UTF-8 sequence cut between two reads is held back and sent whole.
 */
#ifndef ISOBOX_SSE_H
#define ISOBOX_SSE_H

#include "encode.h"

/* The head of a stream of events: no cache, and no proxy buffering
 * (nginx reads X-Accel-Buffering) so each event reaches the client. */
#define SSE_HEADERS "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"

/* A comment for silent stretches: it keeps proxies from closing an idle
 * stream, and clients ignore it. */
#define SSE_KEEPALIVE ": keepalive\n\n"

/* Append "event: NAME\ndata: DATA\n\n". DATA must be one line. */
void sse_event(struct buf *out, const char *name, const char *data);

/* {"data": ...} or {"base64": ...} for one chunk of output. Caller frees. */
char *sse_chunk_json(const char *p, size_t n);

/* Per stream: bytes of a UTF-8 sequence cut at the end of the last chunk. */
struct sse_carry {
	char tail[4];
	size_t len;
};

/*
 * Join carry + chunk into joined (empty before), keep a new cut tail in
 * carry (none with final set), and say how many of joined's bytes are
 * whole: those go out now.
 */
size_t sse_carry_join(struct sse_carry *carry, const char *p, size_t n, bool final, struct buf *joined);

/*
 * sse_carry_join, then append the event for the whole bytes (if any) to
 * out. With final set, send everything that is left.
 */
void sse_output(struct buf *out, struct sse_carry *carry, const char *name,
		const char *p, size_t n, bool final);

#endif
