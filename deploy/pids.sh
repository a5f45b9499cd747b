# pids.sh: the daemons that deploy/pool.sh and deploy/cluster.sh start, each
# known by a pid file; sourced by both, after they define say().

# Is this pid running? A process that has ended but is not yet reaped (a
# zombie) holds nothing any more, and kill -0 still finds it: where pid 1
# reaps what it inherits only every few seconds, each stop would wait that.
running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# Is the pid in this file alive and still the program we started? (A pid
# file left by a killed run may name a pid that something else now has.)
# $3, if given: words its command line must hold (another redis-server on
# the host has the same name; Redis shows its socket there).
alive() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$pid" ] && running "$pid" &&
		grep -qE "^($2)\$" "/proc/$pid/comm" 2>/dev/null &&
		{ [ -z "${3:-}" ] || tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$3"; }
}

# Stop it: SIGTERM, 15 s to go (a pool master kills its running sandboxes
# and waits for its workers), then SIGKILL. Only that pid, never a pattern.
stop_pid() {
	local pidfile=$1 name=$2 comm=$3 pid
	alive "$pidfile" "$comm" "${4:-}" || { rm -f "$pidfile"; return 0; }
	pid=$(cat "$pidfile")
	say "stopping $name ($pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 150); do
		running "$pid" || { rm -f "$pidfile"; return 0; }
		sleep 0.1
	done
	say "$name did not stop in 15 s: SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$pidfile"
}
