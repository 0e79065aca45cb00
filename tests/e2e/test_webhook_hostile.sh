#!/usr/bin/env bash
# The hostile-input catalogue (tests/fixtures/hostile/cases.json) through the
# real apiserver: every Pod and RayCluster case that the apiserver decodes and
# sends to raygate is created with --dry-run=server. The apiserver itself then
# applies raygate's patch: a case expected to be patched must come back created
# (with the catalogue's checks holding on the object the apiserver returns) or
# refused by the apiserver's own validation, never with a patch the apiserver
# could not apply ("Internal error"); a case expected to be denied must be
# denied by raygate with its message. Cases the apiserver refuses before any
# webhook (a Pod whose annotations are a string cannot be decoded) are counted
# apart; at least 25 cases must reach raygate.
. "$(dirname "$0")/lib.sh"
e2e_setup
[[ "$("$ROOT/hack/cluster.sh" status 2>/dev/null)" == *"raygate-webhook"*"running"* ]] || fail "raygate's webhook is not running (cluster started with --no-raygate?)"

work="$(mktemp -d)"
e2e_on_exit 'rm -rf "$work"'

# One file per applicable case: the object in our namespace, and what to expect.
python3 - "$ROOT/tests/fixtures/hostile" "$work" "$NS" <<'PY'
import json, os, sys
src, out, ns = sys.argv[1:4]
for c in json.load(open(os.path.join(src, "cases.json")))["cases"]:
    if "body" not in c or "allowed" not in c:
        continue
    try:
        review = json.load(open(os.path.join(src, c["body"]), "rb"))
    except ValueError:
        continue
    req = review["request"]
    kind = req.get("kind")
    obj = req.get("object")
    if not isinstance(kind, dict) or kind.get("kind") not in ("Pod", "RayCluster") or req.get("operation") != "CREATE":
        continue
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or req.get("subResource") not in (None, ""):
        continue
    obj["metadata"]["namespace"] = ns
    if kind["kind"] == "Pod":
        obj["metadata"].pop("name", None)
        obj["metadata"]["generateName"] = "hostile-"
    json.dump(obj, open(os.path.join(out, c["name"] + ".object.json"), "w"))
    json.dump(c, open(os.path.join(out, c["name"] + ".case.json"), "w"))
PY

reached=0 undecodable=0 created=0 invalid=0 denied=0
for objfile in "$work"/*.object.json; do
	name="$(basename "$objfile" .object.json)"
	case_json="$work/$name.case.json"
	allowed="$(jq -r .allowed "$case_json")"
	patched="$(jq -r '.patched // false' "$case_json")"
	if kc create --dry-run=server --validate=false -o json -f "$objfile" >"$work/out.json" 2>"$work/err.txt"; then
		[[ "$allowed" == true ]] || fail "$name: created, expected a denial"
		# The catalogue's checks, on the object as the apiserver patched it.
		bad="$(jq -r --slurpfile c "$case_json" '
			. as $o | [$c[0].checks // [] | .[] | .pointer as $p | .value as $v |
			  ($p | ltrimstr("/") | split("/") | map(gsub("~1"; "/") | gsub("~0"; "~") |
			    if test("^[0-9]+$") then tonumber else . end)) as $path |
			  select(($o | getpath($path)) != $v) | $p] | join(", ")' "$work/out.json")"
		[[ -z "$bad" ]] || fail "$name: created, but the apiserver's object differs at $bad"
		reached=$((reached + 1)) created=$((created + 1))
		continue
	fi
	out="$(cat "$work/err.txt")"
	case "$out" in
	*"Internal error"* | *"failed calling webhook"* | *"patch"*"apply"*)
		fail "$name: the apiserver could not use raygate's answer: $out" ;;
	*"denied the request"*)
		[[ "$allowed" == false ]] || fail "$name: denied, expected allowed: $out"
		msg="$(jq -r .message "$case_json")"
		[[ "$out" == *"$msg"* ]] || fail "$name: denial lacks \"$msg\": $out"
		reached=$((reached + 1)) denied=$((denied + 1)) ;;
	*"is invalid"*)
		# Mutating webhooks run before validation: raygate answered, its patch applied, validation refused the object.
		[[ "$allowed" == true ]] || fail "$name: refused by validation, expected raygate's denial: $out"
		reached=$((reached + 1)) invalid=$((invalid + 1)) ;;
	*)
		say "  $name: refused before raygate: ${out:0:160}"
		undecodable=$((undecodable + 1)) ;;
	esac
done
say "reached raygate: $reached ($created created, $invalid refused by validation after the patch, $denied denied); not decodable by the apiserver: $undecodable"
((reached >= 25)) || fail "only $reached hostile cases reached raygate"
pass "every hostile case the apiserver sent raygate got an answer the apiserver could apply"
