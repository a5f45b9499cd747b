/* decoder.c: the sandbox's stderr protocol (see decoder.h). Pure. */
#include "decoder.h"

#include <string.h>

#define RS '\036'

void decoder_init(struct decoder *d, bool compiles)
{
	*d = (struct decoder){.compiles = compiles, .stage = DEC_STARTING};
}

void decoder_expect_end(struct decoder *d, const char *nonce)
{
	size_t n = strlen(nonce);
	if (n > DEC_NONCE_MAX)
		n = DEC_NONCE_MAX;
	d->end_mark[0] = RS;
	memcpy(d->end_mark + 1, nonce, n);
	d->end_mark_len = n + 1;
}

bool decoder_compiling(const struct decoder *d)
{
	return d->stage == DEC_COMPILING || d->stage == DEC_HEADER || d->stage == DEC_BODY;
}

static size_t report(struct dec_event *ev, enum dec_kind kind, int fd, const char *p, size_t n)
{
	*ev = (struct dec_event){.kind = kind, .fd = fd, .data = p, .len = n};
	return n;
}

/* Reported once; every byte after it is dropped. */
static size_t garbled(struct decoder *d, struct dec_event *ev, const char *why, size_t n)
{
	d->garbled = true;
	*ev = (struct dec_event){.kind = DEC_GARBLED, .reason = why};
	return n;
}

/* One decimal number of at most 18 digits (no sign, no spaces) from *s. */
static bool number(const char **s, unsigned long long *out)
{
	const char *p = *s;
	unsigned long long v = 0;
	size_t digits = 0;
	while (*p >= '0' && *p <= '9' && digits < 18) {
		v = v * 10 + (unsigned long long)(*p++ - '0');
		digits++;
	}
	*s = p;
	*out = v;
	return digits > 0 && !(*p >= '0' && *p <= '9');
}

/* "rc outlen errlen", exactly as the entry script writes it. */
static bool parse_header(struct decoder *d, int *rc)
{
	const char *s = d->header;
	unsigned long long code, out, err;
	if (!number(&s, &code) || *s++ != ' ' || !number(&s, &out) || *s++ != ' ' ||
	    !number(&s, &err) || *s || !agent_end_valid((long long)code))
		return false;
	*rc = (int)code;
	d->body_out = (size_t)out;
	d->body_err = (size_t)err;
	return true;
}

/* After an end mark, up to LF: "" on stdout, " rc" on stderr. */
static size_t feed_end_tail(struct decoder *d, int fd, const char *p, size_t n, struct dec_event *ev)
{
	const char *lf = memchr(p, '\n', n);
	size_t take = lf ? (size_t)(lf - p) : n;
	if (d->end_tail_len[fd] + take >= sizeof d->end_tail[fd])
		return garbled(d, ev, "a garbled end mark", n);
	memcpy(d->end_tail[fd] + d->end_tail_len[fd], p, take);
	d->end_tail_len[fd] += take;
	if (!lf)
		return take;
	d->end_tail[fd][d->end_tail_len[fd]] = '\0';
	const char *s = d->end_tail[fd];
	unsigned long long rc = 0;
	bool good = fd == 1 ? *s == '\0' : *s++ == ' ' && number(&s, &rc) && !*s && agent_end_valid((long long)rc);
	if (!good)
		return garbled(d, ev, "a garbled end mark", n);
	d->end[fd] = END_SEEN;
	if (fd == 2)
		d->end_rc = (int)rc;
	if (d->end[1] == END_SEEN && d->end[2] == END_SEEN) {
		ev->kind = DEC_PROGRAM_ENDED;
		ev->rc = d->end_rc;
	}
	return take + 1;
}

/* The program's output on fd, watched for the agent's end mark. */
static size_t feed_program(struct decoder *d, int fd, const char *p, size_t n, struct dec_event *ev)
{
	if (n == 0)
		return 0;
	if (!d->end_mark_len)
		return report(ev, DEC_OUTPUT, fd, p, n);
	if (d->end[fd] == END_SEEN)
		return n; /* after the agent's last word: nothing of the program's */
	if (d->end[fd] == END_TAIL)
		return feed_end_tail(d, fd, p, n, ev);
	size_t *held = &d->end_held[fd];
	if (*held == 0) {
		const char *rs = memchr(p, RS, n);
		if (rs != p)
			return report(ev, DEC_OUTPUT, fd, p, rs ? (size_t)(rs - p) : n);
	}
	size_t k = 0;
	while (k < n && *held + k < d->end_mark_len && p[k] == d->end_mark[*held + k])
		k++;
	if (*held + k == d->end_mark_len) {
		*held = 0;
		d->end[fd] = END_TAIL;
		d->end_tail_len[fd] = 0;
		return k;
	}
	if (k == n) { /* all of it may be a mark's start: hold it */
		*held += k;
		return k;
	}
	if (*held == 0) /* an RS that begins no mark */
		return report(ev, DEC_OUTPUT, fd, p, 1);
	/* What was held was output after all. It equals the mark's start, and
	 * no later part of that holds an RS (the nonce is hex): look at p again
	 * from the beginning. */
	*ev = (struct dec_event){.kind = DEC_OUTPUT, .fd = fd, .data = d->end_mark, .len = *held};
	*held = 0;
	return 0;
}

