/* exec_cold.h: a cold run (exec_cold.c). */
#ifndef ISOBOX_SANDBOX_EXEC_COLD_H
#define ISOBOX_SANDBOX_EXEC_COLD_H

#include "sandbox.h"

/* Run the job in a sandbox that does not exist yet: one `docker run`. */
bool exec_cold(const struct sandbox *sb, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

#endif
