#!/usr/bin/env bash
# Makes (or brings up to date) the Debian sid chroot that the second CI leg
# builds and tests in (scripts/ci-libtorch-latest.sh): debootstrap on first
# use, then sid's newest packages each run. It needs no CPU to speak of, so
# .ci/run starts it beside the first leg's build and tests.
# Run as root: bash scripts/make-sid-chroot.sh
#   FIREBRAND_SID_ROOT  where the chroot lives (default /var/tmp/firebrand-sid)
set -euo pipefail
cd "$(dirname "$0")/.."

root=${FIREBRAND_SID_ROOT:-/var/tmp/firebrand-sid}
mirror=http://deb.debian.org/debian
# python3-transformers: the tests check that transformers loads what savePretrained writes; python3-torchvision
# computes the torchvision checkpoints' references at test time; python3-onnx and python3-onnxruntime check
# what exportOnnx writes. ccache: the package test's source install compiles what the leg compiled already.
# gdb: a backtrace when a test process dies (scripts/with-backtraces.sh). python3-accelerate: PEFT, which
# `npm run bench:llm` imports from PEFT_SRC (Debian has no PEFT), imports it. curl: the serving test asks
# `firebrand serve` with it, as users do.
packages=(libtorch-dev python3-torch python3-transformers python3-torchvision python3-safetensors python3-onnx python3-onnxruntime python3-accelerate libgloo-dev libopenblas0-openmp zlib1g-dev libjpeg62-turbo-dev libpng-dev libwebp-dev nodejs npm g++ cmake
          ninja-build ca-certificates dataset-fashion-mnist bsdutils libblas3 ccache gdb curl)
started=$SECONDS

if [ "$(id -u)" -ne 0 ]; then
  echo "make-sid-chroot: run as root (it makes a chroot with debootstrap)" >&2
  exit 1
fi
if [ ! -x "$root/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  echo "make-sid-chroot: making a sid chroot in $root"
  debootstrap --variant=minbase sid "$root" "$mirror" >/dev/null
  echo "make-sid-chroot: debootstrap took $((SECONDS - started)) s"
fi

# shellcheck source=scripts/sid-chroot.sh
source scripts/sid-chroot.sh
mount_sid_chroot "$root"

# The sid mirror's Release file is past its validity date; newest packages each run.
in_sid_root "$root" "apt-get -o Acquire::Check-Valid-Until=false update -qq &&
         apt-get install -y -qq --no-install-recommends ${packages[*]} >/dev/null"
# OpenBLAS, not the reference BLAS, as libblas.so.3 (the reference one is ~8x slower).
in_sid_root "$root" 'openblas=$(ls /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 2>/dev/null || true);
         [ -z "$openblas" ] || update-alternatives --set libblas.so.3-x86_64-linux-gnu "$openblas" >/dev/null'
registry=$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)
in_sid_root "$root" "npm config set cafile /etc/ssl/host-ca.crt && npm config set registry '$registry'"
echo "make-sid-chroot: $(in_sid_root "$root" "python3 -c 'import torch; print(\"libtorch\", torch.__version__)'"), Node $(in_sid_root "$root" 'node --version'), $(in_sid_root "$root" 'g++ --version | head -1') ($((SECONDS - started)) s)"
