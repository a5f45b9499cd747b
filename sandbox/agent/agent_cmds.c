/* agent_cmds.c: commands that outlive requests (agent_cmds.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_cmds.h"
#include "agent_spawn.h"
#include "agent_wire.h"

/* The last CMD_LOG_MAX bytes of a stream: p holds bytes [total - len, total). */
struct log {
	struct buf b;
	unsigned long long total;
};

static struct cmd {
	char id[AGENT_TAG_LEN + 1]; /* "": a free slot */
	pid_t pid;                  /* 0: ended */
	int code;                   /* once ended: how (agent_protocol.h's end status) */
	int in, out, err;           /* -1 once closed */
	struct log log[2];          /* stdout, stderr */
	struct buf args;            /* its argv, each ended by a NUL (bglist) */
} cmds[MAX_CMDS];

static struct cmd *find(const char *id)
{
	for (int i = 0; i < MAX_CMDS; i++)
		if (cmds[i].id[0] && !strcmp(cmds[i].id, id))
			return &cmds[i];
	return NULL;
}

static void log_add(struct log *l, const char *p, size_t n)
{
	l->total += n;
	if (n >= CMD_LOG_MAX) {
		p += n - CMD_LOG_MAX, n = CMD_LOG_MAX;
		l->b.len = 0;
	} else if (l->b.len + n > CMD_LOG_MAX) {
		size_t drop = l->b.len + n - CMD_LOG_MAX;
		memmove(l->b.p, l->b.p + drop, l->b.len - drop);
		l->b.len -= drop;
	}
	buf_add(&l->b, p, n);
}

/* What the non-blocking *fd holds now into l; at end of file (or an
 * error) *fd is closed. False when nothing more is there now. */
static bool take(int *fd, struct log *l)
{
	static char b[AGENT_MAX_CHUNK];
	ssize_t n = read(*fd, b, sizeof b);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		fd_close(fd);
		return false;
	}
	log_add(l, b, (size_t)n);
	return true;
}

static void no_such(const char *tag, const char *id)
{
	struct why w = {0};
	set_why(&w, ESRCH, "no command %s in this session", id);
	send_end(tag, &w, "", 0);
}

