#!/bin/sh
# Installs the Debian packages the tests use: the real kfd/drm/HSA headers the ABI tests compile against,
# the ROCm 5.2.3 userspace that the compatibility tests run (rocm-smi and librocm-smi64-1 too),
# clang/lld/llvm 14 for the gfx90a kernel corpus,
# LLVM 14's AMDHSAKernelDescriptor.h (llvm-14-dev) for the kernel-descriptor layout test, and the
# shells the topology script is tested with, HIP 5.2.3 (hipcc, libamdhip64, the device libraries, and
# rocPRIM, rocRAND 5.3.3 and rocSPARSE, whose headers and libraries corpus programs use) for
# the HIP corpus (scripts/hip-tests.sh), and bash plus what ../shared/kfdtest/build.sh builds kfdtest
# with (cmake, pkg-config, libnuma-dev, libelf-dev, python3), and gdb, with which scripts/procdump.sh
# shows where a client that outlived its time limit was. Idempotent; needs root (CI runs as root).
set -eu
pkgs="gcc make linux-libc-dev libdrm-dev libdrm-amdgpu1 libhsakmt1 libhsakmt-dev libhsa-runtime64-1 \
libhsa-runtime-dev rocminfo rocm-smi librocm-smi64-1 clang-14 lld-14 llvm-14 llvm-14-dev g++ dash busybox \
mawk procps util-linux gdb hipcc libamdhip64-dev rocm-device-libs librocprim-dev librocrand-dev librocsparse-dev bash cmake pkg-config libnuma-dev libelf-dev python3"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "install-deps: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "install-deps: all packages present"
