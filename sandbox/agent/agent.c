/*
 * agent.c: the first process of a session sandbox.
 *
 * The worker talks to it in frames on its stdin and stdout (sandbox/frame.h
 * is the protocol). It writes files into the workspace and runs programs
 * there ("run": one step at a time; a step that is stopped takes every
 * process it started with it, agent_procs.h),
 * hands cells to a live interpreter that keeps its state between them
 * (kernel sessions: kernel.py), and reads and writes the workspace for the
 * worker (put, get, list, del) without ever following a symbolic link:
 * everything in the workspace may have been made by the untrusted code.
 *
 * It trusts the worker and nothing else. A request it cannot parse means
 * the worker is broken: it exits (2), which ends the session. Code in the
 * sandbox can write to the agent's stdout and can kill it; the worker copes
 * with both (frame.h). Being PID 1, it reaps every orphan.
 *
 * Static, libc only, so that it runs in any image (bin/isobox-agent, mounted
 * read-only at /isobox-agent). Single-threaded: one poll loop.
 *
 * gVisor (runsc 2022-12) differs from Linux where it matters here:
 * O_DIRECTORY|O_NOFOLLOW follows a final symbolic link (so directories are
 * opened without O_DIRECTORY and checked with fstat), close_range rejects
 * ~0U as its end, and O_TMPFILE, openat2 and pidfd_open are missing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_base.h"
#include "agent_cmds.h"
#include "agent_files.h"
#include "agent_procs.h"
#include "agent_reap.h"
#include "agent_spawn.h"
#include "agent_wire.h"


enum step_kind { STEP_NONE, STEP_RUN, STEP_CELL };

/* The run or cell that runs: its answer is due when it ends. */
static struct {
	enum step_kind kind;
	char tag[AGENT_TAG_LEN + 1];
	pid_t pid;       /* run: the program, leader of its process group */
	int out, err;    /* run: its pipes, -1 once at end of file */
	int64_t kill_at; /* cell: interrupted; the kernel is killed at this time */
	bool started;    /* cell: the kernel said it began it (kernel.py's "start") */
	bool interrupted; /* run: killed by int; all it started goes before the answer */
	bool silent;     /* cell: a new request replaced it; it gets no answer */
	struct procs_snapshot before; /* what ran when it began (agent_procs.h) */
} step = {.out = -1, .err = -1};

static struct {
	char **argv;           /* NULL: a shell session */
	pid_t pid;             /* 0: not running */
	int in, out, err, res; /* the pipes on its fds 0, 1, 2 and 3 */
	bool served;           /* was given a cell: restart it at once if it dies */
	struct buf result;     /* what it wrote on fd 3 and was not used yet */
} kernel = {.in = -1, .out = -1, .err = -1, .res = -1};

static int chld_pipe[2]; /* SIGCHLD wakes poll through it */
/* Pipes of ended steps, still held by what they left in the background:
 * read and dropped so that it does not block. The oldest goes when full. */
static int discarded[MAX_DISCARDED];
static int ndiscarded;


/* At exit (atexit in main): nothing the agent started outlives it. */
static void stop_children(void)
{
	if (step.kind == STEP_RUN)
		kill(-step.pid, SIGKILL);
	if (kernel.pid > 0)
		kill(-kernel.pid, SIGKILL);
	cmds_stop_all();
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/* --- Processes ---------------------------------------------------------- */

/* What the non-blocking *fd holds, as KIND frames of tag (dropped if tag is
 * NULL); at end of file *fd is closed. >0: relayed; 0: end; -1: nothing now. */
static ssize_t relay(int *fd, const char *kind, const char *tag)
{
	static char b[AGENT_MAX_CHUNK];
	ssize_t n = read(*fd, b, sizeof b);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0)
		fd_close(fd);
	else if (tag)
		send_frame(kind, tag, -1, b, (size_t)n);
	return n < 0 ? 0 : n;
}

/* Everything *fd holds now, bounded: a background writer may never stop. */
static void drain(int *fd, const char *kind, const char *tag)
{
	for (int i = 0; *fd >= 0 && i < DRAIN_MAX / AGENT_MAX_CHUNK && relay(fd, kind, tag) > 0; i++)
		;
}

