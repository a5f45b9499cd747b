/* session_files.h: a session's or volume's files, through its agent
 * (session_files.c; the files_* calls are in sandbox.h). */
#ifndef ISOBOX_SANDBOX_SESSION_FILES_H
#define ISOBOX_SANDBOX_SESSION_FILES_H

#include "sandbox.h"

/* The agent's listing (frame.h) as entries, at most max. Pure. */
bool session_parse_listing(const char *p, size_t len, size_t max, struct session_entry **out,
			   size_t *n, struct fault *f);

#endif
