/* Unit tests: pure logic only, no docker, no network. */
#include "tap.h"
#include "../../conf/lib/base.h"
#include <cjson/cJSON.h>

int tap_passed, tap_failed;

int main(void)
{
	cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = xmalloc, .free_fn = free});
	test_conf();
	test_registry();
	test_request();
	test_argv();
	test_launch();
	test_warm();
	test_session();
	test_result();
	test_sse();
	test_egress();
	test_access();
	test_metrics();
	test_assets();
	test_decoder();
	test_deadline();
	test_docker_http();
	test_tenants();
	test_store();
	test_semver();
	test_piston();
	test_runc();
	printf("1..%d\n", tap_passed + tap_failed);
	printf("%d passed, %d failed\n", tap_passed, tap_failed);
	return tap_failed ? 1 : 0;
}
