/*
 * pool.c: the pool master.
 *
 * spawn-fcgi (or systemd) hands us the listening socket as fd 0; we fork N
 * workers that accept on it, replace any that die, and remove what a dead
 * worker left behind (its container and work dir). The master never serves
 * a request; its signals are handled synchronously with sigtimedwait, which
 * also paces the periodic reap.
 */
#define _GNU_SOURCE
#include "worker.h"
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
};

static pid_t spawn_worker(struct worker *w, const sigset_t *orig)
{
	pid_t pid = fork();
	if (pid < 0) {
		log_msg("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, orig, NULL);
		w->started_ms = now_ms();
		w->served = 0;
		worker_serve(w);
		_exit(0);
	}
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
static bool collect(struct slot *slots, int n)
{
	bool any = false;
	pid_t pid;
	int status;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < n; i++) {
			if (slots[i].pid != pid)
				continue;
			slots[i].pid = 0;
			any = true;
			if (WIFSIGNALED(status))
				log_msg("worker %d killed by signal %d", (int)pid, WTERMSIG(status));
			else
				log_msg("worker %d exited with %d", (int)pid, WEXITSTATUS(status));
		}
	}
	return any;
}

static void stop(struct worker *w, struct slot *slots, int n, sigset_t *set)
{
	log_msg("stopping %d worker(s)", live_count(slots, n));
	signal_all(slots, n, SIGTERM);
	int64_t deadline = now_ms() + STOP_GRACE_MS;
	while (live_count(slots, n) > 0 && now_ms() < deadline) {
		struct timespec ts = {0, 100 * 1000000};
		sigtimedwait(set, NULL, &ts);
		collect(slots, n);
	}
	signal_all(slots, n, SIGKILL);
	while (live_count(slots, n) > 0 && waitpid(-1, NULL, 0) > 0)
		collect(slots, n);
	sandbox_reap(&w->conf);
}

int pool_run(struct worker *w, int n)
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
	struct slot *slots = xcalloc((size_t)n, sizeof *slots);
	log_msg("pool of %d workers on fd 0 (instance %s)", n, w->conf.instance);
	int64_t next_reap = now_ms() + REAP_EVERY_MS;
	for (;;) {
		for (int i = 0; i < n; i++) {
			if (slots[i].pid > 0)
				continue;
			/* A worker that dies at once would otherwise spin the CPU. */
			if (now_ms() - slots[i].started_ms < RESPAWN_BACKOFF_MS)
				continue;
			slots[i].started_ms = now_ms();
			slots[i].pid = spawn_worker(w, &orig);
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
		if (collect(slots, n) || now_ms() >= next_reap) {
			sandbox_reap(&w->conf);
			next_reap = now_ms() + REAP_EVERY_MS;
		}
	}
}
