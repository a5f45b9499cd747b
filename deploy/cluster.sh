#!/usr/bin/env bash
# A cluster of isobox hosts on this one machine, for trying and testing
# scale-out (docs/SCALING.md): the store's server, valkey-server where the
# host has it (setup.sh --cluster installs it) else redis-server (Debian's,
# either with deploy/redis/redis.conf: Valkey reads Redis' settings),
# CLUSTER_HOSTS isobox "hosts" (each a pool of its
# own: instance hN, its own sockets, work, sessions and volumes dirs, and
# its own isobox-volumed; all share this dockerd and the Redis store) and
# one Caddy balancing them (deploy/caddy/Caddyfile.cluster). The last line
# that `start` prints is the balancer's URL. Run as root, after `make run`
# (which installs isobox and builds the images).
#
#   deploy/cluster.sh start|stop|status|reload
#
# start starts what is not running (so it also brings back a host or Redis
# that was killed); reload sends each host SIGHUP (settings, keys, tenants).
#
# Environment: CLUSTER_HOSTS (3), CLUSTER_WORKERS (2 per host),
# CLUSTER_PORT (8095), PREFIX (/opt/isobox), and CLUSTER_RUNNERS (0): with
# runners, queue mode (docs/SCALING.md): the hosts h1.. behind the balancer
# are fronts that put each /execute on a Redis stream, and the runners
# r1.. (not behind the balancer) take and run them. CLUSTER_STORE
# (valkey-server or redis-server) names the store's server.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-/opt/isobox}
HOSTS=${CLUSTER_HOSTS:-3}
WORKERS=${CLUSTER_WORKERS:-2}
PORT=${CLUSTER_PORT:-8095}
RUNNERS=${CLUSTER_RUNNERS:-0}
RUN=/run/isobox-cluster
STATE=/var/lib/isobox/cluster
LOG=/var/log/isobox/cluster
REDIS_SOCKET=$RUN/redis/redis.sock
if [ -z "${CLUSTER_STORE:-}" ]; then
	CLUSTER_STORE=redis-server
	command -v valkey-server >/dev/null && CLUSTER_STORE=valkey-server
fi
case "$CLUSTER_STORE" in
valkey-server) STORE_USER=valkey ;;
redis-server) STORE_USER=redis ;;
*) echo "cluster: CLUSTER_STORE must be valkey-server or redis-server" >&2; exit 2 ;;
esac
STORE_COMMS="redis-server|valkey-server" # either may be running from an earlier start

