#!/usr/bin/env bash
# The wall time of each step of `make test` (Makefile), kept in $TIMES
# (bin/test-times.txt): one line per step, "NAME SECONDS STATUS".
#
#   tests/timed.sh NAME CMD...   run CMD, note its time; on failure print
#                                the summary so far and fail as CMD did
#   tests/timed.sh --beside NAME CMD...
#                                the same for a step that runs beside
#                                another (tests/passes.sh alone): its time
#                                is shown, not added to the total
#   tests/timed.sh --summary     print the summary: each step's time beside
#                                its budget ($TEST_BUDGET: "NAME=MINUTES ...",
#                                from the Makefile), and the total
set -uo pipefail
TIMES=${TIMES:-bin/test-times.txt}

clock() {
	local s=$1
	printf '%d:%02d:%02d' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
}

summary() {
	[ -s "$TIMES" ] || return 0
	local name secs status budget total=0 total_budget=0 line over
	echo
	echo "time per step (budget: TEST_BUDGET in the Makefile)"
	printf '  %-18s %9s %9s  %s\n' step took budget ""
	while read -r name secs status beside; do
		budget=""
		for b in ${TEST_BUDGET:-}; do
			[ "${b%%=*}" = "$name" ] && budget=${b#*=}
		done
		over=""
		if [ -n "$budget" ]; then
			[ -n "${beside:-}" ] || total_budget=$((total_budget + budget * 60))
			[ "$secs" -le $((budget * 60)) ] || over="over budget by $(clock $((secs - budget * 60)))"
			budget=$(clock $((budget * 60)))
		fi
		[ "$status" = 0 ] || over="FAILED (exit $status)${over:+; $over}"
		if [ -n "${beside:-}" ]; then
			over="${over:+$over; }beside the alone step: not in the total"
		else
			total=$((total + secs))
		fi
		printf '  %-18s %9s %9s  %s\n' "$name" "$(clock "$secs")" "$budget" "$over"
	done <"$TIMES"
	line=""
	[ "$total_budget" = 0 ] || { [ "$total" -le "$total_budget" ] || line="over budget by $(clock $((total - total_budget)))"; }
	printf '  %-18s %9s %9s  %s\n' all "$(clock "$total")" \
		"$([ "$total_budget" = 0 ] || clock "$total_budget")" "$line"
	if ls bin/durations-*.txt >/dev/null 2>&1; then
		echo "  slowest tests of each pass: $(ls bin/durations-*.txt | tr '\n' ' ')"
	fi
}

if [ "${1:-}" = --summary ]; then
	summary
	exit 0
fi
beside=""
if [ "${1:-}" = --beside ]; then
	beside=" beside"
	shift
fi
[ $# -ge 2 ] || { echo "usage: $0 [--beside] NAME CMD... | --summary" >&2; exit 2; }
name=$1
shift
mkdir -p "$(dirname "$TIMES")"
echo "== $name: $*"
start=$(date +%s)
"$@"
status=$?
echo "$name $(($(date +%s) - start)) $status$beside" >>"$TIMES"
if [ "$status" != 0 ]; then
	summary
fi
exit "$status"
