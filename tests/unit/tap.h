/*
 * tap.h: a tiny TAP producer. Each check prints "ok N - what" or
 * "not ok N - what"; main prints the plan and "N passed, M failed".
 */
#ifndef ISOBOX_TAP_H
#define ISOBOX_TAP_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

extern int tap_passed, tap_failed;

#define ok(cond, ...)                                                        \
	do {                                                                 \
		bool ok_ = (cond);                                           \
		printf("%sok %d - ", ok_ ? "" : "not ", tap_passed + tap_failed + 1); \
		printf(__VA_ARGS__);                                         \
		printf("\n");                                                \
		if (ok_)                                                     \
			tap_passed++;                                        \
		else {                                                       \
			tap_failed++;                                        \
			printf("#   at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                            \
	} while (0)

static inline bool tap_streq(const char *a, const char *b) { return a && b && !strcmp(a, b); }
#define is_str(a, b, ...) ok(tap_streq((a), (b)), __VA_ARGS__)

void test_conf(void);
void test_registry(void);
void test_request(void);
void test_argv(void);
void test_launch(void);
void test_warm(void);
void test_session(void);
void test_result(void);
void test_sse(void);
void test_egress(void);
void test_access(void);
void test_metrics(void);
void test_assets(void);
void test_decoder(void);
void test_deadline(void);
void test_docker_http(void);
void test_tenants(void);
void test_store(void);
void test_semver(void);
void test_piston(void);
void test_runc(void);

#endif