void decoder_flush(struct decoder *d, int fd, struct dec_event *ev)
{
	*ev = (struct dec_event){.kind = DEC_MORE};
	if ((fd == 1 || fd == 2) && d->end_held[fd] && !d->garbled) {
		*ev = (struct dec_event){.kind = DEC_OUTPUT, .fd = fd, .data = d->end_mark, .len = d->end_held[fd]};
		d->end_held[fd] = 0;
	}
}

/* stdout: only the program writes there. */
static size_t feed_stdout(struct decoder *d, const char *p, size_t n, struct dec_event *ev)
{
	if (n == 0)
		return 0;
	if (!d->program_started) {
		d->program_started = true;
		return report(ev, DEC_PROGRAM_STARTED, 0, NULL, 0);
	}
	return feed_program(d, 1, p, n, ev);
}

/* Waiting for an RS: before the sandbox is up, during the compile step,
 * and between the compile result and the program. */
static size_t feed_until_rs(struct decoder *d, const char *p, size_t n, struct dec_event *ev)
{
	const char *mark = n ? memchr(p, RS, n) : NULL;
	size_t take = mark ? (size_t)(mark - p) : n;
	if (take > 0) {
		/* Before the first RS: docker's own words. Later: what the entry
		 * script itself says (the compile step writes to files). */
		if (d->stage == DEC_STARTING)
			return report(ev, DEC_DOCKER, 2, p, take);
		return take;
	}
	if (!mark)
		return 0;
	if (d->stage == DEC_STARTING && d->compiles) {
		d->stage = DEC_COMPILING;
		ev->kind = DEC_COMPILE_STARTED;
		return 1;
	}
	if (d->stage == DEC_COMPILING) {
		d->stage = DEC_HEADER;
		d->header_len = 0;
		return 1;
	}
	d->stage = DEC_RUNNING;
	if (!d->program_started) {
		d->program_started = true;
		ev->kind = DEC_PROGRAM_STARTED;
	}
	return 1;
}

static size_t feed_header(struct decoder *d, const char *p, size_t n, struct dec_event *ev)
{
	const char *lf = n ? memchr(p, '\n', n) : NULL;
	size_t take = lf ? (size_t)(lf - p) : n;
	if (d->header_len + take >= sizeof d->header)
		return garbled(d, ev, "an overlong compile result", n);
	memcpy(d->header + d->header_len, p, take);
	d->header_len += take;
	if (!lf)
		return take;
	d->header[d->header_len] = '\0';
	int rc;
	if (!parse_header(d, &rc))
		return garbled(d, ev, "a garbled compile result", n);
	d->stage = DEC_BODY;
	d->compile_ended = true;
	ev->kind = DEC_COMPILE_ENDED;
	ev->rc = rc;
	return take + 1;
}

static size_t feed_body(struct decoder *d, const char *p, size_t n, struct dec_event *ev)
{
	if (d->body_out + d->body_err == 0) {
		d->stage = DEC_WAIT_RUN;
		return report(ev, DEC_COMPILE_DONE, 0, NULL, 0);
	}
	int fd = d->body_out ? 1 : 2;
	size_t *left = fd == 1 ? &d->body_out : &d->body_err;
	size_t take = n < *left ? n : *left;
	if (take == 0)
		return 0;
	*left -= take;
	return report(ev, DEC_COMPILE_OUTPUT, fd, p, take);
}

size_t decoder_feed(struct decoder *d, int fd, const char *p, size_t n, struct dec_event *ev)
{
	*ev = (struct dec_event){.kind = DEC_MORE};
	if (d->garbled)
		return n;
	if (fd == 1)
		return feed_stdout(d, p, n, ev);
	switch (d->stage) {
	case DEC_STARTING:
	case DEC_COMPILING:
	case DEC_WAIT_RUN:
		return feed_until_rs(d, p, n, ev);
	case DEC_HEADER:
		return feed_header(d, p, n, ev);
	case DEC_BODY:
		return feed_body(d, p, n, ev);
	case DEC_RUNNING:
		break;
	}
	return feed_program(d, 2, p, n, ev);
}
