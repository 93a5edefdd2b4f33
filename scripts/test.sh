#!/bin/sh
# The project's test command (README, .ci/run): format and vet checks, every test (real FUSE mounts
# and real ROCm libraries included; run as root with /dev/fuse), the race detector over the core
# packages, and a short run of every fuzz target. FUZZTIME overrides the per-target budget; it is an
# iteration count by default because time-bounded runs can end in a spurious "context deadline exceeded".
set -eu
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
fuzztime="${FUZZTIME:-3000x}"
# Tests that read ../shared (captured topology trees, kfdtest sources) skip in a lone clone; here
# they must run (internal/testenv.Shared fails instead of skipping).
if [ -d ../shared ]; then export KFDEMU_REQUIRE_SHARED=1; else echo "note: ../shared is absent: tests that read it skip"; fi
step() { printf '\n== %s\n' "$*"; }

step gofmt
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$bad" ] || { echo "gofmt needed:"; echo "$bad"; exit 1; }

step go vet
go vet ./...

step go test
go test -count=1 -timeout 15m ./...

step go test -race, core packages
race=""
for p in $(go list ./...); do
	case "$p" in
	*/topology | */kfd | */kfd/svm | */pasid | */mmu | */doorbell | */gpu/hqd | */gpu/cp | */gpu/cp/pm4 | */gpu/sdma | */gpu/hws | */gpu/aql | */fs | */mmnotify) race="$race $p" ;;
	esac
done
# shellcheck disable=SC2086
go test -count=1 -race -timeout 15m $race

step HIP corpus, expected-pass programs '(scripts/hip-tests.sh --expected)'
# About 3.5 minutes on the 2-core CI machine: 2.3 to compile with hipcc -j2 (reused while the
# sources are unchanged), 1.2 to run 15 programs, each under its own kfdemu exec daemon.
sh scripts/hip-tests.sh --expected

step HIP random-expression programs '(scripts/hip-exprs.sh: seeds 1-4 at -O2, 5-6 at -O0, GPU against host)'
sh scripts/hip-exprs.sh 1 2 3 4
sh scripts/hip-exprs.sh -O 0 5 6

step HIP corpus on ROCr 6.2.4, expected-pass programs '(scripts/hip-tests.sh --rocr ... --expected)'
# The modern HSA runtime (ROCr 6.2.4 on libhsakmt 6.2.4) as a drop-in for Debian's 5.2.3 one, built
# once per machine by scripts/build-rocr.sh from ../shared/rocr's source (with PC sampling and images compiled
# in; it installs clang-19 and friends; about 5 minutes on 2 cores); the same binaries, run with it
# first on LD_LIBRARY_PATH. Needs ../shared.
rocr_out=${KFDTEST_OUT:-/var/tmp/kfdtest}
if [ -r ../shared/rocr/rocr-6.2.4.tar.gz ]; then
	bash scripts/build-rocr.sh "$rocr_out" >/dev/null
	sh scripts/hip-tests.sh --rocr "$rocr_out/rocr-6.2.4-full/lib" --expected
else
	echo "skipping: ../shared/rocr is absent (a lone clone), so there is no ROCr 6.2.4 to run on"
fi

step HIP programs on a daemon built with -race '(a data race it reports fails the program)'
# The corpus's concurrent programs (queues of several GPUs, streams, CPU threads against kernels,
# faults, scratch, printf, processes sharing memory) on the whole daemon under the race detector:
# about 2 minutes. Found this way: every work-group's atomic adds going through one shared
# mmu.Port (8fc741f).
racebin=$(pwd)/.hip-build/kfdemu-race
go build -race -o "$racebin" ./cmd/kfdemu
race_progs="blocking_sync coop_groups cu_mask event_timing graph ipc managed managed_advise mem_fault
	memcpy_async multi_gpu multi_gpu_atomics peer printf scratch_reclaim stream_ops streams system_atomics"
# shellcheck disable=SC2086
KFDEMU="$racebin" sh scripts/hip-tests.sh $race_progs
if [ -r ../shared/rocr/rocr-6.2.4.tar.gz ]; then
	KFDEMU="$racebin" sh scripts/hip-tests.sh --rocr "$rocr_out/rocr-6.2.4-full/lib" multi_gpu_atomics peer streams coop_groups \
		memcpy_async multi_gpu managed ipc
fi

step go test -race, the concurrent work-group tests of gpu/shader
go test -count=1 -race -timeout 15m -run 'TestWaitForLastGroup|TestWaitForNextGroup|TestGridBarrier|TestGWSSemaphore|TestCUMaskAndResidency|TestCounterWithCPU|TestPingPongWithCPU|TestPreempt|TestStop|TestSuspend|TestShortGroupsShareWorker|TestDeviceMove|TestCodeCache|TestSpareGroups|TestPortsOwnedByOneGroup|TestThread|TestScalarCache|TestFetchThroughExecute|TestTinyDispatch' ./gpu/shader

step go test -tags purego, gpu/shader without its AVX2 lane kernels: the Go loops alone
go test -count=1 -tags purego -timeout 15m ./gpu/shader

# amdkfd's own conformance suite (docs/kfdtest.md): every case of the expected-pass lists, each alone
# under kfdemu exec; a case of a list that fails is a regression. kfdtest is built once per machine
# by scripts/build-kfdtest.sh (../shared/kfdtest/build.sh, then kfdtest 6.2.4 relinked against LLVM
# 19; KFDTEST_BUILD overrides it; about 5 minutes on 2 cores).
for v in 5.2.3 6.2.4; do
	step "kfdtest $v, expected-pass list, mi210"
	bash scripts/kfdtest.sh --version "$v" --profile mi210 --list "scripts/kfdtest/expected-$v.txt"
done

step fuzz targets, "$fuzztime" each
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for pkg in $(go list ./...); do
	for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		printf '%s %s: ' "$pkg" "$f"
		if go test -run '^$' -fuzz "^$f\$" -fuzztime "$fuzztime" -parallel 2 "$pkg" >"$log" 2>&1; then
			echo ok
		else
			echo FAIL; cat "$log"; exit 1
		fi
	done
done
step all tests passed
