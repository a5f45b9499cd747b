/* Unit tests: pure logic only, no docker, no network. */
#include "tap.h"
#include "../../conf/lib/base.h"
#include <cjson/cJSON.h>

int tap_passed, tap_failed;

static struct {
	void (*fn)(void);
	const char *name;
} tests[64];
static int n_tests;

void tap_register(void (*fn)(void), const char *name)
{
	if (n_tests == (int)(sizeof tests / sizeof tests[0])) {
		fprintf(stderr, "unit: more than %d test entry points; raise the table's size (%s)\n",
			n_tests, name);
		exit(2);
	}
	tests[n_tests].fn = fn;
	tests[n_tests++].name = name;
}

int main(void)
{
	cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = xmalloc, .free_fn = free});
	for (int i = 0; i < n_tests; i++)
		tests[i].fn();
	printf("1..%d\n", tap_passed + tap_failed);
	printf("%d passed, %d failed\n", tap_passed, tap_failed);
	return tap_failed ? 1 : 0;
}
