#!/bin/bash
# The programs' command lines, from tests/fixtures/flags/cli.txt: each row
# runs one program and checks its exit status and what it wrote to stderr.
# usage: test_flags_cli.sh FIXTURE GATE WEBHOOK CERTS KUBECTL-RAYGATE DISPATCH
set -u
fixture="$1"
declare -A prog=([raygate-gate]="$2" [raygate-webhook]="$3" [raygate-certs]="$4" [kubectl-raygate]="$5" [raygate-dispatch]="$6")
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
rows=0 failed=0
while IFS='|' read -r name args want_rc want_err; do
	[[ -z "$name" || "$name" == \#* ]] && continue
	rows=$((rows + 1))
	read -ra argv <<<"$args"
	# No environment variable of ours may change the outcome; a program that starts instead of refusing is killed.
	env -u RAYGATE_WEBHOOK_ADDR -u RAYGATE_WEBHOOK_CERT -u RAYGATE_WEBHOOK_KEY -u RAYGATE_WEBHOOK_LOG_LEVEL \
		timeout 10 "${prog[$name]}" "${argv[@]}" >"$out/stdout" 2>"$out/stderr"
	rc=$?
	err="$(cat "$out/stderr")"
	if [[ "$rc" != "$want_rc" ]]; then
		echo "FAIL: $name $args: exit $rc, want $want_rc; stderr: $err"
		failed=$((failed + 1))
	elif [[ "$want_err" == - && -n "$err" ]]; then
		echo "FAIL: $name $args: stderr should be empty, got: $err"
		failed=$((failed + 1))
	elif [[ "$want_err" != - && "$err" != *"$want_err"* ]]; then
		echo "FAIL: $name $args: stderr lacks '$want_err'; got: $err"
		failed=$((failed + 1))
	elif [[ "$want_rc" == 2 && "$(wc -l <"$out/stderr")" != 1 ]]; then
		echo "FAIL: $name $args: a bad flag is one line on stderr, got: $err"
		failed=$((failed + 1))
	fi
done <"$fixture"
echo "$rows command lines, $failed failed"
[[ "$rows" -gt 0 && "$failed" == 0 ]]
