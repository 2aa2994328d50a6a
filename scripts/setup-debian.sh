#!/usr/bin/env bash
# Installs what firebrand's native build and demo need on Debian/Ubuntu.
# Run as root: bash scripts/setup-debian.sh
#   libtorch-dev        libtorch 1.13 (CPU, with Gloo) and its CMake config
#   libgloo-dev         Gloo's headers, for distributed training on CPU (c10d's ProcessGroupGloo)
#   libopenblas0-openmp OpenBLAS: Debian's default reference BLAS makes a
#                       training step about 8x slower (43 ms vs 5 ms for an MLP)
#   zlib1g-dev          gzip-compressed IDX files
#   libjpeg62-turbo-dev, libpng-dev, libwebp-dev   image decoding (Dataset.fromImageFolder)
#   dataset-fashion-mnist  Fashion-MNIST (IDX) in /usr/share/datasets/fashion-mnist
#   cmake, g++          when missing
set -euo pipefail

if ! command -v apt-get >/dev/null 2>&1; then
  cat <<'TXT'
firebrand: this script is for Debian/Ubuntu (apt-get). Elsewhere:
  - get libtorch: unpack a LibTorch zip from https://pytorch.org and set LIBTORCH=/path/to/libtorch,
    or `pip install torch` for the python3 on PATH (firebrand finds torch.utils.cmake_prefix_path)
  - install cmake >= 3.18, a C++17 compiler (C++20 for libtorch 2.14) and zlib headers
  - then: npm run build:native
TXT
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "firebrand: run as root (sudo bash $0): it installs system packages with apt-get" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
packages=(libtorch-dev libgloo-dev libopenblas0-openmp zlib1g-dev libjpeg62-turbo-dev libpng-dev libwebp-dev dataset-fashion-mnist)
command -v cmake >/dev/null 2>&1 || packages+=(cmake)
command -v g++ >/dev/null 2>&1 || packages+=(g++)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "firebrand: all system packages present (${packages[*]})"
else
  echo "firebrand: installing ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

blas=$(readlink -f /usr/lib/"$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"/libblas.so.3 || true)
echo "firebrand: libblas.so.3 -> ${blas:-not found}"
case "$blas" in
  *openblas*) ;;
  *) echo "firebrand: warning: libtorch will use the reference BLAS (slow); select OpenBLAS with: update-alternatives --config libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH)" >&2 ;;
esac
