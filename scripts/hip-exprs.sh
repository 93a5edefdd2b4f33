#!/bin/sh
# Random-expression differential programs (scripts/hip-exprs.py): for each seed, 150 random
# __host__ __device__ functions compiled with Debian's hipcc for gfx90a and run under kfdemu exec
# (its own daemon and mount, mi210), every result compared bit for bit with the host's.
#
#   sh scripts/hip-exprs.sh [-O LEVEL] [SEED...]     default: -O 2, seeds 1 2 3 4
#
# -O 0 builds the programs without optimization: other instruction selections (constants
# materialized in SGPR pairs, calls, scratch), which found a bug -O2 code never reached.
# HIP_TIMEOUT (seconds per program, default 120), KFDEMU (a kfdemu binary; default: built here).
# Outputs in .hip-build/exprs/. Exit 1 if a program does not compile, differs or fails.
set -u
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
opt=2
if [ "${1:-}" = -O ]; then
	[ $# -ge 2 ] || { echo "hip-exprs: -O needs a level" >&2; exit 2; }
	opt=$2
	shift 2
fi
seeds=${*:-1 2 3 4}
limit=${HIP_TIMEOUT:-120}
build=.hip-build/exprs
mkdir -p "$build"
command -v hipcc >/dev/null || { echo "hip-exprs: hipcc not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "hip-exprs: python3 not found" >&2; exit 1; }
kfdemu=${KFDEMU:-}
if [ -z "$kfdemu" ]; then
	go build -o "$build/kfdemu" ./cmd/kfdemu || exit 1
	kfdemu=$build/kfdemu
fi
kfdemu=$(readlink -f "$kfdemu") # the programs run from $build
cp tests/hip/common.h "$build/"
fail=0
for s in $seeds; do
	n=exprs-$s-O$opt
	start=$(date +%s)
	python3 scripts/hip-exprs.py "$s" 150 >"$build/$n.hip.new" || { echo "FAIL $n: generator failed"; fail=1; continue; }
	# recompile only when the generated source changed (the generator is deterministic per seed)
	if ! cmp -s "$build/$n.hip.new" "$build/$n.hip" || [ ! -x "$build/$n" ]; then
		mv "$build/$n.hip.new" "$build/$n.hip"
		if ! hipcc --offload-arch=gfx90a -O"$opt" -std=c++17 -ffp-contract=off -o "$build/$n" "$build/$n.hip" >"$build/$n.log" 2>&1; then
			echo "FAIL $n: compile failed ($build/$n.log)"
			rm -f "$build/$n"
			fail=1
			continue
		fi
	else
		rm -f "$build/$n.hip.new"
	fi
	mnt=$(mktemp -d)
	(cd "$build" && exec timeout -s QUIT -k 5 "$limit" "$kfdemu" exec --mount "$mnt/m" -- "./$n") >"$build/$n.out" 2>&1
	st=$?
	[ "$st" = 0 ] || umount -l "$mnt/m" 2>/dev/null || true
	rmdir "$mnt/m" "$mnt" 2>/dev/null || true
	if [ "$st" = 0 ]; then
		printf 'ok   %-14s %4ds  %s\n' "$n" "$(($(date +%s) - start))" "$(tail -n 1 "$build/$n.out")"
	else
		printf 'FAIL %-14s %4ds (exit %s)\n' "$n" "$(($(date +%s) - start))" "$st"
		head -n 25 "$build/$n.out" | sed 's/^/    | /'
		fail=1
	fi
done
exit $fail
