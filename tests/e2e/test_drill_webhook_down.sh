#!/usr/bin/env bash
# Fault drill (docs/contributing.md): the webhook process is killed (SIGKILL). raygate
# fails closed: creating a labelled RayCluster, or a pod of one (directly, or
# KubeRay replacing a deleted worker), fails with a clear apiserver error, and
# nothing gets through ungated; unlabelled objects are not affected. Restarted,
# creation works again and the missing worker joins its admitted gang.
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_on_exit restore_webhook
Q="whdown-$(e2e_uid)"
make_queue "$Q" 8 16Gi

# Every webhook (RayClusters, RayJobs, pods, the legacy operator's pods), as registered on this apiserver, fails closed.
all_fail="$(kc create --dry-run=client -o json -f "$ROOT/manifests/webhook-configuration.yaml" | jq -r '[.webhooks[] | "Fail"] | join(" ")')"
[[ "$all_fail" == "Fail Fail"* ]] || fail "manifests/webhook-configuration.yaml: fewer than two webhooks"
assert_eq "failurePolicy of the registered webhooks" "$all_fail" \
	"$(kc get mutatingwebhookconfiguration raygate -o jsonpath='{.webhooks[*].failurePolicy}')"
assert_eq "failurePolicy in manifests/" "$all_fail" \
	"$(kc create --dry-run=client -o jsonpath='{.webhooks[*].failurePolicy}' -f "$ROOT/manifests/webhook-configuration.yaml")"
inv_start

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" before "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch before 3 60 || fail "before was not admitted"
eventually 60 "before's 3 pods Running" pods_are before 3 Running

kuberay_log_from=$(($(wc -l <"$STATE/logs/kuberay-operator.log") + 1))
"$ROOT/hack/cluster.sh" stop raygate-webhook KILL
webhook_running && fail "the webhook is still running"
pass "webhook killed"

# A labelled RayCluster: refused, and the error says why.
out="$(sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" during "$Q" | kc create -n "$NS" -f - 2>&1)" &&
	fail "a labelled RayCluster was created while the webhook was down: $out"
say "    $out"
[[ "$out" == *'failed calling webhook "rayclusters.raygate.io"'* && "$out" == *"connection refused"* ]] ||
	fail "the error does not name the webhook and the cause: $out"
pass "labelled RayCluster refused: failed calling webhook \"rayclusters.raygate.io\" (connection refused)"
kc get rayclusters.ray.io -n "$NS" during >/dev/null 2>&1 && fail "RayCluster during exists"

# A pod of a managed cluster, created directly: refused.
out="$(kc run -n "$NS" sneaky --image=rayproject/ray:2.9.0 --restart=Never \
	--labels="ray.io/cluster=before,volcano.sh/queue-name=$Q" 2>&1)" && fail "a labelled pod was created while the webhook was down: $out"
[[ "$out" == *'failed calling webhook "pods.raygate.io"'* ]] || fail "the error does not name the pod webhook: $out"
pass "labelled pod refused: failed calling webhook \"pods.raygate.io\""

# Unlabelled objects do not go through raygate at all.
kc run -n "$NS" bystander --image=busybox --restart=Never >/dev/null || fail "an unlabelled pod could not be created"
pass "an unlabelled pod is created as usual"

# KubeRay replaces a deleted worker: its pod creation fails until the webhook is back.
victim="$(kc get pods -n "$NS" -l ray.io/cluster=before,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')"
kc delete pod -n "$NS" "$victim" --wait=true >/dev/null
two_left() { [[ "$(count_pods before)" == 2 ]]; }
stays 5 "KubeRay cannot recreate the worker (2 pods, no ungated newcomer)" two_left
tail -n "+$kuberay_log_from" "$STATE/logs/kuberay-operator.log" | grep 'failed calling webhook \\"pods.raygate.io\\"' >/dev/null ||
	fail "KubeRay's log does not show the refused pod creation"
pass "KubeRay's pod creation was refused by the apiserver"
ungated_newcomers() { # pods of before, not gated, not among the original two
	kc get pods -n "$NS" -l ray.io/cluster=before -o json | jq -r '.items[] | select(.spec.nodeName == null and
		([.spec.schedulingGates[]?.name] | index("raygate.io/gang") | not)) | .metadata.name'
}
assert_eq "no unbound ungated pod" "" "$(ungated_newcomers)"
inv_assert "invariants held while the webhook was down"

# Back: creation works again; KubeRay's replacement is gated, then joins its admitted gang.
"$ROOT/hack/cluster.sh" start-webhook
pass "webhook restarted"
eventually 60 "KubeRay recreated the worker" pods_are before 3 Running
assert_eq "before's pods all ungated" 0 "$(gated_count before)"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" after "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch after 3 60 || fail "after was not admitted"
pass "a labelled RayCluster is created and admitted again"
inv_stop
