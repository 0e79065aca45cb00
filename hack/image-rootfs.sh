#!/usr/bin/env bash
# The root file system of raygate's image, shared by the Dockerfile (its build
# stage runs this) and hack/image.sh (which runs it on the host): a release
# build of the four programs, stripped, and exactly the shared libraries they
# load (with the dynamic loader), nothing else: no shell, no package manager.
#
#   hack/image-rootfs.sh SRC BUILD ROOTFS
#
# SRC is the repository, BUILD a meson build folder (created if needed, release,
# no tests), ROOTFS the folder to fill (emptied first).
set -euo pipefail
src="${1:?usage: image-rootfs.sh SRC BUILD ROOTFS}"
build="${2:?usage: image-rootfs.sh SRC BUILD ROOTFS}"
rootfs="${3:?usage: image-rootfs.sh SRC BUILD ROOTFS}"
progs=(usr/bin/raygate-webhook usr/bin/raygate-gate usr/bin/raygate-dispatch usr/bin/raygate-certs)

if [[ ! -f "$build/build.ninja" ]]; then
	meson setup "$build" "$src" -Dtests=false -Dbuildtype=release --prefix /usr >/dev/null
fi
meson compile -C "$build" >/dev/null
rm -rf "$rootfs" "$build/staging"
mkdir -p "$rootfs"
rootfs="$(cd "$rootfs" && pwd)"
staging="$(cd "$build" && pwd)/staging"
meson install -C "$build" --destdir "$staging" --strip --quiet >/dev/null
# The four programs only (meson also installs the kubectl plugin, which is for users' machines).
for p in "${progs[@]}"; do
	[[ -x "$staging/$p" ]] || { echo "image-rootfs: $p was not installed" >&2; exit 1; }
	install -D -m 0755 "$staging/$p" "$rootfs/$p"
done
rm -rf "$staging"

# Shared libraries as the loader resolves them, copied to their real path
# (Debian's merged /usr: /lib is a link to usr/lib).
mkdir -p "$rootfs/usr/lib" "$rootfs/usr/lib64"
ln -s usr/lib "$rootfs/lib"
ln -s usr/lib64 "$rootfs/lib64"
libs="$(for p in "${progs[@]}"; do ldd "$rootfs/$p"; done |
	awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)"
[[ -n "$libs" ]] || { echo "image-rootfs: ldd found no libraries" >&2; exit 1; }
while read -r lib; do
	dest="$(realpath -s "$lib")"
	dest="${dest#/}"
	dest="usr/${dest#usr/}"
	mkdir -p "$rootfs/$(dirname "$dest")"
	cp -L "$lib" "$rootfs/$dest"
done <<<"$libs"
# The programs run as uid 65532 on a read-only root: everything root-owned, read-only.
chmod -R a-w,u+w "$rootfs"
find "$rootfs" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +
