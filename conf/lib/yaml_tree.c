/* yaml_tree.c: YAML (libyaml event stream) to cJSON. */
#include "yaml_tree.h"
#include "base.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 32

struct loader {
	yaml_parser_t parser;
	char *err;
	size_t errlen;
};

static bool load_fail(struct loader *l, const char *what, const yaml_mark_t *m)
{
	snprintf(l->err, l->errlen, "%s at line %zu column %zu", what,
		 m->line + 1, m->column + 1);
	return false;
}

/* Plain scalars are typed the YAML 1.2 core-schema way. */
static cJSON *scalar(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return cJSON_CreateString(s);
	if (len == 0 || !strcmp(s, "~") || !strcmp(s, "null"))
		return cJSON_CreateNull();
	if (!strcmp(s, "true"))
		return cJSON_CreateTrue();
	if (!strcmp(s, "false"))
		return cJSON_CreateFalse();
	if (strchr("-+.0123456789", s[0])) {
		char *end;
		errno = 0;
		double d = strtod(s, &end);
		if (errno == 0 && end == s + len && isfinite(d))
			return cJSON_CreateNumber(d);
	}
	return cJSON_CreateString(s);
}

static bool next(struct loader *l, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&l->parser, ev)) {
		snprintf(l->err, l->errlen, "%s at line %zu column %zu",
			 l->parser.problem ? l->parser.problem : "YAML syntax error",
			 l->parser.problem_mark.line + 1,
			 l->parser.problem_mark.column + 1);
		return false;
	}
	return true;
}

/* Build the node that starts with *ev (already parsed) into *out. */
static bool node(struct loader *l, yaml_event_t *ev, int depth, cJSON **out)
{
	*out = NULL;
	if (depth > MAX_DEPTH)
		return load_fail(l, "nesting too deep", &ev->start_mark);
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return load_fail(l, "aliases are not supported", &ev->start_mark);
	case YAML_SCALAR_EVENT:
		if (ev->data.scalar.anchor)
			return load_fail(l, "anchors are not supported", &ev->start_mark);
		*out = scalar(ev);
		return true;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		break;
	default:
		return load_fail(l, "unexpected YAML event", &ev->start_mark);
	}
	bool is_map = ev->type == YAML_MAPPING_START_EVENT;
	yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	cJSON *c = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
	for (;;) {
		yaml_event_t kev, vev;
		if (!next(l, &kev))
			goto bad;
		if (kev.type == end) {
			yaml_event_delete(&kev);
			break;
		}
		cJSON *child;
		if (!is_map) {
			bool ok = node(l, &kev, depth + 1, &child);
			yaml_event_delete(&kev);
			if (!ok)
				goto bad;
			cJSON_AddItemToArray(c, child);
			continue;
		}
		if (kev.type != YAML_SCALAR_EVENT) {
			load_fail(l, "mapping keys must be plain text", &kev.start_mark);
			yaml_event_delete(&kev);
			goto bad;
		}
		const char *key = (const char *)kev.data.scalar.value;
		if (cJSON_GetObjectItemCaseSensitive(c, key)) {
			load_fail(l, "duplicate key", &kev.start_mark);
			yaml_event_delete(&kev);
			goto bad;
		}
		if (!next(l, &vev)) {
			yaml_event_delete(&kev);
			goto bad;
		}
		bool ok = node(l, &vev, depth + 1, &child);
		yaml_event_delete(&vev);
		if (ok)
			cJSON_AddItemToObject(c, key, child);
		yaml_event_delete(&kev);
		if (!ok)
			goto bad;
	}
	*out = c;
	return true;
bad:
	cJSON_Delete(c);
	return false;
}

static cJSON *load(struct loader *l)
{
	yaml_event_t ev;
	cJSON *root = NULL;
	/* STREAM-START, DOCUMENT-START, the root node, DOCUMENT-END. */
	for (int i = 0; i < 2; i++) {
		if (!next(l, &ev))
			return NULL;
		yaml_event_type_t t = ev.type;
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT) {
			snprintf(l->err, l->errlen, "empty document");
			return NULL;
		}
	}
	if (!next(l, &ev))
		return NULL;
	bool ok = node(l, &ev, 0, &root);
	yaml_event_delete(&ev);
	if (!ok)
		return NULL;
	if (!next(l, &ev)) {
		cJSON_Delete(root);
		return NULL;
	}
	yaml_event_delete(&ev);
	if (!next(l, &ev)) {
		cJSON_Delete(root);
		return NULL;
	}
	bool more = ev.type != YAML_STREAM_END_EVENT;
	yaml_event_delete(&ev);
	if (more) {
		snprintf(l->err, l->errlen, "only one YAML document is allowed");
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

cJSON *yaml_load_string(const char *text, size_t len, char *err, size_t errlen)
{
	struct loader l = {.err = err, .errlen = errlen};
	if (!yaml_parser_initialize(&l.parser))
		die("out of memory");
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)text, len);
	cJSON *root = load(&l);
	yaml_parser_delete(&l.parser);
	return root;
}

cJSON *yaml_load_file(const char *path, char *err, size_t errlen)
{
	struct buf text = {0};
	char inner[300];
	if (!read_file(path, 1 << 20, &text, err, errlen))
		return NULL;
	cJSON *root = yaml_load_string(text.data, text.len, inner, sizeof inner);
	if (!root)
		snprintf(err, errlen, "%s: %s", path, inner);
	buf_free(&text);
	return root;
}