static void discard(int *fd)
{
	if (*fd < 0)
		return;
	if (ndiscarded == MAX_DISCARDED) {
		close(discarded[0]);
		memmove(discarded, discarded + 1, sizeof discarded - sizeof *discarded);
		ndiscarded--;
	}
	discarded[ndiscarded++] = *fd;
	*fd = -1;
}

/*
 * A stopped step's processes, every one, whatever it did to its session,
 * group or parent (setsid, a double fork, nohup), killed until none is
 * left, before its end is answered: on gVisor a process that is forking
 * when it gets SIGKILL can leave a child that never got it, and what
 * survives would go on into the next step, holding its memory and pids.
 * Bounded: SWEEP_MS. What a fork bomb keeps up past that (seen on a
 * loaded host) ends the session once the step is answered (session_over).
 * False: something was still alive.
 */
static bool sweep_step(pid_t root, pid_t keep)
{
	return procs_sweep(&step.before, root, keep, now_ms() + SWEEP_MS);
}

/* After a step's answer: a sweep that left processes running ends the
 * session, so that no next step starts beside them. */
static void session_over(bool swept)
{
	if (!swept)
		fatal("a stopped step's processes were still there after %d ms of SIGKILL; "
		      "the session ends so that the next step does not start beside them", SWEEP_MS);
}

/* The run ends: unanswered if a new request replaced it (then it is
 * killed), else after what it wrote until it exited. */
static void run_ended(bool answer, int status)
{
	if (!answer) {
		kill(-step.pid, SIGKILL);
		kill(step.pid, SIGKILL); /* if it has not called setsid() yet */
	}
	bool swept = !answer || step.interrupted ? sweep_step(0, 0) : true;
	procs_free(&step.before);
	if (answer) {
		drain(&step.out, "out", step.tag);
		drain(&step.err, "err", step.tag);
		send_frame("end", step.tag, AGENT_END_STATUS(status), "", 0);
	}
	discard(&step.out);
	discard(&step.err);
	step.kind = STEP_NONE;
	session_over(swept);
}

static void kernel_start(void)
{
	int p[4][2];
	for (int i = 0; i < 4; i++)
		if (pipe2(p[i], O_CLOEXEC))
			fatal("cannot make the kernel's pipes: %s", strerror(errno));
	int fds[4] = {p[0][0], p[1][1], p[2][1], p[3][1]};
	if ((kernel.pid = spawn(kernel.argv, fds, 4)) < 0)
		fatal("cannot start the kernel: %s", strerror(errno));
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	kernel.in = p[0][1];
	kernel.out = p[1][0], kernel.err = p[2][0], kernel.res = p[3][0];
	nonblocking(kernel.out), nonblocking(kernel.err), nonblocking(kernel.res);
	kernel.served = false;
	kernel.result.len = 0;
}

