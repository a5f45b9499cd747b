/* fixtures.h: a settings file and a registry for the unit tests. */
#ifndef ISOBOX_FIXTURES_H
#define ISOBOX_FIXTURES_H

#include "../../conf/conf.h"
#include "../../registry/registry.h"

#define TEST_ID_PY "sha256:1111111111111111111111111111111111111111111111111111111111111111"

/* Load the repository's own conf/isobox.yaml and a two-language registry. */
void fixture_load(struct conf *c, struct registry *r);
/* Where arg is in an argv (-1: nowhere). */
int index_of(const struct strv *a, const char *arg);

#endif
