/* libFuzzer: the YAML loaders (settings, registry, image lock). Input is
 * tried as each of them; nothing may crash or leak. */
#include "../../conf/conf.h"
#include "../../conf/lib/yaml_tree.h"
#include "../../registry/registry.h"

#include <string.h>

static const char registry_yaml[] =
	"languages:\n  - name: python\n    version: \"3.11\"\n    image: python\n"
	"    file: main.py\n    run: [python3, \"{file}\"]\n"
	"    limits: {memoryBytes: 1000000, cpus: 1, pids: 10, outputBytes: 100, wallTimeMs: 1000}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char err[512];
	struct conf c;
	struct registry r;
	cJSON *tree = yaml_load_string(text, size, err, sizeof err);
	cJSON_Delete(tree);
	if (conf_parse(text, size, "/base", &c, err, sizeof err))
		conf_free(&c);
	if (registry_parse(text, size, NULL, 0, &r, err, sizeof err))
		registry_free(&r);
	if (registry_parse(registry_yaml, strlen(registry_yaml), text, size, &r, err, sizeof err))
		registry_free(&r);
	return 0;
}
