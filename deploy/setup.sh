#!/usr/bin/env bash
# isobox one-time host set-up (idempotent; run as root).
#
#   deploy/setup.sh            packages, docker + runsc-untrusted runtime,
#                              dockerd (if no service manager runs it),
#                              the isobox.slice cgroup parent, the isobox user,
#                              the files every sandbox gets (seccomp profile,
#                              empty resolv.conf)
#   deploy/setup.sh --print    show what it detected
#   deploy/setup.sh --backends which sandbox backends this host can run
#                              (gVisor; hardened runc; Firecracker needs KVM)
#   deploy/setup.sh --test     the same, and what the tests need (make test)
#   deploy/setup.sh --cluster  the same, and Redis (make cluster)
#   deploy/setup.sh --build-deps   only the packages needed to compile and run the unit tests
#   deploy/setup.sh --check-egress the egress self-test (deploy/egress.sh check;
#                              the firewall itself: deploy/egress.sh install)
#
# Tunables (environment):
#   ISOBOX_SLICE_MEMORY  bytes for all sandboxes together (default: half of RAM)
#   ISOBOX_SLICE_PIDS    tasks for all sandboxes together (default: 16384)
#   ISOBOX_SLICE_CPUS    CPUs for all sandboxes together  (default: 90% of
#                        cores, but never below the per-run cpus ceiling of
#                        the conf: the kernel refuses a child quota above its
#                        parent's; the slice also gets half the host's CPU
#                        weight, so the host wins under contention)
#   ISOBOX_SLICE_SOCKETS bytes of socket buffers for all sandboxes together
#                        (cgroup v1; default: half of the host's TCP "low"
#                        threshold, net.ipv4.tcp_mem[0], so that sandboxes
#                        alone never put the host's TCP under pressure)
#   ISOBOX_ALLOW_USERNS  1: accept a runsc without --oci-seccomp (user
#                        namespaces inside gVisor come back; refused otherwise)
#   PREFIX               where `make install` puts isobox (/opt/isobox): its
#                        binary reads the conf for the values above
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-/opt/isobox}
STATE=/var/lib/isobox
LOG=/var/log/isobox
RUNDIR=/run/isobox
SLICE=isobox.slice
# What each set is for; docs/DEPLOY.md ("What setup installs") points here.
# To build isobox (`make check` installs these alone, --build-deps; the
# unit tests start a redis-server of their own for the Redis store).
# libcurl: the public demo's one call out, to Cloudflare's siteverify.
BUILD_PACKAGES="gcc make pkg-config libfcgi-dev libcjson-dev libyaml-dev libcap-ng-dev libsqlite3-dev
 libhiredis-dev libsodium-dev libcurl4-openssl-dev xxd"
# To serve (`make run`, and setup.sh without options): nothing else. No
# web server but Caddy, which isobox runs itself on its own port.
#   docker.io      dockerd, which runs every sandbox (runsc comes from backports: install_runsc)
#   caddy          the web server in front of the FastCGI pool (deploy/caddy)
#   spawn-fcgi     starts the pool on its socket (deploy/pool.sh)
#   debootstrap    the images' Debian trees (deploy/images/build.sh)
#   iptables iproute2  the egress firewall and bridge (deploy/egress.sh)
#   procps curl    pool.sh's process checks and its wait for /healthz
#   python3        egress.sh's edit of daemon.json, and other scripts' helpers
#   sqlite3        the store's command line, for operators (the library is libsqlite3)
#   logrotate      rotates isobox.log (deploy/logrotate; pool.sh runs it where no cron does)
SERVE_PACKAGES="$BUILD_PACKAGES docker.io caddy spawn-fcgi debootstrap iptables iproute2 procps curl python3
 sqlite3 logrotate"
