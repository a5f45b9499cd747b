/* agent_spawn.c: starting a program in the workspace (agent_spawn.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent_files.h"
#include "agent_spawn.h"

/* Forks argv in a new session in the workspace with fds[i] as its fd i.
 * Every fd of the agent is O_CLOEXEC besides: close_range catches whatever
 * it was given when it started. */
pid_t spawn(char **argv, const int *fds, int nfds)
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
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0) {
		dprintf(2, "isobox-agent: sigprocmask: %s\n", strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	dprintf(2, "isobox-agent: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

void nonblocking(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* A file holding the program's stdin, read from its start: a memfd, else an
 * unnamed file in /tmp, else for a small stdin a pipe. *wr: where to write. */
int stdin_file(unsigned long long len, int *wr)
{
	int fd = memfd_create("stdin", MFD_CLOEXEC), p[2];
	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || len > 4096 || pipe2(p, O_CLOEXEC))
		return *wr = fd;
	*wr = p[1];
	return p[0];
}
