#!/usr/bin/env bash
# Opt-in network egress for isobox: the docker bridge, the gVisor runtime
# with a network stack, and the host firewall, all made from the `network:`
# section of the installed conf. Run as root, after `make install` and the
# images (it probes with an image). Idempotent: run it again after editing
# the conf, after a reboot, or when the host's interfaces change; the worker
# refuses egress runs (503 network_unavailable) until it has.
#
#   deploy/egress.sh install   make or refresh everything (or remove it all
#                              when network.enabled is false)
#   deploy/egress.sh check     self-test from inside a sandbox; exit 1 if a
#                              probe is not blocked the way it must be
#   deploy/egress.sh remove    take it all away again
#
# Environment: PREFIX (/opt/isobox); for check, ISOBOX_EGRESS_PROBES (the
# addresses that must be blocked, "IP:PORT ..."; GATEWAY stands for the
# bridge's gateway) and ISOBOX_EGRESS_PUBLIC (IP:PORT that must be reachable;
# unset: reachability is not checked, so no packet leaves the host).
set -euo pipefail

PREFIX=${PREFIX:-/opt/isobox}
BIN=$PREFIX/bin/isobox-fcgi
CONF=$PREFIX/conf/isobox.yaml
LOCK=/var/lib/isobox/images.lock
DAEMON_JSON=/etc/docker/daemon.json

say() { printf 'egress: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# The network settings, as checked by the conf loader (shell-safe values).
load_plan() {
	local k v
	[ -x "$BIN" ] || die "$BIN missing: run make install"
	while IFS='=' read -r k v; do
		case $k in
		enabled | docker_network | bridge | subnet | gateway | runtime | state_dir)
			printf -v "$k" '%s' "$v" ;;
		esac
	done < <("$BIN" --conf "$CONF" --egress plan)
	[ -n "${state_dir:-}" ] || die "cannot read the network settings from $CONF"
}

# An image to probe with: bash has /dev/tcp and is small.
probe_image() {
	sed -n 's/^  bash: {id: "\(sha256:[0-9a-f]*\)".*/\1/p' "$LOCK" | head -1
}

# Point the egress runtime at runsc with one network mode; reload dockerd.
set_runtime() {
	local mode=$1 platform changed
	platform=$(head -1 /var/lib/isobox/platform)
	changed=$(python3 - "$(command -v runsc)" "$platform" "$runtime" "$mode" <<'EOF'
import json, os, sys
runsc, platform, name, mode = sys.argv[1:5]
path = "/etc/docker/daemon.json"
with open(path) as f:
    cfg = json.load(f)
want = {"path": runsc, "runtimeArgs": ["--platform=" + platform, "--network=" + mode]}
if cfg.get("runtimes", {}).get(name) != want:
    cfg.setdefault("runtimes", {})[name] = want
    with open(path + ".isobox-tmp", "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    os.replace(path + ".isobox-tmp", path)
    print("changed")
EOF
)
	if [ "$changed" = changed ]; then
		kill -HUP "$(cat /var/run/docker.pid)"
		for _ in $(seq 1 50); do
			docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q "\"$runtime\"" && return 0
			sleep 0.1
		done
		die "dockerd does not list the $runtime runtime"
	fi
}

# Does a sandbox boot on the egress network with this network mode? A
# start that fails inside runsc leaves its shim, gofer and sandbox
# processes behind, unknown to docker: kill them by the container's ID.
mode_works() {
	local cidfile ok=1
	set_runtime "$1"
	cidfile=$(mktemp -u /tmp/isobox-egress-probe.XXXXXX)
	timeout 60 docker run --rm --pull=never --cidfile="$cidfile" --runtime="$runtime" \
		--network="$docker_network" --user=65534:65534 --cap-drop=ALL --read-only \
		--entrypoint= "$(probe_image)" /bin/sh -c 'echo isobox-ok' 2>/dev/null |
		grep -qx isobox-ok || ok=0
	if [ $ok = 0 ] && [ -s "$cidfile" ]; then
		docker rm -f "$(cat "$cidfile")" >/dev/null 2>&1 || true
		pkill -9 -f "$(cat "$cidfile")" 2>/dev/null || true
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
	if [ -f $cache ] && [ "$(sed -n 2p $cache)" = "$version" ]; then
		m=$(head -1 $cache)
		set_runtime "$m"
		echo "$m"
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
	local mode
	load_plan
	if [ "$enabled" != 1 ]; then
		say "network.enabled is false in $CONF: removing egress"
		remove_egress
		return 0
	fi
	[ -n "$(probe_image)" ] || die "no bash image in $LOCK: run deploy/images/build.sh"
	# Without br_netfilter, traffic between sandboxes on the bridge would
	# never meet iptables: docker's icc=false and our rules would not hold.
	[ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" = 1 ] ||
		{ modprobe br_netfilter 2>/dev/null && sysctl -qw net.bridge.bridge-nf-call-iptables=1; } ||
		die "br_netfilter is not loaded (bridge-nf-call-iptables != 1): egress cannot be isolated"

	install -d -m 0755 "$state_dir"
	rm -f "$state_dir/boot" # the worker refuses egress while this is missing
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
	say "network $docker_network ($subnet on $bridge), runsc --network=$mode, firewall installed"
}

remove_egress() {
	local i
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
	iptables -F ISOBOX-EGRESS 2>/dev/null && iptables -X ISOBOX-EGRESS
	iptables -F ISOBOX-EGRESS-IN 2>/dev/null && iptables -X ISOBOX-EGRESS-IN
	ip6tables -F ISOBOX-EGRESS6 2>/dev/null && ip6tables -X ISOBOX-EGRESS6
	say "egress removed"
}

# One TCP connect from a sandbox on the egress network, with the worker's
# flags; prints what happened: "connected", "blocked" (EHOSTUNREACH: the
# firewall's icmp-admin-prohibited), or the error.
probe() {
	local ip=${1%:*} port=${1##*:}
	timeout 30 docker run --rm --pull=never --runtime="$runtime" --network="$docker_network" \
		--mount="type=bind,src=$state_dir/resolv.conf,dst=/etc/resolv.conf,readonly" \
		--user=65534:65534 --cap-drop=ALL --security-opt=no-new-privileges --read-only \
		--entrypoint= "$(probe_image)" /bin/bash -c '
		out=$(timeout 5 bash -c "exec 3<>/dev/tcp/$0/$1" 2>&1) && { echo connected; exit; }
		case $out in *"No route to host"*) echo blocked ;; *) echo "${out##*: }" ;; esac' \
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

[ "$(id -u)" = 0 ] || die "run as root"
case "${1:-}" in
install) install_egress ;;
check) check_egress ;;
remove) remove_egress ;;
*) die "usage: $0 install|check|remove" ;;
esac
