/*
 * pool.c: the pool master.
 *
 * spawn-fcgi (or systemd) hands us the listening socket as fd 0; we fork N
 * workers that accept on it, replace any that die, and remove what a dead
 * worker left behind (its container and work dir). The master never serves
 * a request; its signals are handled synchronously with sigtimedwait, which
 * also paces the periodic reap and the hang check.
 *
 * Before forking, the master makes the pool's scoreboard (scoreboard.h:
 * one slot per worker process) and shared metrics. With pool.whenBusy:
 * reject it runs one worker more than pool.workers, so that while every
 * execution slot is taken a free worker still answers 503 busy at once.
 * With a status socket, one more worker serves /healthz and /metrics on
 * it and never runs a program, so that they answer while every other
 * worker is busy. A worker that serves pool.maxRequests exits with
 * WORKER_EXIT_RECYCLED and is replaced at once; one still busy past its
 * request's bound (its deadline in its slot) is hung: the master SIGKILLs
 * it and the reaper removes its container.
 */
#define _GNU_SOURCE
#include "pool.h"
#include "serve.h"
#include "metrics.h"
#include "scoreboard.h"
#include "../sandbox/sandbox.h"
#include "../conf/store/store.h"
#include "runner.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define REAP_EVERY_MS 10000
/* How often the master looks for idle, old and dead sessions. */
#define EXPIRE_EVERY_MS 2000
#define STOP_GRACE_MS 10000
#define RESPAWN_BACKOFF_MS 1000

/* The pool's shape: which slots serve what. */
struct shape {
	int n;         /* slots in all */
	int status;    /* the status socket's slot; -1: none */
	int status_fd; /* its listening socket */
};

static pid_t spawn_worker(struct worker *w, const struct shape *p, int index, const sigset_t *orig)
{
	pid_t master = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		log_msg("fork: %s", strerror(errno));
		scoreboard_spawned(w->board, index, 0); /* try again after the backoff */
		return -1;
	}
	if (pid == 0) {
		serve_install_handlers(); /* before a forwarded SIGHUP can arrive */
		/* A worker does not outlive its master: the master's death
		 * stops it as a pool stop would (runs killed, nothing left). */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != master)
			_exit(1);
		if (sigprocmask(SIG_SETMASK, orig, NULL) < 0)
			_exit(1);
		w->started_ms = now_ms();
		w->served = 0;
		w->slot = index;
		w->status_only = index == p->status;
		w->listen_fd = w->status_only ? p->status_fd : 0;
		if (w->status_only) /* so that ps (and the tests) tell it apart */
			prctl(PR_SET_NAME, "isobox-status");
		if (!w->status_only && p->status_fd >= 0)
			close(p->status_fd);
		warm_after_fork(w->warm);
		session_sweep_after_fork();
		/* A runner's workers take jobs from the queue, not requests;
		 * its status worker still answers /healthz and /metrics. */
		if (w->conf.queue.role == QUEUE_RUNNER && !w->status_only)
			_exit(runner_serve(w));
		_exit(serve_fastcgi(w));
	}
	scoreboard_spawned(w->board, index, pid);
	return pid;
}

static void signal_all(const struct scoreboard *sb, int sig)
{
	for (int i = 0; i < scoreboard_slots(sb); i++)
		if (scoreboard_pid(sb, i) > 0)
			kill(scoreboard_pid(sb, i), sig);
}

static int live_count(const struct scoreboard *sb)
{
	int live = 0;
	for (int i = 0; i < scoreboard_slots(sb); i++)
		live += scoreboard_pid(sb, i) > 0;
	return live;
}

/*
 * The store's upkeep: memory keys past their TTL out, the running claims
 * of workers that died holding them, the claims of sessions that ended
 * without a DELETE (expired just now, died, half-made), and the marks on
 * volumes of both (conf/store/store.h). With Redis,
 * the renewal of every claim of this host, and of its life. A connection of its own each
 * time: none may be open in the master when it forks a worker.
 */
