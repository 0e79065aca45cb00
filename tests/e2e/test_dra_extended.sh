#!/usr/bin/env bash
# The extended-resource path (KEP-5004, DRAExtendedResource: on by
# default in Kubernetes 1.37; docs/dra.md): workers ask for example.com/gpu: 1
# in their requests, the nodes advertise no allocatable for it, and the
# DeviceClass gpu.example.com maps the name to its devices
# (spec.extendedResourceName); kube-scheduler then makes each pod a claim
# (<pod>-extended-resources-*) and allocates it. Two kwok nodes of 2 devices
# each (4 in all), a queue with room to spare: a gang of a head and 4 such
# workers is admitted whole and binds, its 4 devices allocated; a second one
# waits whole, none of its pods bound, naming example.com/gpu; deleting the
# first admits the second. The invariant checker runs throughout.
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
Q="dra-ext-$(e2e_uid)"
dra_class extended
dra_nodes 2 2
dra_queue "$Q" 16
inv_start

no_allocatable() {
	kc get nodes "${DRA_NODES[@]}" -o json | jq -e --arg r "$DRA_RESOURCE" '[(.items // [.])[].status.allocatable[$r] // empty] | length == 0' >/dev/null
}
no_allocatable || fail "a device node advertises allocatable $DRA_RESOURCE"
pass "the device nodes advertise no allocatable $DRA_RESOURCE"

dra_cluster first "$Q" 4 extended
all_or_none_watch first 5 90 || {
	say "first's wait reasons:"; wait_texts first
	fail "first (4 workers of $DRA_RESOURCE 1, 4 devices on the nodes) was not admitted"
}
pass "first's 5 pods ungated together"
eventually 60 "first's 5 pods bound and Running" pods_are first 5 Running
eventually 30 "4 devices allocated to first's workers' extended-resource claims" is devices_held 4
worker="$(kc get pods -n "$NS" -l ray.io/cluster=first,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')"
claim="$(kc get pod -n "$NS" "$worker" -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')"
[[ "$claim" == "$worker-extended-resources-"* ]] || fail "worker $worker has no extended-resource claim in its status (got '$claim')"
pass "kube-scheduler made $worker the claim $claim"

dra_cluster second "$Q" 4 extended
eventually 60 "KubeRay created second's 5 pods" has_pods second 5
sleep 2 # a pass of the gate over the new gang
! admitted second || fail "second admitted with no device free on the nodes: $(bound_count second) of its 5 pods bound"
waits_told second 30 "$DRA_RESOURCE"
stays 5 "second waits whole: 5 pods gated, none bound" waits_whole second 5

kc delete rayclusters.ray.io -n "$NS" first >/dev/null
all_or_none_watch second 5 90 || fail "second was not admitted after first was deleted"
pass "second's 5 pods ungated together once first is gone"
eventually 60 "second's 5 pods bound and Running" pods_are second 5 Running
inv_stop