# For the cluster (`make cluster`, setup.sh --cluster): redis-server, the
# shared store (and valkey-server, which cluster.sh prefers: install_valkey);
# gettext-base, whose envsubst writes cluster.sh's configs.
CLUSTER_PACKAGES="redis-server gettext-base"
# To test (`make test`, setup.sh --test), on top of the two above; none of
# them is left running (policy-rc.d while installing, then disabled under
# systemd: stop_packaged_services):
#   python3-pytest python3-jsonschema python3-venv  the suite, its spec checks, the clients' venvs
#   apache2 nginx-light lighttpd lighttpd-modules-lua libfcgi-bin
#                  the other web servers the shipped configs are tested with
#   systemd        the shipped units, tested with systemd as a plain program
#   chromium       the playground, driven headless
#   prometheus     promtool, which checks /metrics
#   clang libclang-rt-14-dev  the fuzzers and the sanitizer builds
#   node-typescript  the TypeScript client's type check (nodejs, npm: below)
#   python3-mypy   the Python client's type check
#   python3-matplotlib  bench/'s plots
TEST_PACKAGES="$CLUSTER_PACKAGES python3-pytest python3-jsonschema python3-venv apache2 nginx-light lighttpd
 lighttpd-modules-lua libfcgi-bin systemd chromium prometheus clang libclang-rt-14-dev
 node-typescript python3-mypy python3-matplotlib"
# The services those packages would start: stopped and disabled when
# setup.sh installed them (a host's own are left alone).
PACKAGED_SERVICES="apache2:apache2 nginx-light:nginx lighttpd:lighttpd redis-server:redis-server
 valkey-server:valkey-server prometheus:prometheus"

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
	stop_packaged_services $missing
}

# Under systemd a package's service is also enabled for the next boot:
# disable those of the packages just installed (never a host's own).
stop_packaged_services() {
	systemd_pid1 || return 0
	local p entry
	for p in "$@"; do
		for entry in $PACKAGED_SERVICES; do
			[ "${entry%%:*}" = "$p" ] || continue
			say "disabling ${entry#*:}.service (installed for isobox's tests, not to serve)"
			systemctl disable --now "${entry#*:}.service" >/dev/null 2>&1 || true
		done
	done
}

# gVisor. Debian 12's own runsc is the 2022-12-19 snapshot; bookworm-backports
# has 2024-07-29 (nineteen months of Sentry fixes, and statx with
# AT_NO_AUTOMOUNT, which the old one refused). It is installed by this exact
# version, with every other package of that suite pinned to priority 1, so
# that nothing else is installed or upgraded from backports by accident. On
# a newer Debian, its own runsc of at least that version will do.
RUNSC_VERSION=0.0~20240729.0-4~bpo12+2
# Valkey, the fork of Redis that Debian ships (bookworm-backports 8.0,
# trixie 8.1): the store and the queue are tested against it as against
# Redis 7 (tests/unit/test_store.c), and cluster.sh runs it where it is
# installed. Pinned like runsc; for tests and clusters only (install_valkey).
VALKEY_VERSION=8.0.1+dfsg1-1~bpo12+1
RUNSC_AT_LEAST=0.0~20240729
BACKPORTS_SOURCES=/etc/apt/sources.list.d/isobox-bookworm-backports.sources
BACKPORTS_PIN=/etc/apt/preferences.d/isobox-bookworm-backports
# The pin: every package of bookworm-backports at 1, but those isobox
# names, each at its exact version.
backports_pin() {
	cat <<-EOF
	# deploy/setup.sh: nothing comes from bookworm-backports but what isobox names
	Package: *
	Pin: release n=bookworm-backports
	Pin-Priority: 1

	Package: runsc
	Pin: version $RUNSC_VERSION
	Pin-Priority: 990

	Package: valkey-server valkey-tools
	Pin: version $VALKEY_VERSION
	Pin-Priority: 990
	EOF
}

