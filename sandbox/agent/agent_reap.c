/*
 * agent_reap.c: the reporter. `isobox-agent reap NONCE ARGV...` runs ARGV
 * as its child and, when that child ends, says how with the end marks of
 * sandbox/decoder.h, on both pipes:
 *
 *	stdout: RS NONCE LF
 *	stderr: RS NONCE " " END LF     END: agent_protocol.h's end status
 *
 * then exits as the child did (128 + N after signal N). It is the first
 * process of every cold and warm sandbox (sandbox/spec.c), because the
 * sandbox's own exit code, all that docker reports, is 128 + N both for a
 * death by signal N and for exit(128 + N); the wait status tells them
 * apart. Two more things come with being the first process: the program is
 * not, so the kernel's shield of a namespace's init from its own signals
 * no longer makes a program that kills itself live on; and the orphans
 * are reaped here.
 *
 * NONCE "=FD" (a compile step's): no marks; the end status alone, in
 * decimal and a LF, on fd FD, which the child does not inherit.
 *
 * NONCE "-": a warm agent (python.py, node.js) learns its job's nonce long
 * after the sandbox started. It writes it on its fd 3, a pipe to this
 * process, and closes that before the program runs, so the program never
 * holds it. A program that digs the nonce out (it is in /proc/1/cmdline on
 * a cold run) can forge its end, which is no more than it can do by
 * exiting or killing itself: the worker bounds the sandbox's life from
 * outside whatever is written here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_base.h"
#include "agent_reap.h"

#define NONCE_MAX AGENT_NONCE_MAX

static pid_t child;

/* What the sandbox is asked to do (docker stop's SIGTERM, ...) is asked of
 * the program: this process only reports. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* As agent_wire.c's valid_tag, at a nonce's length. */
static bool hex(const char *s, size_t n)
{
	return n > 0 && n <= NONCE_MAX && strspn(s, "0123456789abcdef") >= n;
}

/* The warm agent's nonce, a line on fd, or "" if it ended without one. */
static void nonce_from(int fd, char *nonce)
{
	size_t n = 0;
	char c;
	ssize_t r;
	while (n <= NONCE_MAX && (r = read(fd, &c, 1)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || c == '\n')
			break;
		nonce[n++] = c;
	}
	nonce[n] = '\0';
	if (!hex(nonce, n))
		nonce[0] = '\0';
}

/* The whole mark, or nothing: a pipe the program left non-blocking (its
 * file description is this process's too) is made blocking again. */
static void mark(int fd, const char *s, int n)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	for (int off = 0; off < n;) {
		ssize_t w = write(fd, s + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the worker waits for the sandbox's end instead */
		off += (int)w;
	}
}

_Noreturn void reap_main(int argc, char **argv)
{
	if (argc < 3)
		fatal("usage: isobox-agent reap NONCE|-|=FD ARGV...");
	char nonce[NONCE_MAX + 2] = "";
	bool from_agent = !strcmp(argv[1], "-");
	int end_fd = -1;
	if (argv[1][0] == '=') {
		end_fd = atoi(argv[1] + 1);
		if (end_fd < 3 || fcntl(end_fd, F_SETFD, FD_CLOEXEC) < 0)
			fatal("reap %s: not an open fd above 2", argv[1]);
	}
	int p[2] = {-1, -1};
	if (from_agent && pipe2(p, O_CLOEXEC))
		fatal("pipe: %s", strerror(errno));
	if (!from_agent && hex(argv[1], strlen(argv[1])))
		strcpy(nonce, argv[1]);
	child = fork();
	if (child < 0)
		fatal("fork: %s", strerror(errno));
	if (child == 0) {
		/* fd 3, open across exec, is the pipe's end for the warm agent;
		 * the child's other fds are this process's 0-2. */
		if (from_agent && (p[1] == 3 ? fcntl(3, F_SETFD, 0) : dup2(p[1], 3)) < 0)
			_exit(127);
		execvp(argv[2], argv + 2);
		dprintf(2, "isobox-agent: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	struct sigaction sa = {.sa_handler = forward, .sa_flags = SA_RESTART};
	int asked[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++)
		sigaction(asked[i], &sa, NULL);
	if (from_agent) {
		close(p[1]);
		nonce_from(p[0], nonce);
		close(p[0]);
	}
	int status = 0;
	for (;;) {
		pid_t w = waitpid(-1, &status, 0);
		if (w == child)
			break;
		if (w < 0 && errno != EINTR)
			fatal("waitpid: %s", strerror(errno));
	}
	char line[NONCE_MAX + 32];
	if (end_fd >= 0)
		mark(end_fd, line, snprintf(line, sizeof line, "%d\n", AGENT_END_STATUS(status)));
	if (nonce[0]) {
		mark(1, line, snprintf(line, sizeof line, "\036%s\n", nonce));
		mark(2, line, snprintf(line, sizeof line, "\036%s %d\n", nonce, AGENT_END_STATUS(status)));
	}
	_exit(agent_end_exit_code(AGENT_END_STATUS(status)));
}
