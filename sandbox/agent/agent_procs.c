/* agent_procs.c: a step's processes, found by ancestry (agent_procs.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_base.h"
#include "agent_procs.h"

/* One line of the process table: /proc/PID/stat. */
struct proc {
	pid_t pid, ppid;
	unsigned long long start;
	char state; /* 'Z': a zombie, dead already: only to be reaped */
};

struct table {
	struct proc *v;
	size_t n, cap;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Fields after the command name, which may hold spaces and ')': state (3),
 * ppid (4), ... starttime (22). */
static bool read_stat(pid_t pid, struct proc *p)
{
	char path[40], text[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false; /* gone meanwhile */
	text[n] = '\0';
	char *s = strrchr(text, ')');
	int ppid;
	if (!s || sscanf(s + 1, " %c %d", &p->state, &ppid) != 2)
		return false;
	for (int field = 3; field < 22 && s; field++)
		s = strchr(s + 1, ' ');
	if (!s || sscanf(s, " %llu", &p->start) != 1)
		return false;
	p->pid = pid;
	p->ppid = ppid;
	return true;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc *)a)->pid, y = ((const struct proc *)b)->pid;
	return (x > y) - (x < y);
}

/* Every process this agent can see, sorted by pid. */
static void table_read(struct table *t)
{
	t->n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		fatal("cannot read /proc: %s", strerror(errno));
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (t->n == t->cap && !(t->v = realloc(t->v, (t->cap = t->cap ? 2 * t->cap : 64) * sizeof *t->v)))
			fatal("out of memory");
		if (read_stat((pid_t)pid, &t->v[t->n]))
			t->n++;
	}
	closedir(d);
	qsort(t->v, t->n, sizeof *t->v, by_pid);
}

static const struct proc *table_find(const struct table *t, pid_t pid)
{
	struct proc key = {.pid = pid};
	return bsearch(&key, t->v, t->n, sizeof *t->v, by_pid);
}

static bool in_snapshot(const struct procs_snapshot *s, const struct proc *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == p->pid && s->v[i].start == p->start)
			return true;
	return false;
}

/* Does p descend from the agent? Bounded walk: a table read while
 * processes come and go may hold a loop of reused pids. */
static bool descends(const struct table *t, const struct proc *p, pid_t agent)
{
	for (int depth = 0; p && depth < 4096; depth++) {
		if (p->ppid == agent)
			return true;
		p = table_find(t, p->ppid);
	}
	return false;
}

void procs_snapshot(struct procs_snapshot *s)
{
	struct table t = {0};
	pid_t agent = getpid();
	table_read(&t);
	free(s->v); /* one a step never used (it could not start) */
	s->n = 0;
	s->v = malloc((t.n ? t.n : 1) * sizeof *s->v);
	if (!s->v)
		fatal("out of memory");
	for (size_t i = 0; i < t.n; i++)
		if (descends(&t, &t.v[i], agent))
			s->v[s->n++] = (struct proc_id){.pid = t.v[i].pid, .start = t.v[i].start};
	free(t.v);
}

void procs_free(struct procs_snapshot *s)
{
	free(s->v);
	*s = (struct procs_snapshot){0};
}

/* Is p the step's: new, and the first ancestor that is not new is the
 * agent or root? */
static bool the_steps(const struct table *t, const struct procs_snapshot *s, const struct proc *p,
		      pid_t agent, pid_t root)
{
	if (in_snapshot(s, p))
		return false;
	for (int depth = 0; depth < 4096; depth++) {
		if (p->ppid == agent || (root > 0 && p->ppid == root))
			return true;
		const struct proc *up = table_find(t, p->ppid);
		if (!up || in_snapshot(s, up))
			return false; /* not under the agent, or an earlier step's */
		p = up;
	}
	return false;
}

bool procs_sweep(const struct procs_snapshot *s, pid_t root, pid_t keep, int64_t until)
{
	struct table t = {0};
	pid_t agent = getpid();
	int left, alive;
	for (;;) {
		left = alive = 0;
		table_read(&t);
		for (size_t i = 0; i < t.n; i++) {
			const struct proc *p = &t.v[i];
			if (p->pid == agent || p->pid == keep || !the_steps(&t, s, p, agent, root))
				continue;
			if (p->state == 'Z' && keep > 0 && p->ppid == keep)
				continue; /* the kernel's to reap: it lives on, nothing here can */
			left++;
			if (p->state != 'Z') {
				alive++;
				kill(p->pid, SIGKILL);
			} else if (p->ppid == agent) {
				waitpid(p->pid, NULL, WNOHANG);
			}
		}
		/* A zombie whose parent is a killed process of the step waits for
		 * that parent to die; then it is the agent's, reaped next round. */
		if (!left || now_ms() >= until)
			break;
		usleep(2000);
	}
	free(t.v);
	return alive == 0; /* zombies hold nothing but their pid */
}
