#!/usr/bin/env bash
# Every C file of the project (product and tests; hack/bench's harnesses too)
# is formatted as .clang-format says (h2o's style). Fails naming each file that
# clang-format would change, with the first lines of the difference.
# Fix with: git ls-files '*.c' '*.h' | xargs clang-format -i
#
#   check_format.sh SOURCE_ROOT
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format not found: hack/deps.sh installs it"; exit 1; }
bad=0 n=0
while IFS= read -r f; do
	n=$((n + 1))
	if ! out=$(clang-format "$f" | diff -u "$f" -); then
		echo "$f: not formatted"
		printf '%s\n' "$out" | sed -n '3,12p'
		bad=$((bad + 1))
	fi
done < <(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
echo "format: $n files, $bad not formatted"
((bad == 0))
