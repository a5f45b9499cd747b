#!/usr/bin/env bash
# isobox one-time host set-up (idempotent; run as root).
#
#   deploy/setup.sh            packages, docker + runsc-untrusted runtime,
#                              dockerd (if no service manager runs it),
#                              the isobox.slice cgroup parent, the isobox user
#   deploy/setup.sh --print    show what it detected
#   deploy/setup.sh --build-deps   only the packages needed to compile
#   deploy/setup.sh --check-egress the egress self-test (deploy/egress.sh check;
#                              the firewall itself: deploy/egress.sh install)
#
# Tunables (environment):
#   ISOBOX_SLICE_MEMORY  bytes for all sandboxes together (default: half of RAM)
#   ISOBOX_SLICE_PIDS    tasks for all sandboxes together (default: 16384)
#   ISOBOX_SLICE_CPUS    CPUs for all sandboxes together  (default: 90% of
#                        cores, but never below the per-run cpus ceiling in
#                        conf/isobox.yaml: the kernel refuses a child quota
#                        above its parent's; the slice also gets half the
#                        host's CPU weight, so the host wins under contention)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
STATE=/var/lib/isobox
LOG=/var/log/isobox
RUNDIR=/run/isobox
SLICE=isobox.slice
RUNTIME=runsc-untrusted
BUILD_PACKAGES="gcc make pkg-config libfcgi-dev libcjson-dev libyaml-dev libcap-ng-dev xxd"
PACKAGES="$BUILD_PACKAGES docker.io runsc caddy spawn-fcgi debootstrap libfcgi-dev libcjson-dev
 libyaml-dev libcap-ng-dev pkg-config make gcc curl python3 python3-pytest
 iptables lighttpd procps clang libclang-rt-14-dev
 libfcgi-bin systemd apache2 nginx-light gettext-base chromium prometheus iproute2
 python3-jsonschema"

say() { printf 'setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }


systemd_pid1() { [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

install_packages() {
	local missing="" p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root to install them)"
	say "installing:$missing"
	apt-get update -qq
	# Packaged web servers must not start themselves on port 80 (the tests
	# start each one on its own port): deny service starts while installing.
	local policy=/usr/sbin/policy-rc.d own_policy=""
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\nexit 101\n' >$policy && chmod 0755 $policy && own_policy=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		{ [ -z "$own_policy" ] || rm -f $policy; die "apt-get install failed"; }
	[ -z "$own_policy" ] || rm -f $policy
}

# The fastest platform that really runs a sandbox here: systrap where this
# runsc has it, kvm where /dev/kvm exists, else ptrace. Each is tried (a
# /dev/kvm that exists can still hang under nested virtualisation); the answer
# is cached per runsc version because a failed try costs its whole timeout.
platform_works() {
	local out
	out=$(cd / && timeout 15 runsc --platform="$1" --network=none do /bin/echo isobox-ok 2>/dev/null) || true
	pkill -9 -f "runsc-sandbox.*--platform=$1.*do" 2>/dev/null || true
	[ "$out" = isobox-ok ]
}

detect_platform() {
	local runsc version cache=$STATE/platform p
	runsc=$(command -v runsc) || die "runsc not installed"
	version=$(runsc --version | head -1)
	if [ -f "$cache" ] && [ "$(sed -n 2p "$cache")" = "$version" ]; then
		head -1 "$cache"
		return 0
	fi
	for p in systrap kvm ptrace; do
		case $p in
		systrap) grep -aq systrap "$runsc" || continue ;;
		kvm) [ -e /dev/kvm ] || continue ;;
		esac
		if platform_works "$p"; then
			mkdir -p "$STATE"
			printf '%s\n%s\n' "$p" "$version" >"$cache"
			echo "$p"
			return 0
		fi
		say "runsc platform $p does not work here"
	done
	die "no runsc platform works on this host"
}

