#!/bin/sh
# with-cpu-caches.sh CMD...: run CMD where /sys/devices/system/cpu/cpuN/cache exists.
#
# libhsakmt 5.2.3 builds the CPU node's caches from /sys/devices/system/{node/node0,cpu}/cpuN/cache
# (topology.c topology_get_cpu_cache_props) and fails hsaKmtAcquireSystemProperties without them, so
# ROCr then sees no agent at all. Some VMs expose no cache directories. This is the host's sysfs, not
# the driver's, so kfdemu does not serve it: the test scripts run ROCm programs through this wrapper,
# which (only when the host has none) bind-mounts, in a private mount namespace, a copy of each cpuN
# directory with a conventional cache tree (L1d/L1i 32K, L2 512K, L3 16M, 64-byte lines).
set -eu
if ls /sys/devices/system/cpu/cpu0/cache/index0 >/dev/null 2>&1; then exec "$@"; fi
exec unshare -m --propagation private sh -c '
set -eu
d=$(mktemp -d)
mount -t tmpfs kfdemu-cpu-caches "$d"
for c in /sys/devices/system/cpu/cpu[0-9]*; do
	n=${c##*/}
	f="$d/$n"
	mkdir -p "$f"
	for e in "$c"/*; do
		b=${e##*/}
		if [ -L "$e" ]; then
			ln -s "$(readlink "$e")" "$f/$b"
		elif [ -d "$e" ]; then
			mkdir -p "$f/$b"
			for x in "$e"/*; do
				if [ -f "$x" ]; then cat "$x" >"$f/$b/${x##*/}" 2>/dev/null || true; fi
			done
		else
			cat "$e" >"$f/$b" 2>/dev/null || true
		fi
	done
	i=0
	printf "1 Data 32K 8\n1 Instruction 32K 8\n2 Unified 512K 8\n3 Unified 16384K 16\n" |
		while read -r level type size ways; do
			x="$f/cache/index$i"
			mkdir -p "$x"
			echo "$level" >"$x/level"
			echo "$type" >"$x/type"
			echo "$size" >"$x/size"
			echo "$ways" >"$x/ways_of_associativity"
			echo 64 >"$x/coherency_line_size"
			echo 1 >"$x/physical_line_partition"
			echo "${n#cpu}" >"$x/shared_cpu_list"
			printf "%x\n" $((1 << ${n#cpu})) >"$x/shared_cpu_map"
			i=$((i + 1))
		done
	mount --bind "$f" "$c"
done
exec "$@"
' sh "$@"
