#!/usr/bin/env bash
# The second CI leg: firebrand built and tested against Debian's newest
# libtorch (sid: libtorch-dev and python3-torch 2.14 at the time of writing,
# Node 24, g++ 15) in a minimal sid chroot, made on first use and reused.
# The whole test suite runs there, as `npm test` does here on libtorch 1.13.
# Run as root: bash scripts/ci-libtorch-latest.sh   (see README for timings)
#   FIREBRAND_SID_ROOT  where the chroot lives (default /var/tmp/firebrand-sid)
set -euo pipefail
cd "$(dirname "$0")/.."

root=${FIREBRAND_SID_ROOT:-/var/tmp/firebrand-sid}
mirror=http://deb.debian.org/debian
# python3-transformers: the tests check that transformers loads what savePretrained writes; python3-torchvision
# computes the torchvision checkpoints' references at test time; python3-onnx and python3-onnxruntime check
# what exportOnnx writes.
packages=(libtorch-dev python3-torch python3-transformers python3-torchvision python3-safetensors python3-onnx python3-onnxruntime libgloo-dev libopenblas0-openmp zlib1g-dev libjpeg62-turbo-dev libpng-dev libwebp-dev nodejs npm g++ cmake
          ninja-build ca-certificates dataset-fashion-mnist bsdutils libblas3)
started=$SECONDS

if [ "$(id -u)" -ne 0 ]; then
  echo "ci-libtorch-latest: run as root (it makes a chroot with debootstrap)" >&2
  exit 1
fi
if [ ! -x "$root/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  echo "ci-libtorch-latest: making a sid chroot in $root"
  debootstrap --variant=minbase sid "$root" "$mirror" >/dev/null
fi

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for fs in proc sys dev dev/pts; do
  if ! mountpoint -q "$root/$fs"; then
    mount --bind "/$fs" "$root/$fs"
    mounts+=("$root/$fs")
  fi
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
# npm there trusts what npm trusts here (a proxy's CA included) and uses the same registry.
# A minbase chroot has no /etc/ssl until ca-certificates is installed there.
mkdir -p "$root/etc/ssl"
cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$root/etc/ssl/host-ca.crt"
registry=$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)

in_root() {
  chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive NODE_EXTRA_CA_CERTS=/etc/ssl/host-ca.crt CI="${CI:-}" bash -c "$1"
}

# The sid mirror's Release file is past its validity date; newest packages each run.
in_root "apt-get -o Acquire::Check-Valid-Until=false update -qq &&
         apt-get install -y -qq --no-install-recommends ${packages[*]} >/dev/null"
# OpenBLAS, not the reference BLAS, as libblas.so.3 (the reference one is ~8x slower).
in_root 'openblas=$(ls /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 2>/dev/null || true);
         [ -z "$openblas" ] || update-alternatives --set libblas.so.3-x86_64-linux-gnu "$openblas" >/dev/null'
in_root "npm config set cafile /etc/ssl/host-ca.crt && npm config set registry '$registry'"
echo "ci-libtorch-latest: $(in_root "python3 -c 'import torch; print(\"libtorch\", torch.__version__)'"), Node $(in_root 'node --version'), $(in_root 'g++ --version | head -1') ($((SECONDS - started)) s)"

# A copy of this working tree (what git tracks or would add), built from scratch, with the prebuilds
# made here (the 1.13 leg's), so that the package test there packs prebuilds for two libtorch versions.
work=/root/firebrand
in_root "rm -rf $work && mkdir -p $work"
{ git ls-files -z --cached --others --exclude-standard; [ ! -d prebuilds ] || find prebuilds -type f -print0; } |
  tar --null -T - -cf - | in_root "tar -xf - -C $work"
# The source install is tested here (on the newest libtorch): no prebuild fits, so npm compiles.
in_root "cd $work && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund && FIREBRAND_TEST_SOURCE_INSTALL=1 npm test"
# The prebuild made there joins this tree's: `npm pack` here then ships one per libtorch.
mkdir -p prebuilds
in_root "cd $work && tar -cf - prebuilds" | tar -xf - -C .
echo "ci-libtorch-latest: prebuilds now here: $(cd prebuilds && echo */*/firebrand.napi.node)"
echo "ci-libtorch-latest: passed in $((SECONDS - started)) s"
