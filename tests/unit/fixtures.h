/* fixtures.h: a settings file and a registry for the unit tests. */
#ifndef ISOBOX_FIXTURES_H
#define ISOBOX_FIXTURES_H

#include "../../conf/conf.h"
#include "../../registry/registry.h"
#include "../../sandbox/sandbox.h"

#include <sys/types.h>

#define TEST_ID_PY "sha256:1111111111111111111111111111111111111111111111111111111111111111"

/* Load the repository's own conf/isobox.yaml and a two-language registry. */
void fixture_load(struct conf *c, struct registry *r);
/* The repository's conf/isobox.yaml with the first `from` replaced by
 * `to`; NULL if it has no `from`. The caller frees it. */
char *conf_variant(const char *from, const char *to);
/* A python job (registry r) with one file, app.py, and the args
 * "--flag", "$(rm -rf /)", "a b": 100 MiB, half a cpu, 32 processes. */
struct sandbox_job fixture_python_job(const struct registry *r);
/* The docker CLI's argv of each kind of sandbox: its spec (spec.h)
 * rendered by spec_argv, as a sandbox started by a client gets it. */
void argv_cold(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
	       const char *src_dir, struct strv *a);
void argv_warm(const struct conf *c, const struct language *l, const struct limits *lim, const char *name,
	       const char *owner, bool own_cgroup, struct strv *a);
void argv_session(const struct conf *c, const struct language *l, const struct session *s, const char *owner,
		  struct strv *a);
void argv_outputs(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
		  struct strv *a);
/* dir/name with this text and mode (made anew; fatal if it cannot be). */
void fixture_write(const char *dir, const char *name, const char *text, mode_t mode);
/* A stand-in dockerd's socket: path bound and listening (-1: it could
 * not be). */
int fixture_unix_listener(const char *path, int backlog);
/*
 * A stand-in dockerd: dir (a mkdtemp template, made here) holds its
 * docker.sock, served by a child process that runs serve(listener,
 * log_fd) until it is killed. Returns that child's pid (-1: none), with
 * *sock the socket's path (the caller's to free) and *log_fd the read end
 * of what the child writes to its log_fd.
 */
pid_t fixture_dockerd(char *dir, void (*serve)(int listener, int log_fd), char **sock, int *log_fd);
/* Where arg is in an argv (-1: nowhere). */
int index_of(const struct strv *a, const char *arg);

#endif
