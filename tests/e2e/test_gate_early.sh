#!/usr/bin/env bash
# Early admission (raygate-gate --early-admission, lib/sched/admit/early.h).
# A namespace quota of 3 pods lets KubeRay create only 3 of early's 5 pods: the
# gang is admitted with its head and a worker (its members still to come
# weighed as copies of a worker), and its pods are ungated and bound as they
# come. The 2 members that cannot be created are timed as unbound
# (evictscan.h): at the placement timeout the gang is evicted whole, its
# Event naming "a member not created yet". Without the quota KubeRay creates
# all 5, and the gang is admitted again and bound whole. The invariant
# checker runs throughout.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup early 15
gate_with --early-admission --placement-timeout 20s --requeue-backoff-base 1s
kc create quota pods3 -n "$NS" --hard=pods=3 >/dev/null || fail "the quota was not created"
raycluster early queue="$Q" cpu=100m memory=128Mi "group=w:4:4:4:cpu: 100m, memory: 128Mi" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "early admitted before its 5 pods exist" admitted early
three_bound() { [[ "$(count_pods early)" == 3 && "$(bound_count early)" == 3 ]]; }
eventually 30 "the 3 pods the quota lets KubeRay create: ungated and bound" three_bound
early_told() {
	kc get events -n "$NS" --field-selector involvedObject.name=early,reason=GangAdmitted -o json |
		jq -r '.items[].message' | grep -E "^admitted by queue $Q; scheduling gates removed from [0-9]+ pods?, and from [0-9]+ more as they are created$" >/dev/null
}
eventually 10 "the GangAdmitted Event says the rest are ungated as they are created" early_told
stays 5 "nothing more is created or bound (the quota)" three_bound

eventually 40 "early evicted whole at the placement timeout" requeue_count_is early 1
eventually 10 "its GangEvicted Event names the members never created" evicted_event_says early "a member not created yet"
pass "evicted: $(evicted_events early | head -1)"

kc delete quota pods3 -n "$NS" >/dev/null
five_bound() { admitted early && [[ "$(count_pods early)" == 5 && "$(bound_count early)" == 5 ]]; }
eventually 90 "without the quota: admitted again, its 5 pods bound" five_bound
inv_assert "early admission, its members never created, the eviction and the readmission"
inv_stop
