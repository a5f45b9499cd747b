/*
 * demux.c: the attached stream of a container without a terminal, cut
 * back into stdout and stderr (demux.h). Pure; tests/fuzz/fuzz_demux.c
 * feeds it every way a stream can be cut.
 */
#include "demux.h"

size_t demux_feed(struct demux *d, const char *p, size_t n, int *fd, const char **data, size_t *len)
{
	size_t used = 0;
	*fd = d->fd;
	*data = NULL;
	*len = 0;
	while (!d->left && used < n) {
		d->head[d->head_len++] = (unsigned char)p[used++];
		if (d->head_len < 8)
			continue;
		d->head_len = 0;
		d->fd = d->head[0] == 1 ? 1 : 2;
		d->left = (size_t)d->head[4] << 24 | (size_t)d->head[5] << 16 | (size_t)d->head[6] << 8 | d->head[7];
	}
	if (d->left && used < n) {
		size_t take = n - used < d->left ? n - used : d->left;
		*fd = d->fd;
		*data = p + used;
		*len = take;
		d->left -= take;
		used += take;
	}
	return used;
}
