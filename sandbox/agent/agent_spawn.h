/*
 * agent_spawn.h: how the session agent starts a program (agent_spawn.c):
 * a step's, the kernel, a background command.
 */
#ifndef ISOBOX_AGENT_SPAWN_H
#define ISOBOX_AGENT_SPAWN_H

#include <sys/types.h>

/* Forks argv in a new session in the workspace with fds[i] as its fd i
 * (nfds at most 4); every other fd closed, every signal as by default. */
pid_t spawn(char **argv, const int *fds, int nfds);
void nonblocking(int fd);
/* A file holding len bytes of stdin, to be read from its start: a memfd,
 * else an unnamed file in /tmp, else for a small stdin a pipe. *wr: where
 * to write them (the same fd but for the pipe). */
int stdin_file(unsigned long long len, int *wr);

#endif
