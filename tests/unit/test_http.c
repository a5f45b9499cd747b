/* The http layer's heads (CGI mode: written to stdout), and the status it
 * records for the metrics: every response's head goes through one writer. */
#define _GNU_SOURCE /* pread */
#include "tap.h"
#include "../../fcgi/http.h"
#include "../../fcgi/sse.h"

#include <stdlib.h>
#include <unistd.h>

enum what { JSON_201, EMPTY_204, SSE_HEAD, PIECE, LAST_PIECE };

/* What one response wrote to stdout (the caller frees it). */
static char *captured(struct http_io *io, enum what what)
{
	fflush(stdout);
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	if (!tmp || saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", "a.txt");
	if (what == JSON_201)
		http_send_json(io, 201, "ETag: \"x\"\r\n", o);
	else if (what == EMPTY_204)
		http_send_empty(io, 204, "");
	else if (what == SSE_HEAD)
		http_send_head(io, 200, SSE_HEADERS);
	else {
		struct buf b = {0};
		buf_printf(&b, "data: x\n\n");
		if (what == PIECE)
			http_send_piece(io, &b);
		else
			http_send_last(io, &b);
	}
	cJSON_Delete(o);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	long n = lseek(fileno(tmp), 0, SEEK_CUR);
	char *text = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	if (n > 0 && pread(fileno(tmp), text, (size_t)n, 0) != n)
		text[0] = '\0';
	fclose(tmp);
	return text;
}

/* A before_end hook that notes when it ran: how many bytes had gone. */
struct ends {
	struct http_io *io;
	int calls, status;
	uint64_t sent_then;
};

static void note_end(void *ctx, int status)
{
	struct ends *e = ctx;
	e->calls++;
	e->status = status;
	e->sent_then = e->io->sent_bytes;
}

/* Does this answer call before_end once, before its first byte, with
 * its status? */
static void ends_first(enum what what, const char *what_text, int status)
{
	struct http_io io = {0};
	struct ends e = {.io = &io};
	io.before_end = note_end;
	io.end_ctx = &e;
	io.sent_bytes = 7; /* a stream's earlier pieces */
	if (what == LAST_PIECE)
		io.status = 200; /* its head went first */
	char *t = captured(&io, what);
	ok(e.calls == 1 && e.sent_then == 7 && io.sent_bytes > 7 && e.status == status,
	   "http: %s gives back the request's claims once, before its first byte, with its status "
	   "(calls %d, sent %llu, status %d)", what_text, e.calls, (unsigned long long)e.sent_then, e.status);
	free(t);
	t = captured(&io, what);
	ok(e.calls == 1, "http: ...and not again on a second write");
	free(t);
}

UNIT_TEST(test_http_answer_end)
{
	ends_first(JSON_201, "a JSON answer", 201);
	ends_first(EMPTY_204, "an empty answer", 204);
	ends_first(LAST_PIECE, "a stream's last piece", 200);
	struct http_io io = {0};
	struct ends e = {.io = &io};
	io.before_end = note_end;
	io.end_ctx = &e;
	free(captured(&io, SSE_HEAD));
	free(captured(&io, PIECE));
	ok(e.calls == 0 && io.before_end, "http: a stream's head and middle pieces keep them (the run goes on)");
}

UNIT_TEST(test_http)
{
	struct http_io io = {0};
	snprintf(io.always, sizeof io.always, "Vary: Origin\r\n");
	ok(io.status == 0, "http: nothing sent yet: status 0");

	char *t = captured(&io, JSON_201);
	ok(t && !strncmp(t, "Status: 201 Created\r\n", 21), "http: a JSON answer starts with its status line");
	ok(t && strstr(t, "\r\nVary: Origin\r\n") && strstr(t, "\r\nETag: \"x\"\r\n") &&
	   strstr(t, "\r\nContent-Type: application/json\r\n"),
	   "http: ...and carries the always-headers, the caller's and its type");
	ok(t && strstr(t, "Content-Length: 17\r\n\r\n{\"path\":\"a.txt\"}\n"),
	   "http: ...and its length counts the body and its newline");
	ok(io.status == 201, "http: the status written is recorded (201)");
	free(t);

	io.status = 0;
	t = captured(&io, EMPTY_204);
	is_str(t, "Status: 204 No Content\r\nVary: Origin\r\n\r\n", "http: an empty answer is its head alone");
	ok(io.status == 204, "http: ...recorded (204)");
	free(t);

	io.status = 0;
	t = captured(&io, SSE_HEAD);
	is_str(t, "Status: 200 OK\r\nVary: Origin\r\n" SSE_HEADERS "\r\n",
	       "http: a stream's head, its body to follow");
	ok(io.status == 200, "http: ...recorded before any event (200)");
	free(t);
}
