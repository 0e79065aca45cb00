#!/usr/bin/env bash
# Nodes: devices of Dynamic Resource Allocation counted in the node
# fit. A queue with room to spare (example.com/gpu 16, cpu 32); two kwok nodes
# of 2 devices of gpu.example.com each (4 in all). Two gangs of a head and 4
# workers of one device each (ResourceClaimTemplate one-gpu): the first is
# admitted whole and runs on all 4 devices; the second waits whole, never
# partly placed (no pod of it bound while it waits), and its wait reason
# names the devices ('example.com') and 'free'; deleting the first admits the second, which
# runs whole. The invariant checker runs throughout (claim-stranded: no gang's
# pods wait on unallocatable claims while others of it run).
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
Q="dra-nodes-$(e2e_uid)"
dra_class extended
dra_nodes 2 2
dra_template one-gpu
dra_queue "$Q" 16
inv_start

dra_cluster first "$Q" 4 template:one-gpu
all_or_none_watch first 5 90 || fail "first was not admitted whole"
pass "first's 5 pods ungated together"
eventually 60 "first's 5 pods Running" pods_are first 5 Running
assert_eq "devices allocated to first's claims (every device of the nodes)" 4 "$(devices_held)"

dra_cluster second "$Q" 4 template:one-gpu
eventually 60 "KubeRay created second's 5 pods" has_pods second 5
sleep 2 # a pass of the gate over the new gang
if admitted second; then
	sleep 3 # what kube-scheduler makes of it
	fail "second admitted with no device free on the nodes: $(bound_count second) of its 5 pods bound, $(kc get pods -n "$NS" -l ray.io/cluster=second,ray.io/node-type=worker --field-selector status.phase=Pending -o name | wc -l) workers Pending ($(kc get pods -n "$NS" -l ray.io/cluster=second,ray.io/node-type=worker -o jsonpath='{.items[0].status.conditions[0].message}'))"
fi
# The devices by their class (gpu.example.com) or their queue resource (example.com/gpu): loosely.
waits_told second 30 "example.com" "free"
stays 5 "second waits whole: 5 pods gated, none bound" waits_whole second 5
inv_assert "no gang partly placed while second waits"

kc delete rayclusters.ray.io -n "$NS" first >/dev/null
all_or_none_watch second 5 90 || fail "second was not admitted after first was deleted"
pass "second's 5 pods ungated together once first is gone"
eventually 60 "second's 5 pods bound and Running" pods_are second 5 Running
eventually 30 "second's 4 claims allocated" is devices_held 4
inv_stop
