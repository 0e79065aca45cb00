#!/usr/bin/env bash
# `kubectl raygate` (build/cli/kubectl-raygate found by kubectl on
# PATH, as a plugin) on the walkthrough: test-cluster-0 admitted, test-cluster-1
# waiting with its reason, then admitted when test-cluster-0 is deleted; seen
# through `kubectl raygate gangs/queues/why`, also under the read-only
# ClusterRole raygate-viewer (manifests/cli-viewer.yaml) with a service
# account's token; bad flags exit 2 naming the flag.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
export PATH="$BUILD/cli:$PATH"
[[ -x "$BUILD/cli/kubectl-raygate" ]] || fail "no $BUILD/cli/kubectl-raygate (meson compile -C build)"
kc plugin list 2>/dev/null | grep -q 'kubectl-raygate$' || fail "kubectl does not list the plugin"
pass "kubectl finds the plugin on PATH"

Q="cli-$(e2e_uid)"
make_queue "$Q" 4 6Gi
inv_start

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch test-cluster-0 3 60 || fail "test-cluster-0 was not admitted"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-1 "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created test-cluster-1's 3 pods" has_pods test-cluster-1 3

# gang_field NAME JQ: a field of gang NAME in `kubectl raygate gangs -n NS -o json`
gang_field() { kc raygate gangs -n "$NS" -o json | jq -r --arg n "$1" ".items[] | select(.name == \$n) | $2"; }
field_is() { [[ "$(gang_field "$1" "$2")" == "$3" ]]; }
eventually 30 "test-cluster-0 Running in kubectl raygate gangs" field_is test-cluster-0 .state Running
eventually 30 "test-cluster-1 Waiting with its reason" field_is test-cluster-1 .reason NotEnoughResources

json="$(kc raygate gangs -n "$NS" -o json)"
assert_eq "gangs listed" "test-cluster-0 test-cluster-1" "$(jq -r '[.items[].name] | join(" ")' <<<"$json")"
assert_eq "test-cluster-0: kind, queue, pods bound/min, position" "RayCluster $Q 3/3 null" \
	"$(jq -r '.items[0] | "\(.kind) \(.queue) \(.pods.bound)/\(.pods.min) \(.position)"' <<<"$json")"
assert_eq "test-cluster-1: state, pods bound/min, position" "Waiting 0/3 1" \
	"$(jq -r '.items[1] | "\(.state) \(.pods.bound)/\(.pods.min) \(.position)"' <<<"$json")"
want="gang ray-test-cluster-1-pg (3 pods; cpu 3, memory 4Gi) does not fit queue $Q: cpu needs 3, 1 of 4 free; memory needs 4Gi, 2Gi of 6Gi free"
assert_eq "test-cluster-1's message (the PodGroup's)" "$want" "$(jq -r '.items[1].message' <<<"$json")"
assert_eq "the same as kubectl get podgroups.scheduling.volcano.sh shows" "$want" \
	"$(kc get podgroups.scheduling.volcano.sh -n "$NS" ray-test-cluster-1-pg -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}')"

table="$(kc raygate gangs -n "$NS")"
printf '%s\n' "$table" | sed 's/^/    /' >&2
[[ "$(head -1 <<<"$table")" =~ ^NAMESPACE\ +NAME\ +KIND\ +QUEUE\ +PRIORITY\ +STATE\ +PODS\ +POSITION\ +WAITING\ FOR\ +AGE$ ]] ||
	fail "gangs header: $(head -1 <<<"$table")"
grep -Eq "^$NS +test-cluster-1 +RayCluster +$Q +0 +Waiting +0/3 +1 +queue $Q: cpu, memory short +[0-9]" <<<"$table" ||
	fail "gangs table has no waiting test-cluster-1 row"
grep -Eq "^$NS +test-cluster-0 +RayCluster +$Q +0 +Running +3/3 +- +- " <<<"$table" || fail "gangs table has no running test-cluster-0 row"
[[ "$table" != *$'\033'* ]] || fail "colour codes printed to a pipe"
pass "gangs table: both gangs, no colour on a pipe"
# On a terminal (script(1) gives it one), the states are coloured; NO_COLOR turns that off.
on_tty="$(TERM=xterm script -qec "$KUBECTL raygate gangs -n $NS" /dev/null)"
[[ "$on_tty" == *$'\033[33mWaiting\033[0m'* && "$on_tty" == *$'\033[32mRunning\033[0m'* ]] ||
	fail "no coloured states on a terminal: $(cat -v <<<"$on_tty")"
[[ "$(NO_COLOR=1 TERM=xterm script -qec "$KUBECTL raygate gangs -n $NS" /dev/null)" != *$'\033'* ]] || fail "colours despite NO_COLOR"
pass "colours only on a terminal (and not with NO_COLOR)"

other="$(kc raygate gangs -A --queue "$Q" -o json | jq -r '[.items[].name] | join(" ")')"
assert_eq "gangs -A --queue" "test-cluster-0 test-cluster-1" "$other"
assert_eq "gangs --queue of another queue" "No gangs found." "$(kc raygate gangs -n "$NS" --queue "not-$Q")"

# YAML says what JSON says.
yaml_json="$(kc raygate gangs -n "$NS" -o yaml | python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(sys.stdin)))')"
assert_eq "-o yaml parses to -o json (ages aside)" "$(jq -c '[.items[] | del(.ageSeconds)]' <<<"$json")" \
	"$(jq -c '[.items[] | del(.ageSeconds)]' <<<"$yaml_json")"

