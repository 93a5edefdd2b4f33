#!/usr/bin/env bash
# Builds ROCr 6.2.4 (the HSA runtime) from ../shared/rocr's source tarball against libhsakmt 6.2.4,
# as ../shared/rocr/build.sh does, with two differences: PC sampling and image support are compiled in.
#   OUT/rocr-6.2.4-full/lib/libhsa-runtime64.so.1   (a drop-in for Debian's through LD_LIBRARY_PATH)
# Usage: scripts/build-rocr.sh [OUT]   (default /var/tmp/kfdtest; scripts/build-kfdtest.sh, which it
# runs first for libhsakmt 6.2.4, shares it). Needs root for apt-get (LLVM 19 assembles ROCr's blit
# kernels and trap handlers). About 6 minutes on 2 cores, once per machine.
#
# Why not the shared build: it configures PC_SAMPLING_SUPPORT=OFF, which drops pcs/pcs_runtime.cpp
# while ROCr's queue-exception and memory-fault handlers still call rocr::pcs::PcsRuntime::instance()
# (amd_aql_queue.cpp, runtime.cpp), so those paths die with "undefined symbol
# _ZN4rocr3pcs10PcsRuntime8instanceEv". At KFD interface 1.13 ROCr runtime-enables and takes every
# wave exception (an llvm.trap, a device-side assert) through them.
#
# And IMAGE_SUPPORT=OFF there leaves HIP without images, textures, surfaces and (HIP 5.2's
# hipMallocPitch/hipMalloc3D ask for image support) pitched allocations. Images need ROCr's OpenCL
# image blit kernels (src/image/blit_src), which clang-19 compiles for ~40 targets against the ROCm
# device libraries (read_imagef and friends live in opencl.bc). Debian's rocm-device-libs has them,
# but clang-19 does not look in Debian's directory (HIP_DEVICE_LIB_PATH points it there) and it lacks
# oclc_isa_version_*.bc for the targets newer than gfx940 (the build compiles every target
# blit_kernel.cpp names): those one-constant libraries are written here from the form of Debian's
# own (`@__oclc_ISA_version = ... constant i32 MAJOR*1000+MINOR*100+STEPPING`, gfx942 -> 9402).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$here/../shared
out=${1:-/var/tmp/kfdtest}
bash "$here/scripts/build-kfdtest.sh" "$out" >/dev/null
dst=$out/rocr-6.2.4-full
if [ ! -e "$dst/lib/libhsa-runtime64.so.1" ]; then
	need="clang-19 lld-19 llvm-19 llvm-19-dev libclang-19-dev libelf-dev libdrm-dev libnuma-dev cmake g++ pkg-config rocm-device-libs"
	miss=""; for p in $need; do dpkg -s "$p" >/dev/null 2>&1 || miss="$miss $p"; done
	if [ -n "$miss" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $miss >/dev/null; fi
	src=$out/src-rocr-6.2.4-full
	rm -rf "$src" && mkdir -p "$src"
	tar -xzf "$shared/rocr/rocr-6.2.4.tar.gz" -C "$src" --strip-components=1
	# The device libraries the image blit kernels link: Debian's, plus the missing ISA constants.
	libs=$src/device-libs
	debian=$(dirname "$(dpkg -L rocm-device-libs | grep -m1 '/opencl\.bc$')")
	mkdir -p "$libs" && ln -s "$debian"/*.bc "$libs"/
	for t in 941:9401 942:9402 1100:11000 1101:11001 1102:11002 1103:11003 1150:11500 1151:11501 1200:12000 1201:12001; do
		f=$libs/oclc_isa_version_${t%%:*}.bc
		[ -e "$f" ] || printf '%s\n' 'target triple = "amdgcn-amd-amdhsa"' \
			"@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 ${t##*:}, align 4" |
			llvm-as-19 -o "$f"
	done
	export HIP_DEVICE_LIB_PATH=$libs
	mkdir -p "$src/build" && cd "$src/build"
	cmake ../src -DCMAKE_BUILD_TYPE=Release -DIMAGE_SUPPORT=ON -DPC_SAMPLING_SUPPORT=ON -DBUILD_SHARED_LIBS=ON \
		-DCMAKE_PREFIX_PATH="$out/6.2.4/libhsakmt;/usr/lib/llvm-19" -DCMAKE_INSTALL_PREFIX="$dst" >cmake.log 2>&1 || { tail -20 cmake.log; exit 1; }
	make -j"$(nproc)" >make.log 2>&1 && make install >install.log 2>&1 || { grep -m5 -B2 -A3 'error' make.log; exit 1; }
fi
ls -l "$dst/lib/libhsa-runtime64.so.1"
