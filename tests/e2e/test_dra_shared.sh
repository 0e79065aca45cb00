#!/usr/bin/env bash
# A shared claim: a ResourceClaim that the pods of a gang name
# (resourceClaimName) is counted once for the gang, not once per pod. One kwok
# node publishes 1 device of gpu.example.com; the DeviceClass maps it to
# example.com/gpu; the Queue's capability is example.com/gpu 1 (cpu and memory
# to spare). A gang of a head and 3 workers sharing the 1-device claim
# shared-gpu is admitted whole (1 device, not 3) and runs, its workers beside
# the device (the claim's allocation pins them to its node); a second gang of
# 1 worker with a claim of its own (template one-gpu) then waits whole: the
# queue's one device is taken. The invariant checker runs throughout.
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
Q="dra-shared-$(e2e_uid)"
dra_class extended
dra_nodes 1 1
dra_claim shared-gpu
dra_template one-gpu
dra_queue "$Q" 1
inv_start

dra_cluster sharing "$Q" 3 claim:shared-gpu
all_or_none_watch sharing 4 90 || {
	say "sharing's wait reasons:"; wait_texts sharing
	fail "sharing (3 workers, one shared 1-device claim) was not admitted by a queue of 1 device: counted more than once?"
}
pass "sharing's 4 pods ungated together (the shared claim counted once)"
eventually 60 "sharing's 4 pods Running" pods_are sharing 4 Running
workers_on() { kc get pods -n "$NS" -l ray.io/cluster=sharing,ray.io/node-type=worker -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' | sort -u; }
assert_eq "sharing's workers all on the device's node" "${DRA_NODES[0]}" "$(workers_on)"
assert_eq "devices allocated (the shared claim's one)" 1 "$(devices_held)"
assert_eq "the shared claim reserved for sharing's 3 workers" 3 \
	"$(kc get resourceclaim -n "$NS" shared-gpu -o json | jq '.status.reservedFor // [] | length')"

dra_cluster own "$Q" 1 template:one-gpu
eventually 60 "KubeRay created own's 2 pods" has_pods own 2
sleep 2 # a pass of the gate over the new gang
! admitted own || fail "own admitted past the queue's capability ($DRA_RESOURCE 1, held by sharing's shared claim): $(bound_count own) of its 2 pods bound"
waits_told own 30 "$DRA_RESOURCE" "does not fit queue"
stays 5 "own waits whole: 2 pods gated, none bound" waits_whole own 2

kc delete rayclusters.ray.io -n "$NS" sharing >/dev/null
all_or_none_watch own 2 90 || fail "own was not admitted after sharing was deleted"
pass "own's 2 pods ungated together once sharing is gone"
eventually 60 "own's 2 pods Running" pods_are own 2 Running
inv_stop
