/*
 * serve.h: a worker's request loop: one request at a time, over FastCGI or
 * as a CGI program, with config reloads between requests.
 */
#ifndef ISOBOX_SERVE_H
#define ISOBOX_SERVE_H

#include "worker.h"

/* A worker that served pool.maxRequests exits with this: respawn at once. */
#define WORKER_EXIT_RECYCLED 75

/* SIGHUP: reload between requests; SIGTERM: stop (kills a run in flight). */
void serve_install_handlers(void);

/* Serve FastCGI requests on w->listen_fd until stopped (0) or recycled
 * (WORKER_EXIT_RECYCLED): the process's exit status. */
int serve_fastcgi(struct worker *w);
/* Serve the one CGI request of this process. */
void serve_cgi(struct worker *w);

#endif
