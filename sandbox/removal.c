/*
 * removal.c: containers being removed (removal.h): asked of dockerd's API
 * (docker.c), a `docker rm` process when it cannot be reached, one more
 * try for a removal that failed, and the answers waited for together.
 */
#define _GNU_SOURCE
#include "removal.h"
#include "deadline.h"
#include "docker.h"
#include "subproc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void removals_init(struct removals *q, removal_gone_fn *gone, void *arg, bool master)
{
	*q = (struct removals){.gone = gone, .arg = arg, .master = master};
}

/* Ask dockerd; false when the queue holds nothing more of it: neither the
 * API nor a process could be had, or the process is the master's reaper's. */
static bool ask(const struct removals *q, struct removal *e, int64_t now)
{
	e->fd = docker_remove_send(e->c, e->name);
	e->pid = e->fd >= 0 ? -1 : docker_remove_start(e->c, e->name);
	e->until = now + REMOVE_MS;
	if (q->master && e->pid >= 0)
		e->pid = -1; /* its reaper collects it; a wait here would race it */
	return e->fd >= 0 || e->pid >= 0;
}

void removals_add(struct removals *q, const struct conf *c, const char *name)
{
	if (q->n == REMOVALS_MAX && q->master) { /* never blocks the master */
		docker_remove_start(c, name);
		return;
	}
	if (q->n == REMOVALS_MAX) { /* never more than a few at once */
		removals_collect(q, now_ms() + REMOVE_MS);
		removals_abandon(q);
	}
	struct removal *e = &q->r[q->n];
	*e = (struct removal){.c = c};
	snprintf(e->name, sizeof e->name, "%s", name);
	if (ask(q, e, now_ms()))
		q->n++;
}

/* Has the answer come (or its time run out)? *gone: it says removed. */
static bool answered(struct removal *e, int64_t now, bool *gone)
{
	*gone = false;
	if (e->fd >= 0) {
		struct pollfd p = {.fd = e->fd, .events = POLLIN};
		bool in = poll(&p, 1, 0) > 0;
		if (!in && now < e->until)
			return false;
		/* A fresh clock: a pass may have taken a while, and read_by
		 * reads nothing once its deadline is behind it. */
		*gone = docker_remove_done(e->fd, in ? now_ms() + 100 : now); /* closes it */
		e->fd = -1;
		return true;
	}
	int status;
	pid_t r = waitpid(e->pid, &status, WNOHANG);
	if (r == 0 && now < e->until)
		return false;
	if (r == 0) {
		kill(e->pid, SIGKILL);
		while (waitpid(e->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	/* r < 0: not ours to wait for (never in the master, which tracks no
	 * process); the second try finds out (404 counts as removed). */
	*gone = r == e->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	e->pid = -1;
	return true;
}

/* Is this removal over (removed, or given up)? */
static bool over(struct removals *q, struct removal *e, int64_t now)
{
	bool gone;
	if (e->retry_at) {
		if (now < e->retry_at)
			return false;
		e->retry_at = 0;
		return !ask(q, e, now);
	}
	if (!answered(e, now, &gone))
		return false;
	if (gone) {
		if (q->gone)
			q->gone(q->arg, e->c, e->name);
		return true;
	}
	if (!e->retried) {
		e->retried = true;
		e->retry_at = now + REMOVE_RETRY_MS;
		return false;
	}
	log_msg("dockerd did not remove %s; the reaper removes it once its owner is gone", e->name);
	return true;
}

/* Sleep until an answer may have come, a retry is due, or deadline. */
static void wait_some(const struct removals *q, int64_t now, int64_t deadline)
{
	struct pollfd p[REMOVALS_MAX];
	nfds_t n = 0;
	int64_t wake = deadline;
	for (size_t i = 0; i < q->n; i++) {
		const struct removal *e = &q->r[i];
		int64_t at = e->retry_at ? e->retry_at : e->until;
		if (e->pid >= 0 && !e->retry_at)
			at = now + 20; /* a process: looked at again soon */
		if (at < wake)
			wake = at;
		if (e->fd >= 0 && !e->retry_at)
			p[n++] = (struct pollfd){.fd = e->fd, .events = POLLIN};
	}
	int64_t left = wake - now;
	poll(p, n, (int)(left > 0 ? left : 0));
}

bool removals_collect(struct removals *q, int64_t deadline)
{
	for (;;) {
		int64_t now = now_ms();
		for (size_t i = 0; i < q->n;) {
			if (over(q, &q->r[i], now))
				q->r[i] = q->r[--q->n];
			else
				i++;
		}
		if (!q->n || now >= deadline)
			return q->n > 0;
		wait_some(q, now, deadline);
	}
}

bool removals_holds(const struct removals *q, const char *name)
{
	for (size_t i = 0; i < q->n; i++)
		if (!strcmp(q->r[i].name, name))
			return true;
	return false;
}

void removals_abandon(struct removals *q)
{
	for (size_t i = 0; i < q->n; i++) {
		struct removal *e = &q->r[i];
		log_msg("docker rm %s: no answer in time; the reaper removes it once its owner is gone", e->name);
		close_fd(&e->fd);
		if (e->pid >= 0)
			subproc_wait(e->pid, 0); /* killed and reaped */
	}
	q->n = 0;
}

void removals_drop(struct removals *q)
{
	for (size_t i = 0; i < q->n; i++)
		if (q->r[i].fd >= 0)
			close(q->r[i].fd);
	q->n = 0;
}

static void was_removed(void *arg, const struct conf *c, const char *name)
{
	(void)c, (void)name;
	*(bool *)arg = true;
}

bool removal_now(const struct conf *c, const char *name, int64_t deadline)
{
	bool gone = false;
	struct removals one;
	removals_init(&one, was_removed, &gone, false);
	removals_add(&one, c, name);
	if (removals_collect(&one, deadline))
		removals_abandon(&one);
	return gone;
}
