/*
 * pool.c: the pool master.
 *
 * spawn-fcgi (or systemd) hands us the listening socket as fd 0; we fork N
 * workers that accept on it, replace any that die, and remove what a dead
 * worker left behind (its container and work dir). The master never serves
 * a request; its signals are handled synchronously with sigtimedwait, which
 * also paces the periodic reap and the hang check.
 *
 * Before forking, the master maps the pool's shared metrics (metrics.h):
 * one slot per worker process. With pool.whenBusy: reject it runs one
 * worker more than pool.workers, so that while every execution slot is
 * taken a free worker still answers 503 busy at once. A worker that serves
 * pool.maxRequests exits with WORKER_EXIT_RECYCLED and is replaced at once;
 * one still busy past its request's bound (its deadline in its slot) is
 * hung: the master SIGKILLs it and the reaper removes its container.
 */
#define _GNU_SOURCE
#include "worker.h"
#include "metrics.h"
#include "../sandbox/sandbox.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#define REAP_EVERY_MS 10000
#define STOP_GRACE_MS 10000
#define RESPAWN_BACKOFF_MS 1000

struct slot {
	pid_t pid;
	int64_t started_ms;
	bool killed_hung; /* we SIGKILLed it: the hang backstop */
};

static pid_t spawn_worker(struct worker *w, int index, const sigset_t *orig)
{
	pid_t pid = fork();
	if (pid < 0) {
		log_msg("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		worker_install_handlers(); /* before a forwarded SIGHUP can arrive */
		sigprocmask(SIG_SETMASK, orig, NULL);
		w->started_ms = now_ms();
		w->served = 0;
		w->slot = index;
		_exit(worker_serve(w));
	}
	metrics_slot_spawned(w->metrics, index, pid);
	return pid;
}

static void signal_all(struct slot *slots, int n, int sig)
{
	for (int i = 0; i < n; i++)
		if (slots[i].pid > 0)
			kill(slots[i].pid, sig);
}

static int live_count(const struct slot *slots, int n)
{
	int live = 0;
	for (int i = 0; i < n; i++)
		live += slots[i].pid > 0;
	return live;
}

/* Collect dead workers; true if any died. */
static bool collect(struct worker *w, struct slot *slots, int n)
{
	bool any = false;
	pid_t pid;
	int status;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < n; i++) {
			if (slots[i].pid != pid)
				continue;
			slots[i].pid = 0;
			metrics_slot_gone(w->metrics, i);
			any = true;
			const char *reason;
			if (slots[i].killed_hung) {
				reason = "hung";
			} else if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_RECYCLED) {
				reason = "recycled";
				slots[i].started_ms = 0; /* planned: no respawn backoff */
			} else if (WIFSIGNALED(status)) {
				reason = "killed";
				log_msg("worker %d killed by signal %d", (int)pid, WTERMSIG(status));
			} else {
				reason = "exited";
				log_msg("worker %d exited with %d", (int)pid, WEXITSTATUS(status));
			}
			slots[i].killed_hung = false;
			metrics_count(w->metrics, M_WORKER_EXITS, reason, NULL);
		}
	}
	return any;
}

/* The backstop: a worker still busy past its request's deadline is hung. */
static void kill_hung(struct worker *w, struct slot *slots, int n)
{
	int64_t now = now_ms();
	for (int i = 0; i < n; i++) {
		int64_t deadline = metrics_slot_deadline(w->metrics, i);
		if (slots[i].pid <= 0 || slots[i].killed_hung || !deadline || now <= deadline)
			continue;
		log_msg("worker %d is hung (busy %lld ms past its request's bound): killing it",
			(int)slots[i].pid, (long long)(now - deadline));
		kill(slots[i].pid, SIGKILL);
		slots[i].killed_hung = true;
	}
}

static void stop(struct worker *w, struct slot *slots, int n, sigset_t *set)
{
	log_msg("stopping %d worker(s)", live_count(slots, n));
	signal_all(slots, n, SIGTERM);
	int64_t deadline = now_ms() + STOP_GRACE_MS;
	while (live_count(slots, n) > 0 && now_ms() < deadline) {
		struct timespec ts = {0, 100 * 1000000};
		sigtimedwait(set, NULL, &ts);
		collect(w, slots, n);
	}
	signal_all(slots, n, SIGKILL);
	deadline = now_ms() + STOP_GRACE_MS;
	while (live_count(slots, n) > 0 && now_ms() < deadline) {
		collect(w, slots, n);
		usleep(10000);
	}
	sandbox_reap(&w->conf);
}

int pool_run(struct worker *w, int workers)
{
	sigset_t set, orig;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &orig);
	signal(SIGPIPE, SIG_IGN);

	/* Anything of this instance from before our time is an orphan. */
	sandbox_reap(&w->conf);
	bool reject = w->conf.pool.reject_when_busy;
	w->exec_slots = workers;
	w->busy_limit = reject ? workers : 0;
	w->pooled = true;
	int n = workers + (reject ? 1 : 0);
	w->metrics = metrics_create(n);
	if (!w->metrics && reject)
		die("pool.whenBusy: reject needs the shared metrics map, which could not be made");
	if (!w->metrics)
		log_msg("no shared metrics map: /metrics answers 503 and the hung-worker backstop is off");
	struct slot *slots = xcalloc((size_t)n, sizeof *slots);
	log_msg("pool of %d workers on fd 0 (instance %s, when busy: %s%s)", workers,
		w->conf.instance, reject ? "reject" : "wait", reject ? ", +1 to answer busy" : "");
	int64_t next_reap = now_ms() + REAP_EVERY_MS;
	for (;;) {
		for (int i = 0; i < n; i++) {
			if (slots[i].pid > 0)
				continue;
			/* A worker that dies at once would otherwise spin the CPU. */
			if (now_ms() - slots[i].started_ms < RESPAWN_BACKOFF_MS)
				continue;
			slots[i].started_ms = now_ms();
			slots[i].pid = spawn_worker(w, i, &orig);
		}
		int64_t wait = next_reap - now_ms();
		if (wait > RESPAWN_BACKOFF_MS)
			wait = RESPAWN_BACKOFF_MS;
		struct timespec ts = {.tv_sec = wait > 0 ? wait / 1000 : 0,
				      .tv_nsec = wait > 0 ? (wait % 1000) * 1000000 : 0};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			stop(w, slots, n, &set);
			free(slots);
			metrics_destroy(w->metrics);
			w->metrics = NULL;
			return 0;
		}
		if (sig == SIGHUP) {
			char err[512];
			if (worker_load(w, err, sizeof err))
				log_msg("reloaded %s", w->conf_path);
			else
				log_msg("reload failed, keeping the previous config: %s", err);
			signal_all(slots, n, SIGHUP);
		}
		kill_hung(w, slots, n);
		if (collect(w, slots, n) || now_ms() >= next_reap) {
			sandbox_reap(&w->conf);
			next_reap = now_ms() + REAP_EVERY_MS;
		}
	}
}
