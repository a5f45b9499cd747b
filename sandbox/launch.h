/* launch.h: a cold run's container through dockerd's API (launch.c). */
#ifndef ISOBOX_SANDBOX_LAUNCH_H
#define ISOBOX_SANDBOX_LAUNCH_H

#include "sandbox.h"
#include <cjson/cJSON.h>

/*
 * The body of POST /containers/create that the docker CLI would send for
 * this `docker run` argv (argv.c writes it: the one list of a run's flags),
 * and the container's name (*name points into argv). Only the flags argv.c
 * writes are known: any other is refused (false, with the reason in why),
 * so that a flag added there cannot be dropped here unnoticed. A seccomp
 * profile is read from its file, as the CLI does. *body is the caller's to
 * cJSON_Delete.
 */
bool launch_create_body(char *const argv[], cJSON **body, const char **name, struct buf *why);

/*
 * Create the container, attach to its stdin, stdout and stderr, ask to be
 * told when it exits, start it: the attached stream's connection
 * (non-blocking, close-on-exec), or -1 with docker's own words in why.
 * The caller writes the program's stdin to it, ends it with
 * shutdown(SHUT_WR), and reads the output multiplexed (struct demux).
 * *wait_fd is the connection on which dockerd answers when the container
 * has exited, its headers already read into wait_head (launch_exit_code
 * reads the whole answer): the run is over then, not when the stream ends
 * (a program can close its stdout and stderr and go on). *unreachable: dockerd's socket could not be reached, and
 * nothing was created (the caller may use the CLI). By deadline; a
 * container that was created stays for the caller's removal.
 */
int launch_start(const struct conf *c, char *const argv[], int64_t deadline, struct buf *why,
		 bool *unreachable, int *wait_fd, struct buf *wait_head);

/* The exit status in dockerd's whole answer to the wait; -1: none. Pure. */
int launch_exit_code(const struct buf *reply);

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
