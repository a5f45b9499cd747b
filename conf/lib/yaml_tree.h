/*
 * yaml_tree.h: read a YAML file into a cJSON tree.
 *
 * Every loader (conf, registry, image lock) then validates plain JSON with
 * the same strict helpers the request parser uses (json.h). Plain scalars
 * that look like numbers, booleans or null become those; quoted scalars stay
 * strings. Anchors and aliases are refused: config never needs them, and
 * refusing them rules out "billion laughs" expansion.
 */
#ifndef ISOBOX_YAML_TREE_H
#define ISOBOX_YAML_TREE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Returns a tree the caller frees with cJSON_Delete, or NULL with err set. */
cJSON *yaml_load_file(const char *path, char *err, size_t errlen);
cJSON *yaml_load_string(const char *text, size_t len, char *err, size_t errlen);

#endif
