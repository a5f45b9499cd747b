/*
 * npm version ranges (fcgi/semver.c). Every expectation below is what
 * node-semver 7.3.5 (the one Piston uses) answers for satisfies(version,
 * range); the non-semver installed versions ("1.20") are ours, read
 * leniently where npm would throw.
 */
#include "tap.h"
#include "../../conf/lib/base.h"
#include "../../fcgi/semver.h"

#include <stdlib.h>

struct semver_case {
	const char *version, *range;
	bool want;
};

/* Piston's own examples, with Python 3.12.0, 3.10.0, 3.9.4 and 2.7.18
 * installed: which of them each range takes (Piston picks the highest). */
static const struct {
	const char *range, *picks; /* "" : none, "runtime is unknown" */
} piston_examples[] = {
	{"*", "3.12.0"}, {"x", "3.12.0"}, {"X", "3.12.0"}, {"*.*", "3.12.0"}, {" * ", "3.12.0"},
	{"3", "3.12.0"}, {"3.x", "3.12.0"}, {"3.*", "3.12.0"}, {"3.X", "3.12.0"}, {">=3", "3.12.0"},
	{"^3.10", "3.12.0"}, {"~3.10", "3.10.0"}, {"3.10", "3.10.0"}, {"3.10.x", "3.10.0"},
	{"3.10.0", "3.10.0"}, {"=3.10.0", "3.10.0"}, {"v3.10.0", "3.10.0"}, {" 3.10.0 ", "3.10.0"},
	{"3.10.0+build", "3.10.0"}, {"3.10.0 || 2.7.18", "3.10.0"}, {"3 - 3.11", "3.10.0"},
	{"2", "2.7.18"}, {"<3", "2.7.18"}, {"~3.9", "3.9.4"}, {">=3.9 <3.10", "3.9.4"},
	{"latest", ""}, {"abc", ""}, {"3.10.0.1", ""}, {"3.10.0-1", ""}, {"4", ""}, {">3.12.0", ""},
};

static const struct semver_case cases[] = {
	/* X-ranges and plain versions */
	{"3.11.2", "", true}, {"3.11.2", "3.11", true}, {"3.11.2", "3.11.x", true},
	{"3.11.2", "3.11.2", true}, {"3.11.2", "3.11.3", false}, {"3.11.2", "3.1", false},
	{"3.11.2", "x.1.9", true}, {"3.11.2", "3.x.9", true}, {"3.11.2", "=3", true},
	{"3.11.2", "v3", true}, {"3.11.2", "3.11.2+any.build-1", true},
	/* operators, and X beside them */
	{"3.11.2", ">3", false}, {"3.11.2", ">2", true}, {"3.11.2", ">3.10", true},
	{"3.11.2", ">3.11", false}, {"3.11.2", ">=3.11", true}, {"3.11.2", "<3.11", false},
	{"3.11.2", "<3.12", true}, {"3.11.2", "<=3.11", true}, {"3.11.2", "<=3.10", false},
	{"3.11.2", ">3.11.1", true}, {"3.11.2", "<3.11.2", false}, {"3.11.2", "<=3.11.2", true},
	{"3.11.2", ">*", false}, {"3.11.2", "<*", false}, {"3.11.2", ">=*", true}, {"3.11.2", "<=*", true},
	{"3.11.2", ">= 3.11", true}, {"3.11.2", "> 3.11", false},
	/* tilde and caret */
	{"3.11.2", "~3", true}, {"3.11.2", "~3.11.1", true}, {"3.11.2", "~3.10.9", false},
	{"3.11.2", "~>3.11", true}, {"3.11.2", "~ 3.11", true}, {"3.11.2", "~*", true},
	{"3.11.2", "^3", true}, {"3.11.2", "^3.12", false}, {"3.11.2", "^3.11.3", false},
	{"3.11.2", "^2", false}, {"3.11.2", "^ 3.1", true}, {"3.11.2", "^*", true},
	{"0.2.5", "^0.2.3", true}, {"0.3.0", "^0.2.3", false}, {"0.0.3", "^0.0.3", true},
	{"0.0.4", "^0.0.3", false}, {"0.0.9", "^0.0", true}, {"0.1.0", "^0.0", false},
	{"0.9.9", "^0", true}, {"1.0.0", "^0", false},
	/* hyphen ranges */
	{"3.11.2", "3.11 - 3.12", true}, {"3.11.2", "3.11.3 - 4", false}, {"3.12.9", "3.11 - 3.12", true},
	{"3.13.0", "3.11 - 3.12", false}, {"3.11.2", "* - 3", true}, {"3.11.2", "3.11.2 - 3.11.2", true},
	{"3.11.2", "3 -3.12", false}, {"3.11.2", "3- 3.12", false},
	/* sets and alternatives */
	{"3.11.2", ">=3 <4", true}, {"3.11.2", ">=3 <3.11", false}, {"3.11.2", "2 || 3", true},
	{"3.11.2", "2||4", false}, {"3.11.2", "2 || ", true}, {"3.11.2", " \t>=3\n<4 ", true},
	{"3.11.2", "2 ||| 3", false}, {"3.11.2", "3 | 4", false}, {"3.11.2", "3 || abc", false},
	/* prereleases: only where a comparator names one of the same x.y.z */
	{"1.2.3-beta", "1.2.3-beta", true}, {"1.2.3-beta", "*", false}, {"1.2.3-beta", "1.x", false},
	{"1.2.3-beta", ">=1.2.3-alpha", true}, {"1.2.3-beta", ">=1.2.2", false},
	{"1.2.3-beta.10", ">1.2.3-beta.9", true}, {"1.2.3-beta.2", ">1.2.3-beta.10", false},
	{"1.2.3-beta", "<1.2.3", false}, {"1.2.3-beta", "^1.2.3-alpha", true},
	{"1.2.3-beta", "* || 1.2.3-beta", false}, {"1.2.3-beta", ">=1 || 1.2.3-beta", true},
	{"1.2.3", ">1.2.3-beta", true}, {"1.2.3", "<1.2.3-beta", false},
	{"2.0.0-rc.1", "1.x", false}, {"2.0.0-rc.1", "<2", false},
	/* what npm refuses: nothing matches */
	{"3.11.2", "03", false}, {"3.11.2", "3.011", false}, {"3.11.2", "3.11.2.0", false},
	{"3.11.2", "3.11.2-", false}, {"3.11.2", "3.11.2+", false}, {"3.11.2", "3.11.2-01", false},
	{"3.11.2", ">=", false}, {"3.11.2", "=>3", false}, {"3.11.2", "<>3", false},
	{"3.11.2", ">=3<4", false}, {"3.11.2", "3.11-beta", false}, {"3.11.2", "3.11.2 -", false},
	{"3.11.2", "==3.11.2", false}, {"3.11.2", "==3.11", true}, {"3.11.2", "vv3", true},
	{"3.11.2", "~=3.11.2", true}, {"3.11.2", "3.11.2 - ==4.0.0", false}, {"3.11.2", "3 - ==4", true},
	{"3.11.2", "latest", false}, {"3.11.2", "stable", false}, {"3.11.2", "3.11.2 3", true},
	{"9007199254740991.0.0", ">=9007199254740991", true},
	{"9007199254740991.0.0", "9007199254740991", false}, /* its bound, 2^53.0.0, overflows */
	{"9007199254740991.0.0", "9007199254740992", false},
	/* installed versions that are not strict semver: their leading numbers */
	{"1.20", "1.20", true}, {"1.20", "^1.19", true}, {"1.20", "1.20.0", true},
	{"5.2.15(1)-release", "5.2", true}, {"17.0.19+7", "17", true}, {"v18.20.4", "18", true},
	{"release", "*", false}, {"", "*", false},
};

