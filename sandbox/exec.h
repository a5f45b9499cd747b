/* exec.h: one program run in a sandbox, supervised (exec.c). */
#ifndef ISOBOX_SANDBOX_EXEC_H
#define ISOBOX_SANDBOX_EXEC_H

#include "sandbox.h"

/* Run the job in a sandbox that does not exist yet: one `docker run`. */
bool exec_cold(const struct sandbox *sb, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

#endif
