/* argv.h: the docker command lines of every kind of sandbox (argv.c). */
#ifndef ISOBOX_SANDBOX_ARGV_H
#define ISOBOX_SANDBOX_ARGV_H

#include "sandbox.h"

/*
 * The docker argv for one run: every hardening flag, the image by ID, then
 * the program's argv. Pure: no I/O (unit-tested).
 */
void sandbox_docker_argv(const struct conf *c, const struct sandbox_job *job,
			 const char *container, const char *owner, const char *src_dir,
			 struct strv *argv);

/* The argv of a warm sandbox: the same hardening, the agent as command;
 * own_cgroup: started in a cgroup of its own named as the container
 * (cgroup.h), which holds its CPU limit. Pure. */
void sandbox_warm_argv(const struct conf *c, const struct language *l, const struct limits *lim,
		       const char *container, const char *owner, bool own_cgroup, struct strv *argv);

/* The docker argv of a session's sandbox, and of one step's command. Pure. */
void sandbox_session_argv(const struct conf *c, const struct language *l, const struct session *s,
			  const char *owner, struct strv *argv);
void sandbox_step_argv(const struct sandbox_job *job, struct strv *argv);
/* A volume's files: the agent alone, the volume at /memory. Pure. */
void sandbox_volume_argv(const struct conf *c, const struct language *l, const char *id,
			 const char *container, const char *owner, struct strv *argv);
/* A cold run with outputs: the agent, not the entry script, in /box. Pure. */
void sandbox_outputs_argv(const struct conf *c, const struct sandbox_job *job, const char *container,
			  const char *owner, struct strv *argv);

#endif
