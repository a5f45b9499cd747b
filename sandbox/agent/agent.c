/*
 * agent.c: the first process of a session sandbox.
 *
 * The worker talks to it in frames on its stdin and stdout (sandbox/frame.h
 * is the protocol). It writes files into the workspace and runs programs
 * there ("run": one step at a time, each in a process group of its own),
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
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAG_LEN 16
#define MAX_HEADER 512
#define CHUNK 65536                 /* the largest out/err/data frame */
#define MAX_PAYLOAD (64ULL << 20)   /* one file, stdin, code, or all the args */
#define MAX_FILES 1000
#define MAX_ARGV 4096
#define MAX_PATH 4096
#define MAX_RESULT (MAX_PAYLOAD + 4096) /* a cell's JSON, images included */
#define MAX_DISCARDED 16
#define DRAIN_MAX (1 << 20)         /* read from a pipe when its step ends */
#define INT_GRACE_MS 1000           /* a cell's time to stop after SIGINT */

struct buf {
	char *p;
	size_t len, cap;
};

enum step_kind { STEP_NONE, STEP_RUN, STEP_CELL };

/* The run or cell that runs: its answer is due when it ends. */
static struct {
	enum step_kind kind;
	char tag[TAG_LEN + 1];
	pid_t pid;       /* run: the program, leader of its process group */
	int out, err;    /* run: its pipes, -1 once at end of file */
	int64_t kill_at; /* cell: interrupted; the kernel is killed at this time */
	bool silent;     /* cell: a new request replaced it; it gets no answer */
} step = {.out = -1, .err = -1};

static struct {
	char **argv;           /* NULL: a shell session */
	pid_t pid;             /* 0: not running */
	int in, out, err, res; /* the pipes on its fds 0, 1, 2 and 3 */
	bool served;           /* was given a cell: restart it at once if it dies */
	struct buf result;     /* what it wrote on fd 3 and was not used yet */
} kernel = {.in = -1, .out = -1, .err = -1, .res = -1};

static int ws_fd = -1;   /* the workspace */
static int chld_pipe[2]; /* SIGCHLD wakes poll through it */
/* Pipes of ended steps, still held by what they left in the background:
 * read and dropped so that it does not block. The oldest goes when full. */
static int discarded[MAX_DISCARDED];
static int ndiscarded;
/* The request stream: a header may be read with some payload after it. */
static struct {
	char b[CHUNK];
	size_t off, len;
} in;

/* A failed file request: its errno and the message that is its answer. */
struct why {
	int err;
	char msg[256];
};

static void stop_children(void)
{
	if (step.kind == STEP_RUN)
		kill(-step.pid, SIGKILL);
	if (kernel.pid > 0)
		kill(-kernel.pid, SIGKILL);
}

/* Fatal: the worker reads the exit as the end of the session. */
static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("isobox-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	stop_children();
	exit(2);
}

static bool set_why(struct why *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool set_why(struct why *w, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!w->err) { /* the first failure is the one reported */
		w->err = err;
		vsnprintf(w->msg, sizeof w->msg, fmt, ap);
	}
	va_end(ap);
	return false;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap && !(b->p = realloc(b->p, b->cap = 2 * (b->len + n))))
		die("out of memory");
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* --- Answers ------------------------------------------------------------ */

static bool write_all(int fd, const void *p, size_t n)
{
	for (const char *c = p; n > 0;) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		c += k, n -= (size_t)k;
	}
	return true;
}

/* "KIND TAG [CODE] LEN" LF, then the payload: one write when it is small. */
static void send_frame(const char *kind, const char *tag, int code, const void *p, size_t n)
{
	static char b[CHUNK + 64];
	int h = code < 0 ? snprintf(b, 64, "%s %s %zu\n", kind, tag, n)
			 : snprintf(b, 64, "%s %s %d %zu\n", kind, tag, code, n);
	bool small = n <= CHUNK;
	if (small && n > 0) /* p may be NULL then */
		memcpy(b + h, p, n);
	if (!write_all(1, b, (size_t)h + (small ? n : 0)) || (!small && !write_all(1, p, n)))
		die("cannot answer the worker: %s", strerror(errno));
}

