/*
 * store_volumes.h: the records of the tenants' volumes, kept in the store
 * (store.h). The bytes live elsewhere: an image per volume, made and
 * mounted by isobox-volumed (sandbox/volume.c); a record says which image
 * (its id) belongs to which tenant under which name, and in what state.
 *
 * A volume is "creating" from its record until its image is mounted,
 * "ready" after, "deleting" while its image goes: only a ready one is
 * mounted into runs.
 *
 * Ownership: records returned are the caller's (a plain struct; lists are
 * freed with free()).
 */
#ifndef ISOBOX_STORE_VOLUMES_H
#define ISOBOX_STORE_VOLUMES_H

#include "store.h"


/* Is name a volume name ([a-z0-9][a-z0-9_.-]*, at most 63)? */
bool volume_name_valid(const char *name);

/*
 * Record a new volume of tenant (state creating, a new random id in
 * out->id), within its share: at most max_count volumes, max_bytes in all
 * (0: no limit). 409 volume_exists, 403 quota_exceeded.
 */
bool store_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f);
/* Move it to a state ("ready", "deleting"); from: only if it is in that
 * one (NULL: any). 404 volume_not_found. */
bool store_volume_set_state(struct store *s, const char *tenant, const char *name, const char *from,
			    const char *to, struct volume *out, struct fault *f);
bool store_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		      struct fault *f);
bool store_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f);
/* Forget it (its image is gone). */
bool store_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f);

/*
 * Who uses a volume. A run, a session or a files call marks the volume in
 * use before any sandbox that mounts it is made, in one step with the check
 * that it is ready; a delete is begun only in one step with the check that
 * no one uses it. So a delete that comes first leaves it "deleting" (the
 * user is refused, 404), and one that comes after is refused (409
 * volume_busy): never a sandbox writing into a volume being removed.
 *
 * A mark names its owner (enum volume_user, store_types.h):
 *  - VOLUME_BY_WORKER, a worker's request (a run, a files call): owner is
 *    the worker process, process_id() ("PID.STARTTIME"). Released when the
 *    request's sandbox has ended; if the worker dies first, by its master's
 *    upkeep (the owner is gone); one older than any request
 *    (STORE_CLAIM_MAX_MS) lost its release, and goes too.
 *  - VOLUME_BY_SESSION, a session for its whole life: owner is its id.
 *    Released when it ends (DELETE, a failed create, the master's list of
 *    the sessions it ended); the upkeep also forgets one whose session it
 *    does not list once older than STORE_SESSION_GRACE_MS (a worker killed
 *    half-way through a create, a session that ended unseen).
 * With Redis a mark is a lease that its host's master renews: a dead
 * host's marks stop counting STORE_LEASE_MS after its last upkeep.
 */

/* Mark tenant's volume name in use by owner, if it is ready; out: its
 * record. 404 volume_not_found if there is none, or it is being made or
 * deleted. Marking it again (the same owner) is one mark. */
bool store_volume_use(struct store *s, const char *tenant, const char *name, enum volume_user by,
		      const char *owner, int64_t now_ms, struct volume *out, struct fault *f);
/* owner uses no volume any more: every mark it holds, made on this host,
 * goes. false: the store failed (logged), the mark stays. */
bool store_volume_release(struct store *s, const char *owner);
/* Move it to "deleting" (from any state: a delete that died half-way is
 * done again), only if no one uses it at now_ms, and mark it in use by
 * owner, the deleter (VOLUME_BY_WORKER): a second delete is refused while
 * this one runs, or until the upkeep sees its owner dead. 409 volume_busy
 * if someone uses it, 404 volume_not_found. out: its record. */
bool store_volume_delete_begin(struct store *s, const char *tenant, const char *name, const char *owner,
			       int64_t now_ms, struct volume *out, struct fault *f);
/* The master's upkeep of this host's marks: forget those whose owner is
 * over (volume_use_over, store_rules.h) and (Redis) renew the rest.
 * sessions: the ids of the host's sessions alive now; NULL if they could
 * not be listed (sessions' marks are then left as they are). */
void store_volume_uses_keep(struct store *s, const struct strv *sessions, int64_t now_ms);


#endif
