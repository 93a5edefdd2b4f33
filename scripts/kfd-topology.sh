#!/bin/sh
# kfd-topology.sh [TOPOLOGY_DIR] - one line per KFD topology node: node id, CPU/GPU, name, gfx target,
# compute units, wavefront size, VRAM (MiB), io_links and p2p_links.
# Works on the real /sys/class/kfd/kfd/topology, a kfdemu mount and captured trees.
# POSIX sh; uses only coreutils, awk and sed.
root=${1:-/sys/class/kfd/kfd/topology}
if [ ! -d "$root/nodes" ]; then
	echo "kfd-topology.sh: $root/nodes: no such directory" >&2
	exit 1
fi
printf '%-5s %-4s %-16s %-8s %5s %5s %10s %9s %9s\n' NODE TYPE NAME GFX CUS WAVE VRAM_MIB IO_LINKS P2P_LINKS
for d in $(ls "$root/nodes" | sort -n); do
	n="$root/nodes/$d"
	[ -f "$n/properties" ] || continue
	name=""
	[ -f "$n/name" ] && name=$(sed -n 1p "$n/name")
	vram=0
	if [ -d "$n/mem_banks" ]; then
		for b in "$n"/mem_banks/*/properties; do
			[ -f "$b" ] || continue
			s=$(awk '$1 == "heap_type" { h = $2 } $1 == "size_in_bytes" { s = $2 }
				END { if (h == 1 || h == 2) printf "%d", int(s / 1048576); else print 0 }' "$b")
			vram=$((vram + s))
		done
	fi
	awk -v node="$d" -v name="$name" -v vram="$vram" '
		{ p[$1] = $2 }
		END {
			gpu = (p["simd_count"] + 0) > 0
			if (name == "") name = gpu ? "gpu" : "cpu"
			gfx = "-"
			v = p["gfx_target_version"] + 0
			if (v > 0) gfx = sprintf("gfx%d%x%x", int(v / 10000), int(v / 100) % 100, v % 100)
			cus = 0
			if (gpu && p["simd_per_cu"] > 0) cus = int(p["simd_count"] / p["simd_per_cu"])
			if (!gpu) cus = p["cpu_cores_count"] + 0
			printf "%-5s %-4s %-16s %-8s %5d %5d %10d %9d %9d\n", node, gpu ? "GPU" : "CPU", name, gfx,
				cus, p["wave_front_size"] + 0, gpu ? vram : 0, p["io_links_count"] + 0, p["p2p_links_count"] + 0
		}' "$n/properties"
done
