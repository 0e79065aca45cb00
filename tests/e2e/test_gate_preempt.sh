#!/usr/bin/env bash
# Preemption within a queue, whole gangs, on the guide's
# queue (cpu 4, memory 6Gi). test-cluster-0 (priority 0, cpu 3) is admitted
# and running; a cluster of the same shape with priority 1000 (PriorityClass
# ray-high) arrives: test-cluster-0 is evicted whole (Preempted Events, the
# preempted-by annotation) and the new one admitted whole; test-cluster-0
# waits gated, with no backoff, and is admitted again once the high-priority
# cluster is deleted. test-cluster-0's pods terminate slowly (kwok, which
# plays the kubelets, is frozen for some seconds): meanwhile high waits, its
# room held (its PodGroup says Preempting), and small, of equal priority and
# created later, which would fit beside one terminating pod, does not take
# that room. A cluster labelled volcano.sh/preemptable=false is
# never a victim. The gate runs as hack/cluster.sh starts it, with no flag:
# preemption is on by default, and the queue has no raygate.io/preemption
# annotation (LowerPriority). Last, the gate restarted with
# --preemption=false preempts nothing. The invariant checker runs throughout
# (no gang partly placed or partly evicted, no queue over capability).
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="preempt-$RANDOM"
make_queue "$Q" 4 6Gi
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
inv_start --evict-grace 30 # the victim's pods are kept terminating on purpose for some seconds

