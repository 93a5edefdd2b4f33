#!/bin/sh
# The HIP corpus: every tests/hip/*.hip is a self-checking program (exit 0 only when all its checks
# pass), compiled with Debian's hipcc 5.2.3 for gfx90a and run alone under `kfdemu exec` (its own
# daemon, its own mount) with a time limit. One line per program, then "N passed, M failed".
#
#   sh scripts/hip-tests.sh               every program; exit 1 if one of tests/hip/expected-pass fails
#   sh scripts/hip-tests.sh --expected    only the programs listed in tests/hip/expected-pass
#   sh scripts/hip-tests.sh NAME...       only these (file names without .hip)
#   sh scripts/hip-tests.sh --rocr LIBDIR [--expected|NAME...]
#                                         the same programs on another HSA runtime: LIBDIR holds its
#                                         libhsa-runtime64.so.1 (ROCr 6.2.4 from scripts/build-rocr.sh),
#                                         put first on LD_LIBRARY_PATH; --expected reads
#                                         tests/hip/expected-pass-rocr-6.2.4
#
# Environment: HIP_BUILD_DIR (default .hip-build; binaries are rebuilt only when a source is newer),
# HIP_TIMEOUT (seconds per program, default 120), HIP_JOBS (parallel hipcc runs, default 2), KFDEMU
# (a kfdemu binary; default: built here; one built with -race makes a data race its daemon reports a
# failure of the program). A program's first line may be "// hipcc-flags: ...", one of its
# first three "// kfdemu-profile: P" (the emulated machine, default mi210) and "// hip-env: VAR=VALUE ..."
# (the program's environment, as a user would set it);
# NAME.genco.hip is built with --genco into NAME.co (a code object file for hipModuleLoad).
set -eu
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

# compile SRC OUT: hipcc for gfx90a unless OUT is newer than SRC and common.h.
compile() {
	src=$1 out=$2
	[ -e "$src" ] || { echo "hip-tests: no such program: $src" >&2; return 1; }
	[ "$out" -nt "$src" ] && [ "$out" -nt tests/hip/common.h ] && return 0
	flags=$(sed -n '1s|^// hipcc-flags:||p' "$src")
	case "$src" in
	*.genco.hip) flags="$flags --genco" ;;
	esac
	# shellcheck disable=SC2086
	if ! hipcc --offload-arch=gfx90a -O2 $flags -o "$out.tmp" "$src" >"$out.log" 2>&1; then
		echo "hip-tests: compile failed: $src" >&2
		cat "$out.log" >&2
		rm -f "$out" "$out.tmp"
		return 1
	fi
	mv "$out.tmp" "$out"
}
if [ "${1:-}" = __compile ]; then
	compile "$2" "$3"
	exit
fi

root=$(pwd)
build="${HIP_BUILD_DIR:-$root/.hip-build}"
limit="${HIP_TIMEOUT:-120}"
jobs="${HIP_JOBS:-2}"
ulimit -c 0 # a program ended by SIGQUIT (past the time limit) leaves no core file
mkdir -p "$build"

only=""
expected_only=0
rocr=""
list=tests/hip/expected-pass
while [ $# -gt 0 ]; do
	case "$1" in
	--expected) expected_only=1 ;;
	--rocr)
		[ $# -ge 2 ] || { echo "hip-tests: --rocr needs a directory" >&2; exit 2; }
		rocr=$(cd "$2" && pwd) || exit 2
		[ -e "$rocr/libhsa-runtime64.so.1" ] || { echo "hip-tests: no libhsa-runtime64.so.1 in $rocr" >&2; exit 2; }
		list=tests/hip/expected-pass-rocr-6.2.4
		shift ;;
	-*) echo "hip-tests: unknown option $1" >&2; exit 2 ;;
	*) only="$only $1" ;;
	esac
	shift
