#!/usr/bin/env bash
# Runs ROCT's kfdtest (amdkfd's conformance suite) against the emulator, every case alone:
#   scripts/kfdtest.sh [--version 5.2.3|6.2.4] [--profile P] [--list FILE] [--timeout S] [--print] [FILTER]
# Builds kfdtest once per machine with scripts/build-kfdtest.sh (../shared/kfdtest/build.sh, then kfdtest
# 6.2.4 relinked against LLVM 19; KFDTEST_BUILD overrides the script, KFDTEST_OUT its output, default
# /var/tmp/kfdtest) and kfdemu, then runs each applicable case as
#   kfdemu exec --mount PRIVATE --profile P -- kfdtest --gtest_filter=CASE
# under a time limit (a daemon of its own per case: a case that hangs or crashes takes no other with it).
# Applicable: listed by kfdtest, not excluded by AMD for the profile's ASIC (FILTER[<asic>] of the
# tarball's own tests/kfdtest/scripts/kfdtest.exclude, the ASIC named as run_kfdtest.sh getNodeName
# does) nor by scripts/kfdtest/not-applicable.txt (cases that cannot pass on upstream amdkfd either).
# --list FILE runs only the cases FILE lists (one per line, '#' comments), e.g. the expected-pass lists.
# --print prints the cases it would run, one per line, and runs none.
# FILTER is a gtest-style positive filter (globs joined by ':'). One line per case (a failed one followed
# by its gtest failures and the end of its log; a case scripts/kfdtest/second-run.txt lists is then
# run once more), then "N passed, M failed";
# the exit status is 1 when a case failed. Logs of failed cases are kept in KFDTEST_LOGS (default: a
# temporary directory, printed at the end).
set -eu
cd "$(dirname "$0")/.."
repo=$(pwd)
export PATH="/usr/local/go/bin:$PATH"

version=6.2.4 profile=mi210 list="" filter="" limit=60 print=0
while [ $# -gt 0 ]; do
	case "$1" in
	--version) version=$2; shift 2 ;;
	--profile) profile=$2; shift 2 ;;
	--list) list=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--print) print=1; shift ;;
	-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
	-*) echo "kfdtest.sh: unknown option $1" >&2; exit 2 ;;
	*) filter=$1; shift ;;
	esac
done
case "$version" in 5.2.3 | 6.2.4) ;; *) echo "kfdtest.sh: version must be 5.2.3 or 6.2.4" >&2; exit 2 ;; esac
if [ -n "$list" ] && [ ! -r "$list" ]; then echo "kfdtest.sh: cannot read $list" >&2; exit 2; fi

out=${KFDTEST_OUT:-/var/tmp/kfdtest}
build=${KFDTEST_BUILD:-$repo/scripts/build-kfdtest.sh}
# The default script runs every time (0.1 s once built): it relinks a kfdtest 6.2.4 on LLVM 14
# (../shared's build alone: no gfx940-gfx942) and rebuilds a kfdtest 5.2.3 whose sp3 stand-in path is
# gone (built from a checkout since deleted).
if [ ! -x "$out/$version/kfdtest" ] || [ -z "${KFDTEST_BUILD:-}" ]; then
	[ -r "$build" ] || { echo "kfdtest.sh: no kfdtest in $out and no build script at $build (set KFDTEST_BUILD)" >&2; exit 2; }
	[ -x "$out/$version/kfdtest" ] || echo "building kfdtest into $out (once per machine)"
	bash "$build" "$out" >/dev/null
fi
bin=$out/$version/kfdtest
src=$out/src-$version/tests/kfdtest

work=$(mktemp -d /tmp/kfdtest-run.XXXXXX)
logs=${KFDTEST_LOGS:-$work/logs}
mkdir -p "$logs"
cleanup() {
	umount -l "$work/mnt" 2>/dev/null || true
	rm -rf "$work/mnt" "$work/kfdemu"
	rmdir "$work/logs" "$work" 2>/dev/null || true # kept when it holds logs
}
trap cleanup EXIT
ulimit -c 0 # a case ended by SIGQUIT leaves no core file
go build -o "$work/kfdemu" ./cmd/kfdemu
kfdemu=$work/kfdemu
mnt=$work/mnt

