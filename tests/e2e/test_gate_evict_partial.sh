#!/usr/bin/env bash
# "partly placed": a gang that kube-scheduler places in part is
# taken back whole after --partial-placement-timeout (30 s by default), not
# after the placement timeout (5 m by default). Whatever holds the rest back
# (kube-scheduler binding elsewhere than the pass planned, so that a member
# fits no node; a claim; a volume) the gang must not keep its bound pods and
# its queue share while the others wait. Here a RayCluster whose workers
# mount a PersistentVolumeClaim that does not exist: its head is bound, its
# workers refused (PodScheduled False, reason Unschedulable). With the
# default placement timeout it is evicted whole within the partial one
# (reason PartlyPlaced, an Event saying so, the metric), none of its pods
# bound after. The invariant checker runs throughout, its partly-placed
# grace 45 s.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup evict-partial 15
gate_with --requeue-backoff-base 10m --requeue-backoff-max 1h

pvc_cluster part "$Q" data
eventually 60 "part admitted" admitted part
eventually 30 "its head bound, its workers not (no claim)" is bound_count part 1
worker="$(kc get pods -n "$NS" -l ray.io/cluster=part,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')"
refused() {
	kc get pod -n "$NS" "$worker" -o json |
		jq -e '[.status.conditions[]? | select(.type == "PodScheduled" and .status == "False" and .reason == "Unschedulable")] | length == 1' >/dev/null
}
eventually 30 "kube-scheduler refused $worker (reason Unschedulable)" refused
t0=$SECONDS
eventually 60 "evicted within the partial placement timeout (30s), the placement timeout being 5m" evicted_not_admitted part 1
say "evicted $((SECONDS - t0))s after the refusal was seen (at $(rc_annotation part raygate.io/evicted-at))"
assert_eq "evicted-reason" PartlyPlaced "$(rc_annotation part raygate.io/evicted-reason)"
eventually 10 "the GangEvicted Event says what expired" \
	evicted_event_says part "2 of 3 members not bound to a node within the partial placement timeout (30s) while the others are bound"
say "    $(evicted_events part | head -1)"
assert_eq "raygate_gangs_evicted_total (PartlyPlaced)" 1 \
	"$(metric_value "raygate_gangs_evicted_total{queue=\"$Q\",reason=\"PartlyPlaced\"}")"
eventually 30 "none of its pods bound, 3 new ones gated" none_bound_all_gated part 3
inv_stop
