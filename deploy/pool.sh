#!/usr/bin/env bash
# Start, stop or restart the isobox FastCGI pool (spawn-fcgi) and Caddy in
# front of it, on hosts where no service manager does (see deploy/ for the
# systemd units). Run as root; the pool runs as user isobox, Caddy as caddy.
#
#   deploy/pool.sh start|stop|restart|status
#
# Environment: PORT (8090), BIND (127.0.0.1), POOL (4 workers),
# PREFIX (/opt/isobox, where `make install` put the binary and config),
# ISOBOX_RUN (/run/isobox) and ISOBOX_LOG (/var/log/isobox): a second
# pool on the same host (a developer's copy) needs its own of all three.
# ISOBOX_CONF ($PREFIX/conf/isobox.yaml) and ISOBOX_WEB (caddy; "none":
# the pool alone, for deploy/cluster.sh, whose balancer is in front).
set -euo pipefail

PORT=${PORT:-8090}
BIND=${BIND:-127.0.0.1}
POOL=${POOL:-4}
PREFIX=${PREFIX:-/opt/isobox}
RUN=${ISOBOX_RUN:-/run/isobox}
LOG=${ISOBOX_LOG:-/var/log/isobox}
CONF=${ISOBOX_CONF:-$PREFIX/conf/isobox.yaml}
WEB=${ISOBOX_WEB:-caddy}
SOCKET=$RUN/isobox.sock
# /healthz and /metrics on a socket of their own, served by a worker that
# never runs a program; its directory gives it the web server's group.
STATUS_SOCKET=$RUN/status/isobox.sock

# The logs' rotation (deploy/logrotate/isobox, installed by make install):
# where no cron daemon or systemd runs logrotate, pool.sh runs it, at start
# and every ISOBOX_LOGROTATE_EVERY seconds, in a loop it starts and stops.
LOGROTATE_CONF=/etc/logrotate.d/$(basename "$LOG")
LOGROTATE_EVERY=${ISOBOX_LOGROTATE_EVERY:-3600}

