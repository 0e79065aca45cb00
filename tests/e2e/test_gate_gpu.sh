#!/usr/bin/env bash
# The GLUE shape: a worker needing 2 GPUs on nodes
# with 1 free GPU each waits with "no node fits"; a node with 2 GPUs admits it.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="gpu-$(e2e_uid)"
kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $Q, labels: {e2e.raygate.io/added: "true"}}
spec: {capability: {nvidia.com/gpu: 16}}
YAML
E2E_QUEUES+=("$Q")
n1="gpu1-$(e2e_uid)"; n2="gpu1-$(e2e_uid)"; n3="gpu2-$(e2e_uid)"
cleanup_nodes() { kc delete node "$n1" "$n2" "$n3" --ignore-not-found >/dev/null 2>&1 || true; }
e2e_on_exit cleanup_nodes
"$ROOT/hack/cluster.sh" add-node "$n1" --node-capacity cpu=8,memory=64Gi,nvidia.com/gpu=1 --label e2e.raygate.io/added=true
"$ROOT/hack/cluster.sh" add-node "$n2" --node-capacity cpu=8,memory=64Gi,nvidia.com/gpu=1 --label e2e.raygate.io/added=true

sed -e "s/volcano.sh\/queue-name: gpu-queue/volcano.sh\/queue-name: $Q/" -e 's/replicas: 2/replicas: 1/; s/minReplicas: 2/minReplicas: 1/; s/maxReplicas: 2/maxReplicas: 1/' \
	"$ROOT/samples/raycluster-glue-gpu.yaml" | awk '/^---/{exit} {print}' | kc apply -n "$NS" -f - >/dev/null
two() { [[ "$(count_pods glue-cluster)" == 2 ]]; }
eventually 60 "KubeRay created glue-cluster's 2 pods" two
worker="$(kc get pods -n "$NS" -l ray.io/cluster=glue-cluster,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')"
want="no node fits pod $worker (nvidia.com/gpu 2): at most 1 free on one node"
# The gang's wait is told on its RayCluster and its head pod, not on every pod.
eventually 10 "describe pod (the head) shows: $want" describe_has "$(head_pod glue-cluster)" "$want"
assert_eq "glue-cluster pods still gated" 2 "$(gated_count glue-cluster)"

"$ROOT/hack/cluster.sh" add-node "$n3" --node-capacity cpu=8,memory=64Gi,nvidia.com/gpu=2 --label e2e.raygate.io/added=true
all_or_none_watch glue-cluster 2 60 || fail "glue-cluster was not admitted after a 2-GPU node was added"
pass "glue-cluster admitted once a node with 2 GPUs exists"
eventually 60 "glue-cluster's pods Running" pods_are glue-cluster 2 Running
assert_eq "GPU worker placed on the 2-GPU node" "$n3" "$(kc get pod -n "$NS" "$worker" -o jsonpath='{.spec.nodeName}')"
