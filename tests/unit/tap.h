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

/*
 * A test file's entry point: UNIT_TEST(test_name) { ... } registers it
 * before main runs (a constructor), so a new file is the only edit a new
 * test needs; main runs them in the order they were linked.
 */
void tap_register(void (*fn)(void), const char *name);
#define UNIT_TEST(fn)                                                        \
	static void fn(void);                                                \
	__attribute__((constructor)) static void fn##_register(void)         \
	{                                                                    \
		tap_register(fn, #fn);                                       \
	}                                                                    \
	static void fn(void)


#endif
