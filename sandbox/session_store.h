/*
 * session_store.h: where sessions are kept and how one is opened, locked
 * and ended (session_store.c), for session.c and session_files.c. The face
 * is in sandbox.h.
 */
#ifndef ISOBOX_SANDBOX_SESSION_STORE_H
#define ISOBOX_SANDBOX_SESSION_STORE_H

#include "sandbox.h"

/* Is this a session id (sandbox.h)? Pure. */
bool session_valid_id(const char *id);


/*
 * A session opened for one request. Ownership: session_open fills it, the
 * request holds the lock until session_close, which also records the use.
 */
struct session_handle {
	const struct conf *c;
	struct session s;
	int dir_fd, lock_fd;
};

/* Open and lock it, if it is tenant's (NULL: anyone's): 404, 410, or 409
 * session_busy. */
bool session_open(const struct conf *c, const char *tenant, const char *id, struct session_handle *h,
		  struct fault *f);
/* Unlock, after marking it used now (the idle clock restarts). */
void session_close(struct session_handle *h, bool used);
/* Open its agent's pipes: false (and the session is ended) when its
 * sandbox is gone. */
bool session_pipes(struct session_handle *h, int *in_fd, int *out_fd, struct fault *f);

/* Why s is over by its own clocks at now (wall ms): past its
 * maxLifetimeMs, or idle past its idleTimeoutMs unless a request holds it
 * (s->busy) (text holds the words); NULL: it is not. Pure. */
#define SESSION_WHY_MAX 96
const char *session_over(const struct session *s, int64_t now, char text[SESSION_WHY_MAX]);
/* When its maxLifetimeMs ends (wall ms), however busy. Pure. */
int64_t session_life_end_ms(const struct session *s);

/* Write the record of s into its directory (atomically). */
bool session_record_write(int dir_fd, const struct session *s);

/*
 * End it: leave `why` for later requests of its tenant (410; "deleted"
 * answers 404),
 * make it unreachable, remove its container and its directory. wait: the
 * container is gone when this returns; else its removal is the master's
 * sweep's (session_expire), whose answer that sweep reads next time.
 */
void session_end(const struct conf *c, const char *id, const char *container, const char *why,
		 bool wait);

/*
 * Admission of a new session s (sessions.max, memoryBudgetBytes, and its
 * tenant's share: sessions, sessionMemoryBytes), under a lock so that two
 * creations cannot both take the last place: make its directory, lock and
 * record, and return it open and locked in h. 429 / 507 when the server
 * is full, 403 quota_exceeded past the tenant's share.
 */
bool session_admit(const struct conf *c, const struct session *s, const struct tenant_limits *share,
		   struct session_handle *h, struct fault *f);

#endif
