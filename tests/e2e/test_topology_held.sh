#!/usr/bin/env bash
# Topology where the webhook holds gangs (--hold-gangs wait, the default, or
# decide): a RayCluster that asks
# for a topology in any form is never held. A held gang is admitted from its
# declaration and its pods are born ungated, placed by kube-scheduler alone,
# so that only the gated path keeps a domain. Two forms the hold used to miss:
# - Volcano's labels, as KubeRay documents them (the guide's test-cluster-0
#   with volcano.sh/network-topology-mode: hard and
#   volcano.sh/network-topology-highest-tier-allowed: "1"): its workers lie
#   within one tier-1 HyperNode, kept there by required node affinity;
# - raygate's annotation on a worker group's template (not on the
#   RayCluster): that group's pods lie in one rack.
# Neither carries raygate.io/held-suspended. The invariant checker runs throughout.
. "$(dirname "$0")/lib.sh"
e2e_setup
[[ "$(hold_mode)" != off ]] || fail "this test checks a webhook that holds gangs (RAYGATE_HOLD_GANGS is 0)"
racks_up
Q="topoheld-$(e2e_uid)"
tree_queue "$Q"
inv_start

not_held() { # CLUSTER
	[[ -z "$(rc_annotation "$1" raygate.io/held-suspended)" ]] ||
		fail "$1 asks for a topology, so it must be gated, not held: it carries raygate.io/held-suspended"
	pass "$1 is not held (no raygate.io/held-suspended)"
}

# --- Volcano's labels
racks_hypernodes
volcano_sample "$Q" >"$E2E_TMP/volcano.yaml"
kc apply -n "$NS" -f "$E2E_TMP/volcano.yaml" >/dev/null
not_held volcano
all_or_none_watch volcano 3 90 || fail "the Volcano-labelled RayCluster was not admitted whole"
eventually 60 "its 3 pods bound" is bound_count volcano 3
hn="$(rc_annotation volcano raygate.io/topology-placed | jq -r '.gang // ""')"
[[ "$hn" =~ ^e2e-$RACK_UID-r[1-4]$ ]] || fail "its raygate.io/topology-placed should name a tier-1 HyperNode e2e-$RACK_UID-rK, says: $(rc_annotation volcano raygate.io/topology-placed)"
want="${hn##*-}"
assert_eq "the racks of its workers (HyperNode $hn)" "$want " "$(pod_racks volcano ray.io/node-type=worker | awk '{print $3}' | sort -u | tr '\n' ' ')"
not_held volcano

# --- raygate's annotation on a worker group's template
raycluster grouped queue="$Q" tolerations="$RACK_TOLERATIONS" wlimits=1 cpu=1 memory=1Gi \
	wannotations="raygate.io/topology-required: $RACK_KEY" group='g:4:4:4:cpu: "1", memory: 1Gi' |
	kc apply -n "$NS" -f - >/dev/null
not_held grouped
all_or_none_watch grouped 5 90 || fail "the RayCluster with a group's own topology was not admitted whole"
eventually 60 "its 5 pods bound" is bound_count grouped 5
racks="$(pod_racks grouped ray.io/group=g | awk '{print $3}' | sort -u | tr '\n' ' ')"
[[ "$racks" =~ ^r[1-4]\ $ ]] || fail "group g's 4 pods should lie in one rack, lie in: $racks"
pass "group g's 4 pods in one rack: $racks"
not_held grouped
inv_stop
