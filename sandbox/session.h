/* session.h: the inside of session.c, for its unit tests (the face is in sandbox.h). */
#ifndef ISOBOX_SANDBOX_SESSION_H
#define ISOBOX_SANDBOX_SESSION_H

#include "sandbox.h"

/* A step as the agent reads it (frame.h): "run" with the files, the
 * entry script's argv and stdin, or "cell" with the code and stdin. Pure. */
void session_step_request(const struct sandbox_job *job, bool kernel, const char *tag, struct buf *out);

#endif
