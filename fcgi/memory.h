/*
 * memory.h: /v1/memory, each tenant's key-value store (conf/store/store.h).
 *
 *   PUT    /v1/memory/{key}   the body is the value; its Content-Type is kept;
 *                             ?ttlSeconds=N; If-Match / If-None-Match: *
 *   GET    /v1/memory/{key}   the value, its Content-Type and ETag (HEAD too)
 *   DELETE /v1/memory/{key}   If-Match
 *   GET    /v1/memory?prefix=&limit=&cursor=   the keys, in byte order
 */
#ifndef ISOBOX_MEMORY_H
#define ISOBOX_MEMORY_H

#include "worker.h"

struct request;

void memory_put(struct worker *w, struct request *rq);
void memory_get(struct worker *w, struct request *rq);
void memory_delete(struct worker *w, struct request *rq);
void memory_list(struct worker *w, struct request *rq);

#endif
