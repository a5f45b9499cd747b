/*
 * agent_cmds.h: commands that outlive requests (agent_cmds.c; frame.h:
 * bg, bgin, bgout, bgkill, bgdel, bglist).
 *
 * A step answers when its program ends; an agent's pip install, server or
 * long crawl should not hold a request that long. A command is started in
 * the background, in a session of its own, and kept: the agent reads its
 * stdout and stderr as they come into logs of its own (the last
 * CMD_LOG_MAX bytes of each, counted from the command's start, so that a
 * reader can ask "from byte N on"), writes to its stdin when asked, and
 * records how it ended. At most MAX_CMDS are kept, running or ended, until
 * the worker deletes them; everything is charged to the session's memory.
 *
 * Ownership: the records and their logs are this module's; the agent's
 * loop hands it the fds poll found readable and the children it reaped.
 */
#ifndef ISOBOX_AGENT_CMDS_H
#define ISOBOX_AGENT_CMDS_H

#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

#include "agent_base.h"

#define MAX_CMDS AGENT_MAX_COMMANDS
#define CMD_LOG_MAX AGENT_COMMAND_LOG

/* The requests (after their header's words are checked): each answers
 * with an end frame. argv and its strings, and stdin_fd, become the
 * command's: its stdin (closed here once given), or -1 for a pipe that
 * bgin writes to. */
void cmds_start(const char *tag, char **argv, unsigned long long argc, int stdin_fd);
void cmds_stdin(const char *tag, const char *id, unsigned long long len);
void cmds_output(const char *tag, const char *id, unsigned long long out_from,
		 unsigned long long err_from, unsigned long long max);
void cmds_kill(const char *tag, const char *id, int sig);
void cmds_delete(const char *tag, const char *id);
void cmds_list(const char *tag);

/* The loop's part: the fds to poll (added at p, their count returned),
 * one found readable (false: not a command's), a child reaped (false:
 * not a command). */
int cmds_pollfds(struct pollfd *p);
bool cmds_readable(int fd);
bool cmds_reaped(pid_t pid, int status);
/* At exit: every command's group is killed. */
void cmds_stop_all(void);

#endif