queues="$(kc raygate queues "$Q")"
printf '%s\n' "$queues" | sed 's/^/    /' >&2
grep -Eq "^$Q +- +Open +cpu=4,memory=6Gi +- +[^ ]+ +cpu=3,memory=4Gi +[0-9.]+ +1 +1$" <<<"$queues" || fail "queues row for $Q: $queues"
pass "queues: capability, allocated, running 1, pending 1"

why="$(kc raygate why test-cluster-1 -n "$NS")"
printf '%s\n' "$why" | sed 's/^/    /' >&2
grep -Fq "needs cpu 3; 1 free in queue $Q; 2 more when test-cluster-0 (priority 0) ends" <<<"$why" || fail "why: no cpu line"
grep -Fq "needs memory 4Gi; 2Gi free in queue $Q; 2Gi more when test-cluster-0 (priority 0) ends" <<<"$why" || fail "why: no memory line"
grep -F GangWaiting <<<"$why" | grep -Fq "$want" || fail "why: no GangWaiting event"
pass "why test-cluster-1: what would have to change, and its events"
assert_eq "why by PodGroup name" "$(kc raygate why test-cluster-1 -n "$NS" -o json | jq -c .explanation)" \
	"$(kc raygate why ray-test-cluster-1-pg -n "$NS" -o json | jq -c .explanation)"

# Bad input: exit 2 naming the flag; a gang that does not exist: exit 1.
expect_exit() { # STATUS TEXT ARGS...
	local want="$1" text="$2" rc=0 err; shift 2
	err="$(kc raygate "$@" 2>&1 >/dev/null)" || rc=$?
	[[ "$rc" == "$want" && "$err" == *"$text"* ]] || fail "kubectl raygate $*: exit $rc, '$err' (want $want, '$text')"
	pass "kubectl raygate $*: exit $want, says '$text'"
}
expect_exit 2 "unknown flag --bogus" gangs --bogus
expect_exit 2 "--output: \"xml\" is not one of table, json, yaml, wide" gangs -o xml
expect_exit 2 "--queue needs a value" gangs --queue
expect_exit 2 "unknown command \"gang\"" gang
expect_exit 2 "why needs the gang's NAME" why
expect_exit 1 "no gang nope in namespace $NS" why nope -n "$NS"

# Least privilege: a service account bound only to raygate-viewer sees the
# same. The ClusterRole of manifests/cli-viewer.yaml is made under a name of
# this test's, and it and its binding go when the test ends.
role="raygate-viewer-$(e2e_uid)"
e2e_on_exit 'kc delete clusterrolebinding,clusterrole "$role" --ignore-not-found >/dev/null 2>&1'
kc create --dry-run=client -o json -f "$ROOT/manifests/cli-viewer.yaml" |
	jq --arg n "$role" '.metadata.name = $n | .metadata.labels["e2e.raygate.io/added"] = "true"' | kc create -f - >/dev/null
kc create serviceaccount -n "$NS" viewer >/dev/null
kc create clusterrolebinding "$role" --clusterrole="$role" --serviceaccount="$NS:viewer" >/dev/null
kc label clusterrolebinding "$role" e2e.raygate.io/added=true >/dev/null
assert_eq "the viewer cannot create pods" "no" "$(kc auth can-i create pods -n "$NS" --as="system:serviceaccount:$NS:viewer" || true)"
assert_eq "the viewer cannot patch rayclusters" "no" \
	"$(kc auth can-i patch rayclusters.ray.io -n "$NS" --as="system:serviceaccount:$NS:viewer" || true)"
vk="$E2E_TMP/viewer.kubeconfig"
cat >"$vk" <<-EOF
	apiVersion: v1
	kind: Config
	clusters: [{name: local, cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$STATE/pki/ca.crt"}}]
	users: [{name: viewer, user: {token: "$(kc create token -n "$NS" viewer)"}}]
	contexts: [{name: viewer, context: {cluster: local, user: viewer, namespace: "$NS"}}]
	current-context: viewer
EOF
viewer_same() {
	local got err
	err="$E2E_TMP/viewer.err"
	got="$(kubectl-raygate --kubeconfig "$vk" gangs -o json 2>"$err" | jq -c '[.items[] | del(.ageSeconds)]')"
	[[ ! -s "$err" ]] || { cat "$err" >&2; return 1; }
	[[ "$got" == "$(kc raygate gangs -n "$NS" -o json | jq -c '[.items[] | del(.ageSeconds)]')" ]]
}
eventually 10 "raygate-viewer: the same gangs, no warning (the context's namespace)" viewer_same
kubectl-raygate --kubeconfig "$vk" why test-cluster-1 | grep -Fq "2 more when test-cluster-0 (priority 0) ends" ||
	fail "raygate-viewer: why"
kubectl-raygate --kubeconfig "$vk" queues "$Q" | grep -q "^$Q " || fail "raygate-viewer: queues"
pass "raygate-viewer: why and queues"

kc delete rayclusters.ray.io -n "$NS" test-cluster-0 >/dev/null
all_or_none_watch test-cluster-1 3 60 || fail "test-cluster-1 was not admitted after test-cluster-0 was deleted"
gangs() { kc raygate gangs -n "$NS" -o json | jq -r '[.items[].name] | join(" ")'; }
eventually 60 "test-cluster-0 gone from kubectl raygate gangs" is gangs test-cluster-1
eventually 60 "test-cluster-1 Running, 3/3 bound" field_is test-cluster-1 '"\(.state) \(.pods.bound)/\(.pods.min) \(.position)"' \
	"Running 3/3 null"
kc raygate why test-cluster-1 -n "$NS" | grep -Fq "3 of 3 pods bound; nothing has to change" || fail "why of a running gang"
pass "why test-cluster-1 once running: nothing has to change"
inv_stop
