#!/usr/bin/env bash
# Every C file of the project (product and tests; hack/bench's harnesses too)
# is formatted as .clang-format says (h2o's style). Fails naming each file
# that clang-format would change, and the first places in it. One
# clang-format process for all files: a process per file costs seconds.
# Fix with: git ls-files '*.c' '*.h' | xargs clang-format -i
#
#   check_format.sh SOURCE_ROOT
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format not found: hack/deps.sh installs it"; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
((${#files[@]} > 0)) || { echo "no C files found under $1"; exit 1; }
if out=$(clang-format --dry-run -Werror "${files[@]}" 2>&1); then
	echo "format: ${#files[@]} files, 0 not formatted"
	exit 0
fi
# "path:line:col: error: code should be clang-formatted [-Wclang-format-violations]"
bad=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*\):\([0-9]*\):[0-9]*: error: .*/\1/p' | sort -u)
printf '%s\n' "$out" | grep -E '^[^:]+:[0-9]+:[0-9]+: error' | head -n 20
echo "format: ${#files[@]} files, $(printf '%s\n' "$bad" | grep -c .) not formatted: $(echo $bad)"
exit 1
