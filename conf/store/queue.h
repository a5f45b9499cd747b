/*
 * queue.h: queue mode's jobs and their events, in Redis (a store
 * whose backend is redis; an SQLite store answers store_unavailable).
 *
 *   P jobs            a stream: one entry per job (job id, tenant, shape,
 *                     the request's body as /execute takes it), read by the runners' consumer
 *                     group "runners"; an entry is deleted when done
 *   P job:ID          a stream: what the job's run did, in order (started,
 *                     compile, stdout, stderr, result, error), each with
 *                     the attempt that made it; expires 10 min after its
 *                     last event
 *   P job:ID:cancel   set by a front whose client left: the run stops
 *
 * At least once: a job stays pending in the group until its runner says
 * it is done; a runner that shows no life for claim_after_ms (it renews
 * its claim as the run goes) loses it to the next runner that asks.
 *
 * Ownership: a job or events returned are the caller's (queue_job_free,
 * queue_events_free).
 */
#ifndef ISOBOX_STORE_QUEUE_H
#define ISOBOX_STORE_QUEUE_H

#include "../lib/base.h"
#include "../lib/fault.h"

struct store;

#define QUEUE_JOB_ID_LEN 32

/* Put a job on the queue, unless it holds max_length already (503 busy). */
bool queue_push(struct store *s, const char *job_id, const char *tenant, bool piston, const void *body,
		size_t len, int64_t max_length, struct fault *f);
/* Take it back, if no runner has it yet; true if it was still there. */
bool queue_withdraw(struct store *s, const char *job_id);
void queue_cancel(struct store *s, const char *job_id);

struct queue_job {
	char entry[48];  /* its id in the stream */
	char job_id[QUEUE_JOB_ID_LEN + 1];
	char tenant[64];
	bool piston;     /* answered in Piston's shape */
	struct buf body;
	bool again;      /* taken from a runner that stopped showing life */
};
void queue_job_free(struct queue_job *j);
/* The next job for consumer: one another runner let go, else a new one,
 * waiting up to block_ms. *got false: none came. cursor: the caller's,
 * "" at first, kept from call to call. */
bool queue_take(struct store *s, const char *consumer, int64_t claim_after_ms, int64_t block_ms,
		char cursor[48], struct queue_job *out, bool *got, struct fault *f);
/* Still working on it (its idle time starts over); false when another
 * runner has taken it since (this one must stop). */
bool queue_touch(struct store *s, const char *entry, const char *consumer);
/* Done with it: its run's end (type "result" or "error"; NULL for none)
 * written and the job removed, together, if it is still consumer's; false
 * when another runner has taken it since (or Redis is away), and nothing
 * was written. */
bool queue_finish(struct store *s, const struct queue_job *job, const char *consumer, const char *attempt,
		  const char *type, const void *data, size_t len);
bool queue_cancelled(struct store *s, const char *job_id);

/* One event of a job's run. */
bool queue_emit(struct store *s, const char *job_id, const char *attempt, const char *type,
		const void *data, size_t len);
struct queue_event {
	char type[16];
	char attempt[128];
	struct buf data;
};
void queue_events_free(struct queue_event *e, size_t n);
/* The events after *last (its stream id; "0" at first, updated), waiting
 * up to block_ms for one. */
bool queue_events(struct store *s, const char *job_id, char last[48], int64_t block_ms,
		  struct queue_event **out, size_t *n, struct fault *f);

/* For /metrics: jobs in the stream, and of those taken and not done. */
bool queue_stats(struct store *s, int64_t *length, int64_t *pending, struct fault *f);

#endif