static void piston_picks(void)
{
	static const char *const installed[] = {"3.12.0", "3.10.0", "3.9.4", "2.7.18"};
	for (size_t i = 0; i < sizeof piston_examples / sizeof piston_examples[0]; i++) {
		const char *picked = ""; /* the highest that matches: the list is in order */
		for (size_t j = 0; j < 4 && !picked[0]; j++)
			if (semver_satisfies(installed[j], piston_examples[i].range))
				picked = installed[j];
		is_str(picked, piston_examples[i].picks, "semver: Piston's \"%s\" picks %s",
		       piston_examples[i].range, piston_examples[i].picks[0] ? piston_examples[i].picks : "none");
	}
}

/* Any bytes, any length: an answer, never a crash or an overrun (ASan). */
static void hostile_inputs(void)
{
	char big[SEMVER_MAX_RANGE + 2];
	memset(big, ' ', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	big[0] = '3';
	ok(!semver_satisfies("3.0.0", big), "semver: a range over %d bytes matches nothing", SEMVER_MAX_RANGE);
	big[SEMVER_MAX_RANGE] = '\0';
	ok(semver_satisfies("3.0.0", big), "semver: one of exactly %d bytes is read", SEMVER_MAX_RANGE);
	char *pipes = xmalloc(1 << 16);
	memset(pipes, '|', (1 << 16) - 1);
	pipes[(1 << 16) - 1] = '\0';
	ok(!semver_satisfies("3.0.0", pipes), "semver: 64 KiB of | is refused without reading it");
	free(pipes);
	/* Random ranges: spaces around one, or saying it twice, change nothing. */
	unsigned seed = 1;
	int same = 0;
	for (int i = 0; i < 20000; i++) {
		static const char alphabet[] = "0123456789.xX*v=<>~^|- +ab\t\xff";
		char r[24];
		size_t n = (size_t)(i % 23);
		for (size_t j = 0; j < n; j++) {
			seed = seed * 1103515245 + 12345;
			r[j] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
		}
		r[n] = '\0';
		char padded[32], twice[64];
		snprintf(padded, sizeof padded, " %s\t", r);
		snprintf(twice, sizeof twice, "%s || %s", r, r);
		for (int k = 0; k < 2; k++) {
			const char *v = k ? "1.2.3" : "1.2.3-beta.1";
			same += semver_satisfies(v, r) == semver_satisfies(v, padded) &&
				semver_satisfies(v, r) == semver_satisfies(v, twice);
		}
	}
	ok(same == 40000, "semver: 20000 random ranges, padded or doubled, answer the same (%d)", same);
}

/* A range for a test's name: control bytes as '?', so that TAP stays one line. */
static const char *shown(const char *range)
{
	static char out[64];
	size_t i = 0;
	for (; range[i] && i < sizeof out - 1; i++)
		out[i] = (unsigned char)range[i] < ' ' ? '?' : range[i];
	out[i] = '\0';
	return out;
}

UNIT_TEST(test_semver)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct semver_case *c = &cases[i];
		ok(semver_satisfies(c->version, c->range) == c->want, "semver: %s %s \"%s\"", c->version,
		   c->want ? "satisfies" : "does not satisfy", shown(c->range));
	}
	piston_picks();
	hostile_inputs();
}