# sample_high NAME: test-cluster-0's shape, named NAME, in $Q, with priority class ray-high
sample_high() {
	sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "$1" "$Q" |
		sed -e "s/^\(    volcano.sh\/queue-name: .*\)$/\1\n    ray.io\/priority-class-name: ray-high/"
}
events_of() { # KIND NAME REASON: the messages of such Events, one per line
	kc get events -n "$NS" --field-selector "involvedObject.kind=$1,involvedObject.name=$2,reason=$3" -o json | jq -r '.items[].message'
}
uids_of() { kc get pods -n "$NS" -l "ray.io/cluster=$1" -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
cond() { # PODGROUP TYPE: "status reason message" of the condition
	kc get podgroups.scheduling.volcano.sh -n "$NS" "$1" -o json 2>/dev/null |
		jq -r --arg t "$2" '.status.conditions[]? | select(.type == $t) | "\(.status) \(.reason) \(.message // "")"'
}

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch test-cluster-0 3 90 || fail "test-cluster-0 was not admitted"
eventually 60 "test-cluster-0's pods Running" pods_are test-cluster-0 3 Running
old_uids="$(uids_of test-cluster-0)"
# Its pods will terminate slowly: kwok, which confirms a deleted pod's end as a kubelet would, is frozen.
kwok_pid="$(cat "$STATE/pids/kwok.pid")"
release_slow() { kill -CONT "$kwok_pid" 2>/dev/null || true; }
e2e_on_exit release_slow
kill -STOP "$kwok_pid"

t0=$SECONDS
sample_high high | kc apply -n "$NS" -f - >/dev/null
held() { [[ "$(cond ray-high-pg Preempting)" == "True Preempting evicting $NS/test-cluster-0: the room freed is held for this gang"* ]]; }
eventually 30 "PodGroup ray-high-pg: Preempting True, test-cluster-0 named, while its pods terminate" held
# small: priority 1000 too (no preemption: equal), created after high, cpu 1 and memory 1Gi. Beside the terminating
# pods alone it would fit the queue (cpu 3 + 1 of 4, memory 4Gi + 1Gi of 6Gi); beside the room held for high it does not.
raycluster small queue="$Q" priority=ray-high limits=1 | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created small's pod" has_pods small 1
both_wait() { [[ "$(gated_count high)" == 3 && "$(gated_count small)" == 1 ]]; }
stays 3 "high and small wait gated while test-cluster-0's pods terminate (the room is held for high)" both_wait
terminating() { [[ "$(kc get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o json | jq '[.items[] | select(.metadata.deletionTimestamp != null)] | length')" == 3 ]]; }
terminating || fail "test-cluster-0's 3 old pods are not all still terminating (the check above proved nothing)"
release_slow
all_or_none_watch high 3 120 || fail "high was not admitted whole"
all_or_none_watch small 1 60 || fail "small was not admitted beside high"
kc delete rayclusters.ray.io -n "$NS" small >/dev/null
bound_high() { [[ "$(kc get pods -n "$NS" -l ray.io/cluster=high -o json | jq '[.items[] | select(.spec.nodeName != null)] | length')" == 3 ]]; }
eventually 60 "high's 3 pods bound" bound_high
pass "high (priority 1000) admitted whole and bound, $((SECONDS - t0))s after it was created"

# test-cluster-0 was evicted whole: none of its old pods is left, the new ones wait gated.
old_gone() { [[ -z "$(comm -12 <(echo "$old_uids") <(uids_of test-cluster-0))" ]]; }
eventually 60 "every pod test-cluster-0 had is gone" old_gone
assert_eq "test-cluster-0 not admitted" "" "$(rc_annotation test-cluster-0 raygate.io/admitted-at)"
assert_eq "test-cluster-0 records its preemptor" "$NS/high" "$(rc_annotation test-cluster-0 raygate.io/preempted-by)"
assert_eq "evicted for preemption" "Preempted" "$(rc_annotation test-cluster-0 raygate.io/evicted-reason)"
# No backoff penalty: re-admission is allowed from the eviction on.
assert_eq "no backoff" "$(rc_annotation test-cluster-0 raygate.io/evicted-at)" "$(rc_annotation test-cluster-0 raygate.io/requeue-at)"
events_of RayCluster test-cluster-0 Preempted | grep -F "preempted by gang $NS/high (priority 1000) in queue $Q: cpu 2, memory 2Gi needed" >/dev/null ||
	fail "no Preempted Event on test-cluster-0 (have: $(events_of RayCluster test-cluster-0 Preempted))"
pass "Preempted Event on test-cluster-0"
events_of RayCluster high Preempting | grep -F "preempting gang $NS/test-cluster-0 (priority 0) of queue $Q" >/dev/null ||
	fail "no Preempting Event on high"
pass "Preempting Event on high"
# PodGroup conditions: the victim's Evicted condition says Preempted and names the preemptor; the preemptor's Preempting
# condition, True while the room was held, is False (Admitted) once it is admitted.
victim_cond() { [[ "$(cond ray-test-cluster-0-pg Evicted)" == "True Preempted "*"; preempted by gang $NS/high: it waits to be admitted again" ]]; }
eventually 30 "PodGroup ray-test-cluster-0-pg: Evicted True, reason Preempted, the preemptor named" victim_cond
preemptor_cond() { [[ "$(cond ray-high-pg Preempting)" == "False Admitted "* ]]; }
eventually 30 "PodGroup ray-high-pg: Preempting False (Admitted) after it held the room" preemptor_cond
eventually 60 "KubeRay's new test-cluster-0 pods wait gated" all_gated test-cluster-0 3
stays 5 "test-cluster-0 waits whole while high holds the queue" all_gated test-cluster-0 3
PREEMPTIONS="raygate_preemptions_total{queue=\"$Q\",kind=\"preempt\"}"
# Counted once the evictor has carried the preemption out: wait for it.
eventually 10 "raygate_preemptions_total{queue,kind=preempt} = 1" is metric_value "$PREEMPTIONS" 1

# The high-priority cluster goes: test-cluster-0 is admitted again (no backoff).
kc delete rayclusters.ray.io -n "$NS" high >/dev/null
all_or_none_watch test-cluster-0 3 90 || fail "test-cluster-0 was not admitted again after high was deleted"
pass "test-cluster-0 admitted again once high is gone"
eventually 60 "test-cluster-0's pods Running" pods_are test-cluster-0 3 Running

# volcano.sh/preemptable=false: never a victim; the newcomer waits.
kc delete rayclusters.ray.io -n "$NS" test-cluster-0 >/dev/null
eventually 60 "test-cluster-0's pods gone" has_pods test-cluster-0 0
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" keep "$Q" |
	sed -e "s/^\(    volcano.sh\/queue-name: .*\)$/\1\n    volcano.sh\/preemptable: \"false\"/" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch keep 3 90 || fail "keep was not admitted"
keep_uids="$(uids_of keep)"
sample_high high2 | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created high2's 3 pods" has_pods high2 3
keep_stays() { [[ "$(uids_of keep)" == "$keep_uids" ]] && admitted keep && [[ "$(gated_count high2)" == 3 ]]; }
stays 10 "keep (preemptable=false) is not evicted; high2 waits whole" keep_stays

# --preemption=false: no preemption at all. keep becomes preemptable; high2 still waits.
e2e_on_exit restore_gate
"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null
log_from="$(gate_log_from)"
"$ROOT/hack/cluster.sh" start-gate --preemption=false >/dev/null
# start-gate returns once the probes answer; the gate logs its settings a moment later
# (CI run b-3 read the log first). Only the restarted gate's own lines count.
logged_off() { tail -n "+$log_from" "$STATE/logs/raygate-gate.log" | grep -q '"msg":"preemption: off'; }
eventually 10 "the restarted gate logs preemption off" logged_off
kc label rayclusters.ray.io -n "$NS" keep volcano.sh/preemptable- >/dev/null
stays 10 "with --preemption=false, keep (now preemptable) is not evicted; high2 waits whole" keep_stays
assert_eq "raygate_preemptions_total{queue,kind=preempt} (the restarted gate's)" "" "$(metric_value "$PREEMPTIONS")"
inv_stop
# Before the default gate is restored (on exit): it would preempt keep for high2.
kc delete rayclusters.ray.io -n "$NS" --all --wait=false >/dev/null
