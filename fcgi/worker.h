/*
 * worker.h: what a worker process holds between requests: the settings, the
 * registry, and its place in the pool. serve.h runs its request loop.
 */
#ifndef ISOBOX_WORKER_H
#define ISOBOX_WORKER_H

#include "http.h"
#include "../conf/conf.h"
#include "../registry/registry.h"
#include "../sandbox/sandbox.h"

/* isobox's version: the Makefile's ISOBOX_VERSION (a commit's date and id). */
#ifndef ISOBOX_VERSION
#define ISOBOX_VERSION "unknown"
#endif

struct metrics;
struct scoreboard;
struct store;

/* What one worker process holds between requests. */
struct worker {
	char *conf_path;
	struct conf conf;
	struct registry reg;
	int64_t started_ms;
	int64_t served;
	char reload_error[512]; /* "" when the last reload worked */
	/* The pool (pool.c; all zero/NULL for CGI). Fixed when the pool starts:
	 * whenBusy and workers need a restart, not a reload. */
	struct scoreboard *board; /* the pool's slots; owned by the master */
	struct metrics *metrics;  /* the pool's counters; owned by the master */
	int slot;                 /* this worker's slot; -1: none */
	int exec_slots;           /* programs the pool runs at once */
	int busy_limit;           /* whenBusy: reject -> exec_slots; wait -> 0 */
	bool pooled;              /* a master respawns us: maxRequests applies */
	int listen_fd;            /* the FastCGI socket accepted on (0: the pool's) */
	int pool_fd;              /* the pool's socket, for its queue length; -1: none */
	bool status_only;         /* serves the status routes only (status socket) */
	struct warm_pool *warm;   /* sandboxes started ahead; owned by the master */
	struct store *store;      /* this process's own connection (worker_store) */
	/* The sandboxes' runtime as dockerd has it (worker_describe_runtime:
	 * the master at start and at each reload, before its workers fork);
	 * program "" when not known (CGI, or dockerd did not say). */
	struct sandbox_runtime runtime;
};

/* Load conf and registry; false with err set (the old ones are untouched). */
bool worker_load(struct worker *w, char *err, size_t errlen);
void worker_free(struct worker *w);

/* Ask which runtime runs the sandboxes (/healthz, /runtimes), and log it. */
void worker_describe_runtime(struct worker *w);

/* This process's store, opened at first use (never before a fork: a
 * connection must not cross one); NULL with f filled: store_unavailable,
 * or no store in conf. */
struct store *worker_store(struct worker *w, struct fault *f);

#endif