static void store_duty(const struct conf *c, const struct strv *ended)
{
	struct fault f = {0};
	struct store *s = c->store.backend != STORE_NONE ? store_open(&c->store, c->instance, &f) : NULL;
	if (!s)
		return; /* logged; workers answer 503 store_unavailable meanwhile */
	store_memory_expire(s, wall_ms());
	store_running_forget_dead(s);
	/* The sessions that just ended give their places back at once; then
	 * the store hears which this host has (the others' claims go). */
	for (size_t i = 0; i < ended->n; i++)
		store_session_release(s, ended->v[i]);
	struct session *all;
	size_t n;
	struct strv ids = {0};
	bool listed = !c->sessions.dir; /* sessions off: there are none */
	if (c->sessions.dir && session_list(c, NULL, &all, &n, &f)) {
		struct session_claim *alive = xcalloc(n + 1, sizeof *alive);
		for (size_t i = 0; i < n; i++) {
			alive[i] = (struct session_claim){all[i].id, all[i].tenant, all[i].limits.memory_bytes};
			strv_push(&ids, all[i].id);
		}
		store_sessions_keep(s, alive, n, wall_ms());
		free(alive);
		free(all);
		listed = true;
	}
	/* Volumes' marks in use: those of dead workers and of sessions gone go. */
	store_volume_uses_keep(s, listed ? &ids : NULL, wall_ms());
	strv_free(&ids);
	store_close(s);
}

/* Collect dead workers; true if any died. */
static bool collect(struct worker *w)
{
	struct scoreboard *sb = w->board;
	bool any = false;
	pid_t pid;
	int status;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (warm_child_exited(w->warm, pid, status))
			continue;
		for (int i = 0; i < scoreboard_slots(sb); i++) {
			if (scoreboard_pid(sb, i) != pid)
				continue;
			any = true;
			const char *reason;
			if (scoreboard_hung(sb, i)) {
				reason = "hung";
			} else if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_RECYCLED) {
				reason = "recycled";
				scoreboard_planned_exit(sb, i); /* no respawn backoff */
			} else if (WIFSIGNALED(status)) {
				reason = "killed";
				log_msg("worker %d killed by signal %d", (int)pid, WTERMSIG(status));
			} else {
				reason = "exited";
				log_msg("worker %d exited with %d", (int)pid, WEXITSTATUS(status));
			}
			scoreboard_gone(sb, i);
			metrics_count(w->metrics, M_WORKER_EXITS, reason, NULL);
			warm_worker_gone(w->warm, &w->conf, pid);
		}
	}
	return any;
}

/* The backstop: a worker still busy past its request's deadline is hung. */
static void kill_hung(struct scoreboard *sb)
{
	int64_t now = now_ms();
	for (int i = 0; i < scoreboard_slots(sb); i++) {
		int64_t deadline = scoreboard_deadline(sb, i);
		pid_t pid = scoreboard_pid(sb, i);
		if (pid <= 0 || scoreboard_hung(sb, i) || !deadline || now <= deadline)
			continue;
		log_msg("worker %d is hung (busy %lld ms past its request's bound): killing it",
			(int)pid, (long long)(now - deadline));
		kill(pid, SIGKILL);
		scoreboard_mark_hung(sb, i);
	}
}

static void stop(struct worker *w, sigset_t *set)
{
	struct scoreboard *sb = w->board;
	log_msg("stopping %d worker(s)", live_count(sb));
	signal_all(sb, SIGTERM);
	int64_t deadline = now_ms() + STOP_GRACE_MS;
	while (live_count(sb) > 0 && now_ms() < deadline) {
		struct timespec ts = {0, 100 * 1000000};
		sigtimedwait(set, NULL, &ts);
		collect(w);
	}
	signal_all(sb, SIGKILL);
	deadline = now_ms() + STOP_GRACE_MS;
	while (live_count(sb) > 0 && now_ms() < deadline) {
		collect(w);
		usleep(10000);
	}
	warm_destroy(w->warm, &w->conf);
	w->warm = NULL;
	sandbox_reap(&w->conf, &(struct reap_by){.master = true});
}

