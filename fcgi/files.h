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

struct request;

void files_answer_list(struct worker *w, struct request *rq, const struct files_place *p);
void files_answer_get(struct worker *w, struct request *rq, const struct files_place *p, const char *path);
void files_answer_put(struct worker *w, struct request *rq, const struct files_place *p, const char *path);
void files_answer_delete(struct worker *w, struct request *rq, const struct files_place *p, const char *path);

#endif
