/*
 * volumes.h: /v1/volumes, each tenant's volumes (conf/store_volumes.h for
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

/* The tenant's ready volume named in rq->volume_name, if any, as the
 * job's (rq->job.volume); 404 volume_not_found. */
bool volumes_resolve(struct worker *w, struct request *rq);

#endif
