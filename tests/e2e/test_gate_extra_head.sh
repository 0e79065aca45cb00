#!/usr/bin/env bash
# A second head pod of an admitted RayCluster (KubeRay can make one from a
# stale view after an apiserver restart; here made by hand from the head's own
# JSON, labels and controller ownerReference kept). The webhook gates it; the
# gate controller never admits it as autoscaled capacity, though the queue has
# room: KubeRay v1.5.1 stops reconciling a cluster with two heads until one is
# deleted, so it would only hold room. It waits gated and its GangWaiting
# Event says why; once it is deleted nothing else has changed.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="extra-$(e2e_uid)"
make_queue "$Q" 4 16Gi
inv_start

head_only_cluster one "$Q"
eventually 60 "KubeRay created one's head" has_pods one 1
head="$(head_pod one)"
eventually 30 "one (its head only) admitted" is gated_count one 0

extra="$head-extra"
pod_copy "$head" "$extra" |
	kc create -f - -o jsonpath='{.spec.schedulingGates[*].name}' >"$E2E_TMP/created-gates"
assert_eq "the webhook gated the second head $extra (the object created)" raygate.io/gang "$(cat "$E2E_TMP/created-gates")"
extra_gated() {
	[[ "$(kc get pod -n "$NS" "$extra" -o jsonpath='{.spec.schedulingGates[*].name}')" == *raygate.io/gang* ]]
}
why="pod $extra is a second head pod of RayCluster one: it stays gated and holds no room"
eventually 30 "$extra is told: $why" pod_told "$extra" "$why"
stays 5 "$extra stays gated though queue $Q has room (cpu 1 of 4 held)" extra_gated
assert_eq "one's first head is still its only ungated pod" "$head" "$(ungated_pods one)"
unbound="$(kc get pod -n "$NS" "$extra" -o jsonpath='{.spec.nodeName}')"
assert_eq "$extra is not bound" "" "$unbound"

kc delete pod -n "$NS" "$extra" --wait=true >/dev/null
assert_eq "one keeps its head ungated" "0 1" "$(gated_count one) $(count_pods one)"
inv_stop
