/* libFuzzer: siteverify's answer (fcgi/turnstile.h, turnstile_judge). The
 * body comes over the network: whatever its bytes, the judge passes only
 * a success for the demo's own site, and otherwise says which refusal. */
#include "../../fcgi/turnstile.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct demo d = {.hostname = "demo.example.org"};
	struct fault f = {0};
	/* The first byte picks the HTTP status: mostly 200, which parses. */
	long status = size && data[0] == 'x' ? 502 : 200;
	bool ok = turnstile_judge(&d, status, (const char *)data, size, &f);
	if (!ok && f.code != E_TURNSTILE_FAILED && f.code != E_TURNSTILE_UNAVAILABLE)
		abort();
	if (!ok)
		return 0;
	/* A pass: the answer says success, for our site, under a 200. */
	cJSON *o = cJSON_ParseWithLength((const char *)data, size);
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(o, "hostname");
	if (f.code || status != 200 || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "success")) ||
	    !cJSON_IsString(host) || strcasecmp(host->valuestring, d.hostname))
		abort();
	cJSON_Delete(o);
	return 0;
}