install_runsc() {
	local have codename
	have=$(dpkg-query -W -f='${Version}' runsc 2>/dev/null || true)
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if [ "$codename" != bookworm ]; then
		[ -n "$have" ] && dpkg --compare-versions "$have" ge "$RUNSC_AT_LEAST" && return 0
		install_packages runsc
		have=$(dpkg-query -W -f='${Version}' runsc)
		dpkg --compare-versions "$have" ge "$RUNSC_AT_LEAST" ||
			die "runsc $have is older than $RUNSC_AT_LEAST, which isobox needs"
		return 0
	fi
	[ "$have" = "$RUNSC_VERSION" ] && [ -f $BACKPORTS_PIN ] && return 0
	[ "$(id -u)" = 0 ] || die "runsc $RUNSC_VERSION is missing (run as root to install it)"
	cat >$BACKPORTS_SOURCES.new <<-EOF
	# deploy/setup.sh: for runsc only (see $BACKPORTS_PIN)
	Types: deb
	URIs: http://deb.debian.org/debian
	Suites: bookworm-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	backports_pin >$BACKPORTS_PIN.new
	mv -f $BACKPORTS_SOURCES.new $BACKPORTS_SOURCES
	mv -f $BACKPORTS_PIN.new $BACKPORTS_PIN
	say "installing runsc $RUNSC_VERSION from bookworm-backports (was: ${have:-none})"
	if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		--allow-downgrades "runsc=$RUNSC_VERSION" >/dev/null; then
		return 0
	fi
	# Backports cannot be reached (or has no such version any more): the
	# host keeps working on Debian 12's own runsc, and says so. The same
	# seccomp profile holds there (that runsc has no clone3 at all).
	rm -f $BACKPORTS_SOURCES $BACKPORTS_PIN
	say "warning: runsc $RUNSC_VERSION could not be installed from bookworm-backports: using Debian 12's runsc ${have:-(installing it)}, which lacks nineteen months of gVisor fixes; run setup again when backports can be reached"
	[ -n "$have" ] || install_packages runsc
}

# The platform, chosen by measurement: each one this runsc has (systrap
# when built in, kvm when a VM can be made, ptrace always) runs a short fixed
# workload in a sandbox (40 fork+exec of /bin/true: what most runs do is
# start programs), best of three, and the fastest wins. A try that does not
# finish within PLATFORM_TRY_S does not work (kvm under nested
# virtualisation boots and spins). The conf's sandbox.platform may name one
# instead of "auto". The answer, the runsc version, why, and the conf's
# choice are cached in $STATE/platform (line 1 the platform, which
# deploy/egress.sh reads), and measured again when either changes: a failed
# try costs its whole timeout.
PLATFORM_TRY_S=15
PLATFORM_WORKLOAD='i=0; while [ $i -lt 40 ]; do /bin/true; i=$((i+1)); done; echo isobox-ok'

# Run the workload on platform $1: print its milliseconds, or fail.
platform_try() {
	local out pid t0 t1
	out=$(mktemp)
	t0=$(date +%s%N)
	(cd / && exec runsc --platform="$1" --network=none do /bin/sh -c "$PLATFORM_WORKLOAD") >"$out" 2>/dev/null &
	pid=$!
	for _ in $(seq 1 $((PLATFORM_TRY_S * 50))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	t1=$(date +%s%N)
	# A hung try leaves runsc, its gofer and its sandbox (in a session of
	# its own): kill that tree, nothing else (other sandboxes on the host
	# run the same programs with the same flags).
	kill -0 "$pid" 2>/dev/null && kill_tree "$pid"
	wait "$pid" 2>/dev/null || true
	if [ "$(cat "$out")" = isobox-ok ]; then
		rm -f "$out"
		echo $(((t1 - t0) / 1000000))
		return 0
	fi
	rm -f "$out"
	return 1
}

# SIGKILL process $1 and all its descendants (found through /proc, twice:
# a child forked while the first round ran is caught by the second).
kill_tree() {
	local root=$1 p stat ppid tree changed
	local -A parent
	for _ in 1 2; do
		parent=()
		for p in /proc/[0-9]*; do
			stat=$(cat "$p/stat" 2>/dev/null) || continue
			stat=${stat##*) } # after "(comm)": state, ppid, ...
			ppid=${stat#* }
			parent[${p#/proc/}]=${ppid%% *}
		done
		tree=" $root " changed=1
		while [ $changed = 1 ]; do
			changed=0
			for p in "${!parent[@]}"; do
				if [[ $tree == *" ${parent[$p]} "* && $tree != *" $p "* ]]; then
					tree+="$p "
					changed=1
				fi
			done
		done
		kill -9 $tree 2>/dev/null || true
	done
}

detect_platform() {
	local runsc version cache=$STATE/platform wanted p t ms best="" best_ms="" why="" tries
	runsc=$(command -v runsc) || die "runsc not installed"
	version=$(runsc --version | head -1)
	wanted=$(conf_value platform)
	wanted=${wanted:-auto}
	if [ -f "$cache" ] && [ "$(sed -n 2p "$cache")" = "$version" ] && [ "$(sed -n 4p "$cache")" = "$wanted" ]; then
		head -1 "$cache"
		return 0
	fi
	case $wanted in
	auto) tries="ptrace systrap kvm" ;;
	ptrace | systrap | kvm) tries=$wanted ;;
	*) die "sandbox.platform must be auto, ptrace, systrap or kvm, not $wanted" ;;
	esac
	for p in $tries; do
		case $p in
		systrap) grep -aq systrap "$runsc" || { why+="$p: not in this runsc; "; continue; } ;;
		kvm) kvm_works || { why+="$p: no /dev/kvm that makes a VM; "; continue; } ;;
		esac
		ms=""
		for _ in 1 2 3; do
			t=$(platform_try "$p") || { ms=""; break; }
			if [ -z "$ms" ] || [ "$t" -lt "$ms" ]; then ms=$t; fi
		done
		if [ -z "$ms" ]; then
			why+="$p: no sandbox ran (within ${PLATFORM_TRY_S}s); "
			continue
		fi
		why+="$p: ${ms}ms; "
		if [ -z "$best" ] || [ "$ms" -lt "$best_ms" ]; then
			best=$p best_ms=$ms
		fi
	done
	[ -n "$best" ] || die "no runsc platform works on this host (${why%; })"
	why="${why%; } (40 fork+exec in a sandbox, best of 3; conf sandbox.platform: $wanted)"
	mkdir -p "$STATE"
	printf '%s\n%s\n%s\n%s\n' "$best" "$version" "$why" "$wanted" >"$cache"
	say "runsc platform $best chosen: $why"
	echo "$best"
}

