/* agent_base.c: the session agent's basics (agent_base.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_base.h"

_Noreturn void fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("isobox-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2); /* stop_children runs at exit (main) */
}

bool set_why(struct why *w, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!w->err) { /* the first failure is the one reported */
		w->err = err;
		vsnprintf(w->msg, sizeof w->msg, fmt, ap);
	}
	va_end(ap);
	return false;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap && !(b->p = realloc(b->p, b->cap = 2 * (b->len + n))))
		fatal("out of memory");
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}
