/* docker_list.h: the containers dockerd has (docker_list.c). */
#ifndef ISOBOX_SANDBOX_DOCKER_LIST_H
#define ISOBOX_SANDBOX_DOCKER_LIST_H

#include "sandbox.h"

/*
 * A container as dockerd lists it: the fields the reaper, the session
 * sweep and the volume check ask for (docker_list.c). Labels absent: "".
 */
struct docker_listed {
	char id[65];      /* the full id */
	char name[128];   /* its first name, without the leading "/" */
	char state[16];   /* created, running, exited, dead, removing, ... */
	char kind[16];    /* label isobox.kind */
	char owner[64];   /* label isobox.owner: PID.STARTTIME of its worker */
	char session[80]; /* label isobox.session */
};
struct docker_list {
	struct docker_listed *v;
	size_t n;
};
/*
 * The containers that match every filter (a NULL-terminated list of
 * `docker ps --filter` words, "label=K=V" or "volume=PATH"; NULL: all),
 * stopped ones too when all: through dockerd's API, or the docker CLI when
 * the API gives no list. false when neither answered by the deadline; *out
 * is the caller's to docker_list_free either way.
 */
bool docker_list(const struct conf *c, const char *const *filters, bool all, int64_t deadline,
		 struct docker_list *out);
void docker_list_free(struct docker_list *l);
/* The two answers it reads, appended to *out: the API's JSON array (false
 * if it is not one), and the CLI's lines (it cuts text up). */
bool docker_list_parse_json(const char *json, size_t len, struct docker_list *out);
bool docker_list_parse_cli(char *text, struct docker_list *out);


#endif
