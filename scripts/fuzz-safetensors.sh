#!/usr/bin/env bash
# Fuzzes the C++ safetensors reader with libFuzzer + AddressSanitizer for a
# bounded time. Inputs that crash it are copied to test/fixtures/fuzz/, where
# test/data-files.test.ts loads each one and expects a clean error.
# Usage: bash scripts/fuzz-safetensors.sh [seconds=120]   (Debian/Ubuntu; installs clang as root if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}

clang=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$clang" ]; then
  if [ "$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang >/dev/null; clang=$(command -v clang++)
  else echo "fuzz: needs clang (apt-get install clang)" >&2; exit 1; fi
fi
torch=${TORCH_PREFIX:-/usr}
work=${FUZZ_DIR:-/tmp/firebrand-fuzz}
mkdir -p "$work/corpus" "$work/crashes" test/fixtures/fuzz
cp test/fixtures/data/*.safetensors "$work/corpus/"

echo "fuzz: building with $clang"
"$clang" -std=c++17 -O1 -g -fsanitize=fuzzer,address -D_GLIBCXX_USE_CXX11_ABI=1 \
  -Inative -I"$torch/include" -I"$torch/include/torch/csrc/api/include" \
  native/fuzz/safetensors_fuzzer.cpp native/core/io/safetensors_reader.cpp native/core/io/json.cpp \
  native/core/errors.cpp native/core/shape_text.cpp \
  -L"$torch/lib/x86_64-linux-gnu" -L"$torch/lib" -ltorch_cpu -lc10 \
  -o "$work/safetensors_fuzzer"

echo "fuzz: running for ${seconds}s"
status=0
ASAN_OPTIONS=detect_leaks=0 "$work/safetensors_fuzzer" "$work/corpus" -max_total_time="$seconds" -max_len=4096 \
  -artifact_prefix="$work/crashes/" -print_final_stats=1 || status=$?
found=$(find "$work/crashes" -type f | wc -l)
if [ "$found" -gt 0 ]; then
  cp "$work"/crashes/* test/fixtures/fuzz/
  echo "fuzz: $found crashing input(s) copied to test/fixtures/fuzz/ - fix the reader, keep them as regression tests" >&2
  exit 1
fi
echo "fuzz: no crash in ${seconds}s (exit $status)"
exit "$status"
