#!/usr/bin/env bash
# Runs one test file (or a --grep of it) again and again, each run under
# scripts/with-backtraces.sh, and says how each ended: how an intermittent
# crash is caught with its backtrace, and how its fix is shown.
#   bash scripts/repeat-test.sh 50 dist/test/modules-golden.test.js --grep resnet18
# Exits 1 when any run failed or died.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:?usage: repeat-test.sh <runs> <mocha arguments>}
shift
failed=0
for i in $(seq 1 "$runs"); do
  out=$(bash scripts/with-backtraces.sh npx mocha --no-config --require dist/test/support/setup.js \
    --timeout 120000 --enable-source-maps "$@" 2>&1)
  status=$?
  echo "repeat-test: run $i of $runs: status $status, $(echo "$out" | grep -E '^ +[0-9]+ (passing|failing)' | tr -s ' ' | paste -sd ',')"
  if [ "$status" -ne 0 ] || echo "$out" | grep -q '^with-backtraces:'; then
    failed=$((failed + 1))
    echo "$out" | tail -n 200
  fi
done
echo "repeat-test: $failed of $runs runs failed"
[ "$failed" -eq 0 ]