say() { printf 'pool: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

. "$(dirname "$0")/pids.sh"

wait_http() {
	local i
	for i in $(seq 1 100); do
		curl -fsS -o /dev/null "http://$BIND:$PORT/healthz" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

start() {
	[ "$(id -u)" = 0 ] || die "run as root"
	id isobox >/dev/null 2>&1 || die "no isobox user: run deploy/setup.sh"
	[ -x "$PREFIX/bin/isobox-fcgi" ] || die "$PREFIX/bin/isobox-fcgi missing: run make install"
	install -d -m 0755 "$RUN" "$LOG"
	"$PREFIX/bin/isobox-fcgi" --conf "$CONF" --check >/dev/null ||
		die "configuration check failed"

	start_log_keeper
	# Volumes: isobox-volumed (root) makes and mounts their images for
	# the workers, who hold no privilege (sandbox/volumed/volumed.c).
	local printed vdir vsock answer_ms
	printed=$("$PREFIX/bin/isobox-fcgi" --conf "$CONF" --print-conf)
	vdir=$(sed -n 's/^volumes_dir=//p' <<<"$printed")
	vsock=$(sed -n 's/^volumes_socket=//p' <<<"$printed")
	# Caddy's read_timeout is one deadline for the whole answer (a stream's
	# keep-alives do not extend it): the longest a request may take, from
	# the conf (a session step's ceiling, start-up, a compile step).
	answer_ms=$(sed -n 's/^answer_bound_ms=//p' <<<"$printed")
	if [ -n "$vdir" ] && ! alive $RUN/volumed.pid isobox-volumed; then
		setsid "$PREFIX/bin/isobox-volumed" --dir "$vdir" --socket "$vsock" --user isobox \
			>>"$LOG/volumed.log" 2>&1 </dev/null 9>&- &
		echo $! >$RUN/volumed.pid
		for _ in $(seq 50); do [ -S "$vsock" ] && break; sleep 0.1; done
		say "isobox-volumed started (volumes in $vdir)"
	fi
	if ! alive $RUN/pool.pid isobox-fcgi; then
		rm -f "$SOCKET" "$STATUS_SOCKET"
		install -d -m 2750 -o isobox -g caddy "$RUN/status"
		# -n: spawn-fcgi makes the socket, drops to isobox and becomes
		# the pool master (no fork), so its pid is the master's.
		setsid spawn-fcgi -n -s "$SOCKET" -M 0660 -U isobox -G caddy \
			-u isobox -g isobox -- \
			"$PREFIX/bin/isobox-fcgi" --conf "$CONF" --workers "$POOL" \
			--status-socket "$STATUS_SOCKET" \
			>>"$LOG/isobox.log" 2>&1 </dev/null 9>&- &
		echo $! >$RUN/pool.pid
		say "pool of $POOL workers started (log: $LOG/isobox.log)"
	fi
	[ "$WEB" != none ] || return 0
	local read_timeout=${ISOBOX_READ_TIMEOUT:-$(( (answer_ms + 999) / 1000 ))s}
	# A Caddy given another bound (the conf changed since) gets this one.
	if alive $RUN/caddy.pid caddy && ! tr '\0' '\n' <"/proc/$(cat $RUN/caddy.pid)/environ" |
		grep -qxF "ISOBOX_READ_TIMEOUT=$read_timeout"; then
		stop_pid $RUN/caddy.pid caddy caddy
	fi
	if ! alive $RUN/caddy.pid caddy; then
		install -d -m 0750 -o caddy -g caddy /var/lib/caddy
		# Caddy's access log: Caddy rolls it by renaming it, in a
		# directory of its own.
		install -d -m 0755 -o caddy -g caddy "$LOG/caddy"
		ISOBOX_READ_TIMEOUT=$read_timeout \
		ISOBOX_PORT=$PORT ISOBOX_BIND=$BIND ISOBOX_SOCKET=$SOCKET ISOBOX_STATUS_SOCKET=$STATUS_SOCKET \
			ISOBOX_LOG=$LOG HOME=/var/lib/caddy \
			XDG_DATA_HOME=/var/lib/caddy XDG_CONFIG_HOME=/var/lib/caddy \
			setsid setpriv --reuid=caddy --regid=caddy --init-groups -- \
			caddy run --adapter caddyfile --config "$PREFIX/caddy/Caddyfile" \
			>>"$LOG/caddy.log" 2>&1 </dev/null 9>&- &
		echo $! >$RUN/caddy.pid
		say "caddy started on http://$BIND:$PORT (log: $LOG/caddy.log)"
	fi
	wait_http || die "no answer on http://$BIND:$PORT/healthz; see $LOG/"
}

# Does something on this host run logrotate already? (systemd's timer, or
# a cron daemon: Debian's logrotate package puts itself in cron.daily.)
scheduled_elsewhere() {
	[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && return 0
	local c
	for c in /proc/[0-9]*/comm; do
		case "$(cat "$c" 2>/dev/null)" in cron | crond | anacron) return 0 ;; esac
	done
	return 1
}

start_log_keeper() {
	[ -f "$LOGROTATE_CONF" ] && command -v logrotate >/dev/null || return 0
	scheduled_elsewhere && return 0
	alive $RUN/logs.pid bash isobox-log-keeper && return 0
	# The first rotation now, before the pool and isobox-volumed start: a
	# copy taken while they start would carry their first lines into the
	# old file (copytruncate), where a reader of isobox.log, following the
	# start it just made, would not find them.
	logrotate -s "$RUN/logrotate.state" "$LOGROTATE_CONF" >>"$LOG/isobox.log" 2>&1 </dev/null 9>&- ||
		say "logrotate failed (its words are in $LOG/isobox.log); the pool starts all the same"
	# Its sleep is waited for, not run in the foreground, so that SIGTERM
	# (stop_pid) ends the loop and its sleep together.
	setsid bash -c 'trap "kill \$s 2>/dev/null; exit 0" TERM
		while :; do sleep "$3" & s=$!; wait $s; logrotate -s "$1" "$2"; done' isobox-log-keeper \
		"$RUN/logrotate.state" "$LOGROTATE_CONF" "$LOGROTATE_EVERY" \
		>>"$LOG/isobox.log" 2>&1 </dev/null 9>&- &
	echo $! >$RUN/logs.pid
	say "logrotate $LOGROTATE_CONF every ${LOGROTATE_EVERY}s (no cron or systemd here)"
}

stop() {
	# The pool first: it kills runs in flight and answers them, so that
	# Caddy's graceful shutdown has nothing left to wait for.
	stop_pid $RUN/pool.pid "isobox pool" isobox-fcgi
	stop_pid $RUN/caddy.pid caddy caddy
	stop_pid $RUN/volumed.pid isobox-volumed isobox-volumed
	stop_pid $RUN/logs.pid "the log keeper" bash isobox-log-keeper
	rm -f "$SOCKET" "$STATUS_SOCKET"
}

# One start, stop or restart at a time: two that overlap would each remove
# the socket the other just made (two test runs that both restart it). The
# daemons are started without the lock's fd (9>&-), or they would hold it.
mkdir -p "$RUN"
exec 9>"$RUN/pool.lock"
flock 9

case "${1:-}" in
start) start ;;
stop) stop ;;
restart) stop; start ;;
status)
	alive $RUN/pool.pid isobox-fcgi && echo "pool: running ($(cat $RUN/pool.pid))" || echo "pool: stopped"
	alive $RUN/caddy.pid caddy && echo "caddy: running ($(cat $RUN/caddy.pid))" || echo "caddy: stopped"
	alive $RUN/volumed.pid isobox-volumed && echo "isobox-volumed: running ($(cat $RUN/volumed.pid))" ||
		echo "isobox-volumed: stopped"
	alive $RUN/logs.pid bash isobox-log-keeper && echo "log keeper: running ($(cat $RUN/logs.pid))" ||
		echo "log keeper: not running"
	;;
*) die "usage: $0 start|stop|restart|status" ;;
esac
