#!/usr/bin/env bash
# The fault drills' invariant checker (invariants.py) can fail: with the gate
# controller stopped, we break each invariant by hand and expect the checker
# to name it, and its settled check (drill 7) to name a gang that fits but
# waits. A checker that never fires proves nothing.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
e2e_on_exit restore_gate
Q="inv-$(e2e_uid)"
make_queue "$Q" 4 16Gi
inv_start --grace 2 --evict-grace 2 --place-grace 2
"$ROOT/hack/cluster.sh" stop raygate-gate

ungate() { # POD
	kc patch pod -n "$NS" "$1" --type json -p '[{"op":"remove","path":"/spec/schedulingGates"}]' >/dev/null
}
saw() { grep -q "\"kind\": \"$1\"" "$INV_DIR/violations"; }

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" a "$Q" | kc apply -n "$NS" -f - >/dev/null
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" b "$Q" | kc apply -n "$NS" -f - >/dev/null
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" c "$Q" | kc apply -n "$NS" -f - >/dev/null
nine() { has_pods a 3 && has_pods b 3 && has_pods c 3; }
eventually 60 "KubeRay created the 9 pods (all gated: no controller)" nine
assert_eq "gated" "3 3 3" "$(gated_count a) $(gated_count b) $(gated_count c)"
polls="$(inv_polls)"
eventually 30 "the checker looked twice at the waiting gangs" inv_polled_since $((polls + 1))
[[ ! -s "$INV_DIR/violations" ]] || { cat "$INV_DIR/violations" >&2; fail "violations before anything was broken"; }
pass "no violation while everything waits"
# The churn drill's final check: a (cpu 3) fits the empty queue (cpu 4) but nobody admits it.
rc=0
settled_out="$(python3 "$ROOT/tests/e2e/invariants.py" --server "https://127.0.0.1:$APISERVER_PORT" --token "$STATE/pki/admin.token" \
	--ca "$STATE/pki/ca.crt" --namespace "$NS" --settled 2>&1)" || rc=$?
assert_eq "settled check's exit status (3: findings)" 3 "$rc"
[[ "$settled_out" == *"fitting-gang-waits]: RayCluster $NS/a "* ]] || fail "the settled check did not name a: $settled_out"
pass "settled check: fitting-gang-waits (a fits but waits)"

# a: ungated and bound without admission.
for p in $(kc get pods -n "$NS" -l ray.io/cluster=a -o name); do ungate "${p#pod/}"; done
eventually 20 "checker: ungated-unadmitted" saw ungated-unadmitted
eventually 30 "checker: bound-unadmitted" saw bound-unadmitted
# b as well: 6 cpu ungated in a queue of 4.
for p in $(kc get pods -n "$NS" -l ray.io/cluster=b -o name); do ungate "${p#pod/}"; done
eventually 20 "checker: over-capability" saw over-capability
# c: admitted by hand, only its head ungated: partly ungated beyond the grace.
kc annotate rayclusters.ray.io -n "$NS" c raygate.io/admitted-at=2020-01-01T00:00:00Z >/dev/null
ungate "$(head_pod c)"
eventually 20 "checker: partly-ungated" saw partly-ungated
# and recorded a second time.
kc annotate rayclusters.ray.io -n "$NS" c --overwrite raygate.io/admitted-at=2020-01-01T00:00:09Z >/dev/null
eventually 20 "checker: admitted-twice" saw admitted-twice
# The legacy operator's gangs (cluster.ray.io; its pods labelled ray-cluster-name): the head the stand-in for its
# node provider creates (tests/e2e/legacy), ungated without admission.
sed -e "s/^  name: example-cluster2$/  name: l/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" \
	"$ROOT/tests/e2e/legacy/example-cluster2.yaml" | kc apply -n "$NS" -f - >/dev/null
python3 "$ROOT/tests/e2e/legacy/node_provider.py" --server "https://127.0.0.1:$APISERVER_PORT" --token "$STATE/pki/admin.token" \
	--ca "$STATE/pki/ca.crt" --namespace "$NS" --head-timeout 0 l >/dev/null || true
lhead="$(kc get pods -n "$NS" -l ray-cluster-name=l,ray-node-type=head -o jsonpath='{.items[0].metadata.name}')"
[[ -n "$lhead" ]] || fail "the stand-in node provider created no head for l"
ungate "$lhead"
legacy_seen() { grep -q "pod $NS/$lhead has no raygate.io/gang gate but RayCluster l has no" "$INV_DIR/violations"; }
eventually 20 "checker: ungated-unadmitted for the legacy head $lhead" legacy_seen
# d: evicted (raygate.io/evicted-at, no admission), but its head left ungated: a gang evicted in part.
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" d "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created d's 3 pods" has_pods d 3
kc annotate rayclusters.ray.io -n "$NS" d raygate.io/evicted-at=2020-01-01T00:00:00Z raygate.io/requeue-count=1 >/dev/null
ungate "$(head_pod d)"
eventually 20 "checker: partly-evicted" saw partly-evicted
# f: admitted by hand and ungated, its head bound, its worker (cpu 20) refused by kube-scheduler: partly placed.
raycluster f queue="$Q" head="cpu: 100m, memory: 128Mi" group="w:1:1:1:cpu: 20, memory: 128Mi" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created f's 2 pods" has_pods f 2
kc annotate rayclusters.ray.io -n "$NS" f raygate.io/admitted-at=2020-01-01T00:00:00Z >/dev/null
for p in $(kc get pods -n "$NS" -l ray.io/cluster=f -o name); do ungate "${p#pod/}"; done
eventually 30 "checker: partly-placed (f's worker refused, its head bound)" saw partly-placed
# The tree: e, in leaf L under parent P (capability cpu 2; L lists none), ungated (cpu 3): P over its
# capability; and L's sibling G's guarantee (cpu 1) lent. As Volcano's webhook requires, G deserves its guarantee
# and P guarantees (and deserves) its children's sum.
U="$(e2e_uid)"
P="inv-p-$U" L="inv-l-$U" G="inv-g-$U"
tree_queue "$P" cpu=2 deserved=1 guarantee=1
tree_queue "$L" parent="$P"
eventually 20 "Queue $G (guaranteed cpu 1) created under $P" tree_queue "$G" parent="$P" deserved=1 guarantee=1
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" e "$L" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created e's 3 pods" has_pods e 3
for p in $(kc get pods -n "$NS" -l ray.io/cluster=e -o name); do ungate "${p#pod/}"; done
parent_over() { grep "queue $P: its subtree (" "$INV_DIR/violations" | grep -q "requests cpu 3, capability 2"; }
eventually 20 "checker: over-capability of the parent $P" parent_over
eventually 20 "checker: guarantee-lent under $P" saw guarantee-lent
inv_kill
