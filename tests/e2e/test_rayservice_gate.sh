#!/usr/bin/env bash
# RayService: KubeRay (rayservice_controller.go,
# constructRayClusterForRayService) copies every RayService label onto the
# RayClusters it makes for the service, so the queue label reaches them and
# each is gated and admitted as a RayCluster gang of its own (PodGroup
# ray-<cluster>-pg, owned by the cluster). With the real KubeRay RayService
# controller, in a queue with room for one cluster of the service's shape:
# the service's RayCluster carries the queue label, its pods are gated and
# admitted whole; a plain RayCluster of the same shape then waits whole.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="rsvc-$(e2e_uid)"
make_queue "$Q" 4 6Gi
inv_start

{
	cat <<-YAML
		apiVersion: ray.io/v1
		kind: RayService
		metadata: {name: svc, labels: {volcano.sh/queue-name: $Q}}
		spec:
		  serveConfigV2: |
		    applications:
		    - name: app
		      import_path: app:app
		  rayClusterConfig:
	YAML
	raycluster_spec version=2.46.0 memory=2Gi group=w:2:2:2 | sed 's/^/    /'
} | kc apply -n "$NS" -f - >/dev/null
eventually 60 "KubeRay created the RayService's RayCluster" has_cluster svc RayService
C="$(cluster_of svc RayService)"
assert_eq "$C's queue label (copied from the RayService)" "$Q" \
	"$(kc get rayclusters.ray.io -n "$NS" "$C" -o jsonpath='{.metadata.labels.volcano\.sh/queue-name}')"
assert_eq "$C sized by the webhook as a RayCluster" '3 {"cpu":"3","memory":"4Gi"}' \
	"$(kc get rayclusters.ray.io -n "$NS" "$C" -o json | jq -r '.metadata.annotations | "\(.["raygate.io/min-member"]) \(.["raygate.io/min-resources"])"')"
all_or_none_watch "$C" 3 90 || fail "the RayService's cluster $C was not admitted whole"
pass "the RayService's cluster $C gated and admitted whole"
eventually 60 "$C's 3 pods Running" pods_are "$C" 3 Running
eventually 20 "PodGroup ray-$C-pg exists" kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$C-pg"
assert_eq "ray-$C-pg's owner" "RayCluster $C" \
	"$(kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$C-pg" -o json | jq -r '.metadata.ownerReferences[] | select(.controller) | "\(.kind) \(.name)"')"

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" other "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 60 "a plain RayCluster of the same shape in the queue: its 3 pods created, all gated" all_gated other 3
stays 8 "it waits whole behind the RayService's cluster" all_gated other 3
inv_stop
