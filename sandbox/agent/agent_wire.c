/*
 * agent_wire.c: the session agent's side of the protocol (sandbox/frame.h):
 * answers written whole to stdout, requests read from stdin through one
 * buffer (a header may arrive with some of its payload).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_wire.h"

/* The request stream: a header may be read with some payload after it. */
static struct {
	char b[AGENT_MAX_CHUNK];
	size_t off, len;
} in;

/* --- Answers ------------------------------------------------------------ */

bool write_all(int fd, const void *p, size_t n)
{
	for (const char *c = p; n > 0;) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		c += k, n -= (size_t)k;
	}
	return true;
}

/* "KIND TAG [CODE] LEN" LF, then the payload: one write when it is small. */
void send_frame(const char *kind, const char *tag, int code, const void *p, size_t n)
{
	static char b[AGENT_MAX_CHUNK + 64];
	int h = code < 0 ? snprintf(b, 64, "%s %s %zu\n", kind, tag, n)
			 : snprintf(b, 64, "%s %s %d %zu\n", kind, tag, code, n);
	bool small = n <= AGENT_MAX_CHUNK;
	if (small && n > 0) /* p may be NULL then */
		memcpy(b + h, p, n);
	if (!write_all(1, b, (size_t)h + (small ? n : 0)) || (!small && !write_all(1, p, n)))
		fatal("cannot answer the worker: %s", strerror(errno));
}

/* The end of a file request: 0 and the payload, or the failure. */
void send_end(const char *tag, const struct why *w, const void *p, size_t n)
{
	if (w->err)
		send_frame("end", tag, w->err, w->msg, strlen(w->msg));
	else
		send_frame("end", tag, 0, p, n);
}

/* --- Requests ----------------------------------------------------------- */

/* Up to n bytes of the request stream (at least one). Blocks: the worker
 * writes whole requests at once. End of file ends the session. */
size_t in_some(char *p, size_t n)
{
	if (in.off == in.len) {
		ssize_t k;
		while ((k = read(0, in.b, sizeof in.b)) < 0 && errno == EINTR)
			;
		if (k < 0)
			fatal("cannot read requests: %s", strerror(errno));
		if (k == 0) {
			exit(0); /* the worker is gone for good */
		}
		in.off = 0, in.len = (size_t)k;
	}
	size_t k = in.len - in.off < n ? in.len - in.off : n;
	memcpy(p, in.b + in.off, k);
	in.off += k;
	return k;
}

void in_exact(char *p, size_t n)
{
	for (size_t got = 0; got < n;)
		got += in_some(p + got, n - got);
}

/* The next line, without its LF. */
void in_line(char *line, size_t max)
{
	size_t n = 0;
	for (char c; in_some(&c, 1) && c != '\n'; line[n++] = c)
		if (n == max || c == '\0')
			fatal("a request line that is too long or holds a NUL");
	line[n] = '\0';
}

/* The next n bytes, written to fd (if >= 0). After a write error the rest
 * is read all the same, to stay in step with the stream. */
bool in_copy(int fd, unsigned long long n, const char *name, struct why *w)
{
	static char b[AGENT_MAX_CHUNK];
	bool ok = true;
	while (n > 0) {
		size_t k = in_some(b, n < sizeof b ? (size_t)n : sizeof b);
		n -= k;
		if (ok && fd >= 0 && !write_all(fd, b, k))
			ok = set_why(w, errno, "%s: %s", name, strerror(errno));
	}
	return ok;
}

/* Strict decimal: digits only, no sign, no leading zero; at most max. */
bool decimal(const char *s, unsigned long long max, unsigned long long *v)
{
	size_t n = strlen(s);
	*v = 0;
	if (n == 0 || n > 19 || (s[0] == '0' && n > 1) || strspn(s, "0123456789") != n)
		return false;
	for (; *s; s++)
		*v = *v * 10 + (unsigned long long)(*s - '0');
	return *v <= max;
}

unsigned long long number(const char *s, unsigned long long max)
{
	unsigned long long v;
	if (!decimal(s, max, &v))
		fatal("a request with a bad number, or one over %llu: \"%.20s\"", max, s);
	return v;
}

/* Words separated by single spaces; dies on an empty word or more than max. */
int split(char *line, char **w, int max)
{
	int n = 0;
	for (char *p = line;; p++) {
		if (n == max || !*p || *p == ' ')
			fatal("a malformed request header");
		w[n++] = p;
		if (!(p = strchr(p, ' ')))
			return n;
		*p = '\0';
	}
}

bool valid_tag(const char *s)
{
	return strlen(s) == AGENT_TAG_LEN && strspn(s, "0123456789abcdef") == AGENT_TAG_LEN;
}

bool in_buffered(void)
{
	return in.off < in.len;
}
