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
# built, the language version found inside it, the Debian suite and the
# versions of the recipe's packages. The worker runs images by that ID only
# and refuses an image that is not in the lock. A rebuild installs the
# versions the lock names while the mirror still has them (a point release
# replaces them: then it says so and takes the suite's current ones).
#
# The versions are also kept under version control ($PINS,
# deploy/images/packages.pins): a build on a fresh host installs what that
# file names, so that it makes the images the team tested, and an image's
# tag covers its line there (a change of pins rebuilds it). After a
# rebuild that took new versions, `make images-pins` writes them there, to
# commit. The host's lock is the fallback for an image the file lacks.
#
# A recipe sets PACKAGES, VERSION_CMD and optionally SUITE (default trixie,
# Debian 13; each suite's minbase tree is made once) and PREPARE, a command
# run in the tree after the install (e.g. to fill a compiler's cache). A
# recipe for another version of a language sets LIKE=<recipe> and its SUITE:
# everything else is the other recipe's.
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(build_one) stops the build too

HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${ISOBOX_STATE:-/var/lib/isobox}
BUILD=$STATE/build
LOCK=${ISOBOX_IMAGES_LOCK:-$STATE/images.lock}
PINS=${ISOBOX_IMAGES_PINS:-$HERE/packages.pins}
DEFAULT_SUITE=${ISOBOX_SUITE:-trixie}
TREE="" LOCK_TMP="" # what the EXIT trap removes
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
	local SUITE=$1 tar=$BUILD/$1-minbase.tar tmp script=""
	[ -s "$tar" ] && { echo "$tar"; return 0; }
	mkdir -p "$BUILD"
	tmp=$(mktemp -d "$BUILD/base.XXXXXX")
	# A suite newer than the host's debootstrap (forky on Debian 12's) is
	# made as sid is: Debian's scripts for its suites are all links to it.
	[ -e "/usr/share/debootstrap/scripts/$SUITE" ] || script=/usr/share/debootstrap/scripts/sid
	say "debootstrap $SUITE from $MIRROR (once; about 1.5 min)"
	if ! debootstrap --variant=minbase "$SUITE" "$tmp" "$MIRROR" $script >"$BUILD/debootstrap-$SUITE.log" 2>&1; then
		scrap_tree "$tmp"
		die "debootstrap $SUITE failed; see $BUILD/debootstrap-$SUITE.log"
	fi
	tar -C "$tmp" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
	scrap_tree "$tmp"
	echo "$tar"
}

# A recipe may start from another (LIKE=python: its packages, then its own
# SUITE): both are hashed, with the image's pinned versions.
recipe_hash() {
	local like
	like=$(sed -n 's/^LIKE=\([a-z0-9.-]*\)$/\1/p' "$HERE/$1.recipe")
	{
		cat ${like:+"$HERE/$like.recipe"} "$HERE/$1.recipe" "$HERE/build.sh" $(find "$HERE/lib" -type f | sort)
		[ ! -f "$PINS" ] || grep -E "^$1 " "$PINS" || true
	} | sha256sum | cut -c1-16
}

# What every image gets from lib/ (lib/preload.c says why): the preload
# library, built here against the host's libc (Debian 12's; a newer glibc in
# the image runs it as well),
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

# The recipe's packages, each at the version $PINS (else the host's lock)
# names for it when written for the same suite ("python3=3.13.5-1
# python3-scipy"): a package the recipe gained since has no pin, one it
# lost is dropped.
pinned_packages() {
	local name=$1 suite=$2 pins="" p v out=""
	[ -f "$PINS" ] && pins=$(awk -v n="$name" -v s="$suite" '$1 == n && $2 == s { $1 = $2 = ""; print }' "$PINS")
	[ -n "$pins" ] || [ ! -f "$LOCK" ] ||
		pins=$(sed -n "s/^  $name: {.*suite: \"$suite\", packages: \"\([^\"]*\)\"}$/\1/p" "$LOCK")
	for p in $PACKAGES; do
		v=$(printf '%s\n' $pins | awk -F= -v p="$p" '$1 == p { sub(/^[^=]*=/, ""); print; exit }')
		out+="${out:+ }$p${v:+=$v}"
	done
	echo "$out"
}

# The installed versions of the named packages, as "pkg=version ...".
installed_packages() {
	local dir=$1; shift
	in_tree "$dir" dpkg-query -W -f='${Package}=${Version}\n' "$@" | tr '\n' ' ' | sed 's/ $//'
}

