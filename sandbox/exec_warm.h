/* exec_warm.h: a run in a warm sandbox (exec_warm.c). */
#ifndef ISOBOX_SANDBOX_EXEC_WARM_H
#define ISOBOX_SANDBOX_EXEC_WARM_H

#include "sandbox.h"

/*
 * Run the job in a warm sandbox the worker took (warm.c). When the agent
 * never started the program, false with *go_cold: nothing ran, and the
 * caller may run the job cold.
 */
struct warm_lease;
bool exec_warm(const struct sandbox *sb, struct warm_lease *lease, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f,
	       bool *go_cold);

#endif
