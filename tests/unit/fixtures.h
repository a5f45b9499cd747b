/* fixtures.h: a settings file and a registry for the unit tests. */
#ifndef ISOBOX_FIXTURES_H
#define ISOBOX_FIXTURES_H

#include "../../conf/conf.h"
#include "../../registry/registry.h"
#include "../../sandbox/sandbox.h"

#define TEST_ID_PY "sha256:1111111111111111111111111111111111111111111111111111111111111111"

/* Load the repository's own conf/isobox.yaml and a two-language registry. */
void fixture_load(struct conf *c, struct registry *r);
/* The repository's conf/isobox.yaml with the first `from` replaced by
 * `to`; NULL if it has no `from`. The caller frees it. */
char *conf_variant(const char *from, const char *to);
/* A python job (registry r) with one file, app.py, and the args
 * "--flag", "$(rm -rf /)", "a b": 100 MiB, half a cpu, 32 processes. */
struct sandbox_job fixture_python_job(const struct registry *r);
/* Where arg is in an argv (-1: nowhere). */
int index_of(const struct strv *a, const char *arg);

#endif
