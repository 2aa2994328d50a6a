#!/usr/bin/env bash
# Formats the code (npm run format) or checks that it is formatted (npm run format:check, run by CI):
# prettier for TypeScript and JavaScript (.prettierrc.json), clang-format for C++ (.clang-format).
# Formatting differs between clang-format versions: the project's is Debian 12's, clang-format 14.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t cpp < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.h' | grep -v '^test/fixtures/')
version=$(clang-format --version | grep -o 'version [0-9]*' || true)
[ "$version" = "version 14" ] || echo "format: clang-format ${version:-not found}; the project formats with version 14 (Debian 12)" >&2
if [ "${1:-}" = --check ]; then
  npx prettier --check .
  clang-format --dry-run --Werror "${cpp[@]}"
  echo "format: ${#cpp[@]} C++ files formatted as clang-format writes them"
else
  npx prettier --write --log-level warn .
  clang-format -i "${cpp[@]}"
fi
