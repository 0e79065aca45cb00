#!/usr/bin/env bash
# Runs the unit suite under valgrind memcheck (less the checks of the sources,
# suite 'source', which test no binary of ours, and the tests that are bash or
# Python scripts, suite 'script': valgrind would check the interpreter, not
# the programs they run, which are not traced): any invalid access, use of
# uninitialised memory or leak (definite, indirect or possible) fails the test.
# Hostile-input bodies over 4 MiB are skipped there (RAYGATE_UNDER_VALGRIND=1;
# minutes each under valgrind); the sanitizer build runs them. Then the
# webhook binary itself under valgrind through the hostile catalogue over TLS
# (tests/local/test_hostile_tls.py with RAYGATE_WEBHOOK_VALGRIND=1). h2o's known
# leaks are suppressed in tests/local/valgrind.supp, for both.
#
#   hack/valgrind.sh [BUILD_DIR]     (default build/, as hack/test.sh sets it up)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
build="${1:-$BUILD}"
[[ -f "$build/build.ninja" ]] || die "no build in $build: meson setup $build && meson compile -C $build"
command -v valgrind >/dev/null || die "valgrind is not installed (hack/deps.sh)"
meson compile -C "$build" >/dev/null
rc=0
# meson names the log <logbase>-<wrapper>: valgrind-valgrind.json
RAYGATE_UNDER_VALGRIND=1 nice -n 10 meson test -C "$build" --suite unit --no-suite source --no-suite script --print-errorlogs --logbase valgrind \
	--timeout-multiplier 10 \
	--wrapper "valgrind --quiet --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible --suppressions=$here/../tests/local/valgrind.supp" || rc=1
RAYGATE_WEBHOOK_VALGRIND=1 nice -n 10 meson test -C "$build" hostile_tls --print-errorlogs --logbase valgrind-webhook || rc=1
exit $rc
