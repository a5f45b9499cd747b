/*
 * volume.h: a volume's image, through isobox-volumed (sandbox/volumed/),
 * the root daemon that makes, mounts and removes them; the face is in
 * sandbox.h.
 */
#ifndef ISOBOX_SANDBOX_VOLUME_H
#define ISOBOX_SANDBOX_VOLUME_H

#include "sandbox.h"
#include "agent_io.h"

/* Ask isobox-volumed `line` ("create <id> <bytes> <backend>\n"...): its answer after
 * "ok" in out (out_len > 0), or false with why (busy: E_VOLUME_BUSY). */
bool volume_ask(const struct conf *c, const char *line, char *out, size_t out_len, struct fault *f);

/* One file call to an agent in a sandbox of its own with volume id at
 * /memory (l's image), started and removed for it; by deadline. */
bool volume_agent_call(const struct conf *c, const struct language *l, const char *id,
		       struct agent_call *call, int64_t deadline, struct fault *f);

#endif
