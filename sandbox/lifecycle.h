/* lifecycle.h: one sandbox's life, start to end (lifecycle.c; sandbox.h
 * says what a sandbox is). */
#ifndef ISOBOX_SANDBOX_LIFECYCLE_H
#define ISOBOX_SANDBOX_LIFECYCLE_H

#include "sandbox.h"

/* Check that the job can run here (image built, egress firewall ready) and
 * write its code dir. 5xx when it cannot. */
bool sandbox_create(const struct conf *c, const struct sandbox_job *job, struct sandbox *sb,
		    struct fault *f);
/*
 * Run the job's program in sb. Returns false (with a fault, 5xx) only when
 * the sandbox could not run the program at all; whatever the program did,
 * it returns true and res says what happened.
 */
bool sandbox_exec(struct sandbox *sb, const struct sandbox_job *job, const struct sandbox_sink *sink,
		  struct sandbox_result *res, struct fault *f);
void sandbox_destroy(struct sandbox *sb);

#endif