/* The end of a file request: 0 and the payload, or the failure. */
static void send_end(const char *tag, const struct why *w, const void *p, size_t n)
{
	if (w->err)
		send_frame("end", tag, w->err, w->msg, strlen(w->msg));
	else
		send_frame("end", tag, 0, p, n);
}

/* --- Requests ----------------------------------------------------------- */

/* Up to n bytes of the request stream (at least one). Blocks: the worker
 * writes whole requests at once. End of file ends the session. */
static size_t in_some(char *p, size_t n)
{
	if (in.off == in.len) {
		ssize_t k;
		while ((k = read(0, in.b, sizeof in.b)) < 0 && errno == EINTR)
			;
		if (k < 0)
			die("cannot read requests: %s", strerror(errno));
		if (k == 0) {
			stop_children();
			exit(0);
		}
		in.off = 0, in.len = (size_t)k;
	}
	size_t k = in.len - in.off < n ? in.len - in.off : n;
	memcpy(p, in.b + in.off, k);
	in.off += k;
	return k;
}

static void in_exact(char *p, size_t n)
{
	for (size_t got = 0; got < n;)
		got += in_some(p + got, n - got);
}

/* The next line, without its LF. */
static void in_line(char *line, size_t max)
{
	size_t n = 0;
	for (char c; in_some(&c, 1) && c != '\n'; line[n++] = c)
		if (n == max || c == '\0')
			die("a request line that is too long or holds a NUL");
	line[n] = '\0';
}

/* The next n bytes, written to fd (if >= 0). After a write error the rest
 * is read all the same, to stay in step with the stream. */
static bool in_copy(int fd, unsigned long long n, const char *name, struct why *w)
{
	static char b[CHUNK];
	bool ok = true;
	while (n > 0) {
		size_t k = in_some(b, n < sizeof b ? (size_t)n : sizeof b);
		n -= k;
		if (ok && fd >= 0 && !write_all(fd, b, k))
			ok = set_why(w, errno, "%s: %s", name, strerror(errno));
	}
	return ok;
}

/* Strict decimal: digits only, no sign, no leading zero; at most max. */
static bool decimal(const char *s, unsigned long long max, unsigned long long *v)
{
	size_t n = strlen(s);
	*v = 0;
	if (n == 0 || n > 19 || (s[0] == '0' && n > 1) || strspn(s, "0123456789") != n)
		return false;
	for (; *s; s++)
		*v = *v * 10 + (unsigned long long)(*s - '0');
	return *v <= max;
}

static unsigned long long number(const char *s, unsigned long long max)
{
	unsigned long long v;
	if (!decimal(s, max, &v))
		die("a request with a bad number, or one over %llu: \"%.20s\"", max, s);
	return v;
}

/* Words separated by single spaces; dies on an empty word or more than max. */
static int split(char *line, char **w, int max)
{
	int n = 0;
	for (char *p = line;; p++) {
		if (n == max || !*p || *p == ' ')
			die("a malformed request header");
		w[n++] = p;
		if (!(p = strchr(p, ' ')))
			return n;
		*p = '\0';
	}
}

static bool valid_tag(const char *s)
{
	return strlen(s) == TAG_LEN && strspn(s, "0123456789abcdef") == TAG_LEN;
}

/* --- Paths under the workspace ------------------------------------------ */

/* Relative, no empty, "." or ".." component, no NUL: what a worker may name. */
static bool valid_path(const char *p, size_t n, struct why *w)
{
	if (n == 0 || strlen(p) != n)
		return set_why(w, EINVAL, "an empty path or one holding a NUL");
	for (const char *c = p;;) {
		size_t k = strcspn(c, "/");
		if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return set_why(w, EINVAL, "%s: not a plain relative path", p);
		if (!c[k])
			return true;
		c += k + 1;
	}
}

/* A path from the request (len bytes), NUL-terminated into p: valid? */
static bool in_path(char *p, unsigned long long len, struct why *w)
{
	in_exact(p, (size_t)len);
	p[len] = '\0';
	return valid_path(p, (size_t)len, w);
}