# Run a command in the tree with a clean environment: nothing of the
# host's (its NODE_EXTRA_CA_CERTS, a GOFLAGS) may shape what is built.
in_tree() {
	local dir=$1; shift
	chroot "$dir" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# Build one image (unless its tag exists) and print "ID VERSION SUITE PACKAGES".
build_one() {
	local name=$1 tag dir base version wanted installed left
	local PACKAGES="" VERSION_CMD="" PREPARE="" SUITE=$DEFAULT_SUITE LIKE=""
	# shellcheck disable=SC1090
	. "$HERE/$name.recipe"
	if [ -n "$LIKE" ]; then
		[ -f "$HERE/$LIKE.recipe" ] || die "$name: LIKE=$LIKE: no recipe $LIKE"
		local own_suite=$SUITE
		# shellcheck disable=SC1090
		. "$HERE/$LIKE.recipe"
		SUITE=$own_suite
	fi
	tag="isobox/$name:$(recipe_hash "$name")"
	if ! docker image inspect "$tag" >/dev/null 2>&1; then
		base=$(base_tar "$SUITE")
		dir=$(mktemp -d "$BUILD/$name.XXXXXX")
		# The trap runs after the function's locals are gone: a global.
		TREE=$dir
		trap 'scrap_tree "$TREE"' EXIT
		tar -C "$dir" -xf "$base"
		cp /etc/resolv.conf "$dir/etc/resolv.conf"
		mount -t proc proc "$dir/proc"
		wanted=$(pinned_packages "$name" "$SUITE")
		say "$name: installing from $SUITE: $wanted"
		# The tree is ours and apt runs as root in it: no _apt sandbox user.
		# A testing suite's Release is valid for a week only, and a mirror
		# snapshot is older: signatures are still checked, its age is not.
		printf '%s\n' 'APT::Sandbox::User "root";' 'Acquire::Check-Valid-Until "false";' \
			>"$dir/etc/apt/apt.conf.d/99isobox-build"
		in_tree "$dir" apt-get update -qq >/dev/null
		# shellcheck disable=SC2086
		if ! in_tree "$dir" apt-get install -y -qq --no-install-recommends $wanted >"$BUILD/$name.log" 2>&1; then
			[ "$wanted" = "$PACKAGES" ] || say "$name: warning: $SUITE no longer has the locked versions; taking its current ones"
			in_tree "$dir" \
				apt-get install -y -qq --no-install-recommends $PACKAGES >"$BUILD/$name.log" 2>&1 ||
				die "$name: apt-get failed; see $BUILD/$name.log"
		fi
		# shellcheck disable=SC2086
		installed=$(installed_packages "$dir" $PACKAGES)
		if [ -n "$PREPARE" ]; then
			say "$name: preparing: $PREPARE"
			in_tree "$dir" sh -c "$PREPARE" >>"$BUILD/$name.log" 2>&1 ||
				die "$name: PREPARE failed; see $BUILD/$name.log"
		fi
		version=$(in_tree "$dir" sh -c "$VERSION_CMD")
		[ -n "$version" ] || die "$name: no version from: $VERSION_CMD"
		umount -l "$dir/proc"
		# Slim and harden the tree: no package caches, no docs, no setuid
		# or setgid bits, no host resolver; /box (work dir) and /src (code
		# mount) exist because the root filesystem is read-only at run time.
		in_tree "$dir" apt-get clean
		rm -rf "$dir"/var/lib/apt/lists/* "$dir"/etc/apt/apt.conf.d/99isobox-build "$dir"/root/.cache "$dir"/usr/share/doc/* "$dir"/usr/share/man/* \
			"$dir"/usr/share/info/* "$dir"/var/log/* "$dir"/var/cache/debconf/*-old
		find "$dir" -xdev -perm /6000 -type f -exec chmod ug-s {} +
		left=$(find "$dir" -xdev -perm /6000 -type f -print -quit)
		[ -z "$left" ] || die "$name: a setuid or setgid file is left: ${left#"$dir"}"
		: >"$dir/etc/resolv.conf"
		install -d -m 0755 "$dir/box" "$dir/src"
		install_lib "$dir"
		say "$name: importing as $tag (version $version)"
		tar -C "$dir" -c . | docker import \
			--change "LABEL isobox.image=$name" \
			--change "LABEL isobox.version=$version" \
			--change "LABEL isobox.suite=$SUITE" \
			--change "LABEL isobox.packages=\"$installed\"" \
			--change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
			- "$tag" >/dev/null
		scrap_tree "$dir"
		trap - EXIT
	fi
	docker image inspect -f '{{.Id}} {{index .Config.Labels "isobox.version"}} {{index .Config.Labels "isobox.suite"}} {{index .Config.Labels "isobox.packages"}}' "$tag"
}

# Is $1 among the rest? No `printf | grep -q`: under pipefail that fails
# whenever grep stops reading before printf has written all (a name early in
# a long list), and it once kept an image's old line beside its new one.
named() {
	local want=$1 n
	shift
	for n in "$@"; do [ "$n" != "$want" ] || return 0; done
	return 1
}

main() {
	local names=("$@") name out tmp id version suite packages
	if [ ${#names[@]} -eq 0 ]; then
		for r in "$HERE"/*.recipe; do names+=("$(basename "$r" .recipe)"); done
	fi
	docker info >/dev/null 2>&1 || die "docker is not running (run deploy/setup.sh)"
	mkdir -p "$(dirname "$LOCK")"
	tmp=$(mktemp "$LOCK.XXXXXX")
	LOCK_TMP=$tmp # for the trap, which runs after main's locals are gone
	trap 'rm -f "$LOCK_TMP"' EXIT
	{
		echo "# Written by deploy/images/build.sh: the image IDs that the worker"
		echo "# may run. Do not edit; rebuild instead."
		echo "images:"
	} >"$tmp"
	# Keep entries for images not rebuilt now, one line each (the pool
	# refuses a lock that names an image twice).
	if [ -f "$LOCK" ]; then
		for r in "$HERE"/*.recipe; do
			name=$(basename "$r" .recipe)
			named "$name" "${names[@]}" && continue
			grep -m1 -F "  $name: {" "$LOCK" >>"$tmp" || true
		done
	fi
	for name in "${names[@]}"; do
		[ -f "$HERE/$name.recipe" ] || die "no recipe $HERE/$name.recipe"
		out=$(build_one "$name")
		read -r id version suite packages <<<"$out"
		printf '  %s: {id: "%s", version: "%s", suite: "%s", packages: "%s"}\n' \
			"$name" "$id" "$version" "$suite" "$packages" >>"$tmp"
		say "$name: $id ($suite)"
		[ "$(awk -v n="$name" '$1 == n { $1 = ""; print substr($0, 2) }' "$PINS" 2>/dev/null)" = "$suite $packages" ] ||
			say "$name: warning: built from other versions than $PINS names; \`make images-pins\` records them there"
	done
	chmod 0644 "$tmp"
	mv "$tmp" "$LOCK"
	trap - EXIT
}

main "$@"
