#!/usr/bin/env bash
# "missing claim": a RayCluster whose workers mount a
# PersistentVolumeClaim that does not exist is admitted (raygate does not
# model volumes), its head is bound and its workers stay Pending. After the
# placement timeout (20 s here) the whole gang is evicted: its admission
# withdrawn, requeue-count 1, none of its pods bound (KubeRay's new ones are
# gated), a GangEvicted Event quoting the scheduler, DisruptionTarget on the
# deleted pods, the PodGroup Pending with Evicted, the metric. During the
# backoff the wait says until when. Once the claim exists (bound to a PV) the
# gang is admitted again after its backoff, and all its pods are bound. The
# invariant checker (evictions included) runs throughout.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
e2e_setup
Q="evict-pvc-$(e2e_uid)"
make_queue "$Q" 4 8Gi
gate_with --placement-timeout 20s --requeue-backoff-base 30s --requeue-backoff-max 1m
inv_start --grace 5 --evict-grace 15

WATCH_OUT="$E2E_TMP/pods.json"
e2e_watch "$WATCH_OUT" pods -l ray.io/cluster=pvc
t0=$SECONDS
pvc_cluster pvc "$Q" data
eventually 60 "pvc admitted" admitted pvc
admitted_at="$(rc_annotation pvc raygate.io/admitted-at)"
eventually 30 "its head bound, its workers not (no claim)" is bound_count pvc 1
worker="$(kc get pods -n "$NS" -l ray.io/cluster=pvc,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')"
unschedulable() { kc get pod -n "$NS" "$worker" -o json | jq -r '.status.conditions[]? | select(.type == "PodScheduled") | .message' | grep -q persistentvolumeclaim; }
eventually 30 "the scheduler says why ($worker)" unschedulable

eventually 90 "evicted after the placement timeout (20s): admission withdrawn, requeue-count 1" evicted_not_admitted pvc 1
say "evicted $((SECONDS - t0))s after creation (admitted at $admitted_at)"
eventually 30 "none of its pods bound, 3 new ones gated" none_bound_all_gated pvc 3
[[ -n "$(rc_annotation pvc raygate.io/requeue-at)" ]] || fail "no raygate.io/requeue-at"
assert_eq "evicted-reason" PlacementTimeout "$(rc_annotation pvc raygate.io/evicted-reason)"
has_event() { evicted_events pvc | grep -qF 'persistentvolumeclaim "data" not found'; }
eventually 10 "GangEvicted Event on the RayCluster quotes the scheduler" has_event
say "    $(evicted_events pvc | head -1)"
evicted_event_says pvc "2 of 3 members not bound to a node within the placement timeout (20s)" || fail "the Event does not say what expired"
eventually 10 "a DisruptionTarget condition (EvictionByRaygate) on the deleted pods" disruption_seen "$WATCH_OUT"
assert_eq "raygate_gangs_evicted_total" 1 "$(metric_value "raygate_gangs_evicted_total{queue=\"$Q\",reason=\"PlacementTimeout\"}")"
if kc get crd podgroups.scheduling.volcano.sh >/dev/null 2>&1; then
	pg_evicted() {
		kc get podgroups.scheduling.volcano.sh -n "$NS" ray-pvc-pg -o json |
			jq -e '.status.phase == "Pending" and ([.status.conditions[] | select(.type == "Evicted" and .status == "True" and .reason == "PlacementTimeout")] | length == 1)' >/dev/null
	}
	eventually 20 "PodGroup Pending with Evicted (PlacementTimeout)" pg_evicted
	until_msg() { kc get podgroups.scheduling.volcano.sh -n "$NS" ray-pvc-pg -o json | jq -r '.status.conditions[] | select(.type == "Unschedulable") | .message' | grep -q "may be admitted again at"; }
	eventually 20 "PodGroup's wait message says until when" until_msg
fi
head="$(head_pod pvc)"
eventually 20 "the new head is told until when" pod_told "$head" "may be admitted again at $(rc_annotation pvc raygate.io/requeue-at)"

# The claim appears: after the backoff, admitted again, and everything binds.
make_claim data
eventually 60 "the claim is bound to its PV" claim_bound data
t1=$SECONDS
eventually 120 "admitted again after the backoff" admitted pvc
say "readmitted $((SECONDS - t1))s after the claim was bound (backoff to $(rc_annotation pvc raygate.io/requeue-at))"
eventually 60 "all 3 pods bound" all_bound pvc 3
assert_eq "requeue-count kept" 1 "$(rc_annotation pvc raygate.io/requeue-count)"
pg_readmitted() { kc get podgroups.scheduling.volcano.sh -n "$NS" ray-pvc-pg -o json | jq -e '[.status.conditions[] | select(.type == "Evicted" and .status == "False")] | length == 1' >/dev/null; }
kc get crd podgroups.scheduling.volcano.sh >/dev/null 2>&1 && eventually 20 "PodGroup: Evicted False once readmitted" pg_readmitted
inv_stop
