#!/usr/bin/env bash
# Queue: devices of Dynamic Resource Allocation counted in a queue's
# capability. Two kwok nodes publish 4 devices of gpu.example.com each (8 in
# all); the DeviceClass maps them to example.com/gpu (spec.extendedResourceName);
# the Queue's capability is example.com/gpu 6 (cpu and memory to spare). Gangs
# of a head and 4 workers of one device each (ResourceClaimTemplate one-gpu):
# the first is admitted whole and runs; the second, which the nodes could hold
# (4 devices left) but the queue cannot (2 of 6 left), waits whole, none of its
# pods bound, and says why (example.com/gpu, 'does not fit queue'); deleting
# the first admits the second whole. The invariant checker runs throughout.
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
Q="dra-queue-$(e2e_uid)"
dra_class extended
dra_nodes 2 4
dra_template one-gpu
dra_queue "$Q" 6
inv_start

dra_cluster first "$Q" 4 template:one-gpu
all_or_none_watch first 5 90 || fail "first was not admitted whole"
pass "first's 5 pods ungated together"
eventually 60 "first's 5 pods Running" pods_are first 5 Running
assert_eq "devices allocated to first's claims" 4 "$(devices_held)"

dra_cluster second "$Q" 4 template:one-gpu
eventually 60 "KubeRay created second's 5 pods" has_pods second 5
sleep 2 # a pass of the gate over the new gang
! admitted second || fail "second admitted past the queue's capability ($DRA_RESOURCE 6): $(devices_held) devices allocated, $(bound_count second) of its 5 pods bound"
waits_told second 30 "$DRA_RESOURCE" "does not fit queue"
stays 5 "second waits whole: 5 pods gated, none bound" waits_whole second 5
admitted first || fail "first lost its admission"
assert_eq "devices allocated (first's only)" 4 "$(devices_held)"

kc delete rayclusters.ray.io -n "$NS" first >/dev/null
all_or_none_watch second 5 90 || fail "second was not admitted after first was deleted"
pass "second's 5 pods ungated together once first is gone"
eventually 60 "second's 5 pods Running" pods_are second 5 Running
eventually 30 "second's 4 claims allocated" is devices_held 4
inv_stop
