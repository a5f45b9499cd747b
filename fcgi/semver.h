/*
 * semver.h: npm's version ranges (node-semver 7, its strict grammar), the
 * way Piston picks a runtime for a request's "version" (piston.c):
 *
 *	*  x  3  3.x  3.11  3.11.2  =3.11.2  v3.11.2  3.11.2+build
 *	>3  >=3.10  <4  <=3.11  ~3.11  ~>3.11  ^3.10  ^0.2.3
 *	3 - 3.11  (a hyphen range)   >=3 <4  (all must hold)   a || b  (either)
 *
 * Spaces around the whole and between the parts do not matter. A range
 * that does not parse matches nothing, as in npm (where satisfies() is
 * false for an invalid range): "latest", "3.11.2.1", "03", "3 -3". Like
 * npm without includePrerelease, a prerelease version ("1.0.0-rc.1")
 * matches only a range that names a prerelease of the same x.y.z.
 *
 * Pure and bounded: no allocation, no recursion, one pass over at most
 * SEMVER_MAX_RANGE bytes; safe on any bytes (fuzzed: tests/fuzz).
 */
#ifndef ISOBOX_SEMVER_H
#define ISOBOX_SEMVER_H

#include <stdbool.h>

#define SEMVER_MAX_RANGE 256 /* a longer range matches nothing */

/*
 * Does version satisfy range? version is an installed runtime's
 * ("3.11.2"); one that is not strict semver is read leniently, as its
 * leading numbers ("1.20" is 1.20.0, "5.2.15(1)-release" 5.2.15); one
 * that does not start with a number matches nothing.
 */
bool semver_satisfies(const char *version, const char *range);

#endif