/* Why name in dir could not be opened: a link says so, whatever errno said. */
static bool walk_failed(struct why *w, int err, int dir, const char *name, const char *shown)
{
	struct stat st;
	if (!fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		return set_why(w, ELOOP, "%s: is a symbolic link", shown);
	return set_why(w, err, "%s: %s", shown, strerror(err));
}

/* Opens the directory name in dir (made if missing and make), never through
 * a link: not O_DIRECTORY, which follows one in gVisor, but fstat after. */
static int open_dir_at(int dir, const char *name, bool make)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	int fd = openat(dir, name, flags);
	if (fd < 0 && errno == ENOENT && make && (!mkdirat(dir, name, 0755) || errno == EEXIST))
		fd = openat(dir, name, flags);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) || !S_ISDIR(st.st_mode))) {
		close(fd);
		errno = ENOTDIR;
		return -1;
	}
	return fd;
}

/* The directory holding path's last component (*leaf), each component
 * opened with O_NOFOLLOW, missing ones made if make. -1 and *w on failure. */
static int open_parent(char *path, bool make, const char **leaf, struct why *w)
{
	int dir = fcntl(ws_fd, F_DUPFD_CLOEXEC, 0);
	char *c = path, *slash;
	for (; dir >= 0 && (slash = strchr(c, '/')); c = slash + 1) {
		*slash = '\0'; /* path now reads as the part walked: the message */
		int next = open_dir_at(dir, c, make);
		if (next < 0)
			walk_failed(w, errno, dir, c, path);
		*slash = '/';
		close(dir);
		dir = next;
	}
	if (dir < 0)
		set_why(w, errno, "%s", strerror(errno));
	*leaf = c;
	return dir;
}

/* Opens path (valid) with flags plus O_NOFOLLOW, and checks it is a regular
 * file (O_NONBLOCK: a FIFO does not make it wait). */
static int open_file(char *path, int flags, bool make, struct stat *st, struct why *w)
{
	const char *leaf;
	int dir = open_parent(path, make, &leaf, w);
	if (dir < 0)
		return -1;
	int fd = openat(dir, leaf, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		walk_failed(w, errno, dir, leaf, path);
	close(dir);
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode))) {
		set_why(w, S_ISDIR(st->st_mode) ? EISDIR : EINVAL, "%s: not a regular file", path);
		close_fd(&fd);
	}
	return fd;
}

/* The next n bytes of the request stream into the file path. */
static bool receive_file(char *path, unsigned long long len, unsigned long long n, struct why *w)
{
	struct stat st;
	int fd = in_path(path, len, w) ? open_file(path, O_WRONLY | O_CREAT | O_TRUNC, true, &st, w) : -1;
	bool ok = in_copy(fd, n, path, w) && fd >= 0;
	close_fd(&fd);
	return ok;
}

/* --- Processes ---------------------------------------------------------- */

/* Forks argv in a new session in the workspace with fds[i] as its fd i.
 * Every fd of the agent is O_CLOEXEC besides: close_range catches whatever
 * it was given when it started. */
static pid_t spawn(char **argv, const int *fds, int nfds)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int moved[4];
	sigset_t none;
	setsid();
	if (fchdir(ws_fd) < 0)
		_exit(127); /* cannot happen: the agent's own cwd is the workspace */
	for (int i = 0; i < nfds; i++) /* out of the way of the dup2s */
		moved[i] = fds[i] >= nfds ? fds[i] : fcntl(fds[i], F_DUPFD, nfds);
	for (int i = 0; i < nfds; i++)
		if (moved[i] < 0 || dup2(moved[i], i) < 0)
			_exit(127); /* never with the agent's own fds 0-2 */
	if (close_range((unsigned)nfds, INT_MAX, 0)) /* not ~0U: EINVAL in gVisor */
		for (int fd = nfds; fd < 1024; fd++)
			close(fd);
	for (int s = 1; s < NSIG; s++) /* SIGPIPE above all: the agent ignores it */
		signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[0], argv);
	dprintf(2, "isobox-agent: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static void nonblocking(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* What the non-blocking *fd holds, as KIND frames of tag (dropped if tag is
 * NULL); at end of file *fd is closed. >0: relayed; 0: end; -1: nothing now. */
