#!/usr/bin/env bash
# The native step (--native-gang on)
# with an autoscaled RayCluster. kube-scheduler 1.37 holds a whole PodGroup
# back while any of its pods is gated, and raygate keeps an autoscaler's tail
# pods gated: only gang members name the group (docs/native-gang.md, "Who
# names the group"). The cluster: in-tree autoscaling, a head, a fixed
# multi-host group (replicas = min = max = 1, 2 hosts) and an autoscaled one
# (min 1, max 3, replicas 2, 2 hosts): 7 pods, minMember 5 (head, 2 fixed, 2 of
# the autoscaled group), of which the head's and the fixed group's (3) name
# the PodGroup; the autoscaled group's replica beyond minReplicas is the tail.
# 1. the webhook and the gate run with --native-gang on and use the step;
# 2. the head and the fixed group's pods name ray-<cluster>-pg; the
#    autoscaled group's pods name none (templates marked raygate.io/gang-member);
# 3. the PodGroup's and the Workload's minCount are 3, the pods that name it;
# 4. while the queue has no room for the tail (it stays gated), the gang's 5
#    members are bound and kube-scheduler reports the group placed;
# 5. once the queue grows, the tail is admitted and bound, without a group.
# Needs a cluster that serves the native API (hack/cluster.sh up on 1.37).
. "$(dirname "$0")/lib.sh"
e2e_setup
native_api || fail "this cluster does not serve scheduling.k8s.io/v1beta1 podgroups (hack/cluster.sh up --native-gang)"
Q="nauto-$(e2e_uid)"
# The gang: head cpu 1 + sidecar 100m, 4 workers of cpu 1: 5.1 cpu; the tail (2 workers) does not fit.
make_queue "$Q" 5.5 32Gi
inv_start

# ---- 1. the step on (opt-in: --native-gang on for the webhook and the gate)
native_step on
webhook_native() { curl -sf --max-time 2 --cacert "$STATE/raygate-certs/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/metrics" |
	grep -q '^raygate_webhook_native_gang 1$'; }
webhook_native || fail "the webhook, started with --native-gang on, does not use the native step (raygate_webhook_native_gang)"
pass "the webhook and the gate use the native step"

# ---- 2. who names the group
raycluster scaled queue="$Q" autoscaling=1 hosts=2 group=fixed:1:1:1 group=elastic:2:1:3 | kc apply -n "$NS" -f - >/dev/null
assert_eq "minMember (head + 2 fixed + 2 of elastic's min)" 5 \
	"$(kc get rayclusters.ray.io -n "$NS" scaled -o jsonpath='{.metadata.annotations.raygate\.io/min-member}')"
assert_eq "the templates' marks (head, fixed, elastic)" "true true false" \
	"$(kc get rayclusters.ray.io -n "$NS" scaled -o json | jq -r '[.spec.headGroupSpec, .spec.workerGroupSpecs[]] |
		map(.template.metadata.annotations["raygate.io/gang-member"]) | join(" ")')"
eventually 60 "KubeRay created the head and 6 workers" has_pods scaled 7
# named GROUP: the pods of that ray.io/group (head: the head) and the group each names ("-" for none), sorted
named() {
	local sel="ray.io/cluster=scaled,ray.io/group=$1"
	[[ "$1" == head ]] && sel="ray.io/cluster=scaled,ray.io/node-type=head"
	kc get pods -n "$NS" -l "$sel" -o json | jq -r '[.items[] | .spec.schedulingGroup.podGroupName // "-"] | sort | join(" ")'
}
assert_eq "the head names the group" "ray-scaled-pg" "$(named head)"
assert_eq "the fixed group's 2 pods name the group" "ray-scaled-pg ray-scaled-pg" "$(named fixed)"
assert_eq "the autoscaled group's 4 pods name none" "- - - -" "$(named elastic)"

# ---- 3. minCount: the pods that name the group
native_minc() { kc get podgroups.scheduling.k8s.io -n "$NS" "ray-$1-pg" -o jsonpath='{.spec.schedulingPolicy.gang.minCount}' 2>/dev/null; }
eventually 60 "the PodGroup written, minCount 3 (head + fixed)" is native_minc scaled 3
assert_eq "the Workload's template minCount" 3 \
	"$(kc get workloads.scheduling.k8s.io -n "$NS" ray-scaled-pg -o jsonpath='{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}')"

# ---- 4. the members bind while the tail waits gated
eventually 90 "the gang's 5 members bound" is bound_count scaled 5
assert_eq "the tail (one elastic replica, 2 pods) still gated" 2 "$(gated_count scaled)"
tail_named="$(kc get pods -n "$NS" -l ray.io/cluster=scaled -o json |
	jq -r '[.items[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang")) | .spec.schedulingGroup.podGroupName // "-"] | join(" ")')"
assert_eq "the gated tail pods carry no schedulingGroup" "- -" "$tail_named"
placed() { kc get podgroups.scheduling.k8s.io -n "$NS" ray-scaled-pg \
	-o jsonpath='{.status.conditions[?(@.type=="PodGroupInitiallyScheduled")].status}'; }
eventually 30 "kube-scheduler reports the group placed" is placed True
stays 3 "the tail stays gated while the queue is full" is gated_count scaled 2

# ---- 5. room for the tail: admitted and bound, outside the group
kc patch queue "$Q" --type merge -p '{"spec":{"capability":{"cpu":"8"}}}' >/dev/null
eventually 60 "the tail admitted" is gated_count scaled 0
eventually 60 "all 7 pods bound" is bound_count scaled 7
assert_eq "minCount unchanged by the tail" 3 "$(native_minc scaled)"
kc delete rayclusters.ray.io -n "$NS" scaled >/dev/null
inv_stop
