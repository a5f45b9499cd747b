/* docker.h: bounded docker commands on one container (docker.c). */
#ifndef ISOBOX_SANDBOX_DOCKER_H
#define ISOBOX_SANDBOX_DOCKER_H

#include "sandbox.h"
#include <cjson/cJSON.h>
#include <sys/types.h>
#include <time.h>

/*
 * The kill of a container, in the background: asked of dockerd's API (fd,
 * its answer not read yet) where its socket can be reached, else a `docker
 * kill` process (pid). Both -1: neither could be had (logged).
 * docker_kill_wait reads the answer or reaps the process, by deadline.
 */
struct docker_kill {
	int fd;
	pid_t pid;
};
#define DOCKER_KILL_NONE ((struct docker_kill){.fd = -1, .pid = -1})
struct docker_kill docker_kill_start(const struct conf *c, const char *name);
bool docker_kill_started(const struct docker_kill *k);
void docker_kill_wait(struct docker_kill *k, int64_t deadline);
/* rm --force, in the background: a process that its parent reaps (-1:
 * none, logged). removal.h waits for removals; the master starts these and
 * its reaper collects them. */
pid_t docker_remove_start(const struct conf *c, const char *name);
/* rm --force through dockerd's API: the request sent, its connection's fd
 * (-1: none, logged); done reads the answer by deadline and closes fd:
 * true if the container is gone (removal.c waits for them). */
int docker_remove_send(const struct conf *c, const char *name);
bool docker_remove_done(int fd, int64_t deadline);
/* Our own names and ids ([a-z0-9-]): nothing to escape in a path. */
bool docker_plain_name(const char *name);
/*
 * One request to dockerd's API on its unix socket, HTTP/1.0 (dockerd closes
 * the connection after its answer), the answer read whole into reply by
 * deadline: its HTTP status; 0 when no whole answer came in time; -1 when
 * the socket cannot be reached (errno).
 */
#define API_REPLY_MAX (1 << 20)
int docker_api(const struct conf *c, const char *request, int64_t deadline, struct buf *reply);
/* The status of an HTTP/1.x answer's first line; -1 if it is not one. */
int docker_http_status(const char *reply, size_t len);
/* The JSON body of a whole answer of that status; NULL if it has none.
 * The caller cJSON_Deletes it. */
cJSON *docker_reply_json(const struct buf *reply, int status);
/* Where an HTTP answer's body starts, after its headers; NULL: no end of headers. */
const char *docker_http_body(const char *reply, size_t len);
/* State.ExitCode and State.OOMKilled of a container's record (inspect's JSON). */
bool docker_state_of(const cJSON *record, int *code, bool *oom);
bool docker_inspect(const struct conf *c, const char *name, int64_t deadline, int *code, bool *oom);
bool docker_oom_seen(const struct conf *c, const char *name, time_t since, int64_t deadline);
/* Why a sandbox did not start, from docker's own words: image missing,
 * docker down, the start timeout, or else a failure with those words. */
bool docker_start_failed(const struct conf *c, const char *lang, const char *why, bool timed_out,
			 struct fault *f);
/* The container's full ID (64 hex), for its cgroup. */
bool docker_container_id(const struct conf *c, const char *name, int64_t deadline, char *out, size_t n);

#endif
