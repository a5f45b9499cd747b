#!/usr/bin/env bash
# A second isobox on this host for the test suite: its own install
# (PREFIX), instance name, port, sockets, logs, work, sessions, volumes and
# store, on the same dockerd, images and egress network. tests/passes.sh
# runs a shard of each pass against it while the others run against the
# main one and a third (tests/integration/shards.py says which modules go
# where and why). Run as root, after `make run`.
#
#   tests/lane.sh start|stop|env NAME PORT
#
# env prints the variables that point the integration tests at it
# (conftest.py reads them), one NAME=VALUE per line.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ACTION=${1:-}
NAME=${2:-}
PORT=${3:-}
if [ -z "$NAME" ] || [ -z "$PORT" ]; then echo "usage: $0 start|stop|env NAME PORT" >&2; exit 2; fi
case "$NAME" in *[!a-z0-9]* | main) echo "lane: NAME: [a-z0-9]+, not main" >&2; exit 2 ;; esac

PREFIX=/opt/isobox-$NAME
RUN=/run/isobox-$NAME
LOG=/var/log/isobox-$NAME
STATE=/var/lib/isobox/$NAME

lane_env() {
	printf '%s\n' "PREFIX=$PREFIX" "ISOBOX_RUN=$RUN" "ISOBOX_LOG=$LOG" "PORT=$PORT" \
		"ISOBOX_URL=http://127.0.0.1:$PORT" "ISOBOX_INSTANCE=$NAME" \
		"ISOBOX_WORK=$STATE/work" "ISOBOX_SESSIONS=$STATE/sessions"
}

pool() {
	PREFIX=$PREFIX ISOBOX_RUN=$RUN ISOBOX_LOG=$LOG PORT=$PORT bash "$REPO/deploy/pool.sh" "$1"
}

# The shipped settings with this lane's name, dirs, sockets and store.
write_conf() {
	local conf=$PREFIX/conf/isobox.yaml
	bash "$REPO/deploy/instance-conf.sh" "$REPO/conf/isobox.yaml" "$NAME" "$STATE" "$RUN" >"$conf.new"
	mv -f "$conf.new" "$conf"
	install -d -m 0755 "$STATE"
	install -d -m 0700 -o isobox -g isobox "$STATE/work" "$STATE/sessions" "$STATE/store"
}

case "$ACTION" in
start)
	make -s -C "$REPO" install PREFIX="$PREFIX" ISOBOX_LOG="$LOG" >/dev/null
	write_conf
	# Its keys and tenants start as a fresh install's: none.
	rm -f "$PREFIX/conf/keys" "$PREFIX/conf/keys.secret" "$PREFIX/conf/tenants.yaml"
	pool restart
	;;
stop)
	[ ! -d "$RUN" ] || pool stop
	;;
env) lane_env ;;
*) echo "usage: $0 start|stop|env NAME PORT" >&2; exit 2 ;;
esac
