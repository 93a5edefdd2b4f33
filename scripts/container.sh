#!/bin/sh
# Runs COMMAND in a container that has the emulated GPU, built from local files only (no image, no
# registry): a fresh root filesystem of read-only bind mounts of the host's /usr and /etc, private
# /tmp and /proc, run with unshare (mount, PID, UTS and IPC namespaces) and chroot. The GPU comes in
# the way any container engine can give it (README "Containers"):
#   - the mount's dev directory bound at /run/kfdemu/dev, with /dev/kfd and /dev/dri symlinks into it
#     (a bind of the device file itself cannot work: device files are per process);
#   - the kfd sysfs: /sys/devices/virtual/kfd and /sys/module/amdgpu bound from the mount,
#     /sys/class/kfd/kfd linked to it; the rest of /sys is the host's (read-only).
#
#   sudo sh scripts/container.sh [--bind HOST:CONTAINER]... MNT COMMAND...
#
# MNT is a running `kfdemu serve --mount MNT`. --bind adds a read-only bind (e.g. a binary to run;
# CONTAINER must be outside /usr and /etc, which are the host's, read-only).
# Needs root (mount namespaces, chroot). The exit status is COMMAND's.
set -eu
binds=""
while [ $# -gt 0 ]; do
	case "$1" in
	--bind) binds="$binds $2"; shift 2 ;;
	-h | --help) sed -n '2,15p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: container.sh [--bind HOST:CONTAINER]... MNT COMMAND..." >&2; exit 2; }
mnt=$(cd "$1" && pwd); shift
[ -e "$mnt/dev/kfd" ] || { echo "container.sh: $mnt is not a kfdemu mount (no dev/kfd)" >&2; exit 2; }
root=$(mktemp -d /tmp/kfdemu-container.XXXXXX)
trap 'rmdir "$root" 2>/dev/null || true' EXIT
export KFDEMU_CT_ROOT="$root" KFDEMU_CT_MNT="$mnt" KFDEMU_CT_BINDS="$binds"

# Everything below runs in the new namespaces; the mounts vanish with them.
unshare --mount --propagation private --pid --fork --uts --ipc sh -eu -c '
r=$KFDEMU_CT_ROOT m=$KFDEMU_CT_MNT
mount -t tmpfs -o mode=755 rootfs "$r"
for d in usr etc; do
	mkdir -p "$r/$d"
	mount --rbind "/$d" "$r/$d"
	mount -o remount,bind,ro "$r/$d"
done
for l in bin sbin lib lib64 lib32; do
	[ -L "/$l" ] && ln -s "$(readlink "/$l")" "$r/$l"
done
mkdir -p "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/run/kfdemu/dev" "$r/root"
mount -t tmpfs -o mode=1777 tmp "$r/tmp"
mount -t proc proc "$r/proc"
# the host sysfs, read-only, with the emulator kfd and amdgpu directories over it
mount --rbind /sys "$r/sys"
mount -o remount,bind,ro "$r/sys"
mount --bind "$m/sys/devices/virtual/kfd" "$r/sys/devices/virtual/kfd" 2>/dev/null || {
	# a host without /sys/devices/virtual/kfd: a tmpfs over /sys/devices/virtual to hang it on
	mount -t tmpfs -o mode=755 virt "$r/sys/devices/virtual"
	mkdir "$r/sys/devices/virtual/kfd"
	mount --bind "$m/sys/devices/virtual/kfd" "$r/sys/devices/virtual/kfd"
}
if [ -d "$r/sys/module/amdgpu" ]; then
	mount --bind "$m/sys/module/amdgpu" "$r/sys/module/amdgpu"
else
	mount -t tmpfs -o mode=755 mod "$r/sys/module"
	mkdir "$r/sys/module/amdgpu"
	mount --bind "$m/sys/module/amdgpu" "$r/sys/module/amdgpu"
fi
if [ ! -e "$r/sys/class/kfd/kfd" ]; then
	mount -t tmpfs -o mode=755 kfdclass "$r/sys/class/kfd" 2>/dev/null || {
		mount -t tmpfs -o mode=755 cls "$r/sys/class"
		mkdir "$r/sys/class/kfd"
	}
	ln -s ../../devices/virtual/kfd/kfd "$r/sys/class/kfd/kfd"
fi
# the device files: the dev directory, never the files themselves
mount -t tmpfs -o mode=755 dev "$r/dev"
mount --bind "$m/dev" "$r/run/kfdemu/dev"
ln -s /run/kfdemu/dev/kfd "$r/dev/kfd"
ln -s /run/kfdemu/dev/dri "$r/dev/dri"
for n in null zero full random urandom tty; do
	touch "$r/dev/$n"
	mount --bind "/dev/$n" "$r/dev/$n"
done
for b in $KFDEMU_CT_BINDS; do
	src=${b%%:*} dst=${b#*:}
	if [ -d "$src" ]; then mkdir -p "$r$dst"; else mkdir -p "$(dirname "$r$dst")"; touch "$r$dst"; fi
	mount --bind "$src" "$r$dst"
	mount -o remount,bind,ro "$r$dst"
done
hostname kfdemu-container
exec chroot "$r" "$@"
' container "$@"
