/* session_files.h: a session's or volume's files, through its agent
 * (session_files.c; the files_* calls are in sandbox.h). */
#ifndef ISOBOX_SANDBOX_SESSION_FILES_H
#define ISOBOX_SANDBOX_SESSION_FILES_H

#include "agent_io.h"
#include "sandbox.h"

/* Open the session, send the call, read the answer, by deadline; the
 * session ends if its agent cannot answer (410 session_expired). */
bool session_agent_call(const struct conf *c, const char *tenant, const char *id, struct agent_call *call,
			int64_t deadline, struct fault *f);

/* The agent's listing (frame.h) as entries, at most max. Pure. */
bool session_parse_listing(const char *p, size_t len, size_t max, struct session_entry **out,
			   size_t *n, struct fault *f);

#endif
