#!/usr/bin/env bash
# "backoff and limit" on the real control plane with small values:
# --requeue-limit 2, placement timeout 10 s, backoff 1 s. A gang that can
# never be placed (its workers' claim does not exist) is evicted, requeued
# after its backoff, evicted again, and then deactivated: requeue-count 2, no
# requeue-at, a wait message saying so, and it is not admitted again however
# long it waits. A change to its spec (the user edits the RayCluster)
# reactivates it: it is admitted again, and its evictions count from 1 again.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup evict-limit 15
gate_with --placement-timeout 10s --requeue-backoff-base 1s --requeue-backoff-max 2s --requeue-limit 2

pvc_cluster lim "$Q" never
eventually 60 "lim admitted" admitted lim
eventually 60 "evicted once" requeue_count_is lim 1
eventually 60 "admitted again after its backoff" admitted lim
eventually 60 "evicted twice: the limit" evicted_not_admitted lim 2
assert_eq "deactivated: no requeue-at" "" "$(rc_annotation lim raygate.io/requeue-at)"
gen="$(kc get rayclusters.ray.io -n "$NS" lim -o jsonpath='{.metadata.generation}')"
assert_eq "evicted-generation" "$gen" "$(rc_annotation lim raygate.io/evicted-generation)"
eventually 10 "the second GangEvicted Event says it deactivated the gang" \
	evicted_event_says lim "reached the requeue limit (2): deactivated until the RayCluster's spec changes"
eventually 30 "none of its pods bound, all gated" none_bound_all_gated lim 3
head="$(head_pod lim)"
eventually 20 "its head is told it is deactivated" pod_told "$head" "is deactivated after 2 evictions (requeue limit 2): change the RayCluster's spec to requeue it"
stays 20 "deactivated: not admitted again" evicted_not_admitted lim 2

# The user changes the spec: generation moves, the count no longer holds it back.
kc patch rayclusters.ray.io -n "$NS" lim --type merge -p '{"spec":{"workerGroupSpecs":[{"groupName":"worker","replicas":2,"minReplicas":2,"maxReplicas":2,"rayStartParams":{"num-cpus":"1"},"template":'"$(kc get rayclusters.ray.io -n "$NS" lim -o json | jq -c '.spec.workerGroupSpecs[0].template')"'}]}}' >/dev/null
gen2="$(kc get rayclusters.ray.io -n "$NS" lim -o jsonpath='{.metadata.generation}')"
((gen2 > gen)) || fail "the spec change did not move metadata.generation ($gen -> $gen2)"
eventually 60 "admitted again after the spec change" admitted lim
# Counted from 1 again: deactivated anew at 2 evictions of the new spec (a count
# that went on from 2 would deactivate it at its first eviction, count 3). The
# count of 1 between the two lasts only the 1-2 s backoff: too short to poll.
deactivated_anew() { evicted_not_admitted lim 2 && [[ "$(rc_annotation lim raygate.io/evicted-generation)" == "$gen2" ]]; }
eventually 90 "evicted twice more, counted from 1 (the spec changed): deactivated anew at 2" deactivated_anew
inv_stop
