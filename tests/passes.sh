#!/usr/bin/env bash
# One pass of the integration suite, in shards (tests/integration/shards.py):
# A against the main isobox, B and C against two more (tests/lane.sh), all
# three at once; then the lanes stopped, and H (the tests that must be
# alone on the host) against the main one. Then bin/AUDIT.md from every
# shard's record. Run as root, after `make run` (the Makefile's
# `integration` target runs the three passes).
#
#   tests/passes.sh cold|warm|runc   the pass; fails if any shard failed
#   tests/passes.sh stop             stop the lanes (make stop does)
#
# Each shard's output goes to bin/test-PASS-SHARD.log, printed when the
# shard ends; its tests' times to bin/durations-PASS-SHARD.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

LANES="b:8191 c:8192" # NAME:PORT of the second installs; shards B and C, in order
PYTEST="/usr/bin/python3 -m pytest -q --durations=25"
PASS=${1:-}

lanes() {
	local lane
	for lane in $LANES; do bash tests/lane.sh "$1" "${lane%%:*}" "${lane#*:}" || return 1; done
}

case "$PASS" in
cold) ARGS="" ;;
warm) ARGS="--sandbox-path=warm" ;;
runc) ARGS="--backend=runc" ;;
stop) lanes stop >/dev/null 2>&1; exit 0 ;;
*) echo "usage: $0 cold|warm|runc|stop" >&2; exit 2 ;;
esac

trap 'lanes stop >/dev/null 2>&1' EXIT
mkdir -p bin
[ "$PASS" != cold ] || rm -rf bin/audit # a new set of records: the warm pass reads the cold one's

# shard SHARD [NAME:PORT]: one shard of the pass, against the lane or the
# main isobox. pytest's 5 (no test selected) is a pass: a warm shard may
# hold no attack that a warm sandbox takes.
shard() {
	local lane_env="" status
	[ -z "${2:-}" ] || lane_env=$(bash tests/lane.sh env "${2%%:*}" "${2#*:}")
	# shellcheck disable=SC2086 # the words of $lane_env, $PYTEST and $ARGS
	env $lane_env ISOBOX_DURATIONS="bin/durations-$PASS-$1.txt" \
		$PYTEST $ARGS --shard="$1" tests/integration
	status=$?
	[ "$status" != 5 ] || status=0
	return "$status"
}

failed=""
if ! lanes start >bin/lanes.log 2>&1; then
	cat bin/lanes.log
	echo "passes: the lanes did not start" >&2
	exit 1
fi
# shellcheck disable=SC2086 # the lanes, one word each
set -- $LANES
shard A >"bin/test-$PASS-A.log" 2>&1 &
a=$!
shard B "$1" >"bin/test-$PASS-B.log" 2>&1 &
b=$!
shard C "$2" >"bin/test-$PASS-C.log" 2>&1 &
c=$!
for s in A:$a B:$b C:$c; do
	wait "${s#*:}" || failed="$failed ${s%%:*}"
done
lanes stop >>bin/lanes.log 2>&1
for s in A B C; do
	echo "== $PASS pass, shard $s (bin/test-$PASS-$s.log)"
	cat "bin/test-$PASS-$s.log"
done
echo "== $PASS pass, shard H: alone on the host"
shard H || failed="$failed H"
python3 tests/audit.py write || failed="$failed audit"
if [ -n "$failed" ]; then
	echo "passes: $PASS pass: failed in shard(s)$failed" >&2
	exit 1
fi
