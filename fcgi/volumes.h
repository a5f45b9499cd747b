/*
 * volumes.h: /v1/volumes, each tenant's volumes (conf/store/store.h for
 * the records, sandbox.h Volumes for the images), and finding the volume
 * a run or a session asks for.
 *
 *   POST   /v1/volumes          {"name", "sizeBytes"} -> 201
 *   GET    /v1/volumes          the tenant's
 *   GET    /v1/volumes/{name}   one, with the bytes it uses
 *   DELETE /v1/volumes/{name}   every byte gone; 409 while mounted
 *   GET/PUT/DELETE /v1/volumes/{name}/files/{path}, GET .../files?path=
 */
#ifndef ISOBOX_VOLUMES_H
#define ISOBOX_VOLUMES_H

#include "worker.h"

struct request;

void volumes_create(struct worker *w, struct request *rq);
void volumes_list(struct worker *w, struct request *rq);
void volumes_get(struct worker *w, struct request *rq);
void volumes_delete(struct worker *w, struct request *rq);
/* Its files (files.h), through an agent in a sandbox of their own. */
void volumes_files_list(struct worker *w, struct request *rq);
void volumes_file_get(struct worker *w, struct request *rq);
void volumes_file_put(struct worker *w, struct request *rq);
void volumes_file_delete(struct worker *w, struct request *rq);

/*
 * The tenant's ready volume named in rq->volume_name, if any, as the job's
 * (rq->job.volume), marked in use in the store (conf/store/store.h) so
 * that it is not deleted under the sandbox that mounts it: by this worker
 * for this request (session NULL), or by the session of that id for its
 * life. 404 volume_not_found (also while it is being made or deleted),
 * 421 volume_elsewhere. A mark taken stays in rq until volumes_release
 * (admin_done calls it at the request's end, and job.c once the run's
 * sandbox has ended) or volumes_hand_over.
 */
bool volumes_take(struct worker *w, struct request *rq, const char *session);
/* rq's mark goes (if it holds one). */
void volumes_release(struct worker *w, struct request *rq);
/* The session rq made holds rq's mark from now on: it goes when the
 * session ends (sessions.c, pool.c), not with the request. */
void volumes_hand_over(struct request *rq);

#endif
