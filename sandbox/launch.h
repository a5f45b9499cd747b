/* launch.h: a cold run's container through dockerd's API (launch.c). */
#ifndef ISOBOX_SANDBOX_LAUNCH_H
#define ISOBOX_SANDBOX_LAUNCH_H

#include "sandbox.h"
#include "spec.h"
#include <cjson/cJSON.h>

/*
 * Create the container, attach to its stdin, stdout and stderr, ask to be
 * told when it exits, start it: the attached stream's connection
 * (non-blocking, close-on-exec), or -1 with docker's own words in why.
 * The caller writes the program's stdin to it, ends it with
 * shutdown(SHUT_WR), and reads the output multiplexed (demux.h).
 * *wait_fd is the connection on which dockerd answers when the container
 * has exited, its headers already read into wait_head (launch_exit_code
 * reads the whole answer): the run is over then, not when the stream ends
 * (a program can close its stdout and stderr and go on). *unreachable: dockerd's socket could not be reached, and
 * nothing was created (the caller may use the CLI). id: the
 * container's id, once created ("" if dockerd's answer named none). By
 * deadline; a container that was created stays for the caller's removal.
 */
int launch_start(const struct conf *c, const struct container_spec *spec, int64_t deadline, struct buf *why,
		 bool *unreachable, int *wait_fd, struct buf *wait_head, char id[65]);

/* The exit status in dockerd's whole answer to the wait; -1: none. Pure. */
int launch_exit_code(const struct buf *reply);

#endif
