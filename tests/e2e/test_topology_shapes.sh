#!/usr/bin/env bash
# Ray-aware shapes and Volcano's way to ask, on 4 racks of 4 nodes
# with nvidia.com/gpu 8 each (racks_up) and HyperNodes over them
# (racks_hypernodes: tier 1 per rack, tier 2 over all).
# - Slices: "slices" has a worker group of numOfHosts 4 and replicas 2
#   (nvidia.com/gpu 8 each host) whose template says raygate.io/
#   topology-required: the rack label. KubeRay (RayMultiHostIndexing) labels
#   each replica's 4 pods ray.io/worker-group-replica-name; each replica's
#   hosts lie in one rack (each fills one), both recorded in raygate.io/
#   topology-placed as slice/REPLICA.
# - Volcano: KubeRay's documented RayCluster for Volcano's network topology
#   (labels ray.io/scheduler-name: volcano, volcano.sh/network-topology-mode:
#   hard, volcano.sh/network-topology-highest-tier-allowed: "1"; the guide's
#   test-cluster-0 shape), with only the racks' toleration added: its workers
#   lie within one tier-1 HyperNode, the one recorded, kept there by required
#   node affinity.
# The invariant checker runs throughout.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
racks_up
Q="toposhape-$(e2e_uid)"
tree_queue "$Q"
inv_start

# --- slices
raycluster slices queue="$Q" tolerations="$RACK_TOLERATIONS" wlimits=1 cpu=1 memory=1Gi hosts=4 \
	wannotations="raygate.io/topology-required: $RACK_KEY" group='tpu:2:2:2:cpu: "1", memory: 1Gi, nvidia.com/gpu: 8' |
	kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created slices' 9 pods" has_pods slices 9
replicas() { # CLUSTER: "REPLICA COUNT" of its workers' ray.io/worker-group-replica-name, one per line
	kc get pods -n "$NS" -l "ray.io/cluster=$1,ray.io/node-type=worker" -o json |
		jq -r '[.items[] | .metadata.labels["ray.io/worker-group-replica-name"] // "-"] | group_by(.) | .[] | "\(.[0]) \(length)"'
}
reps="$(replicas slices)"
[[ "$(awk '$1 != "-" && $2 == 4' <<<"$reps" | wc -l)" == 2 && "$(wc -l <<<"$reps")" == 2 ]] ||
	fail "KubeRay should label 2 replicas of 4 pods ray.io/worker-group-replica-name (is the RayMultiHostIndexing gate on?): $(echo $reps)"
pass "KubeRay labelled 2 replicas of 4 pods: $(echo $reps)"
all_or_none_watch slices 9 90 || fail "slices was not admitted whole"
eventually 60 "slices' 9 pods bound" is bound_count slices 9
placed="$(rc_annotation slices raygate.io/topology-placed)"
declare -A rack_of_replica
for r in $(awk '{print $1}' <<<"$reps"); do
	racks="$(pod_racks slices "ray.io/worker-group-replica-name=$r" | awk '{print $3}' | sort -u | tr '\n' ' ')"
	[[ "$racks" =~ ^r[1-4]\ $ ]] || fail "replica $r's 4 hosts should lie in one rack, lie in: $racks"
	rack_of_replica[$r]="${racks% }"
	assert_eq "replica $r's record in raygate.io/topology-placed" "${racks% }" "$(jq -r --arg k "slice/$r" '.[$k] // ""' <<<"$placed")"
	sel="$(kc get pods -n "$NS" -l "ray.io/cluster=slices,ray.io/worker-group-replica-name=$r" -o json |
		jq -r --arg k "$RACK_KEY" '[.items[].spec.nodeSelector[$k] // "-"] | unique | join(" ")')"
	assert_eq "replica $r's pods' nodeSelector $RACK_KEY" "${racks% }" "$sel"
done
[[ "$(printf '%s\n' "${rack_of_replica[@]}" | sort -u | wc -l)" == 2 ]] || fail "the two replicas cannot share a rack (4 nodes of 8 GPUs)"
pass "each replica's 4 hosts in one rack: $(for r in "${!rack_of_replica[@]}"; do printf '%s=%s ' "$r" "${rack_of_replica[$r]}"; done)"

# --- Volcano's labels, as KubeRay documents them
racks_hypernodes
volcano_sample "$Q" >"$E2E_TMP/volcano.yaml"
kc apply -n "$NS" -f "$E2E_TMP/volcano.yaml" >/dev/null
all_or_none_watch volcano 3 90 || fail "the Volcano-labelled RayCluster was not admitted whole"
eventually 60 "its 3 pods bound" is bound_count volcano 3
hn="$(rc_annotation volcano raygate.io/topology-placed | jq -r '.gang // ""')"
[[ "$hn" =~ ^e2e-$RACK_UID-r[1-4]$ ]] || fail "its raygate.io/topology-placed should name a tier-1 HyperNode e2e-$RACK_UID-rK, says: $(rc_annotation volcano raygate.io/topology-placed)"
pass "placed in HyperNode $hn (tier 1)"
want="${hn##*-}"
assert_eq "the racks of its workers (HyperNode $hn)" "$want " "$(pod_racks volcano ray.io/node-type=worker | awk '{print $3}' | sort -u | tr '\n' ' ')"
affinity_nodes() { # its workers' required node affinity on kubernetes.io/hostname: the distinct sets of values
	kc get pods -n "$NS" -l "ray.io/cluster=volcano,ray.io/node-type=worker" -o json | jq -c '[.items[] |
		[.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]?.matchExpressions[]? |
		 select(.key == "kubernetes.io/hostname" and .operator == "In") | .values | sort]] | unique'
}
expected="$(jq -nc --arg r "$want" --arg u "$RACK_UID" '[[[range(1; 5) | "\($r)-n\(.)-\($u)"]]]')"
assert_eq "its workers' required node affinity: kubernetes.io/hostname In the nodes of $hn" "$expected" "$(affinity_nodes)"
inv_stop