done
expected=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list")
if [ "$expected_only" = 1 ]; then only=$expected; fi
if [ -z "$only" ]; then
	only=$(cd tests/hip && ls ./*.hip | sed -e 's|^\./||' -e 's/\.hip$//' | grep -v '\.genco$')
fi

command -v hipcc >/dev/null || { echo "hip-tests: hipcc not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
kfdemu="${KFDEMU:-}"
if [ -z "$kfdemu" ]; then
	kfdemu="$build/kfdemu"
	go build -o "$kfdemu" ./cmd/kfdemu
fi

# Compile, at most $jobs hipcc at once (code objects first: programs load them at run time).
t0=$(date +%s)
for g in tests/hip/*.genco.hip; do
	[ -e "$g" ] || continue
	compile "$g" "$build/$(basename "$g" .genco.hip).co" || true
done
for n in $only; do echo "tests/hip/$n.hip $build/$n"; done | xargs -P "$jobs" -L 1 sh "$root/scripts/hip-tests.sh" __compile || true
t1=$(date +%s)
echo "hip-tests: compiled in $((t1 - t0)) s"


pass=0
fail=0
failed_expected=""
for n in $only; do
	bin="$build/$n"
	start=$(date +%s)
	mnt=$(mktemp -d)
	rm -f "$build/$n.procs"
	if [ ! -x "$bin" ]; then
		st=1
		echo "compile failed" >"$build/$n.out"
	else
		st=0
		prof=$(sed -n '1,3s|^// kfdemu-profile: *||p' "tests/hip/$n.hip")
		penv=$(sed -n '1,3s|^// hip-env: *||p' "tests/hip/$n.hip")
		# shellcheck disable=SC2086
		(cd "$build" && if [ -n "$rocr" ]; then export LD_LIBRARY_PATH="$rocr${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi &&
			exec timeout -s QUIT -k 5 "$limit" env $penv "$kfdemu" exec --mount "$mnt/m" --profile "${prof:-mi210}" -- "./$n") >"$build/$n.out" 2>&1 &
		tpid=$! # timeout (the subshell execs it), which leads the program's process group
		# a few seconds before the limit, where the group's threads are (scripts/procdump.sh)
		(sleep $((limit > 10 ? limit - 5 : limit - 1)) && sh scripts/procdump.sh "$tpid" >"$build/$n.procs" 2>&1 &&
			sh scripts/daemonstats.sh "$mnt/m" >>"$build/$n.procs" 2>&1) 2>/dev/null & # no "Terminated" when its sleep is ended
		dpid=$!
		wait "$tpid" || st=$?
		pkill -P "$dpid" 2>/dev/null || true # its sleep, else left behind until the limit
		kill "$dpid" 2>/dev/null || true
		wait "$dpid" 2>/dev/null || true
	fi
	# a daemon built with -race reports data races on its stderr, in the output: a failure
	race=0
	if grep -q '^WARNING: DATA RACE' "$build/$n.out" 2>/dev/null; then
		race=1
		[ "$st" != 0 ] || st=1
	fi
	# a daemon ended by the time limit (SIGQUIT, SIGKILL) leaves its mount behind
	[ "$st" = 0 ] || umount -l "$mnt/m" 2>/dev/null || true
	rmdir "$mnt/m" "$mnt" 2>/dev/null || true
	secs=$(($(date +%s) - start))
	if [ "$st" = 0 ]; then
		pass=$((pass + 1))
		printf 'ok   %-16s %4ds\n' "$n" "$secs"
	else
		fail=$((fail + 1))
		# The daemon's first queue error names the cause better than the runtime's abort message.
		why=$(sed -n -e 's/ stack=.*//' -e 's/.*msg="queue error[^"]*".* err=//p' "$build/$n.out" | head -n 1)
		[ -n "$why" ] || why=$(grep -v -e 'xnack' -e '^$' "$build/$n.out" | tail -n 1)
		[ "$st" = 124 ] && why="timed out after ${limit}s"
		[ "$race" = 0 ] || why="the daemon's race detector reported a data race (first report below); $why"
		printf 'FAIL %-16s %4ds (exit %s): %s\n' "$n" "$secs" "$st" "$why"
		[ "$race" = 0 ] || sed -n '/^WARNING: DATA RACE/,/^==================/p' "$build/$n.out" | head -n 60 | sed 's/^/    | /'
		# an interpreter bug (a panic inside a wave) is logged with the goroutine's stack
		sed -n 's/.*msg="queue error: kfdemu interpreter bug".* stack="\(.*\)"$/\1/p' "$build/$n.out" | head -n 1 |
			sed -e 's/\\n/\n/g' -e 's/\\t/    /g' | head -n 40 | sed 's/^/    | /'
		# past the limit the group got SIGQUIT: the daemon's goroutines are in the output
		if [ "$st" = 124 ]; then
			sh scripts/stacks.sh "$build/$n.out" | head -n 60 | sed 's/^/    | /'
			echo "    | the program's threads just before the limit (scripts/procdump.sh):"
			head -n 120 "$build/$n.procs" 2>/dev/null | sed 's/^/    | /'
		fi
		case " $(echo $expected) " in
		*" $n "*) failed_expected="$failed_expected $n" ;;
		esac
	fi
done
echo "hip-tests: ran in $(($(date +%s) - t1)) s${rocr:+ on the runtime in $rocr}; outputs in $build/NAME.out"
echo "$pass passed, $fail failed"
if [ -n "$failed_expected" ]; then
	echo "hip-tests: expected to pass but failed:$failed_expected" >&2
	exit 1
fi
