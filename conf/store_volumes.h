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


#endif