say() { printf 'cluster: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

. "$HERE/pids.sh"

host_names() { seq 1 "$HOSTS" | sed 's/^/h/'; }
runner_names() { [ "$RUNNERS" = 0 ] || seq 1 "$RUNNERS" | sed 's/^/r/'; }

# Queue mode: a front runs nothing itself (no warm sandboxes); a runner
# takes jobs; a job whose runner went silent for 10 s is run again (a
# sandbox's start, which renews nothing, must fit in that on a loaded host); the
# queue holds CLUSTER_QUEUE_MAX jobs (1000).
queue_section() {
	[ -n "$1" ] || return 0
	printf 'queue:\n  role: %s\n  claimAfterMs: 10000\n  maxLength: %s\n' "$1" "${CLUSTER_QUEUE_MAX:-1000}"
}

# Host h's settings: the installed isobox.yaml with its own name, dirs and
# sockets, and the shared store. It sits beside isobox.yaml, so that its
# relative paths (registry, keys, tenants) are the same ones: one set of
# keys for the whole cluster.
write_conf() {
	local h=$1 role=${2:-} out=$PREFIX/conf/cluster-$1.yaml warm="{python: 1}"
	[ "$role" != front ] || warm="{}"
	bash "$HERE/instance-conf.sh" "$PREFIX/conf/isobox.yaml" "$h" "$STATE/$h" "$RUN/$h" \
		"s|^  sandboxes: {.*}|  sandboxes: $warm|" "sandboxes: $warm" \
		"s|^  backend: sqlite\$|  backend: redis\n  redis: {address: \"unix:$REDIS_SOCKET\", prefix: \"isobox:\"}|" \
		"backend: redis" >"$out.new" || die "no conf for host $h"
	queue_section "$role" >>"$out.new"
	mv -f "$out.new" "$out"
	install -d -m 0700 -o isobox -g isobox "$STATE/$h" "$STATE/$h/work" "$STATE/$h/sessions"
}

start_redis() {
	id $STORE_USER >/dev/null 2>&1 || die "no $STORE_USER user: install $CLUSTER_STORE (deploy/setup.sh --cluster does)"
	alive $RUN/redis.pid "$STORE_COMMS" "unixsocket:$REDIS_SOCKET" && return 0
	# The socket's directory admits the server and the isobox workers only.
	install -d -m 0750 -o $STORE_USER -g isobox "$RUN/redis"
	install -d -m 0750 -o $STORE_USER -g $STORE_USER "$STATE/redis"
	REDIS_SOCKET=$REDIS_SOCKET REDIS_DIR=$STATE/redis envsubst '$REDIS_SOCKET $REDIS_DIR' \
		<"$HERE/redis/redis.conf" >"$RUN/redis.conf"
	chmod 0644 "$RUN/redis.conf"
	setsid setpriv --reuid=$STORE_USER --regid=$STORE_USER --init-groups -- \
		$CLUSTER_STORE "$RUN/redis.conf" >>"$LOG/redis.log" 2>&1 </dev/null 9>&- &
	echo $! >$RUN/redis.pid
	for _ in $(seq 1 100); do [ -S "$REDIS_SOCKET" ] && break; sleep 0.1; done
	[ -S "$REDIS_SOCKET" ] || die "$CLUSTER_STORE did not start; see $LOG/redis.log"
	say "$CLUSTER_STORE started on $REDIS_SOCKET"
}

start_host() {
	local h=$1 role=${2:-}
	write_conf "$h" "$role"
	ISOBOX_CONF=$PREFIX/conf/cluster-$h.yaml ISOBOX_RUN=$RUN/$h ISOBOX_LOG=$LOG/$h ISOBOX_WEB=none \
		POOL=$WORKERS PREFIX=$PREFIX bash "$HERE/pool.sh" start
	# Its master says it is alive in the store within a duty period.
	say "host $h: $WORKERS workers${role:+ ($role)} (socket $RUN/$h/isobox.sock, log $LOG/$h/isobox.log)"
}

# The balancer: a session's requests, and any request with X-Isobox-Host,
# go to the named host first; the rest round-robin. When a host does not
# answer, the request goes to the next: a stateless one just runs there, a
# session one is answered 410 (its host is gone) or 503 (retry).
write_caddyfile() {
	local h upstreams="" matchers="" sessions="" headers="" routes="" first
	for h in $(host_names); do upstreams="$upstreams unix/$RUN/$h/isobox.sock"; done
	for h in $(host_names) $(runner_names); do
		routes="$routes
		handle_path /hosts/$h/* {
			import status $RUN/$h/status/isobox.sock
		}"
	done
	for h in $(host_names); do
		# This host first, then the others.
		first="unix/$RUN/$h/isobox.sock$(echo "$upstreams" | sed "s| unix/$RUN/$h/isobox.sock||")"
		matchers="$matchers
	@$h path_regexp ^/v1/sessions/$h-[0-9a-f]{32}(/|\$)
	@$h-header header X-Isobox-Host $h"
		sessions="$sessions
		reverse_proxy @$h $first {
			import upstream first
		}"
		headers="$headers
		reverse_proxy @$h-header $first {
			import upstream first
		}"
	done
	# A session's host (its id) wins over a header naming another.
	routes="$sessions$headers$routes"
	CLUSTER_PORT=$PORT CLUSTER_LOG=$LOG CLUSTER_MATCHERS=$matchers CLUSTER_ROUTES=$routes \
		CLUSTER_UPSTREAMS=$upstreams \
		envsubst '$CLUSTER_PORT $CLUSTER_LOG $CLUSTER_MATCHERS $CLUSTER_ROUTES $CLUSTER_UPSTREAMS' \
		<"$HERE/caddy/Caddyfile.cluster" >"$RUN/Caddyfile"
	chmod 0644 "$RUN/Caddyfile"
}

start_balancer() {
	alive $RUN/caddy.pid caddy && return 0
	write_caddyfile
	install -d -m 0750 -o caddy -g caddy /var/lib/caddy
	install -d -m 0755 -o caddy -g caddy "$LOG/caddy"
	HOME=/var/lib/caddy XDG_DATA_HOME=/var/lib/caddy XDG_CONFIG_HOME=/var/lib/caddy \
		setsid setpriv --reuid=caddy --regid=caddy --init-groups -- \
		caddy run --adapter caddyfile --config "$RUN/Caddyfile" \
		>>"$LOG/caddy.log" 2>&1 </dev/null 9>&- &
	echo $! >$RUN/caddy.pid
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && return 0
		sleep 0.1
	done
	die "the balancer does not answer on http://127.0.0.1:$PORT; see $LOG/caddy.log"
}

start() {
	[ "$(id -u)" = 0 ] || die "run as root"
	[ -x "$PREFIX/bin/isobox-fcgi" ] || die "$PREFIX/bin/isobox-fcgi missing: run make run first"
	case $HOSTS in [1-9]) ;; *) die "CLUSTER_HOSTS must be 1-9" ;; esac
	case $RUNNERS in [0-9]) ;; *) die "CLUSTER_RUNNERS must be 0-9" ;; esac
	install -d -m 0755 "$RUN" "$LOG"
	start_redis
	local h front=""
	[ "$RUNNERS" = 0 ] || front=front
	for h in $(host_names); do start_host "$h" $front; done
	for h in $(runner_names); do start_host "$h" runner; done
	start_balancer
	say "$HOSTS hosts behind the balancer${front:+, $RUNNERS runners taking their jobs} (log: $LOG/caddy.log)"
	echo "http://127.0.0.1:$PORT"
}

# A host's volumes: what its isobox-volumed mounted there (by exact path),
# unmounted, then the images. The directory is root's alone (0700).
remove_volumes() {
	local dir=$1 m
	[ -d "$dir" ] || return 0
	awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | while read -r m; do
		umount "$m" || die "cannot unmount $m"
	done
	rm -rf --one-file-system "$dir"
}

# Everything start made, whatever CLUSTER_HOSTS is now: the hosts are the
# directories under $RUN.
stop() {
	stop_pid $RUN/caddy.pid balancer caddy
	local d h cg
	for d in "$RUN"/[hr][0-9]; do
		[ -d "$d" ] || continue
		h=$(basename "$d")
		# The pool master ends its runs and sessions' requests; the
		# sessions' sandboxes are its to remove at its next start, so
		# remove them here, by their labels, as the cluster goes.
		ISOBOX_CONF=$PREFIX/conf/cluster-$h.yaml ISOBOX_RUN=$d ISOBOX_LOG=$LOG/$h ISOBOX_WEB=none \
			PREFIX=$PREFIX bash "$HERE/pool.sh" stop
		docker ps -aq --filter "label=isobox.instance=$h" | xargs -r docker rm -f >/dev/null 2>&1 || true
		# A host whose master was killed leaves the cgroups its warm
		# sandboxes started in (sandbox/cgroup.h), which only its next
		# master would reap; its containers gone, they are empty: rmdir
		# each, innermost first (never one that still holds a process).
		for cg in /sys/fs/cgroup/isobox.slice/isobox-"$h"-* /sys/fs/cgroup/*/isobox.slice/isobox-"$h"-*; do
			[ ! -d "$cg" ] || find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
		done
		remove_volumes "$STATE/$h/volumes"
		rm -rf --one-file-system "${STATE:?}/$h"
		rm -f "$PREFIX/conf/cluster-$h.yaml"
		rm -rf "$d"
	done
	stop_pid $RUN/redis.pid "the store's server" "$STORE_COMMS" "unixsocket:$REDIS_SOCKET"
	rm -rf "$RUN/redis" "$RUN/redis.conf" "$RUN/Caddyfile" "${STATE:?}/redis"
}

mkdir -p "$RUN"
exec 9>"$RUN/cluster.lock"
flock 9

case "${1:-}" in
start) start ;;
stop) stop; say "stopped" ;;
reload)
	for d in "$RUN"/[hr][0-9]; do
		alive "$d/pool.pid" isobox-fcgi && kill -HUP "$(cat "$d/pool.pid")"
	done
	;;
status)
	alive $RUN/redis.pid "$STORE_COMMS" "unixsocket:$REDIS_SOCKET" && echo "store: running" || echo "store: stopped"
	for d in "$RUN"/[hr][0-9]; do
		[ -d "$d" ] || continue
		alive "$d/pool.pid" isobox-fcgi && echo "$(basename "$d"): running" || echo "$(basename "$d"): stopped"
	done
	alive $RUN/caddy.pid caddy && echo "balancer: http://127.0.0.1:$PORT" || echo "balancer: stopped"
	;;
*) die "usage: $0 start|stop|status|reload" ;;
esac
