/*
 * reqlog.h: the one line each request writes to the log (reqlog.c; pure,
 * unit-tested). Fields are added in order and written as logfmt (key=value,
 * a value quoted when it holds a space, a quote, an = or a byte that is not
 * printable ASCII) or, with pool.requestLog: json, as one JSON object.
 * Either way the log's own prefix (time, pid) comes first.
 *
 * Ownership: the reqlog owns its line until reqlog_end hands it over.
 */
#ifndef ISOBOX_REQLOG_H
#define ISOBOX_REQLOG_H

#include "../conf/lib/base.h"
#include <cjson/cJSON.h>

struct reqlog {
	bool json;
	struct buf line; /* logfmt */
	cJSON *obj;      /* json */
};

/* Begin a line whose message is what ("request"). */
void reqlog_begin(struct reqlog *l, bool json, const char *what);
/* key=value; a NULL or empty value adds nothing (the field is unknown). */
void reqlog_str(struct reqlog *l, const char *key, const char *value);
void reqlog_int(struct reqlog *l, const char *key, long long value);
/* key=true, and only when true: flags that are rare. */
void reqlog_flag(struct reqlog *l, const char *key, bool value);
/* The line, without its newline (the caller frees it). */
char *reqlog_end(struct reqlog *l);

#endif
