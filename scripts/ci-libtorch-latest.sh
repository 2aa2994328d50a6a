#!/usr/bin/env bash
# The second CI leg: firebrand built and tested against Debian's newest
# libtorch (sid: libtorch-dev and python3-torch 2.14 at the time of writing,
# Node 24, g++ 15) in a minimal sid chroot (scripts/make-sid-chroot.sh makes
# it on first use and updates it). The whole test suite runs there, as
# `npm test` does here on libtorch 1.13, then the golden files again with
# oneDNN held to AVX2.
# Run as root: bash scripts/ci-libtorch-latest.sh   (see README for timings)
#   FIREBRAND_SID_ROOT  where the chroot lives (default /var/tmp/firebrand-sid)
#   FIREBRAND_SID_MADE=1  it is made and up to date already
set -euo pipefail
cd "$(dirname "$0")/.."

root=${FIREBRAND_SID_ROOT:-/var/tmp/firebrand-sid}
started=$SECONDS
if [ "$(id -u)" -ne 0 ]; then
  echo "ci-libtorch-latest: run as root (it makes a chroot with debootstrap)" >&2
  exit 1
fi
# .ci/run made it beside the first leg.
[ "${FIREBRAND_SID_MADE:-}" = 1 ] || bash scripts/make-sid-chroot.sh
# shellcheck source=scripts/sid-chroot.sh
source scripts/sid-chroot.sh
mount_sid_chroot "$root"

# A copy of this working tree (what git tracks or would add), built from scratch, with the prebuilds
# made here (the 1.13 leg's), so that the package test there packs prebuilds for two libtorch versions.
# It lives under /tmp, as the package test's install does: ccache (base_dir /tmp) then finds the
# tree's objects for that install's compile, which runs the same commands on the same files.
work=/tmp/firebrand-ci
in_sid_root "$root" "rm -rf $work && mkdir -p $work"
{ git ls-files -z --cached --others --exclude-standard; [ ! -d prebuilds ] || find prebuilds -type f -print0; } |
  tar --null -T - -cf - | in_sid_root "$root" "tar -xf - -C $work"
ccache="CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=/tmp CCACHE_DIR=/var/cache/firebrand-ccache CCACHE_NOHASHDIR=1"
phase=$SECONDS
in_sid_root "$root" "cd $work && $ccache ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund"
echo "ci-libtorch-latest: npm ci (the addon compiled) in $((SECONDS - phase)) s"
phase=$SECONDS
# The source install is tested here (on the newest libtorch): no prebuild fits, so npm compiles.
in_sid_root "$root" "cd $work && $ccache FIREBRAND_TEST_SOURCE_INSTALL=1 bash scripts/with-backtraces.sh npm test"
echo "ci-libtorch-latest: npm test in $((SECONDS - phase)) s ($(in_sid_root "$root" "CCACHE_DIR=/var/cache/firebrand-ccache ccache -s | grep -iE 'hits|misses' | tr -s ' ' | paste -sd ';'"))"
phase=$SECONDS
in_sid_root "$root" "cd $work && ONEDNN_MAX_CPU_ISA=AVX2 bash scripts/with-backtraces.sh npm run test:golden"
echo "ci-libtorch-latest: golden files under ONEDNN_MAX_CPU_ISA=AVX2 in $((SECONDS - phase)) s"
# The prebuild made there joins this tree's: `npm pack` here then ships one per libtorch.
mkdir -p prebuilds
in_sid_root "$root" "cd $work && tar -cf - prebuilds" | tar -xf - -C .
echo "ci-libtorch-latest: prebuilds now here: $(cd prebuilds && echo */*/firebrand.napi.node)"
echo "ci-libtorch-latest: passed in $((SECONDS - started)) s"
