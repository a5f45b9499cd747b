/* outputs.h: a cold run that returns the files it made (outputs.c). */
#ifndef ISOBOX_SANDBOX_OUTPUTS_H
#define ISOBOX_SANDBOX_OUTPUTS_H

#include "sandbox.h"

/*
 * Run a job that asks for outputs in a new sandbox sb: its agent writes
 * the code into /box and runs the program (exec_session); then the files
 * under /box that match the job's globs are read through the agent, up to
 * request.maxOutputFiles and request.maxOutputBytes (res->outputs).
 */
bool exec_outputs(const struct sandbox *sb, const struct sandbox_job *job,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

/* Does the relative path match one of the globs (fnmatch: '*' stops at
 * '/', a leading '.' must be named)? Pure. */
bool outputs_match(const struct sandbox_job *job, const char *path);

#endif
