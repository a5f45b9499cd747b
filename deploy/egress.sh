#!/usr/bin/env bash
# Opt-in network egress for isobox: the docker bridge, the gVisor runtime
# with a network stack (and its wrapper, runsc-egress), and the host
# firewall, all made from the `network:` section of the installed conf. Run
# as root, after `make install` and the images (it probes with an image).
# Idempotent: run it again after editing the conf, after a reboot, after an
# upgrade of isobox (`make run` does), or when the host's interfaces change;
# the worker refuses egress runs (503 network_unavailable) until it has.
#
#   deploy/egress.sh install   make or refresh everything (or remove it all
#                              when network.enabled is false)
#   deploy/egress.sh check     self-test from inside a sandbox; exit 1 if a
#                              probe is not blocked the way it must be
#   deploy/egress.sh remove    take it all away again
#   deploy/egress.sh runtime NAME PATH [ARG...]
#                              set one runtime in /etc/docker/daemon.json,
#                              keeping the rest; prints "changed" if it did
#                              (deploy/setup.sh uses it for runsc-untrusted)
#
# Environment: PREFIX (/opt/isobox); for check, ISOBOX_EGRESS_PROBES (the
# addresses that must be blocked, "IP:PORT ..."; GATEWAY stands for the
# bridge's gateway) and ISOBOX_EGRESS_PUBLIC (IP:PORT that must be reachable;
# unset: reachability is not checked, so no packet leaves the host).
set -euo pipefail

PREFIX=${PREFIX:-/opt/isobox}
BIN=$PREFIX/bin/isobox-fcgi
CONF=$PREFIX/conf/isobox.yaml
DAEMON_JSON=/etc/docker/daemon.json
WRAPPER_DIR=/usr/local/lib/isobox
WRAPPER=$WRAPPER_DIR/runsc-egress

say() { printf 'egress: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# The network settings, as checked by the conf loader (shell-safe values).
load_plan() {
	local k v
	[ -x "$BIN" ] || die "$BIN missing: run make install"
	while IFS='=' read -r k v; do
		case $k in
		enabled | docker_network | bridge | subnet | gateway | runtime | state_dir | allow)
			printf -v "$k" '%s' "$v" ;;
		esac
	done < <("$BIN" --conf "$CONF" --egress plan)
	[ -n "${state_dir:-}" ] || die "cannot read the network settings from $CONF"
}

# An image to probe with: bash has /dev/tcp and is small.
probe_image() {
	"$BIN" --conf "$CONF" --print-conf | sed -n 's/^image_bash=//p'
}

# The flags of an egress sandbox as the worker renders them (isobox-fcgi
# --print-spec: every hardening flag, its runtime, network and resolvers),
# into the array sandbox_flags, without what names or feeds one sandbox
# (its name, labels, stdin, code mount, the agent whose reporter starts
# its program) or, with "no-resolv", the
# resolvers' file (not written yet while the network mode is picked).
load_sandbox_flags() {
	local spec a
	mapfile -d '' spec < <("$BIN" --conf "$CONF" --print-spec argv network bash)
	[ ${#spec[@]} -gt 2 ] || die "cannot read an egress sandbox's flags (isobox-fcgi --print-spec)"
	sandbox_flags=()
	for a in "${spec[@]:2}"; do
		case $a in
		--entrypoint=) break ;;
		--name=* | --label=* | --interactive | *,dst=/src,* | *,dst=/isobox-agent,*) ;;
		*,dst=/etc/resolv.conf,*) [ "${1:-}" = no-resolv ] || sandbox_flags+=("$a") ;;
		*) sandbox_flags+=("$a") ;;
		esac
	done
}

