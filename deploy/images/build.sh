#!/usr/bin/env bash
# Build isobox sandbox images from Debian packages and pin them.
#
#   deploy/images/build.sh [NAME...]     default: every *.recipe here
#
# No registry is needed: a minbase Debian rootfs is made once with debootstrap
# (cached), each recipe installs its packages into a copy with chroot, and the
# tree is imported with `docker import`. An image is tagged with a hash of its
# recipe and of this script, so an unchanged recipe is never rebuilt.
#
# The result is the lock file ($LOCK): for each image, the image ID that was
# built and the language version found inside it. The worker runs images by
# that ID only and refuses an image that is not in the lock.
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(build_one) stops the build too

HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${ISOBOX_STATE:-/var/lib/isobox}
BUILD=$STATE/build
LOCK=${ISOBOX_IMAGES_LOCK:-$STATE/images.lock}
SUITE=bookworm
MIRROR=${ISOBOX_MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

say() { printf 'images: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

# Unmount what a chroot build mounted, then remove the tree. The tree is ours
# (made by this script from Debian packages, never touched by a sandbox).
scrap_tree() {
	local dir=$1
	[ -n "$dir" ] && [ -d "$dir" ] || return 0
	mountpoint -q "$dir/proc" && umount -l "$dir/proc"
	mountpoint -q "$dir/dev/pts" && umount -l "$dir/dev/pts"
	rm -rf --one-file-system "$dir"
}

base_tar() {
	local tar=$BUILD/$SUITE-minbase.tar tmp
	[ -s "$tar" ] && { echo "$tar"; return 0; }
	mkdir -p "$BUILD"
	tmp=$(mktemp -d "$BUILD/base.XXXXXX")
	say "debootstrap $SUITE from $MIRROR (once; about 1.5 min)"
	if ! debootstrap --variant=minbase "$SUITE" "$tmp" "$MIRROR" >"$BUILD/debootstrap.log" 2>&1; then
		scrap_tree "$tmp"
		die "debootstrap failed; see $BUILD/debootstrap.log"
	fi
	tar -C "$tmp" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
	scrap_tree "$tmp"
	echo "$tar"
}

recipe_hash() {
	cat "$HERE/$1.recipe" "$HERE/build.sh" $(find "$HERE/lib" -type f | sort) | sha256sum | cut -c1-16
}

# What every image gets from lib/ (lib/preload.c says why): the preload
# library, built here for the image's libc (Debian 12's, as on this host),
# the files that registry.yaml's RUBYOPT and PERL5OPT name, and Python's
# line-buffered stdout (Debian's sitecustomize, which every python3 reads).
install_lib() {
	local dir=$1 to=$1/usr/local/lib/isobox
	install -d -m 0755 "$to" "$to/perl"
	${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$to/preload.so" "$HERE/lib/preload.c"
	chmod 0755 "$to/preload.so"
	install -m 0644 "$HERE/lib/sync.rb" "$to/sync.rb"
	install -m 0644 "$HERE/lib/perl/IsoboxSync.pm" "$to/perl/IsoboxSync.pm"
	echo /usr/local/lib/isobox/preload.so >"$dir/etc/ld.so.preload"
	chmod 0644 "$dir/etc/ld.so.preload"
	local site
	for site in "$dir"/etc/python3.*/sitecustomize.py; do
		[ -f "$site" ] && cat "$HERE/lib/sitecustomize.py" >>"$site"
	done
	return 0
}

# Build one image (unless its tag exists) and print "ID VERSION".
build_one() {
	local name=$1 tag dir base version
	local PACKAGES="" VERSION_CMD=""
	# shellcheck disable=SC1090
	. "$HERE/$name.recipe"
	tag="isobox/$name:$(recipe_hash "$name")"
	if ! docker image inspect "$tag" >/dev/null 2>&1; then
		base=$(base_tar)
		dir=$(mktemp -d "$BUILD/$name.XXXXXX")
		trap 'scrap_tree "$dir"' EXIT
		tar -C "$dir" -xf "$base"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		mount -t proc proc "$dir/proc"
		say "$name: installing $PACKAGES"
		chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
		# shellcheck disable=SC2086
		chroot "$dir" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $PACKAGES >"$BUILD/$name.log" 2>&1 ||
			die "$name: apt-get failed; see $BUILD/$name.log"
		version=$(chroot "$dir" sh -c "$VERSION_CMD")
		[ -n "$version" ] || die "$name: no version from: $VERSION_CMD"
		umount -l "$dir/proc"
		# Slim and harden the tree: no package caches, no docs, no setuid
		# or setgid bits, no host resolver; /box (work dir) and /src (code
		# mount) exist because the root filesystem is read-only at run time.
		chroot "$dir" apt-get clean
		rm -rf "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/* \
			"$dir"/usr/share/info/* "$dir"/var/log/* "$dir"/var/cache/debconf/*-old
		find "$dir" -xdev -perm /6000 -type f -exec chmod ug-s {} +
		: >"$dir/etc/resolv.conf"
		install -d -m 0755 "$dir/box" "$dir/src"
		install_lib "$dir"
		say "$name: importing as $tag (version $version)"
		tar -C "$dir" -c . | docker import \
			--change "LABEL isobox.image=$name" \
			--change "LABEL isobox.version=$version" \
			--change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
			- "$tag" >/dev/null
		scrap_tree "$dir"
		trap - EXIT
	fi
	docker image inspect -f '{{.Id}} {{index .Config.Labels "isobox.version"}}' "$tag"
}

main() {
	local names=("$@") name out tmp
	if [ ${#names[@]} -eq 0 ]; then
		for r in "$HERE"/*.recipe; do names+=("$(basename "$r" .recipe)"); done
	fi
	docker info >/dev/null 2>&1 || die "docker is not running (run deploy/setup.sh)"
	mkdir -p "$(dirname "$LOCK")"
	tmp=$(mktemp "$LOCK.XXXXXX")
	trap 'rm -f "$tmp"' EXIT
	{
		echo "# Written by deploy/images/build.sh: the image IDs that the worker"
		echo "# may run. Do not edit; rebuild instead."
		echo "images:"
	} >"$tmp"
	# Keep entries for images not rebuilt now.
	if [ -f "$LOCK" ]; then
		for r in "$HERE"/*.recipe; do
			name=$(basename "$r" .recipe)
			printf '%s\n' "${names[@]}" | grep -qx "$name" && continue
			grep -E "^  $name:" "$LOCK" >>"$tmp" || true
		done
	fi
	for name in "${names[@]}"; do
		[ -f "$HERE/$name.recipe" ] || die "no recipe $HERE/$name.recipe"
		out=$(build_one "$name")
		printf '  %s: {id: "%s", version: "%s"}\n' "$name" "${out%% *}" "${out#* }" >>"$tmp"
		say "$name: ${out%% *}"
	done
	chmod 0644 "$tmp"
	mv "$tmp" "$LOCK"
	trap - EXIT
}

main "$@"