static ssize_t relay(int *fd, const char *kind, const char *tag)
{
	static char b[CHUNK];
	ssize_t n = read(*fd, b, sizeof b);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0)
		close_fd(fd);
	else if (tag)
		send_frame(kind, tag, -1, b, (size_t)n);
	return n < 0 ? 0 : n;
}

/* Everything *fd holds now, bounded: a background writer may never stop. */
static void drain(int *fd, const char *kind, const char *tag)
{
	for (int i = 0; *fd >= 0 && i < DRAIN_MAX / CHUNK && relay(fd, kind, tag) > 0; i++)
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

/* The run ends: unanswered if a new request replaced it (then it is
 * killed), else after what it wrote until it exited. */
static void run_ended(bool answer, int status)
{
	if (answer) {
		drain(&step.out, "out", step.tag);
		drain(&step.err, "err", step.tag);
		int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		send_frame("end", step.tag, code, "", 0);
	} else {
		kill(-step.pid, SIGKILL);
		kill(step.pid, SIGKILL); /* if it has not called setsid() yet */
	}
	discard(&step.out);
	discard(&step.err);
	step.kind = STEP_NONE;
}

static void kernel_start(void)
{
	int p[4][2];
	for (int i = 0; i < 4; i++)
		if (pipe2(p[i], O_CLOEXEC))
			die("cannot make the kernel's pipes: %s", strerror(errno));
	int fds[4] = {p[0][0], p[1][1], p[2][1], p[3][1]};
	if ((kernel.pid = spawn(kernel.argv, fds, 4)) < 0)
		die("cannot start the kernel: %s", strerror(errno));
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

/* The cell ends: what the kernel wrote until now, then its answer. */
static void cell_ended(int code, const char *json, size_t n)
{
	drain(&kernel.out, "out", cell_tag());
	drain(&kernel.err, "err", cell_tag());
	if (!step.silent)
		send_frame("end", step.tag, code, json, n);
	step.kind = STEP_NONE;
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
		cell_ended(137, json, (size_t)n);
	}
	close_fd(&kernel.in), close_fd(&kernel.out), close_fd(&kernel.err), close_fd(&kernel.res);
	kernel.pid = 0;
	if (restart)
		kernel_start();
}

/* "CODE JSONLEN" LF JSON on the kernel's fd 3: a cell's result. Anything
 * else there (the cell can write to it too) is a broken kernel. */
static void kernel_result(void)
{
	static char b[CHUNK];
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
		if (!(sp = strchr(r->p, ' ')) || (*sp = '\0', !decimal(r->p, 255, &code)) ||
		    !decimal(sp + 1, MAX_RESULT, &len)) {
			kernel_gone(kernel_kill(), false);
			return;
		}
		*sp = ' ', *lf = '\n';
		size_t whole = (size_t)(lf + 1 - r->p) + len;
		if (r->len < whole)
			return;
		if (step.kind == STEP_CELL) /* else dropped: a result between cells */
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
	} else if (step.kind == STEP_CELL && !step.kill_at) {
		kill(-kernel.pid, SIGINT);
		step.kill_at = now_ms() + INT_GRACE_MS;
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
	else
		for (int i = 0; i < ndiscarded; i++)
			if (discarded[i] == fd && relay(&discarded[i], NULL, NULL) == 0)
				memmove(discarded + i, discarded + i + 1, (size_t)(--ndiscarded - i) * sizeof *discarded);
}

/* One poll and what it found. Outputs come before reaping, so that a step
 * ends after what it wrote; requests come last. */
static void loop_once(bool requests)
{
	struct pollfd p[8 + MAX_DISCARDED];
	int n = 0, timeout = -1;
	bool run = step.kind == STEP_RUN;
	int fds[] = {run ? step.out : -1, run ? step.err : -1, kernel.out, kernel.err, kernel.res};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		p[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	for (int i = 0; i < ndiscarded; i++)
		p[n++] = (struct pollfd){.fd = discarded[i], .events = POLLIN};
	p[n++] = (struct pollfd){.fd = chld_pipe[0], .events = POLLIN};
	p[n++] = (struct pollfd){.fd = requests ? 0 : -1, .events = POLLIN};
	if (step.kind == STEP_CELL && step.kill_at) {
		int64_t left = step.kill_at - now_ms();
		timeout = left < 0 ? 0 : (int)left;
	}
	if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
		die("poll: %s", strerror(errno));
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
	memcpy(step.tag, tag, TAG_LEN + 1);
	step.kill_at = 0;
	step.silent = false;
}

/* A file holding the program's stdin, read from its start: a memfd, else an
 * unnamed file in /tmp, else for a small stdin a pipe. *wr: where to write. */
static int stdin_file(unsigned long long len, int *wr)
{
	int fd = memfd_create("stdin", MFD_CLOEXEC), p[2];
	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || len > 4096 || pipe2(p, O_CLOEXEC))
		return *wr = fd;
	*wr = p[1];
	return p[0];
}

static char **in_argv(unsigned long long n)
{
	char line[MAX_HEADER + 1], **argv = calloc((size_t)n + 1, sizeof *argv);
	unsigned long long total = 0;
	for (unsigned long long i = 0; argv && i < n; i++) {
		in_line(line, MAX_HEADER);
		unsigned long long len = number(line, MAX_PAYLOAD);
		if ((total += len) > MAX_PAYLOAD || !(argv[i] = malloc((size_t)len + 1)))
			die("arguments too large");
		in_exact(argv[i], (size_t)len);
		argv[i][len] = '\0';
	}
	if (!argv)
		die("out of memory");
	return argv;
}

static void run_request(const char *tag, unsigned long long nfiles, unsigned long long nargv,
			unsigned long long stdin_len)
{
	struct why w = {0};
	char line[MAX_HEADER + 1], *words[2], path[MAX_PATH + 1];
	if (nargv == 0)
		die("a run without a program");
	step_abandon();
	for (unsigned long long i = 0; i < nfiles; i++) {
		in_line(line, MAX_HEADER);
		if (split(line, words, 2) != 2)
			die("a malformed file header");
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
	pid_t pid = w.err ? -1 : spawn(argv, (int[]){rd, out[1], err[1]}, 3);
	if (pid < 0)
		set_why(&w, errno, "cannot fork: %s", strerror(errno));
	close_fd(&rd), close_fd(&out[1]), close_fd(&err[1]);
	for (unsigned long long i = 0; i < nargv; i++)
		free(argv[i]);
	free(argv);
	if (w.err) { /* the program never started: why, on its stderr */
		close_fd(&out[0]), close_fd(&err[0]);
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
	kernel.served = true;
	/* The kernel reads whole cells before it runs them, so this does not
	 * block for long. If it fails (EPIPE), the kernel died: poll sees it. */
	int n = snprintf(h, sizeof h, "%llu %llu\n", code_len, stdin_len);
	in_copy(write_all(kernel.in, h, (size_t)n) ? kernel.in : -1, code_len + stdin_len, "cell", &w);
}

static void put_request(const char *tag, unsigned long long path_len, unsigned long long data_len)
{
	struct why w = {0};
	char path[MAX_PATH + 1];
	receive_file(path, path_len, data_len, &w);
	send_end(tag, &w, "", 0);
}

static void get_request(const char *tag, unsigned long long max, unsigned long long path_len)
{
	static char b[CHUNK];
	struct why w = {0};
	struct stat st = {0};
	char path[MAX_PATH + 1];
	int fd = in_path(path, path_len, &w) ? open_file(path, O_RDONLY, false, &st, &w) : -1;
	if (fd >= 0 && (unsigned long long)st.st_size > max)
		set_why(&w, EFBIG, "%s: %lld bytes, over %llu", path, (long long)st.st_size, max);
	/* Only the size that was checked is sent, should the file grow. */
	for (off_t left = st.st_size; !w.err && left > 0;) {
		ssize_t n = read(fd, b, left < CHUNK ? (size_t)left : CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			set_why(&w, errno, "%s: %s", path, strerror(errno));
		if (n <= 0)
			break;
		send_frame("data", tag, -1, b, (size_t)n);
		left -= n;
	}
	close_fd(&fd);
	send_end(tag, &w, "", 0);
}

static void list_request(const char *tag, unsigned long long path_len)
{
	struct why w = {0};
	char path[MAX_PATH + 1], line[80];
	struct buf out = {0};
	const char *leaf;
	int fd = -1;
	in_exact(path, (size_t)path_len);
	path[path_len] = '\0';
	if (path_len == 0 || !strcmp(path, ".")) { /* not a dup: readdir would move ws_fd */
		fd = open_dir_at(ws_fd, ".", false);
	} else if (valid_path(path, (size_t)path_len, &w)) {
		int dir = open_parent(path, false, &leaf, &w);
		if (dir >= 0 && (fd = open_dir_at(dir, leaf, false)) < 0)
			walk_failed(&w, errno, dir, leaf, path);
		close_fd(&dir);
	}
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && !w.err)
		set_why(&w, errno, "%s: %s", path, strerror(errno));
	for (struct dirent *e; d && (e = readdir(d));) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue; /* gone since readdir */
		char type = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'o';
		int h = snprintf(line, sizeof line, "%c %lld %lld %zu\n", type, (long long)st.st_size,
				 (long long)st.st_mtime, strlen(e->d_name));
		buf_add(&out, line, (size_t)h);
		buf_add(&out, e->d_name, strlen(e->d_name));
	}
	if (d)
		closedir(d);
	else
		close_fd(&fd);
	send_end(tag, &w, out.p, out.len);
	free(out.p);
}

/* Removes name in dir: a file, a link, or a directory with all it holds,
 * entered only through O_NOFOLLOW. 0, or -1 with errno. */
static int remove_at(int dir, const char *name)
{
	if (!unlinkat(dir, name, 0))
		return 0;
	int err = errno, fd = err == EISDIR || err == EPERM ? open_dir_at(dir, name, false) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		close_fd(&fd);
		errno = err; /* not a directory after all: why unlink failed */
		return -1;
	}
	/* Another pass if it is not empty yet: entries removed while it is
	 * read may make readdir skip some. */
	err = 0;
	for (int pass = 0; pass < 3; pass++, rewinddir(d)) {
		for (struct dirent *e; !err && (e = readdir(d));)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && remove_at(dirfd(d), e->d_name))
				err = errno;
		if (!err && unlinkat(dir, name, AT_REMOVEDIR))
			err = errno;
		if (err != ENOTEMPTY)
			break;
		err = 0;
	}
	closedir(d);
	errno = err;
	return err ? -1 : 0;
}

