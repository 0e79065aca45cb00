#!/usr/bin/env bash
# GangWaiting once per gang and per distinct reason, not per pod.
# A gang that waits for its queue gets exactly one GangWaiting Event on its
# RayCluster and one on its head pod (none on its workers), not one per pass;
# when another reason comes in between and the first comes back, the first
# Event is counted up (count 2), not posted again. A gang admitted within a
# second of its creation gets no Warning at all.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="ev-$(e2e_uid)"
make_queue "$Q" 2 8Gi

head_only_cluster a "$Q" 2
eventually 60 "a admitted (fills $Q)" admitted a
raycluster b queue="$Q" cpu=1 workers=2 | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created b's 3 pods" has_pods b 3
head="$(head_pod b)"

# waiting EVENT-OBJECT TEXT: the GangWaiting Events about the object whose message says TEXT, as "count" lines
waiting() {
	kc get events -n "$NS" --field-selector "involvedObject.name=$1,reason=GangWaiting" -o json |
		jq -r --arg t "$2" '.items[] | select(.message | contains($t)) | .count'
}
full="does not fit queue $Q"
eventually 20 "b's RayCluster is told: $full" is waiting b "$full" 1
eventually 10 "b's head is told: $full" is waiting "$head" "$full" 1
workers_told() {
	local p n=0
	for p in $(kc get pods -n "$NS" -l ray.io/cluster=b,ray.io/node-type=worker -o name); do
		n=$((n + $(kc get events -n "$NS" --field-selector "involvedObject.name=${p#pod/},reason=GangWaiting" -o json | jq '.items | length')))
	done
	echo "$n"
}
assert_eq "no GangWaiting Event on b's workers" 0 "$(workers_told)"
one_each() { [[ "$(waiting b "$full")" == 1 && "$(waiting "$head" "$full")" == 1 ]]; }
stays 3 "still one Event each, count 1, while passes go on" one_each

# Another reason (Q gets a child: only leaf queues hold gangs), then the first again. The webhook
# refuses a child of Q, which holds gang a: it is stored with the webhook down.
queue_unchecked tree_queue "$Q-child" parent="$Q" cpu=1
notleaf="queue $Q has children"
eventually 20 "b's RayCluster is told: $notleaf" is waiting b "$notleaf" 1
kc delete queue "$Q-child" >/dev/null
eventually 20 "the first reason again: its Event counted up, on the RayCluster" is waiting b "$full" 2
eventually 10 "and on the head" is waiting "$head" "$full" 2
assert_eq "still one Event of it on the RayCluster" 1 "$(waiting b "$full" | wc -l)"

# A gang admitted within a second gets no Warning.
make_queue "$Q-big" 4 8Gi
head_only_cluster quick "$Q-big" 1
eventually 60 "quick admitted" admitted quick
created="$(kc get rayclusters.ray.io -n "$NS" quick -o json | jq -r '.metadata.creationTimestamp | fromdate')"
at="$(rc_annotation quick raygate.io/admitted-at | jq -Rr 'fromdate')"
sleep 2 # a Warning held back for its second would be out by now
any_warning() { kc get events -n "$NS" --field-selector "reason=GangWaiting" -o json |
	jq -r '[.items[] | select(.involvedObject.name | startswith("quick"))] | length'; }
if ((at - created < 1)); then
	assert_eq "quick, admitted within a second, got no GangWaiting Warning" 0 "$(any_warning)"
else
	say "quick was admitted $((at - created)) s after its creation (a busy machine): the no-Warning check is skipped"
fi