# runsc-untrusted in /etc/docker/daemon.json (deploy/egress.sh writes the
# file, for both runtimes). --network=none: no network stack at all in the
# sandbox (loopback only), whatever docker sets up; egress runs use a
# runtime of their own. --oci-seccomp: runsc applies the seccomp profile
# the worker passes to the sandboxed program (no new user namespaces); a
# runsc without it is refused (fail closed) unless the operator says
# ISOBOX_ALLOW_USERNS=1, knowing what it gives back (docs/THREAT_MODEL.md).
configure_docker() {
	local platform=$1 seccomp=""
	if runsc --oci-seccomp --version >/dev/null 2>&1; then
		seccomp=--oci-seccomp
	elif [ "${ISOBOX_ALLOW_USERNS:-}" = 1 ]; then
		say "warning: this runsc has no --oci-seccomp: sandboxed code can make user namespaces (ISOBOX_ALLOW_USERNS=1)"
	else
		die "this runsc has no --oci-seccomp, so sandboxed code could make user namespaces (raw sockets, TUN): upgrade runsc, or set ISOBOX_ALLOW_USERNS=1 to accept that (docs/THREAT_MODEL.md)"
	fi
	bash "$HERE/egress.sh" runtime "$RUNTIME" "$(command -v runsc)" \
		"--platform=$platform" --network=none ${seccomp:+"$seccomp"}
	# The runc backend's runtime (conf backend: runc), there whichever
	# backend runs, so that switching is a conf change: runc, with a user
	# namespace per container in which the program's uid 65534 is a host
	# uid that no host user has (RUNC_HOST_ID in sandbox/uids.h).
	bash "$HERE/egress.sh" runtime isobox-runc "$PREFIX/bin/isobox-runc" \
		"--isobox-runc=$(readlink -f "$(command -v runc)")"
}