# The ASIC name as run_kfdtest.sh's getNodeName finds it: the first GPU node's topology name, or for
# "ip discovery" ASICs gfx<major><minor hex><step hex> from gfx_target_version.
asic=$("$kfdemu" exec --mount "$mnt" --profile "$profile" -- sh -c '
	for n in /sys/class/kfd/kfd/topology/nodes/*; do
		v=$(sed -n "s/^gfx_target_version //p" "$n/properties")
		[ "${v:-0}" != 0 ] || continue
		name=$(cat "$n/name")
		if [ "$name" = "ip discovery" ]; then
			printf "gfx%d%x%x\n" $((v / 10000)) $((v / 100 % 100)) $((v % 100))
		else
			echo "$name"
		fi
		exit 0
	done')
[ -n "$asic" ] || { echo "kfdtest.sh: profile $profile has no GPU node" >&2; exit 2; }

# AMD's exclusions for that ASIC, from the tarball's own kfdtest.exclude (a bash fragment).
amd=$(bash -c 'declare -A FILTER; source "$1"; printf "%s" "${FILTER[$2]:-}"' _ "$src/scripts/kfdtest.exclude" "$asic")
if [ -z "$amd" ]; then
	echo "note: kfdtest $version's kfdtest.exclude has no FILTER[$asic]; excluding only BLACKLIST_ALL_ASICS"
	amd=$(bash -c 'declare -A FILTER; source "$1"; printf "%s" "$BLACKLIST_ALL_ASICS"' _ "$src/scripts/kfdtest.exclude")
fi
amd=${amd#-}
IFS=: read -r -a excl <<<"$amd"
# The project's own: "VERSION PATTERN REASON" lines, VERSION a version or '*'.
while read -r v pat _; do
	case "$v" in '' | '#'*) continue ;; esac
	if [ "$v" = "*" ] || [ "$v" = "$version" ]; then excl+=("$pat"); fi
done <scripts/kfdtest/not-applicable.txt

matches() { # CASE PATTERN...: does CASE match one of the globs?
	local c=$1 p
	shift
	for p in "$@"; do
		# shellcheck disable=SC2053
		[ -n "$p" ] && [[ $c == $p ]] && return 0
	done
	return 1
}

cases=()
if [ -n "$list" ]; then
	while read -r c _; do
		case "$c" in '' | '#'*) continue ;; esac
		cases+=("$c")
	done <"$list"
else
	suite=""
	while IFS= read -r line; do
		case "$line" in
		"  "*) c=${line#  }; c=${c%% *}; matches "$suite$c" "${excl[@]}" || cases+=("$suite$c") ;;
		*.) suite=$line ;;
		esac
	done < <("$bin" --gtest_list_tests 2>/dev/null)
fi
if [ -n "$filter" ]; then
	IFS=: read -r -a fpats <<<"$filter"
	sel=()
	for c in "${cases[@]}"; do matches "$c" "${fpats[@]}" && sel+=("$c"); done
	cases=("${sel[@]}")
fi
if [ "$print" = 1 ]; then
	printf '%s\n' "${cases[@]}"
	exit 0
fi
# Per-case limits: "VERSION CASE SECONDS REASON" lines; a case gets max(--timeout, SECONDS).
declare -A limits
while read -r v c secs _; do
	case "$v" in '' | '#'*) continue ;; esac
	if [ "$v" = "*" ] || [ "$v" = "$version" ]; then limits[$c]=$secs; fi
done <scripts/kfdtest/timeouts.txt
echo "kfdtest $version, profile $profile ($asic), ${#cases[@]} cases, ${limit}s each (scripts/kfdtest/timeouts.txt lists longer ones)"

# Cases whose own code races against the machine's scheduling, not against the emulator, and why:
# "VERSION CASE REASON" lines. A listed case that fails is printed as a failure and run once more;
# it passes if the second run does.
declare -A second
while read -r v c _; do
	case "$v" in '' | '#'*) continue ;; esac
	if [ "$v" = "*" ] || [ "$v" = "$version" ]; then second[$c]=1; fi
done <scripts/kfdtest/second-run.txt

# run_case CASE LOG: runs CASE alone under its time limit; sets rc and secs.
run_case() {
	local c=$1 log=$2 s cl tpid
	s=$(date +%s%N)
	rc=0
	cl=${limits[$c]:-$limit}
	[ "$cl" -ge "$limit" ] || cl=$limit
	# timeout leads a process group of its own: what a case leaves behind (KFDIPCTest forks a child
	# that waits forever when its parent fails) is killed with the group once the case is over.
	# A case past its limit gets SIGQUIT (the whole group: the daemon dumps its goroutines into the
	# log, printed below) and SIGKILL 10 s later.
	# A few seconds before that, scripts/procdump.sh records where the group's threads are (LOG.procs).
	timeout -s QUIT -k 10 "$cl" "$kfdemu" exec --mount "$mnt" --profile "$profile" -- "$bin" --gtest_filter="$c" >"$log" 2>&1 &
	tpid=$!
	# Then the daemon's counters twice, a second apart (doorbell kicks or touches climbing while
	# no ioctl is in flight would be a client looping on its doorbell page).
	(sleep $((cl > 10 ? cl - 5 : cl - 1)) && sh scripts/procdump.sh "$tpid" >"$log.procs" 2>&1 &&
		sh scripts/daemonstats.sh "$mnt" >>"$log.procs" 2>&1) 2>/dev/null & # no "Terminated" when its sleep is ended
	dpid=$!
	wait "$tpid" 2>/dev/null || rc=$?
	pkill -P "$dpid" 2>/dev/null || true # its sleep, else left behind until the limit
	kill "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || true
	kill -KILL -- "-$tpid" 2>/dev/null || true
	secs=$(awk -v a="$s" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	[ $rc = 0 ] && grep -q '^\[  PASSED  \] 1 test' "$log"
}

# report_failure CASE LOG: the failure's line, then the log's gtest failures and its end, so that a
# failure on a machine whose logs are gone (a CI runner) can still be read.
report_failure() {
	local c=$1 log=$2 st=FAIL
	[ $rc = 124 ] || [ $rc = 137 ] && st=TIMEOUT
	printf '%-8s %6ss  %s\n' "$st" "$secs" "$c"
	{
		grep -A4 -E ': Failure$' "$log" | head -n 30
		echo "  ..."
		if [ "$st" = TIMEOUT ]; then
			grep -v -e '^goroutine ' -e '^[[:space:]]' -e '^$' "$log" | grep -B 15 -m 1 '^SIGQUIT' || tail -n 15 "$log"
			echo "  the daemon's goroutines (scripts/stacks.sh):"
			sh scripts/stacks.sh "$log" | head -n 80
			echo "  the case's threads just before the limit (scripts/procdump.sh):"
			head -n 120 "$log.procs" 2>/dev/null
		else
			tail -n 15 "$log"
		fi
	} | sed 's/^/    | /'
	# a daemon killed by the time limit may leave its mount behind
	umount -l "$mnt" 2>/dev/null || true
}

pass=0 fail=0 again=0 t0=$(date +%s)
for c in "${cases[@]}"; do
	log=$logs/${c//\//_}.log # parameterized cases are Suite.Name/N
	if run_case "$c" "$log"; then
		pass=$((pass + 1)); rm -f "$log" "$log.procs"
		printf 'PASS     %6ss  %s\n' "$secs" "$c"
		continue
	fi
	report_failure "$c" "$log"
	if [ -n "${second[$c]:-}" ]; then
		echo "    | a second run (scripts/kfdtest/second-run.txt says why):"
		mv "$log" "$log.first"
		if run_case "$c" "$log"; then
			pass=$((pass + 1)) again=$((again + 1)); rm -f "$log" "$log.procs"
			printf 'PASS     %6ss  %s (second run)\n' "$secs" "$c"
			continue
		fi
		report_failure "$c" "$log"
	fi
	fail=$((fail + 1))
done
[ $fail = 0 ] && [ $again = 0 ] || echo "logs of failed cases (a first run that failed: CASE.log.first): $logs"
echo "run took $(($(date +%s) - t0)) s"
if [ $again = 0 ]; then echo "$pass passed, $fail failed"; else echo "$pass passed ($again on a second run), $fail failed"; fi
[ $fail = 0 ]
