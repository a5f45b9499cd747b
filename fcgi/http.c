/* http.c: FastCGI/CGI I/O, bodies with a cap, JSON responses. */
#define _GNU_SOURCE
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

const char *http_param(const struct http_io *io, const char *name)
{
	const char *v = io->fcgi ? FCGX_GetParam(name, io->fcgi->envp) : getenv(name);
	return v ? v : "";
}

ssize_t http_read(struct http_io *io, char *p, size_t n)
{
	if (io->fcgi)
		return FCGX_GetStr(p, (int)n, io->fcgi->in);
	for (;;) {
		ssize_t r = read(STDIN_FILENO, p, n);
		if (r >= 0 || errno != EINTR)
			return r;
	}
}

/*
 * The web server took nothing for the write timeout (worker.c) or is gone.
 * Shut the connection, so that libfcgi's own last writes (the rest of its
 * buffer, END_REQUEST, at FCGX_Finish_r) fail at once instead of waiting
 * out the timeout again each.
 */
static void fcgi_failed(struct http_io *io)
{
	io->failed = true;
	shutdown(io->fcgi->ipcFd, SHUT_RDWR);
}

bool http_write(struct http_io *io, const void *p, size_t n)
{
	if (io->failed)
		return false;
	if (io->fcgi) {
		if (FCGX_PutStr(p, (int)n, io->fcgi->out) != (int)n)
			fcgi_failed(io);
		else
			io->sent_bytes += n;
		return !io->failed;
	}
	const char *s = p;
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			io->failed = true;
			return false;
		}
		s += w;
		n -= (size_t)w;
		io->sent_bytes += (size_t)w;
	}
	return true;
}

bool http_flush(struct http_io *io)
{
	if (io->fcgi && !io->failed && FCGX_FFlush(io->fcgi->out) < 0)
		fcgi_failed(io);
	return !io->failed;
}

bool http_send_piece(struct http_io *io, struct buf *b)
{
	bool ok = http_write(io, b->data, b->len) && http_flush(io);
	buf_free(b);
	return ok;
}

/* The answer (of this status) is about to end: before_end, once. */
static void answer_ends(struct http_io *io, int status)
{
	void (*fn)(void *, int) = io->before_end;
	io->before_end = NULL;
	if (fn)
		fn(io->end_ctx, status);
}

bool http_send_last(struct http_io *io, struct buf *b)
{
	answer_ends(io, io->status);
	return http_send_piece(io, b);
}

bool http_send_text(struct http_io *io, const char *text)
{
	return http_write(io, text, strlen(text)) && http_flush(io);
}

int http_hangup_fd(const struct http_io *io)
{
	return io->fcgi ? io->fcgi->ipcFd : STDOUT_FILENO;
}

bool http_read_body(struct http_io *io, size_t max, struct buf *body, struct fault *f)
{
	const char *cl = http_param(io, "CONTENT_LENGTH");
	buf_append(body, "", 0);
	/* A length we can trust lets us refuse early. Anything else (absent,
	 * or "-1" as Caddy sends for a chunked body) means: read to the end. */
	char *end;
	errno = 0;
	unsigned long long n = strtoull(cl, &end, 10);
	bool known = cl[0] >= '0' && cl[0] <= '9' && !*end && !errno;
	if (known && n > max)
		return fail(f, E_BODY_TOO_LARGE, "request body is over %zu bytes", max);
	/* Read to end of stream, one byte past the cap to notice a liar. */
	char chunk[16384];
	for (;;) {
		size_t want = max + 1 - body->len;
		ssize_t got = http_read(io, chunk, want < sizeof chunk ? want : sizeof chunk);
		if (got < 0)
			return fail(f, E_BAD_REQUEST, "cannot read the request body");
		if (got == 0)
			break;
		buf_append(body, chunk, (size_t)got);
		if (body->len > max)
			return fail(f, E_BODY_TOO_LARGE, "request body is over %zu bytes", max);
	}
	/* A body that ended before its stated length was cut off (Caddy hands
	 * on what came by its read deadline, with the client's length): it is
	 * not the request the client sent, even if it parses. */
	if (known && body->len != n)
		return fail(f, E_BAD_REQUEST, "the body ended after %zu of its %llu bytes", body->len, n);
	return true;
}

bool http_is_type(const struct http_io *io, const char *type)
{
	const char *content_type = http_param(io, "CONTENT_TYPE");
	size_t n = strcspn(content_type, ";");
	while (n > 0 && content_type[n - 1] == ' ')
		n--;
	return n == strlen(type) && !strncasecmp(content_type, type, n);
}

bool http_is_json(const struct http_io *io)
{
	return http_is_type(io, "application/json");
}

bool http_read_json_body(struct http_io *io, size_t max, struct buf *body, struct fault *f)
{
	if (!http_is_json(io))
		return fail(f, E_UNSUPPORTED_MEDIA_TYPE, "send the request as Content-Type: application/json");
	return http_read_body(io, max, body, f);
}

bool http_send_head(struct http_io *io, int status, const char *headers)
{
	struct buf head = {0};
	buf_printf(&head, "Status: %d %s\r\n%s%s\r\n", status, http_status_text(status), io->always, headers);
	io->status = status;
	bool ok = http_write(io, head.data, head.len);
	buf_free(&head);
	return ok;
}

void http_send_empty(struct http_io *io, int status, const char *extra_headers)
{
	answer_ends(io, status);
	http_send_head(io, status, extra_headers);
	http_flush(io);
}

const char *http_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 412: return "Precondition Failed";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 421: return "Misdirected Request";
	case 429: return "Too Many Requests";
	case 499: return "Client Closed Request"; /* nginx's; nobody reads it */
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 507: return "Insufficient Storage";
	default: return "Internal Server Error";
	}
}

void http_send_bytes(struct http_io *io, int status, const char *content_type,
		     const char *extra_headers, const void *p, size_t n, bool head_only)
{
	answer_ends(io, status);
	struct buf head = {0};
	buf_printf(&head, "Content-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n%s",
		   content_type, n, extra_headers);
	http_send_head(io, status, head.data);
	if (!head_only && n)
		http_write(io, p, n);
	http_flush(io);
	buf_free(&head);
}

void http_send_json(struct http_io *io, int status, const char *extra_headers, const cJSON *body)
{
	answer_ends(io, status);
	char *text = cJSON_PrintUnformatted(body);
	if (!text)
		die("out of memory");
	struct buf head = {0};
	buf_printf(&head, "Content-Type: application/json\r\nCache-Control: no-store\r\n%sContent-Length: %zu\r\n",
		   extra_headers, strlen(text) + 1);
	http_send_head(io, status, head.data);
	buf_free(&head);
	http_write(io, text, strlen(text));
	http_write(io, "\n", 1);
	http_flush(io);
	free(text);
}
