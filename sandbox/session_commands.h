/* session_commands.h: what a session's agent says of its commands, read
 * (session_commands.c; the command_* calls are in sandbox.h). Pure: the
 * unit tests and the fuzzer feed them anything. */
#ifndef ISOBOX_SANDBOX_SESSION_COMMANDS_H
#define ISOBOX_SANDBOX_SESSION_COMMANDS_H

#include "sandbox.h"

/* A bglist answer (frame.h) as commands (the caller's, session_commands_free). */
bool session_parse_commands(const char *p, size_t len, struct session_command **out, size_t *n,
			    struct fault *f);
/* A bgout answer, of at most max bytes of each stream, into *o (the caller's). */
bool session_parse_output(const char *p, size_t len, size_t max, struct command_output *o);

#endif
