#!/usr/bin/env bash
# The passes of the integration suite, in shards (tests/integration/shards.py):
# A against the main isobox, B and C against two more (tests/lane.sh), all
# at once; then the lanes stopped, and H (the tests that must be alone on
# the host) against the main one. Then bin/AUDIT.md from every shard's
# record. Run as root, after `make run`.
#
#   tests/passes.sh cold|warm|runc   one pass: its A, B and C at once, then
#                                    its H; fails if any shard failed
#   tests/passes.sh shared cold      what `make integration` runs, in three
#   tests/passes.sh shared warm+runc steps: the cold pass's A, B and C; then
#   tests/passes.sh alone [CMD...]   the runc pass's A, B and C and the warm
#                                    pass's B and C at once, on five
#                                    isoboxes; then, the lanes stopped,
#                                    every pass's H and the warm pass's A
#                                    (its tests read the main one's paths),
#                                    in turn, with CMD run beside them if
#                                    given (its output printed after)
#   tests/passes.sh stop             stop the lanes (make stop does)
#
# Why the warm and runc passes at once: one after the other, each left the
# host partly idle (its shards end at different times, its lanes start and
# stop); side by side they keep it busy (97-99% here) and took 12.1 min
# against 7.9 + 9.5 (docs/PERFORMANCE.md, "The test suite's time"). Why
# every H together at the end: those shards leave the host 20-60% busy
# (they wait on dockerd restarts, firewalls and timeouts), and `make test`
# fills that with the steps that use no docker at all (the fuzzers, the
# agent's tests, the unprivileged build), which cannot disturb what an H
# test changes.
#
# Each shard's output goes to bin/test-PASS-SHARD.log, printed when the
# shard ends; its tests' times to bin/durations-PASS-SHARD.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

LANES="b:8191 c:8192"      # NAME:PORT of the second installs; shards B and C, in order
MORE_LANES="d:8193 e:8194" # and of the warm pass's B and C beside the runc pass
PYTEST="/usr/bin/python3 -m pytest -q --durations=25"
MODE=${1:-}

lanes() {
	local lane
	for lane in ${2:-$LANES}; do bash tests/lane.sh "$1" "${lane%%:*}" "${lane#*:}" || return 1; done
}

usage() {
	echo "usage: $0 cold|warm|runc | shared cold|warm+runc | alone [CMD...] | stop" >&2
	exit 2
}

mkdir -p bin
# The lanes' own words, for this mode's run (alone: after the run before).
case "$MODE" in alone | stop) ;; *) : >bin/lanes.log ;; esac
BESIDE=()
case "$MODE" in
cold | warm | runc) PASS=$MODE ;;
shared)
	PASS=${2:-}
	case "$PASS" in
	cold) ;;
	warm+runc) LANES="$LANES $MORE_LANES" ;;
	*) usage ;;
	esac
	;;
alone)
	PASS=""
	shift
	BESIDE=("$@")
	lanes stop "$LANES $MORE_LANES" >>bin/lanes.log 2>&1 # H is alone on the host
	LANES=""
	;;
stop) lanes stop "$LANES $MORE_LANES" >/dev/null 2>&1; exit 0 ;;
*) usage ;;
esac

# The command beside the alone shards runs in a session of its own, so
# that an early exit here stops all of it (by its process group).
beside_pid=""
trap 'lanes stop >/dev/null 2>&1; [ -z "$beside_pid" ] || kill -- -"$beside_pid" 2>/dev/null' EXIT
[ "$PASS" != cold ] || rm -rf bin/audit # a new set of records: the warm pass reads the cold one's

# shard PASS SHARD [NAME:PORT]: one shard of a pass, against the lane or
# the main isobox. pytest's 5 (no test selected) is a pass: a warm shard
# may hold no attack that a warm sandbox takes.
shard() {
	local lane_env="" args="" status
	case "$1" in
	warm) args="--sandbox-path=warm" ;;
	runc) args="--backend=runc" ;;
	esac
	[ -z "${3:-}" ] || lane_env=$(bash tests/lane.sh env "${3%%:*}" "${3#*:}")
	# shellcheck disable=SC2086 # the words of $lane_env, $PYTEST and $args
	env $lane_env ISOBOX_DURATIONS="bin/durations-$1-$2.txt" \
		$PYTEST $args --shard="$2" tests/integration >"bin/test-$1-$2.log" 2>&1
	status=$?
	[ "$status" != 5 ] || status=0
	return "$status"
}

# at_once PASS:SHARD[:NAME:PORT] ...: the shards side by side, then each
# one's output in turn; the failed ones added to $failed.
failed=""
at_once() {
	local s pass name lane port pids=() names=()
	for s in "$@"; do
		IFS=: read -r pass name lane port <<<"$s"
		shard "$pass" "$name" ${lane:+"$lane:$port"} &
		pids+=($!)
		names+=("$pass-$name")
	done
	for s in "${!pids[@]}"; do
		wait "${pids[$s]}" || failed="$failed ${names[$s]}"
	done
	lanes stop >>bin/lanes.log 2>&1
	for s in "${names[@]}"; do
		echo "== ${s%-*} pass, shard ${s##*-} (bin/test-$s.log)"
		cat "bin/test-$s.log"
	done
}

# in_turn PASS:SHARD ...: shards against the main isobox, one after another.
in_turn() {
	local s pass name
	for s in "$@"; do
		IFS=: read -r pass name <<<"$s"
		echo "== $pass pass, shard $name: against the main isobox alone (bin/test-$pass-$name.log)"
		shard "$pass" "$name" || failed="$failed $pass-$name"
		cat "bin/test-$pass-$name.log"
	done
}

if ! lanes start >>bin/lanes.log 2>&1; then
	cat bin/lanes.log
	echo "passes: the lanes did not start" >&2
	exit 1
fi
# shellcheck disable=SC2086 # the lanes, one word each
set -- $LANES
case "$MODE" in
cold | warm | runc)
	at_once "$PASS:A" "$PASS:B:$1" "$PASS:C:$2"
	in_turn "$PASS:H"
	;;
shared)
	if [ "$PASS" = cold ]; then
		at_once cold:A "cold:B:$1" "cold:C:$2"
	else
		at_once runc:A "runc:B:$1" "runc:C:$2" "warm:B:$3" "warm:C:$4"
	fi
	;;
alone)
	if [ ${#BESIDE[@]} -gt 0 ]; then
		setsid -w "${BESIDE[@]}" >bin/beside.log 2>&1 &
		beside_pid=$!
	fi
	in_turn cold:H warm:A warm:H runc:H
	if [ -n "$beside_pid" ]; then
		wait "$beside_pid" || failed="$failed beside"
		beside_pid=""
		echo "== beside the alone shards: ${BESIDE[*]} (bin/beside.log)"
		cat bin/beside.log
	fi
	;;
esac
python3 tests/audit.py write || failed="$failed audit"
if [ -n "$failed" ]; then
	echo "passes: $MODE${PASS:+ $PASS}: failed in$failed" >&2
	exit 1
fi