static void free_argv(char **argv, unsigned long long argc)
{
	for (unsigned long long i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

void cmds_start(const char *tag, char **argv, unsigned long long argc, int stdin_fd)
{
	struct why w = {0};
	struct cmd *c = NULL;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
	for (int i = 0; i < MAX_CMDS && !c; i++)
		if (!cmds[i].id[0])
			c = &cmds[i];
	if (find(tag))
		set_why(&w, EEXIST, "a command %s exists", tag);
	else if (!c)
		set_why(&w, EBUSY, "%d commands are kept, running or ended: delete one first", MAX_CMDS);
	else if ((stdin_fd < 0 && pipe2(in, O_CLOEXEC)) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		set_why(&w, errno, "cannot make pipes: %s", strerror(errno));
	if (stdin_fd >= 0) /* a file: nothing for bgin to write to */
		in[0] = stdin_fd;
	pid_t pid = w.err ? -1 : spawn(argv, (int[]){in[0], out[1], err[1]}, 3);
	if (!w.err && pid < 0)
		set_why(&w, errno, "cannot fork: %s", strerror(errno));
	fd_close(&in[0]), fd_close(&out[1]), fd_close(&err[1]);
	if (w.err) {
		fd_close(&in[1]), fd_close(&out[0]), fd_close(&err[0]);
	} else {
		*c = (struct cmd){.pid = pid, .in = in[1], .out = out[0], .err = err[0]};
		memcpy(c->id, tag, AGENT_TAG_LEN + 1);
		for (unsigned long long i = 0; i < argc; i++)
			buf_add(&c->args, argv[i], strlen(argv[i]) + 1);
		if (c->in >= 0)
			nonblocking(c->in);
		nonblocking(c->out), nonblocking(c->err);
	}
	free_argv(argv, argc);
	send_end(tag, &w, "", 0);
}

void cmds_stdin(const char *tag, const char *id, unsigned long long len)
{
	static char b[AGENT_MAX_CHUNK];
	struct why w = {0};
	char said[24];
	ssize_t n = 0;
	in_exact(b, (size_t)len);
	struct cmd *c = find(id);
	if (!c) {
		no_such(tag, id);
		return;
	}
	if (len == 0) /* end of its stdin */
		fd_close(&c->in);
	else if (c->in < 0)
		set_why(&w, EPIPE, "the command's stdin is closed");
	else if ((n = write(c->in, b, (size_t)len)) < 0 && errno != EAGAIN)
		set_why(&w, errno, "cannot write to the command's stdin: %s", strerror(errno));
	/* As much as its pipe takes now: the rest is the caller's to send again. */
	int k = snprintf(said, sizeof said, "%zd", n < 0 ? 0 : n);
	send_end(tag, &w, said, (size_t)k);
}

/* A stream's bytes from `from` on (from its first kept byte, if those
 * before are dropped), at most max: where they start and how many. */
static void window(const struct log *l, unsigned long long from, unsigned long long max,
		   unsigned long long *start, size_t *n)
{
	unsigned long long first = l->total - l->b.len;
	*start = from < first ? first : from > l->total ? l->total : from;
	unsigned long long left = l->total - *start;
	*n = (size_t)(left < max ? left : max);
}

void cmds_output(const char *tag, const char *id, unsigned long long out_from,
		 unsigned long long err_from, unsigned long long max)
{
	struct cmd *c = find(id);
	if (!c) {
		no_such(tag, id);
		return;
	}
	/* What came since the last poll too, bounded: a command that writes
	 * without end (`yes`) would otherwise hold the agent here for ever. */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < DRAIN_MAX / AGENT_MAX_CHUNK && take(i ? &c->err : &c->out, &c->log[i]); j++)
			;
	unsigned long long start[2];
	size_t n[2];
	window(&c->log[0], out_from, max, &start[0], &n[0]);
	window(&c->log[1], err_from, max, &start[1], &n[1]);
	struct buf a = {0};
	char h[200];
	int k = snprintf(h, sizeof h, "%d %d %llu %zu %llu %llu %zu %llu\n", c->pid > 0, c->pid > 0 ? -1 : c->code,
			 start[0], n[0], c->log[0].total, start[1], n[1], c->log[1].total);
	buf_add(&a, h, (size_t)k);
	for (int i = 0; i < 2; i++) {
		const struct log *l = &c->log[i];
		buf_add(&a, l->b.p + (start[i] - (l->total - l->b.len)), n[i]);
	}
	struct why none = {0};
	send_end(tag, &none, a.p, a.len);
	free(a.p);
}

void cmds_kill(const char *tag, const char *id, int sig)
{
	struct cmd *c = find(id);
	struct why none = {0};
	if (!c) {
		no_such(tag, id);
		return;
	}
	if (c->pid > 0) { /* an ended one: nothing to do */
		kill(-c->pid, sig);
		kill(c->pid, sig); /* if it has left its group */
	}
	send_end(tag, &none, "", 0);
}

void cmds_delete(const char *tag, const char *id)
{
	struct cmd *c = find(id);
	struct why none = {0};
	if (!c) {
		no_such(tag, id);
		return;
	}
	if (c->pid > 0) { /* reaped later as any orphan is */
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
	}
	fd_close(&c->in), fd_close(&c->out), fd_close(&c->err);
	free(c->log[0].b.p), free(c->log[1].b.p), free(c->args.p);
	*c = (struct cmd){.in = -1, .out = -1, .err = -1};
	send_end(tag, &none, "", 0);
}

void cmds_list(const char *tag)
{
	struct buf a = {0};
	struct why none = {0};
	for (int i = 0; i < MAX_CMDS; i++) {
		const struct cmd *c = &cmds[i];
		char h[160];
		if (!c->id[0])
			continue;
		int k = snprintf(h, sizeof h, "%s %d %d %llu %llu %zu\n", c->id, c->pid > 0, c->pid > 0 ? -1 : c->code,
				 c->log[0].total, c->log[1].total, c->args.len);
		buf_add(&a, h, (size_t)k);
		buf_add(&a, c->args.p, c->args.len);
	}
	send_end(tag, &none, a.p, a.len);
	free(a.p);
}

int cmds_pollfds(struct pollfd *p)
{
	int n = 0;
	for (int i = 0; i < MAX_CMDS; i++)
		if (cmds[i].id[0]) {
			p[n++] = (struct pollfd){.fd = cmds[i].out, .events = POLLIN};
			p[n++] = (struct pollfd){.fd = cmds[i].err, .events = POLLIN};
		}
	return n;
}

bool cmds_readable(int fd)
{
	for (int i = 0; i < MAX_CMDS; i++) {
		struct cmd *c = &cmds[i];
		if (!c->id[0] || (fd != c->out && fd != c->err))
			continue;
		take(fd == c->out ? &c->out : &c->err, &c->log[fd == c->out ? 0 : 1]);
		return true;
	}
	return false;
}

bool cmds_reaped(pid_t pid, int status)
{
	for (int i = 0; i < MAX_CMDS; i++) {
		struct cmd *c = &cmds[i];
		if (!c->id[0] || c->pid != pid)
			continue;
		c->pid = 0;
		c->code = AGENT_END_STATUS(status);
		/* What it wrote before it ended is read as it ends, bounded: what
		 * it left running may go on writing. */
		for (int k = 0; k < 2; k++)
			for (int j = 0; j < DRAIN_MAX / AGENT_MAX_CHUNK && take(k ? &c->err : &c->out, &c->log[k]); j++)
				;
		return true;
	}
	return false;
}

void cmds_stop_all(void)
{
	for (int i = 0; i < MAX_CMDS; i++)
		if (cmds[i].id[0] && cmds[i].pid > 0)
			kill(-cmds[i].pid, SIGKILL);
}
