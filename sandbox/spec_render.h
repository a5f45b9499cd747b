/* spec_render.h: a container spec as dockerd's create body and as the
 * docker CLI's argv (spec_render.c). */
#ifndef ISOBOX_SANDBOX_SPEC_RENDER_H
#define ISOBOX_SANDBOX_SPEC_RENDER_H

#include "spec.h"
#include <cjson/cJSON.h>

/*
 * Pure but for the seccomp profile, which the body carries whole, as the
 * CLI sends it: it is read from its file (not through a symbolic link);
 * false, with the reason, if it cannot be. *body is the caller's to
 * cJSON_Delete.
 */
void spec_argv(const struct container_spec *s, const char *docker, struct strv *argv);
bool spec_create_body(const struct container_spec *s, cJSON **body, struct buf *why);

#endif
