/*
 * http.h: one HTTP exchange, over FastCGI (libfcgi) or plain CGI.
 *
 * The same handlers serve both: in FastCGI mode the params and streams come
 * from an FCGX_Request; in CGI mode from the environment and fds 0 and 1.
 */
#ifndef ISOBOX_HTTP_H
#define ISOBOX_HTTP_H

#include "../conf/lib/base.h"
#include <cjson/cJSON.h>
#include <fcgiapp.h>
#include <sys/types.h>

struct http_io {
	FCGX_Request *fcgi; /* NULL in CGI mode */
	bool failed;        /* a write failed: the client is gone */
	int status;         /* the status of the head written (http_send_head); 0: none yet */
	uint64_t sent_bytes; /* head and body, as written to the web server */
	char always[512];   /* "Name: v\r\n"... that every response carries (its id, CORS) */
	/*
	 * Called once, just before the answer's end is written (a whole
	 * answer, or a stream's last piece), with the answer's status, then
	 * cleared: what the request holds that the same client's next
	 * request may need (its place in the tenant's share, a volume's mark)
	 * is given back, and the request counted, before the client can read
	 * the answer and send that request (or read /metrics). NULL: nothing.
	 */
	void (*before_end)(void *ctx, int status);
	void *end_ctx;
};

const char *http_param(const struct http_io *io, const char *name);
ssize_t http_read(struct http_io *io, char *p, size_t n);
bool http_write(struct http_io *io, const void *p, size_t n);
bool http_flush(struct http_io *io);
/* A stream's next piece: write b, flush it, free b; false when the client
 * is gone. */
bool http_send_piece(struct http_io *io, struct buf *b);
/* A stream's last piece (its result or error event): before_end, then
 * the same. */
bool http_send_last(struct http_io *io, struct buf *b);
/* The same for a text of ours (an event stream's keepalive). */
bool http_send_text(struct http_io *io, const char *text);
/*
 * Where the web server's departure shows as POLLHUP/POLLERR: the FastCGI
 * connection (unix sockets; over TCP a close shows only when written to),
 * or in CGI mode stdout, the pipe the server reads.
 */
int http_hangup_fd(const struct http_io *io);

/*
 * Read the request body, at most max bytes, whether or not CONTENT_LENGTH
 * is given (some servers stream bodies without it). 413 past the cap.
 */
bool http_read_body(struct http_io *io, size_t max, struct buf *body, struct fault *f);

/* Is the body of this media type ("text/plain"; parameters allowed)? */
bool http_is_type(const struct http_io *io, const char *type);
/* Is the body application/json? */
bool http_is_json(const struct http_io *io);
/* The body of a JSON route: 415 unless it is application/json, then as
 * http_read_body. */
bool http_read_json_body(struct http_io *io, size_t max, struct buf *body, struct fault *f);
/*
 * The head of a response: the status line, io->always, then headers ("" or
 * "Name: v\r\n"..., the Content-Type among them). Every response's head is
 * written here, and io->status records it: what the client got, for the
 * metrics and the log. The body follows with http_write.
 */
bool http_send_head(struct http_io *io, int status, const char *headers);
/* A response with a status and no body (204); extra_headers as below. */
void http_send_empty(struct http_io *io, int status, const char *extra_headers);

/* Status line text for the few statuses isobox uses. */
const char *http_status_text(int status);

/* A whole response of raw bytes (a file, a memory value), with its
 * Content-Type; head_only (HEAD): the head alone, with the body's length. */
void http_send_bytes(struct http_io *io, int status, const char *content_type,
		     const char *extra_headers, const void *p, size_t n, bool head_only);

/* Send a whole JSON response; `extra_headers` is "" or "Name: v\r\n"... */
void http_send_json(struct http_io *io, int status, const char *extra_headers, const cJSON *body);

#endif
