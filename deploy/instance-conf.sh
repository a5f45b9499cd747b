#!/usr/bin/env bash
# Another isobox instance's conf on this host, made from the shipped one.
#
#   deploy/instance-conf.sh SRC NAME STATE RUN [SED-EXPR MUST-HAVE]... >OUT
#
# Two instances on one host share dockerd, images and the egress network,
# but never these: the instance name (its containers' labels), the work,
# session and volume directories and the SQLite store (under STATE), and
# the volume daemon's socket (under RUN). Each further pair is one more sed
# expression and the text it must leave in the conf. Used by
# deploy/cluster.sh (a host per instance) and tests/lane.sh (a test lane).
# Fails, naming what is missing, when SRC has no longer a line to change:
# a conf that silently kept the main instance's paths would mix two
# instances' files.
set -euo pipefail
if [ $# -lt 4 ] || [ $(($# % 2)) != 0 ]; then
	echo "usage: $0 SRC NAME STATE RUN [SED-EXPR MUST-HAVE]..." >&2
	exit 2
fi
src=$1 name=$2 state=$3 run=$4
shift 4
exprs=(-e "s|^instance: main\$|instance: $name|"
       -e "s|^workDir: /var/lib/isobox/work |workDir: $state/work |"
       -e "s|^  dir: /var/lib/isobox/sessions |  dir: $state/sessions |"
       -e "s|^  dir: /var/lib/isobox/volumes\$|  dir: $state/volumes|"
       -e "s|^  socket: /run/isobox/volumes.sock\$|  socket: $run/volumes.sock|"
       -e "s|^  path: /var/lib/isobox/store/isobox.db\$|  path: $state/store/isobox.db|")
wants=("instance: $name" "workDir: $state/work " "  dir: $state/sessions " "  dir: $state/volumes"
       "  socket: $run/volumes.sock" "  path: $state/store/isobox.db")
while [ $# -gt 0 ]; do exprs+=(-e "$1"); wants+=("$2"); shift 2; done
conf=$(sed "${exprs[@]}" "$src")
for want in "${wants[@]}"; do
	grep -qF -- "$want" <<<"$conf" || { echo "instance-conf: $src has changed: no place for \"$want\"" >&2; exit 1; }
done
printf '%s\n' "$conf"