# What every sandbox gets from the host, root-owned, read by the worker's
# docker client or mounted read-only: the seccomp profile (conf
# sandbox.seccompProfile), for runs without network a resolv.conf naming no
# resolver (sandbox.resolvConf) instead of the host's and an /etc/hosts
# (sandbox.hostsFile), and the warm pool's agents (warm.agentDir).
sandbox_files() {
	install -d -m 0755 -o root -g root "$STATE/sandbox"
	install -m 0644 -o root -g root "$HERE/seccomp.json" "$STATE/sandbox/seccomp.json"
	install -m 0644 -o root -g root "$HERE/seccomp-runc.json" "$STATE/sandbox/seccomp-runc.json"
	# The agents (sandbox/agent/), mounted read-only at /isobox-agent: the
	# warm pool's scripts and the kernels here, the session agent (a
	# binary) by `make install`.
	install -d -m 0755 -o root -g root "$STATE/sandbox/agent"
	install -m 0644 -o root -g root "$HERE"/../sandbox/agent/*.py "$HERE"/../sandbox/agent/*.js "$STATE/sandbox/agent/"
	printf '# isobox: this run has no network, so no resolver\n' >"$STATE/sandbox/resolv.conf.new"
	chmod 0644 "$STATE/sandbox/resolv.conf.new"
	mv -f "$STATE/sandbox/resolv.conf.new" "$STATE/sandbox/resolv.conf"
	# Their /etc/hosts (sandbox.hostsFile): what docker writes for a
	# container of network "none", which dockerd no longer sets up for them.
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n' \
		>"$STATE/sandbox/hosts.new"
	chmod 0644 "$STATE/sandbox/hosts.new"
	mv -f "$STATE/sandbox/hosts.new" "$STATE/sandbox/hosts"
}

# A value from the conf that the pool uses, printed by its binary (no
# script reads the YAML); empty if isobox is not installed or built yet.
conf_value() {
	local bin conf k v
	for bin in "$PREFIX/bin/isobox-fcgi:$PREFIX/conf/isobox.yaml" "$HERE/../bin/isobox-fcgi:$HERE/../conf/isobox.yaml"; do
		conf=${bin#*:} bin=${bin%%:*}
		[ -x "$bin" ] && [ -f "$conf" ] || continue
		while IFS='=' read -r k v; do
			[ "$k" = "$1" ] && { echo "$v"; return 0; }
		done < <("$bin" --conf "$conf" --print-conf 2>/dev/null)
	done
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
	local ceiling sockets
	# Not installed yet: all cores, which no sane ceiling exceeds.
	ceiling=$(conf_value ceilings_cpus)
	cpus=${ISOBOX_SLICE_CPUS:-$(awk -v n="$(nproc)" -v c="${ceiling:-$(nproc)}" \
		'BEGIN {x = n * 0.9; if (x < c) x = c; printf "%.2f", x}')}
	sockets=${ISOBOX_SLICE_SOCKETS:-$(($(cut -f1 /proc/sys/net/ipv4/tcp_mem) * $(getconf PAGESIZE) / 2))}
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
		# systemd has no setting for it: on cgroup v1 the slice-wide cap
		# on egress runs' socket buffers is written as below.
		d=/sys/fs/cgroup/memory/$SLICE
		[ ! -f "$d/memory.kmem.tcp.limit_in_bytes" ] || echo "$sockets" >"$d/memory.kmem.tcp.limit_in_bytes"
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
		for c in memory pids cpu cpuacct cpuset blkio devices freezer systemd; do
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
		# Socket buffers of egress runs (host kernel sockets) are charged
		# to each run's own memory.kmem.tcp (set by runsc-egress, see
		# deploy/egress.sh) and, through it, to this cap for them all.
		echo "$sockets" >/sys/fs/cgroup/memory/$SLICE/memory.kmem.tcp.limit_in_bytes
		echo "$pids" >/sys/fs/cgroup/pids/$SLICE/pids.max
		echo $period >/sys/fs/cgroup/cpu/$SLICE/cpu.cfs_period_us
		echo "$quota" >/sys/fs/cgroup/cpu/$SLICE/cpu.cfs_quota_us
		echo 512 >/sys/fs/cgroup/cpu/$SLICE/cpu.shares
	fi
	# The pool master's reaper (sandbox/reap.c) removes the empty cgroups
	# that a sandbox which died starting left under the slice: rmdir there
	# needs the slice's dir to be the service user's. Its files (the caps
	# above) stay root's.
	for d in /sys/fs/cgroup/$SLICE /sys/fs/cgroup/*/$SLICE; do
		[ ! -d "$d" ] || chown isobox:isobox "$d"
	done
	say "cgroup parent $SLICE: memory=$mem pids=$pids cpus=$cpus$([ -f /sys/fs/cgroup/cgroup.controllers ] || echo " sockets=$sockets")"
	if [ "$(docker info -f '{{.CgroupDriver}}')" = systemd ]; then
		[ "$(conf_value cgroup_parent)" = isobox.slice ] ||
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
	# Sessions: a record, a lock and the pipes of each (sandbox/session.c).
	install -d -m 0700 -o isobox -g isobox "$STATE/sessions"
	# The store (conf/store/store.h): one SQLite file and its WAL, the workers'.
	install -d -m 0700 -o isobox -g isobox "$STATE/store"
	install -d -m 0755 -o root -g root "$LOG"
}

