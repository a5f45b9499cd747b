/* reqlog.c: the request's log line (reqlog.h). */
#include "reqlog.h"
#include "encode.h"

#include <stdio.h>
#include <string.h>

void reqlog_begin(struct reqlog *l, bool json, const char *what)
{
	*l = (struct reqlog){.json = json};
	if (json) {
		l->obj = cJSON_CreateObject();
		cJSON_AddStringToObject(l->obj, "msg", what);
	} else {
		buf_printf(&l->line, "%s", what);
	}
}

/* A logfmt value as it is when it can be, else quoted: nothing a client
 * sends can start a field or a line of its own. */
static void logfmt_value(struct buf *b, const char *v)
{
	bool plain = true;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '"' || *p == '=' || *p == '\\')
			plain = false;
	if (plain) {
		buf_printf(b, "%s", v);
		return;
	}
	buf_printf(b, "\"");
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p == '"' || *p == '\\')
			buf_printf(b, "\\%c", *p);
		else if (*p < ' ' || *p == 0x7f)
			buf_printf(b, "\\x%02x", *p);
		else
			buf_printf(b, "%c", *p);
	}
	buf_printf(b, "\"");
}

void reqlog_str(struct reqlog *l, const char *key, const char *value)
{
	if (!value || !value[0])
		return;
	if (l->json) {
		/* Anything the client sent stays valid UTF-8 in the JSON. */
		json_add_bytes(l->obj, key, value, strlen(value));
		return;
	}
	buf_printf(&l->line, " %s=", key);
	logfmt_value(&l->line, value);
}

void reqlog_int(struct reqlog *l, const char *key, long long value)
{
	if (l->json)
		cJSON_AddNumberToObject(l->obj, key, (double)value);
	else
		buf_printf(&l->line, " %s=%lld", key, value);
}

void reqlog_flag(struct reqlog *l, const char *key, bool value)
{
	if (!value)
		return;
	if (l->json)
		cJSON_AddTrueToObject(l->obj, key);
	else
		buf_printf(&l->line, " %s=true", key);
}

char *reqlog_end(struct reqlog *l)
{
	char *line;
	if (l->json) {
		line = cJSON_PrintUnformatted(l->obj);
		if (!line)
			die("out of memory");
		cJSON_Delete(l->obj);
	} else {
		line = l->line.data ? l->line.data : xstrdup("");
	}
	*l = (struct reqlog){0};
	return line;
}
