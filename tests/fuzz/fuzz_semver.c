/* libFuzzer: npm version ranges (fcgi/semver.c), as Piston requests send
 * them. The input is "version\nrange" (no newline: the range alone, against
 * 3.11.2). Whatever the bytes, it answers without reading outside them,
 * and spaces around the range or the range said twice change nothing. */
#include "../../conf/lib/base.h"
#include "../../fcgi/semver.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size); /* up to a NUL, as C strings end */
	char *nl = strchr(text, '\n');
	const char *version = nl ? text : "3.11.2", *range = nl ? nl + 1 : text;
	if (nl)
		*nl = '\0';
	bool got = semver_satisfies(version, range);
	char *padded = xasprintf(" %s\t", range), *twice = xasprintf("%s || %s", range, range);
	/* The bound applies to the whole text: compare only what fits twice. */
	if (strlen(twice) <= SEMVER_MAX_RANGE &&
	    (got != semver_satisfies(version, padded) || got != semver_satisfies(version, twice)))
		abort();
	free(padded);
	free(twice);
	free(text);
	return 0;
}
