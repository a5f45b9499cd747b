/* create_body.h: a `docker run` argv as dockerd's create body (create_body.c). */
#ifndef ISOBOX_SANDBOX_CREATE_BODY_H
#define ISOBOX_SANDBOX_CREATE_BODY_H

#include "sandbox.h"
#include <cjson/cJSON.h>

/*
 * The body of POST /containers/create that the docker CLI would send for
 * this `docker run` argv (argv.c writes it: the one list of a run's flags),
 * and the container's name (*name points into argv). Only the flags argv.c
 * writes are known: any other is refused (false, with the reason in why),
 * so that a flag added there cannot be dropped here unnoticed. A seccomp
 * profile is read from its file, as the CLI does. *body is the caller's to
 * cJSON_Delete.
 */
bool launch_create_body(char *const argv[], cJSON **body, const char **name, struct buf *why);

#endif
