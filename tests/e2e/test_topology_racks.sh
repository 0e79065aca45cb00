#!/usr/bin/env bash
# Topology by node label, on 4 racks of 4 nodes with nvidia.com/gpu
# 8 each (racks_up). "big" is a head and 4 workers of nvidia.com/gpu 8, with
# raygate.io/topology-required: the rack label.
# - Fragmented: a plain pod (outside raygate's gangs) holds one node's GPUs in
#   every rack, so each rack has 24 GPUs free and the cluster 96: big would fit
#   cluster-wide but no rack holds it. It waits with reason topology (its
#   PodGroup's raygate.io/wait-reason), the message naming the largest free
#   domain and the cluster-wide room.
# - One rack: rack r3's plain pod goes; big is admitted into r3, the only rack
#   with 32 free: its 4 workers are bound there, each confined by a
#   nodeSelector on the rack label, and raygate.io/topology-placed says r3.
# - Soft: "soft", big's shape with raygate.io/topology-preferred, finds no rack
#   with 32 free (r3 full, the others 24): it is admitted across racks, its
#   record and its admission (GangAdmitted Event or PodGroup condition) say it
#   spread, and its workers are not confined.
# The invariant checker runs throughout (a gang lies in its recorded domain).
. "$(dirname "$0")/lib.sh"
e2e_setup
racks_up
Q="topo-$(e2e_uid)"
tree_queue "$Q"
inv_start

WORKER='cpu: "1", memory: 1Gi, nvidia.com/gpu: 8'
# gpu_cluster NAME ANNOTATION: a head and 4 GPU workers in $Q, tolerating the racks, with ANNOTATION: the rack label
gpu_cluster() {
	raycluster "$1" queue="$Q" annotations="$2: $RACK_KEY" tolerations="$RACK_TOLERATIONS" wlimits=1 \
		cpu=1 memory=1Gi group="gpu:4:4:4:$WORKER" | kc apply -n "$NS" -f - >/dev/null
}
# worker_selectors CLUSTER: the distinct values of its workers' nodeSelector on the rack label ("-": none)
worker_selectors() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1,ray.io/node-type=worker" -o json |
		jq -r --arg k "$RACK_KEY" '[.items[] | .spec.nodeSelector[$k] // "-"] | unique | join(" ")'
}
worker_racks() { pod_racks "$1" ray.io/node-type=worker | awk '{print $3}' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
pg_annotation() { kc get podgroups.scheduling.volcano.sh -n "$NS" "$1" -o json 2>/dev/null | jq -r --arg k "$2" '.metadata.annotations[$k] // ""'; }

# Fragmented: one node of every rack full.
for k in 1 2 3 4; do filler_pod "filler-r$k" "r$k-n1-$RACK_UID" 8; done
fillers_bound() { [[ "$(kc get pods -n "$NS" -l e2e.raygate.io/filler -o json | jq '[.items[] | select(.spec.nodeName != null)] | length')" == 4 ]]; }
eventually 60 "a plain pod holds nvidia.com/gpu 8 on one node of each rack" fillers_bound

gpu_cluster big raygate.io/topology-required
eventually 60 "KubeRay created big's 5 pods" has_pods big 5
eventually 30 "big's PodGroup says raygate.io/wait-reason: topology" is pg_annotation ray-big-pg raygate.io/wait-reason topology
wait_until 15 "big's wait message" waits_saying big "needs 32 nvidia.com/gpu in one $RACK_KEY domain" \
	"; largest free domain: r" " with 24 (cluster-wide free: 96)" ||
	{ wait_texts big; fail "big's wait message does not name the largest free domain (24) and the cluster-wide room (96)"; }
pass "big waits: no rack holds nvidia.com/gpu 32, though the cluster has 96 free"
stays 3 "big stays gated while no rack holds it" all_gated big 5

# One rack: r3 is freed.
kc delete pod -n "$NS" filler-r3 --wait=false >/dev/null
all_or_none_watch big 5 60 || fail "big was not admitted once rack r3 was free"
eventually 60 "big's 5 pods bound" is bound_count big 5
assert_eq "the racks of big's workers" r3 "$(worker_racks big)"
assert_eq "big's workers' nodeSelector $RACK_KEY" r3 "$(worker_selectors big)"
assert_eq "big's head is not confined (no GPU, not in the gang-wide set)" "-" \
	"$(kc get pod -n "$NS" "$(head_pod big)" -o json | jq -r --arg k "$RACK_KEY" '.spec.nodeSelector[$k] // "-"')"
assert_eq "big's raygate.io/topology-placed" '{"gang":"r3"}' "$(rc_annotation big raygate.io/topology-placed | jq -cS 'with_entries(select(.value != false))')"
eventually 10 "big's PodGroup has no wait reason left" is pg_annotation ray-big-pg raygate.io/wait-reason ""

# Soft: no rack has 32 free now (r1, r2, r4: 24; r3: 0).
gpu_cluster soft raygate.io/topology-preferred
all_or_none_watch soft 5 90 || fail "soft (topology-preferred) was not admitted across racks"
eventually 60 "soft's 5 pods bound" is bound_count soft 5
assert_eq "soft's raygate.io/topology-placed says spread" true "$(rc_annotation soft raygate.io/topology-placed | jq -r '.spread // false')"
assert_eq "soft's workers are not confined to a rack" "-" "$(worker_selectors soft)"
racks="$(worker_racks soft)"
(($(wc -w <<<"$racks") >= 2)) || fail "soft's workers should lie in several racks, are in: $racks"
pass "soft's workers lie across racks: $racks"
# told_spread: soft's GangAdmitted Event, or a condition of its PodGroup, says it spread
told_spread() {
	{
		kc get events -n "$NS" --field-selector involvedObject.kind=RayCluster,involvedObject.name=soft,reason=GangAdmitted -o json |
			jq -r '.items[].message'
		kc get podgroups.scheduling.volcano.sh -n "$NS" ray-soft-pg -o json | jq -r '.status.conditions[]?.message // ""'
	} | grep -i 'spread' >/dev/null
}
eventually 10 "soft's admission says it spread across domains" told_spread
inv_stop