static void del_request(const char *tag, unsigned long long path_len)
{
	struct why w = {0};
	char path[MAX_PATH + 1];
	const char *leaf;
	int dir = in_path(path, path_len, &w) ? open_parent(path, false, &leaf, &w) : -1;
	if (dir >= 0 && remove_at(dir, leaf))
		set_why(&w, errno, "%s: %s", path, strerror(errno));
	close_fd(&dir);
	send_end(tag, &w, "", 0);
}

static void serve_request(void)
{
	char line[MAX_HEADER + 1], *w[5];
	in_line(line, MAX_HEADER);
	int n = split(line, w, 5);
	if (n < 2 || !valid_tag(w[1]))
		die("a request without a valid tag");
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
	else
		die("an unknown request \"%.8s\" or one with the wrong number of words", v);
}

/* Requests until none is buffered (poll does not see the buffer). */
static void serve_requests(void)
{
	do
		serve_request();
	while (in.off < in.len);
}

int main(int argc, char **argv)
{
	const char *ws = "/workspace";
	int i = 1;
	if (argc > 2 && !strcmp(argv[1], "--workspace"))
		ws = argv[2], i = 3;
	if (i + 1 < argc && !strcmp(argv[i], "kernel"))
		kernel.argv = argv + i + 1;
	else if (i + 1 != argc || strcmp(argv[i], "shell"))
		die("usage: isobox-agent [--workspace DIR] shell | kernel ARGV...");
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is an error where it happens */
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK))
		die("pipe: %s", strerror(errno));
	struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
	sigaction(SIGCHLD, &sa, NULL);
	if (chdir(ws) || (ws_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		die("cannot enter the workspace %s: %s", ws, strerror(errno));
	if (kernel.argv)
		kernel_start();
	if (!write_all(1, "ready\n", 6))
		die("cannot answer the worker: %s", strerror(errno));
	for (;;)
		loop_once(true);
}
