/*
 * volume.h: a volume's image, through isobox-volumed (sandbox/volumed/),
 * the root daemon that makes, mounts and removes them; the face is in
 * sandbox.h.
 */
#ifndef ISOBOX_SANDBOX_VOLUME_H
#define ISOBOX_SANDBOX_VOLUME_H

#include "sandbox.h"

/* Ask isobox-volumed `line` ("create <id> <bytes>\n"...): its answer after
 * "ok" in out (out_len > 0), or false with why (busy: E_VOLUME_BUSY). */
bool volume_ask(const struct conf *c, const char *line, char *out, size_t out_len, struct fault *f);

#endif
