/* demux.h: a container's attached stream cut into stdout and stderr (demux.c). */
#ifndef ISOBOX_SANDBOX_DEMUX_H
#define ISOBOX_SANDBOX_DEMUX_H

#include <stddef.h>

/*
 * The attached stream without a terminal: frames of an 8-byte header
 * (stream: 1 stdout, 2 stderr; 3 bytes of zero; the size, 4 bytes big
 * endian) and that many bytes. demux_feed reports one piece of output at
 * a time: it returns the bytes of p it used, with *fd (1 or 2) and
 * *data and *len the piece (len 0: none yet, more is needed). Any stream but
 * stdout counts as stderr. Pure.
 */
struct demux {
	unsigned char head[8];
	size_t head_len; /* bytes of the header read */
	size_t left;     /* bytes of the current frame still to come */
	int fd;
};
size_t demux_feed(struct demux *d, const char *p, size_t n, int *fd, const char **data, size_t *len);

#endif