# Which sandbox backends this host can run (docs/BACKENDS.md): gVisor with
# the platform found; hardened runc needs only runc (a weaker boundary,
# the host kernel); Firecracker needs KVM, which a cloud VM has only with
# nested virtualisation. Printed, so that an operator knows the choice.
# KVM works if a VM can be made (KVM_GET_API_VERSION is 12, KVM_CREATE_VM
# succeeds): a /dev/kvm that is there is not always one that works.
kvm_works() {
	[ -c /dev/kvm ] && python3 -c '
import fcntl, os
fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
assert fcntl.ioctl(fd, 0xAE00) == 12
os.close(fcntl.ioctl(fd, 0xAE01, 0))' 2>/dev/null
}

backends() {
	local platform=$1 kvm=no
	kvm_works && kvm=yes
	echo "gvisor: yes (runsc, platform $platform)"
	echo "runc: $(command -v runc >/dev/null && echo "yes (conf backend: runc; the host's kernel is the boundary)" || echo "no runc")"
	if [ "$kvm" = yes ]; then
		echo "firecracker: KVM works here (a VM can be made); the backend is designed, not built (docs/BACKENDS.md)"
	else
		echo "firecracker: no (KVM does not work here: no /dev/kvm, or no nested virtualisation in this VM)"
	fi
}

install_valkey() {
	command -v valkey-server >/dev/null && return 0
	local codename
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if [ "$codename" = bookworm ]; then
		[ -f $BACKPORTS_SOURCES ] || install_runsc # it adds the backports source
		[ -f $BACKPORTS_SOURCES ] || die "valkey-server needs bookworm-backports, which cannot be reached"
		grep -q '^Package: valkey-server' $BACKPORTS_PIN 2>/dev/null ||
			{ backports_pin >$BACKPORTS_PIN.new && mv -f $BACKPORTS_PIN.new $BACKPORTS_PIN; }
	fi
	install_packages valkey-server valkey-tools
}

main() {
	local platform changed
	if [ "${1:-}" = --build-deps ]; then
		install_packages $BUILD_PACKAGES redis-server
		install_valkey
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
	if [ "${1:-}" = --backends ]; then
		backends "$(detect_platform)"
		exit 0
	fi
	case "${1:-}" in
	--test)
		install_packages $SERVE_PACKAGES $TEST_PACKAGES
		# Node.js and npm for the stream test and the JavaScript client
		# (tests/integration/sse, js); a host may have them from elsewhere.
		command -v node >/dev/null || install_packages nodejs
		command -v npm >/dev/null || install_packages npm
		install_valkey
		;;
	--cluster)
		install_packages $SERVE_PACKAGES $CLUSTER_PACKAGES
		install_valkey
		;;
	"") install_packages $SERVE_PACKAGES ;;
	*) die "unknown option $1 (see the top of $0)" ;;
	esac
	install_runsc
	platform=$(detect_platform)
	say "runsc platform: $platform"
	RUNTIME=$(conf_value runtime)
	RUNTIME=${RUNTIME:-runsc-untrusted}
	changed=$(configure_docker "$platform")
	start_docker "$changed"
	setup_user
	sandbox_files
	setup_slice
	backends "$platform" | while read -r line; do say "backend $line"; done
	say "done"
}

# Sourced (tests/integration/test_deploy_scripts.py): functions only.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