/* Kills the kernel and waits for it: its status. */
static int kernel_kill(void)
{
	int status = 0;
	kill(-kernel.pid, SIGKILL);
	kill(kernel.pid, SIGKILL);
	while (waitpid(kernel.pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* The tag that the kernel's output goes out under: none between cells. */
static const char *cell_tag(void)
{
	return step.kind == STEP_CELL && !step.silent ? step.tag : NULL;
}

/* The cell ends: what the kernel wrote until now, then its answer. An
 * interrupted cell's processes go first (the kernel stays, if it lives). */
static void cell_ended(int code, const char *json, size_t n)
{
	bool swept = step.kill_at ? sweep_step(kernel.pid, kernel.pid) : true;
	procs_free(&step.before);
	drain(&kernel.out, "out", cell_tag());
	drain(&kernel.err, "err", cell_tag());
	if (!step.silent)
		send_frame("end", step.tag, code, json, n);
	step.kind = STEP_NONE;
	session_over(swept);
}

/* The kernel is gone (status): the cell it ran, if any, ends with an error.
 * A kernel that served cells is restarted now; one that died before its
 * first cell (it cannot start?) at the next cell, so that it never spins. */
static void kernel_gone(int status, bool interrupted)
{
	char value[160], json[400];
	if (interrupted)
		snprintf(value, sizeof value, "the cell did not stop when interrupted, so the kernel "
			 "was restarted: its variables are lost");
	else
		snprintf(value, sizeof value, "the kernel process ended (%s %d); its state is lost",
			 WIFSIGNALED(status) ? "signal" : "exit",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	kill(-kernel.pid, SIGKILL); /* what it left running */
	bool restart = kernel.served || step.kind == STEP_CELL;
	if (step.kind == STEP_CELL) {
		int n = snprintf(json, sizeof json, "{\"value\":null,\"error\":{\"name\":\"%s\",\"value\":\"%s\","
				 "\"traceback\":\"\"},\"images\":[],\"restarted\":true}",
				 interrupted ? "KernelRestarted" : "KernelDied", value);
		/* How the kernel ended, exactly (agent_protocol.h): killed by
		 * this agent when interrupted. */
		cell_ended(interrupted ? AGENT_SIGNALLED + SIGKILL : AGENT_END_STATUS(status), json, (size_t)n);
	}
	fd_close(&kernel.in), fd_close(&kernel.out), fd_close(&kernel.err), fd_close(&kernel.res);
	kernel.pid = 0;
	if (restart)
		kernel_start();
}

/* A display of the running cell, as it happens. The kernel wrote it once
 * we had read all it printed before (its pipes empty), and fd 3 is read
 * before its pipes in a poll's round (loop_once): what it printed after
 * goes after it, so the worker sees them in the order the cell made them. */
static void cell_display(const char *json, size_t n)
{
	if (cell_tag()) /* else between cells, or a silent one: dropped */
		send_frame("disp", step.tag, -1, json, n);
}

/* The interrupt of a begun cell: SIGINT to the kernel's group, and the
 * cell's grace to stop from now. */
static void cell_sigint(void)
{
	kill(-kernel.pid, SIGINT);
	step.kill_at = now_ms() + INT_GRACE_MS;
}

/* The kernel began the cell, its SIGINT handler set: an interrupt asked
 * for before goes now. */
static void cell_started(void)
{
	if (step.kind != STEP_CELL || step.started)
		return;
	step.started = true;
	if (step.kill_at)
		cell_sigint();
}

/* On the kernel's fd 3: "start 0" LF, the cell begins; "disp JSONLEN" LF
 * JSON, a display of the running cell; "CODE JSONLEN" LF JSON, the cell's
 * result. Anything else there (the cell can write to it too) is a broken
 * kernel. */
static void kernel_result(void)
{
	static char b[AGENT_MAX_CHUNK];
	struct buf *r = &kernel.result;
	unsigned long long code, len;
	char *lf, *sp;
	ssize_t n = read(kernel.res, b, sizeof b);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || r->len + (size_t)n > MAX_RESULT + 64) {
		kernel_gone(kernel_kill(), false); /* end of file, or a result without end */
		return;
	}
	buf_add(r, b, (size_t)n);
	while ((lf = memchr(r->p, '\n', r->len))) {
		*lf = '\0';
		bool display = !strncmp(r->p, "disp ", 5), start = !strncmp(r->p, "start ", 6);
		if (!(sp = strchr(r->p, ' ')) || (*sp = '\0', !display && !start && !decimal(r->p, 255, &code)) ||
		    !decimal(sp + 1, start ? 0 : MAX_RESULT, &len)) {
			kernel_gone(kernel_kill(), false);
			return;
		}
		*sp = ' ', *lf = '\n';
		size_t whole = (size_t)(lf + 1 - r->p) + len;
		if (r->len < whole)
			return;
		if (start)
			cell_started();
		else if (display)
			cell_display(lf + 1, (size_t)len);
		else if (step.kind == STEP_CELL) /* else dropped: a result between cells */
			cell_ended((int)code, lf + 1, (size_t)len);
		r->len -= whole;
		memmove(r->p, r->p + whole, r->len);
	}
}

/* Every child that exited; the agent is PID 1, so orphans too. */
static void reap(void)
{
	char b[64];
	int status;
	pid_t pid;
	while (read(chld_pipe[0], b, sizeof b) > 0)
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (step.kind == STEP_RUN && pid == step.pid)
			run_ended(true, status);
		else if (kernel.pid > 0 && pid == kernel.pid)
			kernel_gone(status, false);
		else
			cmds_reaped(pid, status); /* or an orphan: nothing to do */
	}
}

static void on_sigchld(int sig)
{
	int saved = errno;
	(void)sig;
	ssize_t n = write(chld_pipe[1], "", 1); /* if full, a wake-up is pending anyway */
	(void)n;
	errno = saved;
}

/* int: the step tag (NULL: whichever runs), if it still runs. */
static void interrupt(const char *tag)
{
	if (tag && strcmp(tag, step.tag))
		return; /* not ours, or too late: that one ended */
	if (step.kind == STEP_RUN) {
		kill(-step.pid, SIGKILL); /* its end follows from waitpid */
		kill(step.pid, SIGKILL);
		step.interrupted = true;
	} else if (step.kind == STEP_CELL && !step.kill_at) {
		/* Not begun (the kernel still starts: a SIGINT would kill it), it
		 * is interrupted as it begins (cell_started), if it does in time. */
		if (step.started)
			cell_sigint();
		else
			step.kill_at = now_ms() + START_GRACE_MS;
	}
}

/* --- The loop ----------------------------------------------------------- */

static void serve_requests(void);

static void readable(int fd)
{
	if (fd == 0)
		serve_requests();
	else if (fd == chld_pipe[0])
		reap();
	else if (step.kind == STEP_RUN && (fd == step.out || fd == step.err))
		relay(fd == step.out ? &step.out : &step.err, fd == step.out ? "out" : "err", step.tag);
	else if (kernel.pid > 0 && (fd == kernel.out || fd == kernel.err))
		relay(fd == kernel.out ? &kernel.out : &kernel.err, fd == kernel.out ? "out" : "err", cell_tag());
	else if (kernel.pid > 0 && fd == kernel.res)
		kernel_result();
	else if (cmds_readable(fd))
		;
	else
		for (int i = 0; i < ndiscarded; i++)
			if (discarded[i] == fd && relay(&discarded[i], NULL, NULL) == 0)
				memmove(discarded + i, discarded + i + 1, (size_t)(--ndiscarded - i) * sizeof *discarded);
}

/* One poll and what it found. Outputs come before reaping, so that a step
 * ends after what it wrote; the kernel's fd 3 before its pipes (a display
 * before what was printed after it: cell_display); requests come last. */
static void loop_once(bool requests)
{
	struct pollfd p[8 + MAX_DISCARDED + 2 * MAX_CMDS];
	int n = 0, timeout = -1;
	bool run = step.kind == STEP_RUN;
	int fds[] = {run ? step.out : -1, run ? step.err : -1, kernel.res, kernel.out, kernel.err};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		p[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	for (int i = 0; i < ndiscarded; i++)
		p[n++] = (struct pollfd){.fd = discarded[i], .events = POLLIN};
	n += cmds_pollfds(p + n);
	p[n++] = (struct pollfd){.fd = chld_pipe[0], .events = POLLIN};
	p[n++] = (struct pollfd){.fd = requests ? 0 : -1, .events = POLLIN};
	if (step.kind == STEP_CELL && step.kill_at) {
		int64_t left = step.kill_at - now_ms();
		timeout = left < 0 ? 0 : (int)left;
	}
	if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
		fatal("poll: %s", strerror(errno));
	/* A stale fd (closed meanwhile, or reused) reads EAGAIN: harmless. */
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0 && p[i].revents)
			readable(p[i].fd);
	if (step.kind == STEP_CELL && step.kill_at && now_ms() >= step.kill_at)
		kernel_gone(kernel_kill(), true);
}

/* A new run or cell ends the one running first, as int would, unanswered. */
static void step_abandon(void)
{
	if (step.kind == STEP_RUN)
		run_ended(false, 0);
	step.silent = true;
	interrupt(NULL);
	while (step.kind == STEP_CELL)
		loop_once(false);
}

static void step_start(enum step_kind kind, const char *tag)
{
	step.kind = kind;
	memcpy(step.tag, tag, AGENT_TAG_LEN + 1);
	step.kill_at = 0;
	step.started = false;
	step.silent = false;
	step.interrupted = false;
}

static char **in_argv(unsigned long long n)
{
	char line[AGENT_MAX_HEADER + 1], **argv = calloc((size_t)n + 1, sizeof *argv);
	unsigned long long total = 0;
	for (unsigned long long i = 0; argv && i < n; i++) {
		in_line(line, AGENT_MAX_HEADER);
		unsigned long long len = number(line, MAX_PAYLOAD);
		if ((total += len) > MAX_PAYLOAD || !(argv[i] = malloc((size_t)len + 1)))
			fatal("arguments too large");
		in_exact(argv[i], (size_t)len);
		argv[i][len] = '\0';
	}
	if (!argv)
		fatal("out of memory");
	return argv;
}

static void run_request(const char *tag, unsigned long long nfiles, unsigned long long nargv,
			unsigned long long stdin_len)
{
	struct why w = {0};
	char line[AGENT_MAX_HEADER + 1], *words[2], path[MAX_PATH + 1];
	if (nargv == 0)
		fatal("a run without a program");
	step_abandon();
	for (unsigned long long i = 0; i < nfiles; i++) {
		in_line(line, AGENT_MAX_HEADER);
		if (split(line, words, 2) != 2)
			fatal("a malformed file header");
		unsigned long long nlen = number(words[0], MAX_PATH);
		receive_file(path, nlen, number(words[1], MAX_PAYLOAD), &w);
	}
	char **argv = in_argv(nargv);
	int wr, rd = stdin_file(stdin_len, &wr), out[2] = {-1, -1}, err[2] = {-1, -1};
	if (rd < 0)
		set_why(&w, errno, "cannot hold stdin: %s", strerror(errno));
	in_copy(wr, stdin_len, "stdin", &w);
	if (wr != rd)
		close(wr);
	else if (rd >= 0)
		lseek(rd, 0, SEEK_SET);
	if (!w.err && (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)))
		set_why(&w, errno, "cannot make pipes: %s", strerror(errno));
	if (!w.err)
		procs_snapshot(&step.before);
	pid_t pid = w.err ? -1 : spawn(argv, (int[]){rd, out[1], err[1]}, 3);
	if (pid < 0)
		set_why(&w, errno, "cannot fork: %s", strerror(errno));
	fd_close(&rd), fd_close(&out[1]), fd_close(&err[1]);
	for (unsigned long long i = 0; i < nargv; i++)
		free(argv[i]);
	free(argv);
	if (w.err) { /* the program never started: why, on its stderr */
		fd_close(&out[0]), fd_close(&err[0]);
		size_t n = strlen(w.msg);
		w.msg[n] = '\n'; /* room: vsnprintf left the last byte */
		send_frame("err", tag, -1, w.msg, n + 1);
		send_frame("end", tag, 126, "", 0);
		return;
	}
	nonblocking(out[0]);
	nonblocking(err[0]);
	step_start(STEP_RUN, tag);
	step.pid = pid, step.out = out[0], step.err = err[0];
}

static void cell_request(const char *tag, unsigned long long code_len, unsigned long long stdin_len)
{
	struct why w = {0};
	char h[48];
	step_abandon();
	if (!kernel.argv) {
		in_copy(-1, code_len + stdin_len, "", &w);
		send_frame("err", tag, -1, "this session has no kernel\n", 27);
		send_frame("end", tag, 2, "", 0);
		return;
	}
	if (kernel.pid == 0)
		kernel_start();
	/* The worker's decoder knows by the RS on stderr that the cell runs. */
	send_frame("err", tag, -1, "\036", 1);
	step_start(STEP_CELL, tag);
	procs_snapshot(&step.before);
	kernel.served = true;
	/* The kernel reads whole cells before it runs them, so this does not
	 * block for long. If it fails (EPIPE), the kernel died: poll sees it. */
	int n = snprintf(h, sizeof h, "%llu %llu\n", code_len, stdin_len);
	in_copy(write_all(kernel.in, h, (size_t)n) ? kernel.in : -1, code_len + stdin_len, "cell", &w);
}

/* A command that outlives requests (agent_cmds.h): its stdin the bytes
 * that follow then end of file, or (open) a pipe that bgin writes to. */
static void bg_request(const char *tag, unsigned long long nargv, unsigned long long stdin_len, bool open)
{
	struct why w = {0};
	if (nargv == 0)
		fatal("a command without a program");
	if (open && stdin_len)
		fatal("a command with an open stdin and bytes for it");
	char **argv = in_argv(nargv);
	int wr = -1, rd = open ? -1 : stdin_file(stdin_len, &wr);
	in_copy(open ? -1 : wr, stdin_len, "stdin", &w);
	if (wr != rd)
		close(wr);
	else if (rd >= 0)
		lseek(rd, 0, SEEK_SET);
	if (!open && (rd < 0 || w.err)) {
		for (unsigned long long i = 0; i < nargv; i++)
			free(argv[i]);
		free(argv);
		fd_close(&rd);
		set_why(&w, errno, "cannot hold stdin: %s", strerror(errno));
		send_end(tag, &w, "", 0);
		return;
	}
	cmds_start(tag, argv, nargv, rd);
}

static void serve_request(void)
{
	char line[AGENT_MAX_HEADER + 1], *w[6];
	in_line(line, AGENT_MAX_HEADER);
	int n = split(line, w, 6);
	if (n < 2 || !valid_tag(w[1]))
		fatal("a request without a valid tag");
	const char *v = w[0], *tag = w[1];
	if (!strcmp(v, "run") && n == 5)
		run_request(tag, number(w[2], MAX_FILES), number(w[3], MAX_ARGV), number(w[4], MAX_PAYLOAD));
	else if (!strcmp(v, "cell") && n == 4)
		cell_request(tag, number(w[2], MAX_PAYLOAD), number(w[3], MAX_PAYLOAD));
	else if (!strcmp(v, "int") && n == 2)
		interrupt(tag);
	else if (!strcmp(v, "put") && n == 4)
		put_request(tag, number(w[2], MAX_PATH), number(w[3], MAX_PAYLOAD));
	else if (!strcmp(v, "get") && n == 4)
		get_request(tag, number(w[2], ~0ULL >> 1), number(w[3], MAX_PATH));
	else if (!strcmp(v, "list") && n == 3)
		list_request(tag, number(w[2], MAX_PATH));
	else if (!strcmp(v, "del") && n == 3)
		del_request(tag, number(w[2], MAX_PATH));
	else if (!strcmp(v, "bg") && n == 5)
		bg_request(tag, number(w[2], MAX_ARGV), number(w[3], MAX_PAYLOAD), number(w[4], 1));
	else if (!strcmp(v, "bglist") && n == 2)
		cmds_list(tag);
	else if (n >= 3 && !valid_tag(w[2]))
		fatal("a request for a command without a valid id");
	else if (!strcmp(v, "bgin") && n == 4)
		cmds_stdin(tag, w[2], number(w[3], AGENT_MAX_CHUNK));
	else if (!strcmp(v, "bgout") && n == 6)
		cmds_output(tag, w[2], number(w[3], ~0ULL >> 1), number(w[4], ~0ULL >> 1), number(w[5], CMD_LOG_MAX));
	else if (!strcmp(v, "bgkill") && n == 4)
		cmds_kill(tag, w[2], (int)number(w[3], NSIG - 1));
	else if (!strcmp(v, "bgdel") && n == 3)
		cmds_delete(tag, w[2]);
	else
		fatal("an unknown request \"%.8s\" or one with the wrong number of words", v);
}

/* Requests until none is buffered (poll does not see the buffer). */
static void serve_requests(void)
{
	do
		serve_request();
	while (in_buffered());
}

int main(int argc, char **argv)
{
	const char *ws = "/workspace";
	int i = 1;
	if (argc > 1 && !strcmp(argv[1], "reap"))
		reap_main(argc - 1, argv + 1);
	if (argc > 2 && !strcmp(argv[1], "--workspace"))
		ws = argv[2], i = 3;
	if (i + 1 < argc && !strcmp(argv[i], "kernel"))
		kernel.argv = argv + i + 1;
	else if (i + 1 != argc || strcmp(argv[i], "shell"))
		fatal("usage: isobox-agent [--workspace DIR] shell | kernel ARGV... | reap NONCE ARGV...");
	atexit(stop_children);
	/* As PID 1 it is already: the orphans of a run are the agent's to reap
	 * (and to sweep: agent_procs.h), also where it runs as a process. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is an error where it happens */
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK))
		fatal("pipe: %s", strerror(errno));
	struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
	sigaction(SIGCHLD, &sa, NULL);
	if (chdir(ws) || (ws_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		fatal("cannot enter the workspace %s: %s", ws, strerror(errno));
	if (kernel.argv)
		kernel_start();
	if (!write_all(1, "ready\n", 6))
		fatal("cannot answer the worker: %s", strerror(errno));
	for (;;)
		loop_once(true);
}
