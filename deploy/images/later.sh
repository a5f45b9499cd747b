#!/usr/bin/env bash
# Build images in the background, after `make run` has started the pool on
# the images it needs at once, and have the pool take them in when they are
# built (SIGHUP to its master: every worker reloads the registry and the
# image lock). Until then a request for one of them is 503 image_not_built
# with Retry-After, and GET /runtimes shows it "available": false.
#
#   deploy/images/later.sh NAME...
#
# The build runs under the same lock as every other (Makefile: images), so
# two builds never write the image lock at once; it runs to its end even if
# the pool is stopped (log: $STATE/build/later.log).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${ISOBOX_STATE:-/var/lib/isobox}
LOCK=${ISOBOX_IMAGES_LOCK:-$STATE/images.lock}
RUN=${ISOBOX_RUN:-/run/isobox}
LOG=$STATE/build/later.log

# The background job: build, then a reload if the lock changed, sent only to
# the master that pool.sh started (its pid file, checked against the
# process name). Images already built take build.sh a second each.
if [ "${1:-}" = --now ]; then
	shift
	before=$(sha256sum "$LOCK" 2>/dev/null || true)
	flock "$STATE/images.build.lock" bash "$HERE/build.sh" "$@"
	[ "$(sha256sum "$LOCK" 2>/dev/null || true)" != "$before" ] || exit 0
	pid=$(cat "$RUN/pool.pid" 2>/dev/null) || exit 0
	if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = isobox-fcgi ]; then
		kill -HUP "$pid"
		echo "later: the pool ($pid) reloads"
	fi
	exit 0
fi

[ $# -gt 0 ] || exit 0
for name in "$@"; do
	[ -f "$HERE/$name.recipe" ] || { echo "later: no recipe $HERE/$name.recipe" >&2; exit 1; }
done
mkdir -p "$STATE/build"
echo "images: building $* in the background (log: $LOG); the pool reloads when they are in"
# setsid: the build outlives this make, in a session of its own that a
# terminal's hangup does not reach.
setsid bash "$0" --now "$@" </dev/null >"$LOG" 2>&1 8>&- &