configure_docker() {
	local platform=$1 runsc
	runsc=$(command -v runsc)
	mkdir -p /etc/docker
	# Merge our runtime into daemon.json, keeping whatever else is there.
	python3 - "$runsc" "$platform" "$RUNTIME" <<'EOF'
import json, os, sys
runsc, platform, name = sys.argv[1:4]
path = "/etc/docker/daemon.json"
try:
    with open(path) as f:
        cfg = json.load(f)
except FileNotFoundError:
    cfg = {}
# --network=none: no network stack at all in the sandbox (loopback only),
# whatever docker sets up; egress runs use a runtime of their own.
want = {"path": runsc, "runtimeArgs": ["--platform=" + platform, "--network=none"]}
if cfg.get("runtimes", {}).get(name) != want:
    cfg.setdefault("runtimes", {})[name] = want
    tmp = path + ".isobox-tmp"
    with open(tmp, "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print("changed")
EOF
}

dockerd_pid() {
	local pid
	pid=$(cat /var/run/docker.pid 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start_docker() {
	local changed=$1 pid i
	if systemd_pid1; then
		systemctl enable --now docker >/dev/null
		[ "$changed" = changed ] && systemctl reload docker
		return 0
	fi
	if pid=$(dockerd_pid); then
		if [ "$changed" = changed ]; then
			say "reloading dockerd ($pid)"
			kill -HUP "$pid"
			sleep 1
		fi
	else
		rm -f /var/run/docker.pid
		mkdir -p "$LOG"
		say "starting dockerd (log: $LOG/dockerd.log)"
		setsid dockerd >>"$LOG/dockerd.log" 2>&1 </dev/null &
	fi
	for i in $(seq 1 60); do
		docker info >/dev/null 2>&1 && break
		sleep 0.5
	done
	docker info >/dev/null 2>&1 || die "dockerd did not come up; see $LOG/dockerd.log"
	docker info --format '{{json .Runtimes}}' | grep -q "\"$RUNTIME\"" ||
		die "dockerd does not list the $RUNTIME runtime"
}

# The parent of every sandbox: hard caps on memory, tasks and CPU for all of
# them together, so a runaway can never starve the host.
setup_slice() {
	local mem pids cpus quota period=100000 c d
	mem=${ISOBOX_SLICE_MEMORY:-$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) * 1024 / 2))}
	pids=${ISOBOX_SLICE_PIDS:-16384}
	local ceiling
	ceiling=$(awk '/^ceilings:/ {f = 1} f && $1 == "cpus:" {print $2; exit}' "$HERE/../conf/isobox.yaml")
	cpus=${ISOBOX_SLICE_CPUS:-$(awk -v n="$(nproc)" -v c="${ceiling:-2}" \
		'BEGIN {x = n * 0.9; if (x < c) x = c; printf "%.2f", x}')}
	quota=$(awk -v c="$cpus" -v p=$period 'BEGIN {printf "%d", c * p}')

	if systemd_pid1; then
		cat >/etc/systemd/system/$SLICE <<EOF
[Unit]
Description=isobox sandboxes (hard-capped parent)
[Slice]
MemoryMax=$mem
MemorySwapMax=0
TasksMax=$pids
CPUQuota=$(awk -v c="$cpus" 'BEGIN {printf "%d", c * 100}')%
CPUWeight=50
EOF
		systemctl daemon-reload
		systemctl start $SLICE
	elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		d=/sys/fs/cgroup/$SLICE
		mkdir -p "$d"
		echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		echo "$mem" >"$d/memory.max"
		echo 0 >"$d/memory.swap.max" 2>/dev/null || true
		echo "$pids" >"$d/pids.max"
		echo "$quota $period" >"$d/cpu.max"
		echo 50 >"$d/cpu.weight"
	else
		for c in memory pids cpu cpuacct cpuset blkio devices freezer; do
			[ -d /sys/fs/cgroup/$c ] && mkdir -p /sys/fs/cgroup/$c/$SLICE
		done
		d=/sys/fs/cgroup/cpuset/$SLICE
		if [ -d "$d" ]; then
			[ -s "$d/cpuset.cpus" ] || cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$d/cpuset.cpus"
			[ -s "$d/cpuset.mems" ] || cat /sys/fs/cgroup/cpuset/cpuset.mems >"$d/cpuset.mems"
		fi
		echo "$mem" >/sys/fs/cgroup/memory/$SLICE/memory.limit_in_bytes
		[ -f /sys/fs/cgroup/memory/$SLICE/memory.memsw.limit_in_bytes ] &&
			echo "$mem" >/sys/fs/cgroup/memory/$SLICE/memory.memsw.limit_in_bytes
		echo "$pids" >/sys/fs/cgroup/pids/$SLICE/pids.max
		echo $period >/sys/fs/cgroup/cpu/$SLICE/cpu.cfs_period_us
		echo "$quota" >/sys/fs/cgroup/cpu/$SLICE/cpu.cfs_quota_us
		echo 512 >/sys/fs/cgroup/cpu/$SLICE/cpu.shares
	fi
	say "cgroup parent $SLICE: memory=$mem pids=$pids cpus=$cpus"
	if [ "$(docker info -f '{{.CgroupDriver}}')" = systemd ]; then
		grep -q '^cgroupParent: isobox.slice' "$HERE/../conf/isobox.yaml" ||
			say "warning: dockerd uses the systemd cgroup driver: set 'cgroupParent: isobox.slice' in conf/isobox.yaml"
	fi
}

setup_user() {
	getent group isobox >/dev/null || groupadd --system isobox
	id isobox >/dev/null 2>&1 ||
		useradd --system --gid isobox --home-dir "$STATE" --no-create-home \
			--shell /usr/sbin/nologin isobox
	# The docker socket is root-equivalent: see docs/ARCHITECTURE.md.
	usermod -a -G docker isobox
	install -d -m 0755 -o root -g root "$STATE"
	# Per-request code directories: written only by the worker, mounted
	# read-only into the sandbox, so the host never reads what a sandbox wrote.
	install -d -m 0711 -o isobox -g isobox "$STATE/work"
	install -d -m 0755 -o root -g root "$LOG"
}

main() {
	local platform changed
	if [ "${1:-}" = --build-deps ]; then
		install_packages $BUILD_PACKAGES
		exit 0
	fi
	[ "$(id -u)" = 0 ] || die "run as root"
	if [ "${1:-}" = --check-egress ]; then
		exec bash "$HERE/egress.sh" check # the operator's self-test, after make run
	fi
	if [ "${1:-}" = --print ]; then
		echo "platform=$(detect_platform) systemd_pid1=$(systemd_pid1 && echo yes || echo no)"
		exit 0
	fi
	install_packages $PACKAGES
	# Node.js and npm for the stream test (tests/integration/sse); a host
	# may have them from elsewhere already.
	command -v node >/dev/null || install_packages nodejs
	command -v npm >/dev/null || install_packages npm
	platform=$(detect_platform)
	say "runsc platform: $platform"
	changed=$(configure_docker "$platform")
	start_docker "$changed"
	setup_user
	setup_slice
	say "done"
}

main "$@"
