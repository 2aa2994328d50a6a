#!/usr/bin/env bash
# Compiles every native source (syntax and types, no linking) against
# libtorch 2.x headers, to keep the code building on both the 1.13 CI has and
# the 2.x of pip wheels. The headers come from Debian trixie's packages,
# downloaded and unpacked under /tmp without installing anything.
#   bash scripts/check-libtorch2.sh          libtorch-dev 2.6 (CPU; about 3 minutes on 2 cores)
#   bash scripts/check-libtorch2.sh --cuda   libtorch-cuda-dev 2.6, nvidia-cuda-dev 12.4, libcu++-dev
#        and libnccl-dev (contrib/non-free; ~1 GB download, 2.7 GB unpacked): the CUDA build's code
#        paths, NCCL process group included, compile (no GPU or CUDA toolkit needed)
set -euo pipefail
cd "$(dirname "$0")/.."

cuda=0
[ "${1:-}" = "--cuda" ] && cuda=1
if [ "$cuda" -eq 1 ]; then
  work=${LIBTORCH2_CUDA_DIR:-/tmp/firebrand-libtorch2-cuda}
  packages=(libtorch-cuda-dev nvidia-cuda-dev libcu++-dev libnccl-dev)
  components="main contrib non-free"
else
  work=${LIBTORCH2_DIR:-/tmp/firebrand-libtorch2}
  packages=(libtorch-dev)
  components=main
fi
headers="$work/root/usr/include"
if [ ! -d "$headers/torch" ]; then
  mkdir -p "$work/lists" "$work/cache" "$work/root"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie $components" >"$work/sources.list"
  apt_options=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
               -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
  apt-get "${apt_options[@]}" update -qq
  (cd "$work" && apt-get "${apt_options[@]}" download "${packages[@]}" 2>/dev/null)
  for package in "${packages[@]}"; do dpkg -x "$work/${package}"_*.deb "$work/root"; done
fi
echo "libtorch headers: $(grep -hoE 'TORCH_VERSION_(MAJOR|MINOR) [0-9]+' "$headers/torch/csrc/api/include/torch/version.h" | awk '{print $2}' | paste -sd.)$([ "$cuda" -eq 1 ] && echo ", CUDA and NCCL")"

napi=$(node -p "require('node-api-headers').include_dir")
failed=0
check() {
  g++ -std=c++17 -fsyntax-only -D_GLIBCXX_USE_CXX11_ABI=1 -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS \
    -DNODE_ADDON_API_DISABLE_DEPRECATED -DFIREBRAND_WITH_GLOO=1 -DFIREBRAND_WITH_NCCL="$cuda" -DFIREBRAND_TORCH_CUDA="$cuda" \
    -DFIREBRAND_LIBTORCH_SOURCE='"check"' -DFIREBRAND_TORCH_DIR='"check"' \
    -I"$headers" -I"$headers/torch/csrc/api/include" -Inative -I"$napi" -Inode_modules/node-addon-api "$1"
}
export -f check
export headers napi cuda
if ! find native -name '*.cpp' | sort | xargs -P "$(nproc)" -I{} bash -c 'check {} || { echo "FAILED: {}"; exit 255; }'; then
  failed=1
fi
[ "$failed" -eq 0 ] && echo "all native sources compile against libtorch 2.x headers$([ "$cuda" -eq 1 ] && echo " with CUDA and NCCL")"
exit "$failed"
