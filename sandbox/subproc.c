/* subproc.c: start the sandboxes' clients safely, and run short docker commands. */
#define _GNU_SOURCE
#include "subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* A client needs nothing of the worker's environment. */
static char *const client_env[] = {
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/nonexistent",
	"LANG=C",
	NULL,
};

static void close_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0)
		return;
#endif
	for (int fd = lowfd; fd < 65536; fd++)
		close(fd);
}

void subproc_exec(char *const argv[])
{
	execve(argv[0], argv, client_env);
	_exit(127);
}

static void exec_argv(void *argv)
{
	subproc_exec(argv);
}

pid_t subproc_spawn(char *const argv[], int *fds[3])
{
	return subproc_spawn_with(fds, exec_argv, (void *)argv);
}

pid_t subproc_spawn_with(int *fds[3], void (*child)(void *), void *arg)
{
	int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
	pid_t parent = getpid();

	for (int i = 0; i < 3; i++) {
		if (!fds[i])
			continue;
		/* Our end (the write end of stdin, the read ends of the rest)
		 * never blocks; the child's end stays as programs expect. */
		if (pipe2(pipes[i], O_CLOEXEC) < 0 || fcntl(pipes[i][i == 0 ? 1 : 0], F_SETFL, O_NONBLOCK) < 0)
			goto fail;
	}
	pid_t pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		/* libfcgi sets no close-on-exec: the listening socket and the
		 * request's connection must not reach the client. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		sigset_t none;
		sigemptyset(&none);
		if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		int devnull = open("/dev/null", O_RDWR);
		for (int i = 0; i < 3; i++) {
			int src = fds[i] ? pipes[i][i == 0 ? 0 : 1] : devnull;
			if (src < 0 || dup2(src, i) < 0)
				_exit(127);
		}
		close_from(3);
		child(arg);
		_exit(127);
	}
	for (int i = 0; i < 3; i++) {
		if (!fds[i])
			continue;
		/* Keep our end: the write end of stdin, the read ends of the rest. */
		int ours = i == 0 ? pipes[i][1] : pipes[i][0];
		close(i == 0 ? pipes[i][0] : pipes[i][1]);
		*fds[i] = ours;
	}
	return pid;
fail:;
	int saved = errno;
	for (int i = 0; i < 3; i++) {
		if (pipes[i][0] >= 0) close(pipes[i][0]);
		if (pipes[i][1] >= 0) close(pipes[i][1]);
	}
	errno = saved;
	return -1;
}

/* The middle child only forks and exits. */
#define MIDDLE_CHILD_MS 5000

bool subproc_detach(char *const argv[], const int fds[3])
{
	pid_t mid = fork();
	if (mid < 0)
		return false;
	if (mid == 0) {
		/* In a session of its own, and no death signal: it outlives the
		 * worker, and the pool master (a subreaper) or init reaps it. */
		sigset_t none;
		sigemptyset(&none);
		if (setsid() < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
			_exit(127);
		pid_t pid = fork();
		if (pid != 0)
			_exit(pid < 0 ? 127 : 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		for (int i = 0; i < 3; i++)
			if (dup2(fds[i], i) < 0)
				_exit(127);
		close_from(3);
		execve(argv[0], argv, client_env);
		_exit(127);
	}
	int status = subproc_wait(mid, MIDDLE_CHILD_MS);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A pidfd polls readable when the child exits: a wait with a timeout
 * that wakes at once, instead of a sleep loop. */
static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

int subproc_wait(pid_t pid, int64_t timeout_ms)
{
	int status = 0;
	int64_t deadline = now_ms() + timeout_ms;
	autoclose int pfd = pidfd_of(pid);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1; /* not ours to wait for: no status to trust */
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return status;
		}
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			poll(&p, 1, (int)(left < 1000 ? left : 1000));
		} else {
			usleep(5000); /* no pidfd (a kernel before 5.3) */
		}
	}
}

int subproc_capture(char *const argv[], int64_t timeout_ms, struct buf *out, struct buf *err)
{
	int ofd = -1, efd = -1;
	int *fds[3] = {NULL, &ofd, err ? &efd : NULL};
	pid_t pid = subproc_spawn(argv, fds);
	if (pid < 0)
		return -1;
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd p[2] = {{.fd = ofd, .events = POLLIN}, {.fd = efd, .events = POLLIN}};
	struct buf *dst[2] = {out, err};
	while ((p[0].fd >= 0 || p[1].fd >= 0) && now_ms() < deadline) {
		if (poll(p, 2, 100) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char chunk[4096];
			ssize_t n = read(p[i].fd, chunk, sizeof chunk);
			if (n > 0 && dst[i]->len < 65536)
				buf_append(dst[i], chunk, (size_t)n);
			else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				close(p[i].fd);
				p[i].fd = -1;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	int status = subproc_wait(pid, deadline - now_ms() > 0 ? deadline - now_ms() : 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
