/* frame.c: the decoder of what a session's agent says (frame.h). Pure. */
#define _GNU_SOURCE
#include "frame.h"

#include <stdio.h>
#include <string.h>

void frame_init(struct frame_decoder *d, unsigned long long end_max)
{
	*d = (struct frame_decoder){.end_max = end_max};
}

void frame_new_tag(char out[AGENT_TAG_LEN + 1])
{
	random_hex(out, AGENT_TAG_LEN / 2);
}

static bool number(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;
	if (!*s || strlen(s) > 19)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long long)(*s - '0');
	}
	*out = v;
	return v <= max;
}

bool frame_tag_valid(const char *s)
{
	if (strlen(s) != AGENT_TAG_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static size_t garbled(struct frame_decoder *d, size_t n, struct frame_event *ev, const char *why)
{
	d->garbled = true;
	ev->kind = FRAME_GARBLED;
	ev->reason = why;
	return n;
}

/* Split the header into at most 4 words on single spaces. */
static int words(char *h, char *w[4])
{
	int n = 0;
	for (char *p = h; n < 4;) {
		w[n++] = p;
		char *sp = strchr(p, ' ');
		if (!sp)
			return n;
		*sp = '\0';
		p = sp + 1;
	}
	return 5; /* too many */
}

/* A complete header line: what it announces. */
static size_t header_done(struct frame_decoder *d, size_t used, struct frame_event *ev)
{
	char *w[4];
	unsigned long long len, code;
	d->header[d->header_len] = '\0';
	d->header_len = 0;
	int n = words(d->header, w);
	if (n == 1 && !strcmp(w[0], "ready")) {
		ev->kind = FRAME_READY;
		return used;
	}
	bool chunk = !strcmp(w[0], "out") || !strcmp(w[0], "err") || !strcmp(w[0], "data");
	if (chunk && n == 3 && frame_tag_valid(w[1]) && number(w[2], AGENT_MAX_CHUNK, &len)) {
		d->body_kind = w[0][0] == 'd' ? FRAME_DATA : FRAME_OUT;
		d->fd = w[0][0] == 'e' ? 2 : 1;
	} else if (!strcmp(w[0], "end") && n == 4 && frame_tag_valid(w[1]) && number(w[2], 100000, &code) &&
		   number(w[3], d->end_max, &len)) {
		d->body_kind = FRAME_END;
		d->code = (long long)code;
	} else if (!strcmp(w[0], "disp") && n == 3 && frame_tag_valid(w[1]) && number(w[2], d->end_max, &len)) {
		d->body_kind = FRAME_DISPLAY;
		d->code = 0;
	} else {
		return garbled(d, used, ev, "an agent frame header that is not in the protocol");
	}
	memcpy(d->tag, w[1], AGENT_TAG_LEN + 1);
	d->body_left = len;
	d->in_body = len > 0;
	if (!d->in_body && (d->body_kind == FRAME_END || d->body_kind == FRAME_DISPLAY)) {
		*ev = (struct frame_event){.kind = d->body_kind, .code = d->code};
		memcpy(ev->tag, d->tag, sizeof ev->tag);
	}
	return used;
}

size_t frame_feed(struct frame_decoder *d, const char *p, size_t n, struct frame_event *ev)
{
	*ev = (struct frame_event){.kind = FRAME_MORE};
	if (d->garbled || n == 0)
		return n;
	if (d->in_body) {
		size_t take = n < d->body_left ? n : (size_t)d->body_left;
		d->body_left -= take;
		d->in_body = d->body_left > 0;
		ev->kind = d->body_kind;
		ev->fd = d->fd;
		ev->code = d->code;
		ev->data = p;
		ev->len = take;
		ev->more = d->in_body;
		memcpy(ev->tag, d->tag, sizeof ev->tag);
		return take;
	}
	const char *lf = memchr(p, '\n', n);
	size_t part = lf ? (size_t)(lf - p) : n;
	if (d->header_len + part > AGENT_MAX_HEADER)
		return garbled(d, n, ev, "an agent frame header that is too long");
	if (memchr(p, '\0', part))
		return garbled(d, n, ev, "a NUL in an agent frame header");
	memcpy(d->header + d->header_len, p, part);
	d->header_len += part;
	if (!lf)
		return n;
	return header_done(d, part + 1, ev);
}
