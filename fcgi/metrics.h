/*
 * metrics.h: counters shared by every process of one pool, rendered in the
 * Prometheus text format (0.0.4) by whichever worker answers GET /metrics.
 *
 * The pool master maps one shared anonymous region (MAP_SHARED) before it
 * forks, so every worker it ever starts reaches the same memory, and the
 * counts of a worker that dies or is recycled stay where they are: the
 * region belongs to the master. Counters are C11 atomics; label sets are
 * claimed in fixed tables (see metrics.c). A pool restart starts from zero,
 * which Prometheus handles as a counter reset.
 *
 * The gauges (workers alive, busy) are read off the pool's scoreboard
 * (scoreboard.h), which is the one place that knows who runs what.
 *
 * Every function accepts m == NULL (no pool: CGI) and does nothing.
 */
#ifndef ISOBOX_METRICS_H
#define ISOBOX_METRICS_H

#include "../conf/lib/base.h"
#include "../sandbox/sandbox.h"
#include "scoreboard.h"
#include <sys/types.h>

/* Counter families; each has two labels (worker exits: one). */
enum metrics_family {
	M_HTTP_REQUESTS,    /* route, status */
	M_EXECUTIONS,       /* language, outcome */
	M_REJECTED,         /* code, status: 4xx input errors, 403, busy */
	M_SANDBOX_FAILURES, /* code, status: 5xx faults (docker down, image missing...) */
	M_WORKER_EXITS,     /* reason: recycled, hung, killed, exited */
	M_WARM_HITS,        /* language: ran in a warm sandbox */
	M_WARM_MISSES,      /* language, reason: ran cold though it has a warm pool */
	M_SESSIONS_CREATED, /* type: shell, kernel */
	M_SESSIONS_ENDED,   /* reason: deleted, expired, died */
	M_SESSION_STEPS,    /* type, outcome */
	M_SESSION_STEP_MS,  /* type: the steps' time, summed (ms) */
	M_TENANT_REQUESTS,  /* tenant (bounded: metrics_tenant_label), status */
	M_TENANT_RUN_MS,    /* tenant: the runs' whole requests, summed (ms) */
	M_FAMILIES
};

struct metrics;

/* Map the counters' region (the master, before it forks); NULL (logged) on failure. */
struct metrics *metrics_create(void);
void metrics_destroy(struct metrics *m);

/* Add one to the counter of family fam with these label values. */
void metrics_count(struct metrics *m, enum metrics_family fam, const char *a, const char *b);
/* Add n. */
void metrics_add(struct metrics *m, enum metrics_family fam, const char *a, const char *b, uint64_t n);
/*
 * The tenant label for tenant: its own name while fewer than max tenants
 * have one (or it has one already), else "other", so that the series stay
 * bounded whatever the tenants file holds (pool.metricsTenants). The first
 * max tenants to call keep their names until the pool restarts; two
 * workers naming new tenants at once may pass max by one. out: LABEL_A.
 */
void metrics_tenant_label(const struct metrics *m, const char *tenant, int64_t max, char out[64]);

/* One execution of `language` took ms (whole request, container start included). */
void metrics_observe_ms(struct metrics *m, const char *language, int64_t ms);

/*
 * The outcome label of a finished job; the first that holds wins:
 * cancelled (a streaming client left), timeout, oom, truncated, error
 * (nonzero exit or failed compile), ok. Pure.
 */
const char *metrics_outcome(const struct sandbox_result *res);

/* The whole text exposition; exec_slots is the pool's size (pool.workers);
 * warm may be NULL (no warm pool); sessions: alive now, -1 when they are off. */
/* What the store says, for a scrape: whether it answers, which hosts are
 * alive in it, and (queue mode) the queue's depth. */
struct metrics_store {
	const char *backend;
	bool up, queue;
	struct strv hosts;
	int64_t jobs, pending;
};
void metrics_render_store(const struct metrics_store *ms, struct buf *out);

/* isobox_build_info{version, backend, runtime, runtime_version} 1: what
 * answers, for dashboards to join on. runtime, runtime_version: the
 * sandbox runtime's program and version ("" when unknown). */
void metrics_render_build_info(const char *version, const char *backend, const char *runtime,
			       const char *runtime_version, struct buf *out);

void metrics_render(const struct metrics *m, const struct scoreboard *sb, int exec_slots,
		    const struct warm_pool *warm, int sessions, struct buf *out);

#endif
