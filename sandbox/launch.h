/* launch.h: containers made through dockerd's API (launch.c). */
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

/*
 * Create the container of spec through the API, by deadline: true when
 * dockerd made it. Else docker's words in why; *unreachable: its socket
 * could not be reached, and nothing was made. id as launch_start's.
 */
bool launch_create(const struct conf *c, const struct container_spec *spec, int64_t deadline, struct buf *why,
		   bool *unreachable, char id[65]);

/*
 * Attach to the made container name, ask for its exit, start it, by
 * deadline: the stream and *wait_fd as launch_start's, or -1 with why.
 */
int launch_attach_start(const struct conf *c, const char *name, int64_t deadline, struct buf *why, int *wait_fd,
			struct buf *wait_head);

/*
 * The client that holds a sandbox's stdin, stdout and stderr for its whole
 * life (warm, session, volume files, outputs), as argv: the container is
 * made here through the API, where a run without network can have dockerd
 * set up none (NetworkDisabled: spec_render.c), and the client only starts
 * it, attached, and passes its exit on as `docker run` does: this binary
 * again, `LAUNCH_SELF --attach SOCKET NAME DEADLINE` (sandbox_attach,
 * attach.c; DEADLINE in now_ms()'s clock). Where dockerd's socket cannot
 * be reached, `docker run`'s whole argv (the CLI's way), with why saying
 * so. false: dockerd refused the create, its words in why. id: the
 * container's, as launch_start's ("" on the CLI's way, where it is made
 * later). A container once made is its caller's to remove, by name.
 */
#define LAUNCH_SELF "/proc/self/exe"
bool launch_client_argv(const struct conf *c, const struct container_spec *spec, int64_t deadline,
			struct strv *argv, struct buf *why, char id[65]);

/* The exit status in dockerd's whole answer to the wait; -1: none. Pure. */
int launch_exit_code(const struct buf *reply);

#endif