# The one place that writes /etc/docker/daemon.json: runtime NAME is PATH
# with ARGS, everything else in the file is kept. Prints "changed" if the
# file changed (the caller reloads dockerd).
runtime_entry() {
	mkdir -p "$(dirname "$DAEMON_JSON")"
	python3 - "$DAEMON_JSON" "$@" <<'EOF'
import json, os, sys
path, name, runtime, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
try:
    with open(path) as f:
        cfg = json.load(f)
except FileNotFoundError:
    cfg = {}
want = {"path": runtime, "runtimeArgs": args}
if cfg.get("runtimes", {}).get(name) != want:
    cfg.setdefault("runtimes", {})[name] = want
    with open(path + ".isobox-tmp", "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    os.replace(path + ".isobox-tmp", path)
    print("changed")
EOF
}

# The last runsc flag of both isobox runtimes: --oci-seccomp makes runsc
# apply the seccomp profile that the worker passes (docker --security-opt
# seccomp=...) to the sandboxed program, where this runsc has the flag.
runsc_seccomp_flag() {
	if runsc --oci-seccomp --version >/dev/null 2>&1; then echo --oci-seccomp; fi
}

# Point the egress runtime at the wrapper with one network mode; reload dockerd.
set_runtime() {
	local mode=$1 platform changed seccomp
	platform=$(head -1 /var/lib/isobox/platform)
	seccomp=$(runsc_seccomp_flag)
	changed=$(runtime_entry "$runtime" "$WRAPPER" "--platform=$platform" "--network=$mode" \
		${seccomp:+"$seccomp"})
	if [ "$changed" = changed ]; then
		kill -HUP "$(cat /var/run/docker.pid)"
		for _ in $(seq 1 50); do
			docker info --format '{{json .Runtimes}}' 2>/dev/null |
				grep -qF "\"$runtime\":{\"path\":\"$WRAPPER\"" && return 0
			sleep 0.1
		done
		die "dockerd does not list the $runtime runtime"
	fi
}

# The wrapper that docker runs as the egress runtime (root): it adds what
# docker cannot express before the sandboxed program starts (see its text).
install_wrapper() {
	install -d -m 0755 -o root -g root "$WRAPPER_DIR"
	wrapper_text | sed "s|@RUNSC@|$(command -v runsc)|" >"$WRAPPER.new"
	chmod 0755 "$WRAPPER.new"
	mv -f "$WRAPPER.new" "$WRAPPER"
}

wrapper_text() {
	cat <<'WRAPPER'
#!/bin/bash
# runsc-egress: the OCI runtime of isobox's egress runs. Docker's runtime
# `runsc-egress` points here; deploy/egress.sh install writes this file.
#
# It runs as root, called by containerd's shim with runsc's own argv, and
# takes nothing from a request. Every command is runsc's, unchanged, but
# `create` is followed (the sandbox exists, its program has not started) by
# two limits that docker has no flag for:
#   - socket memory. With runsc --network=host the sandbox's sockets are
#     host kernel sockets. On cgroup v1 their buffers are charged to a
#     cgroup only once its memory.kmem.tcp.limit_in_bytes is written: it is
#     set to the container's own memory limit (TCP and UDP both count
#     there). cgroup v2 charges them to memory.max already.
#   - docker's embedded DNS. Docker serves 127.0.0.11 (DNAT to random
#     ports, all on that address) inside the container's network namespace
#     and answers PTR queries with the names of other sandboxes. Filter
#     rules in that namespace reject everything sent to 127.0.0.11 (TCP
#     with a reset: ICMP errors are rate-limited, and a connect that gets
#     none hangs).
# If either fails, the sandbox is deleted and create fails: no egress run
# starts without them.
set -euo pipefail
PATH=/usr/sbin:/usr/bin:/sbin:/bin
RUNSC=@RUNSC@

# An error goes to stderr and, as runsc's own would, to the --log file
# (JSON lines), where containerd finds the message that docker shows.
die() {
	local msg="runsc-egress: $*" log="" k
	printf '%s\n' "$msg" >&2
	for ((k = 0; k < ${#args[@]}; k++)); do
		case ${args[k]} in
		--log) log=${args[k + 1]:-} ;;
		--log=*) log=${args[k]#*=} ;;
		esac
	done
	msg=${msg//\\/\\\\} msg=${msg//\"/\\\"}
	[ -z "$log" ] || printf '{"level":"error","msg":"%s","time":"%s"}\n' "$msg" \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$log" 2>/dev/null || true
	exit 1
}

# The subcommand is the first word after runsc's global flags; the flags
# with a separate value are those containerd passes.
args=("$@") i=0 cmd=""
while [ $i -lt ${#args[@]} ]; do
	case ${args[i]} in
	--root | --log | --log-format | --debug-log | --panic-log) i=$((i + 2)) ;;
	-*) i=$((i + 1)) ;;
	*) cmd=${args[i]}; break ;;
	esac
done
if [ "$cmd" != create ]; then
	# A create that was not recognised would start without the limits.
	for a in "$@"; do [ "$a" != create ] || die "cannot tell the command in: $*"; done
	exec "$RUNSC" "$@"
fi
global=("${args[@]:0:i}")
id="" pidfile=""
for ((j = i + 1; j < ${#args[@]}; j++)); do
	case ${args[j]} in
	--pid-file) pidfile=${args[j + 1]:-}; j=$((j + 1)) ;;
	--pid-file=*) pidfile=${args[j]#*=} ;;
	--bundle | --console-socket | --user-log) j=$((j + 1)) ;;
	-*) ;;
	*) [ -z "$id" ] || die "two container ids: $id ${args[j]}"; id=${args[j]} ;;
	esac
done
[[ $id =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || die "no container id in: $*"
[ -n "$pidfile" ] || die "create without --pid-file: cannot find the sandbox"

# Is process $1 the sandbox of this container (an argv element is the id)?
is_sandbox() {
	local a
	while IFS= read -r -d '' a; do [ "$a" != "$id" ] || return 0; done <"/proc/$1/cmdline"
	return 1
}

# Runs in a condition, where set -e does not hold: every step checks itself.
limit() {
	local pid cg dir want got
	pid=$(<"$pidfile") || { echo "no pid file"; return 1; }
	[[ $pid =~ ^[0-9]+$ ]] && is_sandbox "$pid" || { echo "no sandbox process ($pid)"; return 1; }
	if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
		cg=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' "/proc/$pid/cgroup")
		[[ ${cg##*/} == *"$id"* ]] || { echo "memory cgroup '$cg' is not the container's"; return 1; }
		dir=/sys/fs/cgroup/memory$cg
		want=$(<"$dir/memory.limit_in_bytes") && [[ $want =~ ^[0-9]+$ ]] ||
			{ echo "no memory limit in $dir"; return 1; }
		echo "$want" >"$dir/memory.kmem.tcp.limit_in_bytes" &&
			got=$(<"$dir/memory.kmem.tcp.limit_in_bytes") && [ "$got" = "$want" ] ||
			{ echo "cannot set $dir/memory.kmem.tcp.limit_in_bytes to $want"; return 1; }
	fi
	[ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
		{ echo "the sandbox is in the host's network namespace"; return 1; }
	printf '%s\n' '*filter' \
		'-I OUTPUT 1 -d 127.0.0.11/32 -p tcp -j REJECT --reject-with tcp-reset' \
		'-I OUTPUT 2 -d 127.0.0.11/32 -j REJECT --reject-with icmp-admin-prohibited' 'COMMIT' |
		nsenter --net="/proc/$pid/ns/net" iptables-restore --noflush || { echo "iptables failed"; return 1; }
	# Still the same process: a reused pid would name another container.
	is_sandbox "$pid" || { echo "the sandbox process went away"; return 1; }
}

"$RUNSC" "$@" || exit $?
if ! why=$(limit 2>&1); then
	"$RUNSC" "${global[@]}" delete --force "$id" >/dev/null 2>&1 || true
	die "$why: the sandbox is deleted"
fi
WRAPPER
}

# SIGKILL the processes with an argv element that names container $1: the
# element is the id, or has it as a path component (the shim, the gofer,
# the sandbox). Ids are 64 random hex digits: nothing else can match.
kill_container_processes() {
	local id=$1 p a
	[[ $id =~ ^[0-9a-f]{64}$ ]] || return 0
	for p in /proc/[0-9]*; do
		while IFS= read -r -d '' a; do
			case /$a/ in
			*"/$id/"* | *"=$id/"*)
				kill -9 "${p#/proc/}" 2>/dev/null || true
				break
				;;
			esac
		done 2>/dev/null <"$p/cmdline" || true
	done
}

# Does a sandbox boot on the egress network with this network mode? A
# start that fails inside runsc leaves its shim, gofer and sandbox
# processes behind, unknown to docker: kill them by the container's ID.
mode_works() {
	local cidfile ok=1 i
	set_runtime "$1"
	load_sandbox_flags no-resolv
	# The runtime being set up, whichever backend the conf names.
	for i in "${!sandbox_flags[@]}"; do
		case ${sandbox_flags[i]} in --runtime=*) sandbox_flags[i]=--runtime=$runtime ;; esac
	done
	cidfile=$(mktemp -u /tmp/isobox-egress-probe.XXXXXX)
	timeout 60 docker run --rm --cidfile="$cidfile" "${sandbox_flags[@]}" \
		--entrypoint= "$(probe_image)" /bin/sh -c 'echo isobox-ok' 2>/dev/null |
		grep -qx isobox-ok || ok=0
	if [ $ok = 0 ] && [ -s "$cidfile" ]; then
		docker rm -f "$(cat "$cidfile")" >/dev/null 2>&1 || true
		kill_container_processes "$(cat "$cidfile")"
	fi
	rm -f "$cidfile"
	[ $ok = 1 ]
}

# gVisor's own network stack (netstack) where it works, else the host
# kernel's stack inside the container's network namespace (weaker: see
# docs/THREAT_MODEL.md). Cached per runsc version: a failed try is slow.
pick_mode() {
	local version cache=/var/lib/isobox/egress-mode m
	version=$(runsc --version | head -1)
	# The cached mode is tried once (through the wrapper, which may be new).
	if [ -f $cache ] && [ "$(sed -n 2p $cache)" = "$version" ] && mode_works "$(head -1 $cache)"; then
		head -1 $cache
		return 0
	fi
	for m in sandbox host; do
		if mode_works "$m"; then
			printf '%s\n%s\n' "$m" "$version" >$cache
			echo "$m"
			return 0
		fi
		say "runsc --network=$m does not work here"
	done
	die "no runsc network mode works on this host"
}

make_network() {
	local have
	have=$(docker network inspect "$docker_network" --format \
		'{{index .Options "com.docker.network.bridge.name"}} {{range .IPAM.Config}}{{.Subnet}}{{end}} {{index .Options "com.docker.network.bridge.enable_icc"}} {{.EnableIPv6}}' \
		2>/dev/null) || have=""
	[ "$have" = "$bridge $subnet false false" ] && return 0
	if [ -n "$have" ]; then
		say "recreating docker network $docker_network (was: $have)"
		docker network rm "$docker_network" >/dev/null
	fi
	# No inter-container traffic (needs br_netfilter: checked below), no IPv6.
	docker network create --driver bridge --subnet "$subnet" --gateway "$gateway" \
		--opt com.docker.network.bridge.name="$bridge" \
		--opt com.docker.network.bridge.enable_icc=false \
		--label isobox.egress=1 "$docker_network" >/dev/null
}

hook() { # hook TOOL CHAIN TARGET: jump from CHAIN to TARGET for the bridge, once
	"$1" -C "$2" -i "$bridge" -j "$3" 2>/dev/null || "$1" -I "$2" 1 -i "$bridge" -j "$3"
}

unhook() {
	while "$1" -D "$2" -i "$bridge" -j "$3" 2>/dev/null; do :; done
}

install_egress() {
	local mode a
	load_plan
	if [ "$enabled" != 1 ]; then
		say "network.enabled is false in $CONF: removing egress"
		remove_egress
		return 0
	fi
	[ -n "$(probe_image)" ] || die "no bash image is built (isobox-fcgi --print-conf): run deploy/images/build.sh"
	# Without br_netfilter, traffic between sandboxes on the bridge would
	# never meet iptables: docker's icc=false and our rules would not hold.
	[ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" = 1 ] ||
		{ modprobe br_netfilter 2>/dev/null && sysctl -qw net.bridge.bridge-nf-call-iptables=1; } ||
		die "br_netfilter is not loaded (bridge-nf-call-iptables != 1): egress cannot be isolated"

	install -d -m 0755 "$state_dir"
	rm -f "$state_dir/boot" # the worker refuses egress while this is missing
	install_wrapper
	make_network
	mode=$(pick_mode)
	"$BIN" --conf "$CONF" --egress rules >"$state_dir/rules.v4.new"
	iptables-restore --noflush <"$state_dir/rules.v4.new"
	hook iptables DOCKER-USER ISOBOX-EGRESS
	hook iptables INPUT ISOBOX-EGRESS-IN
	# IPv6 is off on the network; should it ever be on, nothing passes.
	printf '*filter\n:ISOBOX-EGRESS6 - [0:0]\n-A ISOBOX-EGRESS6 -j REJECT\nCOMMIT\n' |
		ip6tables-restore --noflush
	hook ip6tables FORWARD ISOBOX-EGRESS6
	hook ip6tables INPUT ISOBOX-EGRESS6
	"$BIN" --conf "$CONF" --egress resolv >"$state_dir/resolv.conf.new"
	mv -f "$state_dir/resolv.conf.new" "$state_dir/resolv.conf"
	mv -f "$state_dir/rules.v4.new" "$state_dir/rules.v4"
	echo "$mode" >"$state_dir/mode"
	cat /proc/sys/kernel/random/boot_id >"$state_dir/boot"
	chmod 0644 "$state_dir"/*
	for a in $allow; do
		say "network.allow: $a is taken off the deny list (not the host, the bridge or the mail ports)"
	done
	say "network $docker_network ($subnet on $bridge), runsc --network=$mode via $WRAPPER, firewall installed"
}

remove_egress() {
	local i c
	load_plan
	# First the record: the worker starts no more egress runs. Then the
	# runs on the bridge and the bridge itself, and only then the rules,
	# so that nothing is ever on the bridge without them.
	rm -f "$state_dir/boot" "$state_dir/rules.v4" "$state_dir/mode" "$state_dir/resolv.conf"
	if docker network inspect "$docker_network" >/dev/null 2>&1; then
		for i in 1 2 3 4 5; do
			docker ps -aq --filter network="$docker_network" | xargs -r docker rm -f >/dev/null 2>&1 || true
			docker network rm "$docker_network" >/dev/null 2>&1 && break
			sleep 1
		done
		! docker network inspect "$docker_network" >/dev/null 2>&1 ||
			die "cannot remove docker network $docker_network; the firewall stays"
	fi
	unhook iptables DOCKER-USER ISOBOX-EGRESS
	unhook iptables INPUT ISOBOX-EGRESS-IN
	unhook ip6tables FORWARD ISOBOX-EGRESS6
	unhook ip6tables INPUT ISOBOX-EGRESS6
	# Flush all first: ISOBOX-EGRESS jumps to ISOBOX-EGRESS-DENY.
	for c in ISOBOX-EGRESS ISOBOX-EGRESS-DENY ISOBOX-EGRESS-IN; do iptables -F "$c" 2>/dev/null || true; done
	for c in ISOBOX-EGRESS ISOBOX-EGRESS-DENY ISOBOX-EGRESS-IN; do iptables -X "$c" 2>/dev/null || true; done
	ip6tables -F ISOBOX-EGRESS6 2>/dev/null || true
	ip6tables -X ISOBOX-EGRESS6 2>/dev/null || true
	say "egress removed"
}

# One TCP connect from a sandbox on the egress network, with the worker's
# flags (sandbox_flags: load_sandbox_flags first); prints what happened:
# "connected", "blocked" (EHOSTUNREACH: the firewall's
# icmp-admin-prohibited), or the error.
probe() {
	local ip=${1%:*} port=${1##*:}
	timeout 30 docker run --rm "${sandbox_flags[@]}" \
		--entrypoint= "$(probe_image)" /bin/bash -c '
		out=$(timeout 5 bash -c "exec 3<>/dev/tcp/$0/$1" 2>&1) && { echo connected; exit; }
		case $out in
		*"No route to host"*) echo blocked ;;
		*"Connection refused"*) echo refused ;;
		*) echo "${out##*: }" ;;
		esac' \
		"$ip" "$port" 2>&1 | tail -1
}

check_egress() {
	local failed=0 p got probes
	load_plan
	[ "$enabled" = 1 ] || { say "network.enabled is false: egress is off"; return 0; }
	[ -s "$state_dir/boot" ] && [ "$(cat "$state_dir/boot")" = "$(cat /proc/sys/kernel/random/boot_id)" ] ||
		{ say "FAIL: not installed since the last boot: run deploy/egress.sh install"; return 1; }
	"$BIN" --conf "$CONF" --egress rules | cmp -s - "$state_dir/rules.v4" ||
		{ say "FAIL: the settings or interfaces changed since install: run deploy/egress.sh install"; return 1; }
	for p in "iptables DOCKER-USER ISOBOX-EGRESS" "iptables INPUT ISOBOX-EGRESS-IN" \
		"ip6tables FORWARD ISOBOX-EGRESS6"; do
		set -- $p
		"$1" -C "$2" -i "$bridge" -j "$3" 2>/dev/null ||
			{ say "FAIL: $1 $2 does not jump to $3"; failed=1; }
	done
	docker info --format '{{json .Runtimes}}' | grep -qF "\"$runtime\":{\"path\":\"$WRAPPER\"" ||
		{ say "FAIL: docker's $runtime runtime is not $WRAPPER"; failed=1; }
	load_sandbox_flags
	# Docker's embedded DNS answers on 127.0.0.11:53 unless the wrapper's
	# rules reject it (with a reset: "refused" here).
	got=$(probe 127.0.0.11:53)
	if [ "$got" = refused ]; then
		say "ok: 127.0.0.11:53 (docker's DNS) refused"
	else
		say "FAIL: 127.0.0.11:53 (docker's DNS) from a sandbox: $got (want refused)"
		failed=1
	fi
	probes=${ISOBOX_EGRESS_PROBES:-"GATEWAY:53 169.254.169.254:80 10.0.0.1:80 172.16.0.1:80 192.168.0.1:80 100.64.0.1:80 198.51.100.25:25"}
	for p in ${probes//GATEWAY/$gateway}; do
		got=$(probe "$p")
		if [ "$got" = blocked ]; then
			say "ok: $p blocked"
		else
			say "FAIL: $p from a sandbox: $got (want blocked)"
			failed=1
		fi
	done
	if [ -n "${ISOBOX_EGRESS_PUBLIC:-}" ]; then
		got=$(probe "$ISOBOX_EGRESS_PUBLIC")
		if [ "$got" = connected ]; then
			say "ok: $ISOBOX_EGRESS_PUBLIC reachable"
		else
			say "FAIL: $ISOBOX_EGRESS_PUBLIC from a sandbox: $got (want connected)"
			failed=1
		fi
	else
		say "public reachability not checked (set ISOBOX_EGRESS_PUBLIC=IP:PORT)"
	fi
	[ $failed = 0 ] && say "egress check passed (runsc --network=$(cat "$state_dir/mode"))"
	return $failed
}

main() {
	[ "$(id -u)" = 0 ] || die "run as root"
	case "${1:-}" in
	install) install_egress ;;
	check) check_egress ;;
	remove) remove_egress ;;
	runtime) shift; [ $# -ge 2 ] || die "usage: $0 runtime NAME PATH [ARG...]"; runtime_entry "$@" ;;
	*) die "usage: $0 install|check|remove|runtime NAME PATH [ARG...]" ;;
	esac
}

# Sourced (tests/integration/test_deploy_scripts.py): functions only.
[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