int pool_run(struct worker *w, int workers, int status_fd)
{
	sigset_t set, orig;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1); /* a worker took or finished a warm sandbox */
	if (sigprocmask(SIG_BLOCK, &set, &orig) < 0)
		die("sigprocmask: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);

	/* Anything of this instance from before our time is an orphan. */
	sandbox_reap(&w->conf, &(struct reap_by){.master = true});
	bool reject = w->conf.pool.reject_when_busy;
	w->exec_slots = workers;
	w->busy_limit = reject ? workers : 0;
	w->pooled = true;
	w->pool_fd = 0;
	struct shape p = {.n = workers + (reject ? 1 : 0), .status = -1, .status_fd = status_fd};
	if (status_fd >= 0)
		p.status = p.n++;
	w->board = scoreboard_create(p.n);
	if (!w->board)
		die("cannot make the pool's scoreboard");
	w->metrics = metrics_create();
	if (!w->metrics)
		log_msg("no shared metrics map: /metrics answers 503");
	w->warm = warm_create(&w->conf, &w->reg);
	worker_describe_runtime(w);
	log_msg("pool of %d workers on fd 0 (instance %s, when busy: %s%s%s)", workers,
		w->conf.instance, reject ? "reject" : "wait", reject ? ", +1 to answer busy" : "",
		status_fd >= 0 ? ", +1 on the status socket" : "");
	int64_t next_reap = now_ms() + REAP_EVERY_MS, next_expire = 0;
	/* Session sandboxes' clients are detached from the
	 * workers that start them: they become ours to reap, not init's. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_msg("cannot reap session sandboxes' clients (init will): %s", strerror(errno));
	for (;;) {
		for (int i = 0; i < p.n; i++) {
			if (scoreboard_pid(w->board, i) > 0)
				continue;
			/* A worker that dies at once would otherwise spin the CPU. */
			if (now_ms() - scoreboard_started_ms(w->board, i) < RESPAWN_BACKOFF_MS)
				continue;
			spawn_worker(w, &p, i, &orig);
		}
		int64_t wait = next_reap - now_ms();
		if (wait > RESPAWN_BACKOFF_MS)
			wait = RESPAWN_BACKOFF_MS;
		/* Busy: half the workers or more run programs. A boot (pandas
		 * imported ahead) costs more CPU than the run it saves, and one
		 * without the preloads saves nothing either (each run pays a
		 * boot; PERFORMANCE.md), so under load the pool waits to refill. */
		bool saturated = 2 * scoreboard_count(w->board).executing >= w->exec_slots;
		int64_t warm_wait = warm_tick(w->warm, &w->conf, &w->reg, saturated);
		if (wait > warm_wait)
			wait = warm_wait;
		if (now_ms() >= next_expire) {
			int expired, died;
			struct strv ended = {0};
			session_expire(&w->conf, &expired, &died, &ended);
			metrics_add(w->metrics, M_SESSIONS_ENDED, "expired", NULL, (uint64_t)expired);
			metrics_add(w->metrics, M_SESSIONS_ENDED, "died", NULL, (uint64_t)died);
			store_duty(&w->conf, &ended);
			strv_free(&ended);
			next_expire = now_ms() + EXPIRE_EVERY_MS;
		}
		struct timespec ts = {.tv_sec = wait > 0 ? wait / 1000 : 0,
				      .tv_nsec = wait > 0 ? (wait % 1000) * 1000000 : 0};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			stop(w, &set);
			metrics_destroy(w->metrics);
			scoreboard_destroy(w->board);
			w->metrics = NULL;
			w->board = NULL;
			return 0;
		}
		if (sig == SIGHUP) {
			/* The workers first: each reloads before its next request,
			 * which should not wait for the master's own load. */
			signal_all(w->board, SIGHUP);
			char err[512];
			if (worker_load(w, err, sizeof err)) {
				log_msg("reloaded %s", w->conf_path);
				worker_describe_runtime(w);
				sandbox_egress_log(&w->conf);
			} else
				log_msg("reload failed, keeping the previous config: %s", err);
		}
		kill_hung(w->board);
		if (collect(w) || now_ms() >= next_reap) {
			sandbox_reap(&w->conf, &(struct reap_by){.master = true, .warm = w->warm});
			next_reap = now_ms() + REAP_EVERY_MS;
		}
	}
}
