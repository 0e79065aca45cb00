#!/usr/bin/env bash
# Two Ray clusters wait in one queue; the one with a higher
# priority (PriorityClass ray-high via the label ray.io/priority-class-name),
# created later, is admitted first when room appears, and the older one keeps
# waiting. Without priorities the older one would go first: low (cpu 3) and
# high (cpu 2) do not fit the queue (cpu 4) together. This test is about the
# order alone: the queue says raygate.io/preemption: Never, so high (priority
# 1000) does not preempt filler (priority 0) meanwhile, as it would by default
# (test_gate_preempt.sh).
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="prio-$(e2e_uid)"
make_queue "$Q" 4 8Gi
kc annotate queue "$Q" raygate.io/preemption=Never >/dev/null
kc apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null
inv_start

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" filler "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch filler 3 60 || fail "filler was not admitted"
pass "filler (cpu 3) admitted: the queue has cpu 1 left"

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" low "$Q" | kc apply -n "$NS" -f - >/dev/null
three() { [[ "$(count_pods low)" == 3 ]]; }
eventually 60 "KubeRay created low's 3 pods" three
# creationTimestamp has 1 s resolution: make "created later" unambiguous.
created_before_now rayclusters.ray.io low
sed -e "s/name: urgent-cluster/name: high/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $Q/" \
	"$ROOT/samples/raycluster-priority.yaml" | kc apply -n "$NS" -f - >/dev/null
two() { [[ "$(count_pods high)" == 2 ]]; }
eventually 60 "KubeRay created high's 2 pods" two
[[ "$(kc get rayclusters.ray.io -n "$NS" low -o jsonpath='{.metadata.creationTimestamp}')" < \
	"$(kc get rayclusters.ray.io -n "$NS" high -o jsonpath='{.metadata.creationTimestamp}')" ]] || fail "high was not created after low"
prios="$(kc get pods -n "$NS" -l ray.io/cluster=high -o jsonpath='{range .items[*]}{.spec.priorityClassName}={.spec.priority} {end}')"
assert_eq "high's pods carry the priority the apiserver resolved" "ray-high=1000 ray-high=1000 " "$prios"
assert_eq "low's pods have no priority" "0 0 0 " "$(kc get pods -n "$NS" -l ray.io/cluster=low -o jsonpath='{range .items[*]}{.spec.priority} {end}')"

eventually 10 "low waits on the queue" describe_has "$(head_pod low)" "does not fit queue $Q: cpu needs 3, 1 of 4 free"
eventually 10 "high waits on the queue" describe_has "$(head_pod high)" "does not fit queue $Q: cpu needs 2, 1 of 4 free"
filler_at="$(rc_annotation filler raygate.io/admitted-at)"
both_gated() { [[ "$(gated_count low)" == 3 && "$(gated_count high)" == 2 &&
	"$(rc_annotation filler raygate.io/admitted-at)" == "$filler_at" ]]; }
stays 3 "low and high both wait whole; filler stays admitted (the queue's preemption is Never)" both_gated

# Room appears: the higher priority goes first, the older cluster stays behind.
kc delete rayclusters.ray.io -n "$NS" filler >/dev/null
all_or_none_watch high 2 60 || fail "high was not admitted when room appeared"
pass "high (priority 1000, created later) admitted first"
eventually 60 "high's pods Running" pods_are high 2 Running
low_waits() { [[ "$(gated_count low)" == 3 ]]; }
stays 5 "low (older, priority 0) still waits whole" low_waits
eventually 10 "low says why: 2 of 4 free now" describe_has "$(head_pod low)" "does not fit queue $Q: cpu needs 3, 2 of 4 free"
hi_at="$(rc_annotation high raygate.io/admitted-at)"
[[ -n "$hi_at" ]] || fail "high has no raygate.io/admitted-at"
assert_eq "low not admitted" "" "$(rc_annotation low raygate.io/admitted-at)"

kc delete rayclusters.ray.io -n "$NS" high >/dev/null
all_or_none_watch low 3 60 || fail "low was not admitted after high was deleted"
pass "low admitted once high is gone"
eventually 60 "low's pods Running" pods_are low 3 Running
inv_stop
