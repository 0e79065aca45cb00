#!/usr/bin/env bash
# A shared claim on the nodes: a ResourceClaim that the pods of a
# gang share (resourceClaimName) and that is not allocated yet is placed by
# the node fit once, with the gang's oldest unbound pod that names it
# (lib/sched/cache/sharedcarry.h), as kube-scheduler allocates it with the
# first pod it schedules. One kwok node publishes 2 devices of
# gpu.example.com; the Queue has room to spare (example.com/gpu 4). first (1
# worker, template one-gpu) is admitted and runs on 1 device; pairs (2
# workers sharing the 2-device claim pair) then fits the queue (counted once:
# 2 of 3 free) but not the node (1 free): it waits whole, never partly placed,
# saying so; once first is deleted it is admitted whole and runs on both
# devices. Before the fit placed shared claims, pairs was admitted and its
# workers stayed Pending on the claim. The invariant checker runs throughout.
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
Q="dra-shared-fit-$(e2e_uid)"
dra_class extended
dra_nodes 1 2
dra_template one-gpu
dra_claim pair 2
dra_queue "$Q" 4
inv_start

dra_cluster first "$Q" 1 template:one-gpu
all_or_none_watch first 2 90 || fail "first (1 worker, 1 device) was not admitted"
eventually 60 "first's 2 pods Running" pods_are first 2 Running

dra_cluster pairs "$Q" 2 claim:pair
eventually 60 "KubeRay created pairs' 3 pods" has_pods pairs 3
sleep 2 # a pass of the gate over the new gang
! admitted pairs || fail "pairs admitted with its 2-device shared claim where the node has 1 device free: $(bound_count pairs) of its 3 pods bound"
waits_told pairs 30 "$DRA_RESOURCE" "free on one node"
stays 5 "pairs waits whole: 3 pods gated, none bound" waits_whole pairs 3

kc delete rayclusters.ray.io -n "$NS" first >/dev/null
all_or_none_watch pairs 3 90 || fail "pairs was not admitted after first was deleted"
pass "pairs' 3 pods ungated together once first's device is free"
eventually 60 "pairs' 3 pods Running" pods_are pairs 3 Running
assert_eq "devices allocated (the shared claim's 2)" 2 "$(devices_held)"
inv_stop
