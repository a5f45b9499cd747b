/*
 * scoreboard.h: the pool's slots, one per worker process, and the one
 * place that knows who runs what.
 *
 * Two parts, on purpose. What workers publish (their pid as the master
 * forked it, whether they serve a request or run a program now, the time
 * their request must end by) is in an anonymous shared mapping the master
 * makes before it forks, so any process of the pool can read it (the
 * whenBusy gate, /metrics, /healthz). What the master acts on (the pid it
 * forked, when, whether it killed it as hung) is in the master's own
 * memory: a worker can write the shared part, so the master never takes a
 * pid to signal from there.
 *
 * Every function accepts sb == NULL (no pool: CGI) and does nothing.
 */
#ifndef ISOBOX_SCOREBOARD_H
#define ISOBOX_SCOREBOARD_H

#include "../conf/lib/base.h"
#include <sys/types.h>

struct scoreboard;

/* Made by the master for n_slots worker processes; NULL (logged) on failure. */
struct scoreboard *scoreboard_create(int n_slots);
void scoreboard_destroy(struct scoreboard *sb);
int scoreboard_slots(const struct scoreboard *sb);

/* The master's side. */
void scoreboard_spawned(struct scoreboard *sb, int slot, pid_t pid);
/* The worker is dead: it runs nothing and owes nothing. */
void scoreboard_gone(struct scoreboard *sb, int slot);
pid_t scoreboard_pid(const struct scoreboard *sb, int slot);           /* 0: empty */
int64_t scoreboard_started_ms(const struct scoreboard *sb, int slot);
void scoreboard_planned_exit(struct scoreboard *sb, int slot);         /* respawn at once */
void scoreboard_mark_hung(struct scoreboard *sb, int slot);
bool scoreboard_hung(const struct scoreboard *sb, int slot);

/* A worker's side: its request must end by deadline_ms (monotonic); 0: idle. */
void scoreboard_busy(struct scoreboard *sb, int slot, int64_t deadline_ms);
int64_t scoreboard_deadline(const struct scoreboard *sb, int slot);
/*
 * Mark this slot as running a program. With max > 0, refuse (false) when
 * that would make more than max slots run at once. Two workers racing for
 * the last place may both be refused, never both admitted.
 */
bool scoreboard_claim_execution(struct scoreboard *sb, int slot, int max);
void scoreboard_release_execution(struct scoreboard *sb, int slot);

/* For /metrics and /healthz. */
struct scoreboard_counts {
	int alive;     /* worker processes */
	int executing; /* running a program now */
};
struct scoreboard_counts scoreboard_count(const struct scoreboard *sb);

#endif
