#!/usr/bin/env bash
# Builds ROCT's kfdtest as ../shared/kfdtest/build.sh does (5.2.3 against Debian's libhsakmt, 6.2.4 with
# libhsakmt 6.2.4), then links kfdtest 6.2.4 once more against LLVM 19 instead of Debian's LLVM 14:
#   OUT/5.2.3/kfdtest, OUT/6.2.4/kfdtest (LLVM 19; OUT/6.2.4/kfdtest.llvm says so)
# Usage: scripts/build-kfdtest.sh [OUT]   (default /var/tmp/kfdtest). Needs root for apt-get. About 3
# minutes on 2 cores for the shared build, 2 more for the relink, once per machine.
#
# Why: kfdtest 6.2.4 assembles its shaders at run time with LLVM's MC layer for the GPU under test,
# and KFDASMTest.AssembleShaders assembles every shader for every target it knows, gfx940 among them.
# LLVM 14 predates gfx940-gfx942: that case failed on every profile, and on mi300x (gfx942) every case
# that runs a shader did. kfdtest 6.2.4's CMake accepts any LLVM from 7 on; LLVM 19's headers no longer
# declare llvm_shutdown (Assemble.cpp's destructor) through the ones it includes, so the build
# force-includes llvm/Support/ManagedStatic.h, which declares it. kfdtest 5.2.3 keeps ../shared's sp3
# stand-in on llvm-mc-14 (gfx90a only).
#
# kfdtest 5.2.3's sp3 stand-in runs sp3_llvm.py by the absolute path build.sh compiles into it. So that
# a build outlives the checkout that made it (a CI clone in a temporary directory), build.sh runs from
# a copy of ../shared/kfdtest inside OUT, and a 5.2.3 binary that names another path is rebuilt.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/var/tmp/kfdtest}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
src=$out/shared-kfdtest
# refreshed only when ../shared's differs: a kfdtest 5.2.3 running elsewhere may be using it
if ! diff -rq "$here/../shared/kfdtest" "$src" >/dev/null 2>&1; then
	rm -rf "$src" && cp -R "$here/../shared/kfdtest" "$src" && chmod -R u+w "$src"
fi
if [ -x "$out/5.2.3/kfdtest" ] && ! grep -qF "$src/sp3/sp3_llvm.py" "$out/5.2.3/kfdtest"; then
	echo "build-kfdtest: $out/5.2.3/kfdtest runs an sp3_llvm.py outside $src: rebuilding it" >&2
	rm -f "$out/5.2.3/kfdtest"
fi
bash "$src/build.sh" "$out" >/dev/null
if [ "$(cat "$out/6.2.4/kfdtest.llvm" 2>/dev/null)" != 19 ]; then
	need="llvm-19-dev"
	miss=""; for p in $need; do dpkg -s "$p" >/dev/null 2>&1 || miss="$miss $p"; done
	if [ -n "$miss" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $miss >/dev/null; fi
	b=$out/src-6.2.4/tests/kfdtest/build-llvm19
	rm -rf "$b" && mkdir -p "$b" && cd "$b"
	cmake .. -DCMAKE_BUILD_TYPE=Release -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm \
		-DCMAKE_PREFIX_PATH="$out/6.2.4/libhsakmt" \
		"-DCMAKE_CXX_FLAGS=-I$out/inc -I/usr/lib/llvm-19/include -include tuple -include llvm/Support/ManagedStatic.h" >cmake.log 2>&1 || { tail -20 cmake.log; exit 1; }
	make -j"$(nproc)" >make.log 2>&1 || { grep -m5 -A3 ' error' make.log; exit 1; }
	cp kfdtest "$out/6.2.4/kfdtest"
	echo 19 >"$out/6.2.4/kfdtest.llvm"
fi
ls -l "$out/5.2.3/kfdtest" "$out/6.2.4/kfdtest"
