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

#endif
