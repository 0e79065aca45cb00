#!/usr/bin/env bash
# A request's own selectors: a ResourceClaimTemplate whose request
# selects only some devices of its class (device.attributes["gpu.example.com"].index < 1)
# is counted against those devices on the nodes, not every device of the class.
# Two kwok nodes of 4 devices of gpu.example.com each (indexes 0 to 3): 8
# devices in all, 2 of them with index 0. A queue with room to spare
# (example.com/gpu 16). first (2 workers of template first-gpu, the selector)
# is admitted and takes both index-0 devices; second (1 worker, the same
# template) then waits whole, its reason naming the selector, though 6 devices
# of the class are free (counting the class alone would ungate it, and its
# worker would stay Pending beside a running head); third (2 workers, template
# one-gpu, any device) is admitted meanwhile. Deleting first admits second,
# which runs whole. The invariant checker runs throughout (claim-stranded).
# Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
dra_or_skip
Q="dra-sel-$(e2e_uid)"
dra_class extended
dra_nodes 2 4
dra_template one-gpu
kc apply -n "$NS" -f - >/dev/null <<-YAML || fail "the ResourceClaimTemplate first-gpu was refused"
	apiVersion: resource.k8s.io/v1
	kind: ResourceClaimTemplate
	metadata: {name: first-gpu}
	spec:
	  spec:
	    devices:
	      requests:
	      - name: gpu
	        exactly:
	          deviceClassName: $DRA_DRIVER
	          selectors: [{cel: {expression: 'device.attributes["$DRA_DRIVER"].index < 1'}}]
YAML
dra_queue "$Q" 16
inv_start

dra_cluster first "$Q" 2 template:first-gpu
all_or_none_watch first 3 90 || { wait_texts first; fail "first was not admitted whole"; }
pass "first's 3 pods ungated together"
eventually 60 "first's 3 pods Running" pods_are first 3 Running
held_index0() {
	kc get resourceclaims -n "$NS" -o json |
		jq --arg d "$DRA_DRIVER" '[.items[].status.allocation.devices.results[]? | select(.driver == $d and .device == "gpu-0")] | length'
}
assert_eq "index-0 devices allocated to first's claims" 2 "$(held_index0)"

dra_cluster second "$Q" 1 template:first-gpu
eventually 60 "KubeRay created second's 2 pods" has_pods second 2
sleep 2 # a pass of the gate over the new gang
if admitted second; then
	sleep 3 # what kube-scheduler makes of it
	fail "second admitted with no index-0 device free (6 others free): $(bound_count second) of its 2 pods bound"
fi
waits_told second 30 "index < 1" "free"
dra_cluster third "$Q" 2 template:one-gpu
all_or_none_watch third 3 90 || { wait_texts third; fail "third (any device) was not admitted while 6 devices are free"; }
pass "third's 3 pods ungated together (any device: 6 free)"
eventually 60 "third's 3 pods Running" pods_are third 3 Running
stays 5 "second waits whole: 2 pods gated, none bound" waits_whole second 2
inv_assert "no gang partly placed while second waits"

kc delete rayclusters.ray.io -n "$NS" first >/dev/null
all_or_none_watch second 2 90 || fail "second was not admitted after first was deleted"
pass "second's 2 pods ungated together once first is gone"
eventually 60 "second's 2 pods bound and Running" pods_are second 2 Running
inv_stop
