/*
 * files.h: the files routes' answers, for a session's /workspace or a
 * volume's /memory (a files_place, sandbox.h):
 *
 *   GET    .../files?path=DIR   the directory's entries (name, type, size, mtime)
 *   GET    .../files/{path}     the file's bytes (HEAD too)
 *   PUT    .../files/{path}     the body is the file (201)
 *   DELETE .../files/{path}     a file, or a directory with all it holds (204)
 */
#ifndef ISOBOX_FILES_H
#define ISOBOX_FILES_H

#include "worker.h"
#include "../sandbox/sandbox.h"
#include <cjson/cJSON.h>

struct request;

void files_answer_list(struct worker *w, struct request *rq, const struct files_place *p);
void files_answer_get(struct worker *w, struct request *rq, const struct files_place *p, const char *path);
void files_answer_put(struct worker *w, struct request *rq, const struct files_place *p, const char *path);
void files_answer_delete(struct worker *w, struct request *rq, const struct files_place *p, const char *path);

/* The same without answering (for /mcp's tools): false or NULL with
 * rq->fault. The listing of dir ("" or NULL or ".": the top), the caller's. */
cJSON *files_listing(struct worker *w, struct request *rq, const struct files_place *p, const char *dir);
bool files_read(struct worker *w, struct request *rq, const struct files_place *p, const char *path,
		struct buf *data);
bool files_write(struct worker *w, struct request *rq, const struct files_place *p, const char *path,
		 const char *data, size_t len);

#endif
