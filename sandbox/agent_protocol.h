/*
 * agent_protocol.h: the sizes both ends of the session agent's protocol
 * (frame.h describes it) must agree on. Libc only, like uids.h: the worker
 * (frame.c, agent_io.c) and the static agent (agent/agent_base.h) both
 * include it, so neither can drift from the other.
 */
#ifndef ISOBOX_SANDBOX_AGENT_PROTOCOL_H
#define ISOBOX_SANDBOX_AGENT_PROTOCOL_H

#define AGENT_TAG_LEN 16      /* a request's tag, in lowercase hex digits */
#define AGENT_MAX_HEADER 512  /* one header line, its LF included */
#define AGENT_MAX_CHUNK 65536 /* the largest out/err/data frame */
#define AGENT_MAX_COMMANDS 16 /* background commands kept, running or ended (bg) */
#define AGENT_COMMAND_LOG (1 << 20) /* of each of a command's stdout and stderr, the last bytes kept */
#define AGENT_NONCE_MAX 64    /* an end marks' nonce, in lowercase hex digits (decoder.h) */

/*
 * How a process ended, as the agent and the reporter (agent/agent_reap.c) say
 * it: its exit status (0-255), or AGENT_SIGNALLED + N when signal N killed
 * it, read from the wait status. A number alone, because an exit status of
 * 128 + N cannot tell `exit(128 + N)` from death by signal N.
 */
#define AGENT_SIGNALLED 256
#define AGENT_END_MAX (AGENT_SIGNALLED + 64) /* above SIGRTMAX */
#define AGENT_END_STATUS(wait_status) \
	(WIFSIGNALED(wait_status) ? AGENT_SIGNALLED + WTERMSIG(wait_status) : WEXITSTATUS(wait_status))
static inline int agent_end_valid(long long end)
{
	return end >= 0 && end <= AGENT_END_MAX && end != AGENT_SIGNALLED;
}
/* An end status as the API gives it: the exit code as a shell says it
 * (128 + N after signal N), and the signal (0: none). */
static inline int agent_end_exit_code(int end)
{
	return end >= AGENT_SIGNALLED ? 128 + end - AGENT_SIGNALLED : end;
}
static inline int agent_end_signal(int end)
{
	return end >= AGENT_SIGNALLED ? end - AGENT_SIGNALLED : 0;
}

#endif
