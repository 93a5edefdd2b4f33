#!/usr/bin/env bash
# Builds ROCr 6.2.4 (the HSA runtime) from ../shared/rocr's source tarball against libhsakmt 6.2.4,
# as ../shared/rocr/build.sh does, with one difference: PC sampling is compiled in.
#   OUT/rocr-6.2.4-pcs/lib/libhsa-runtime64.so.1   (a drop-in for Debian's through LD_LIBRARY_PATH)
# Usage: scripts/build-rocr.sh [OUT]   (default /var/tmp/kfdtest; ../shared/kfdtest/build.sh, which it
# runs first for libhsakmt 6.2.4, shares it). Needs root for apt-get (LLVM 19 assembles ROCr's blit
# kernels and trap handlers). About 5 minutes on 2 cores, once per machine.
#
# Why not the shared build: it configures PC_SAMPLING_SUPPORT=OFF, which drops pcs/pcs_runtime.cpp
# while ROCr's queue-exception and memory-fault handlers still call rocr::pcs::PcsRuntime::instance()
# (amd_aql_queue.cpp, runtime.cpp), so those paths die with "undefined symbol
# _ZN4rocr3pcs10PcsRuntime8instanceEv". At KFD interface 1.13 ROCr runtime-enables and takes every
# wave exception (an llvm.trap, a device-side assert) through them. Images stay off as there.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$here/../shared
out=${1:-/var/tmp/kfdtest}
bash "$shared/kfdtest/build.sh" "$out" >/dev/null
dst=$out/rocr-6.2.4-pcs
if [ ! -e "$dst/lib/libhsa-runtime64.so.1" ]; then
	need="clang-19 lld-19 llvm-19-dev libclang-19-dev libelf-dev libdrm-dev libnuma-dev cmake g++ pkg-config"
	miss=""; for p in $need; do dpkg -s "$p" >/dev/null 2>&1 || miss="$miss $p"; done
	if [ -n "$miss" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $miss >/dev/null; fi
	src=$out/src-rocr-6.2.4-pcs
	rm -rf "$src" && mkdir -p "$src"
	tar -xzf "$shared/rocr/rocr-6.2.4.tar.gz" -C "$src" --strip-components=1
	mkdir -p "$src/build" && cd "$src/build"
	cmake ../src -DCMAKE_BUILD_TYPE=Release -DIMAGE_SUPPORT=OFF -DPC_SAMPLING_SUPPORT=ON -DBUILD_SHARED_LIBS=ON \
		-DCMAKE_PREFIX_PATH="$out/6.2.4/libhsakmt;/usr/lib/llvm-19" -DCMAKE_INSTALL_PREFIX="$dst" >cmake.log 2>&1 || { tail -20 cmake.log; exit 1; }
	make -j"$(nproc)" >make.log 2>&1 && make install >install.log 2>&1 || { grep -m5 -A3 ' error' make.log; exit 1; }
fi
ls -l "$dst/lib/libhsa-runtime64.so.1"
