#!/usr/bin/env bash
# The demo: brings up the local cluster (real control plane, kwok nodes, the
# KubeRay operator, raygate) and walks through what raygate does.
#
#   hack/demo.sh [--keep]     (--keep: leave the cluster and the Ray clusters up)
#   hack/demo.sh --multi [--keep]
#     The second demo (hack/demo-multi.sh): dispatch to many clusters, with two
#     worker clusters and a manager side by side (docs/dispatch.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
keep=0 multi=0
for arg; do
	case "$arg" in
	--keep) keep=1 ;;
	--multi) multi=1 ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done

narrate() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
show() { printf '\033[36m$ %s\033[0m\n' "$*"; "$@"; }
kubectl() { "$KUBECTL" "$@"; }

narrate "Installing dependencies and building raygate"
bash "$here/deps.sh" --demo
upstream=0
if [[ ! -x "$K8S_BIN/kube-apiserver" || ! -x "$ETCD_BIN/etcd" || ! -x "$KWOK_BIN/kwok" || ! -x "$KUBERAY_BIN/ray-operator" ]]; then
	narrate "First run on this machine: building Kubernetes $K8S_VERSION, etcd, kwok and KubeRay from source into $RAYGATE_CACHE, beside raygate. About 15 minutes on 2 cores, once: later runs reuse them"
	bash "$here/build-upstream.sh" &
	upstream=$!
fi
[[ -f "$BUILD/build.ninja" ]] || meson setup "$BUILD" "$ROOT" >/dev/null
meson compile -C "$BUILD" >/dev/null
if ((upstream)); then
	wait "$upstream" || { say "building the upstream programs failed (the log named above says why)"; exit 1; }
fi
if ((multi)); then
	. "$here/demo-multi.sh"
	exit 0
fi
narrate "Starting a real control plane on 127.0.0.1 (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes, KubeRay)"
"$here/cluster.sh" up
show kubectl get nodes

NS=raygate-demo
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
cleanup() {
	if ((keep)); then
		printf '\nThe cluster is still up:\n'; "$here/cluster.sh" env
	else
		kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
		"$here/cluster.sh" down
	fi
}
trap cleanup EXIT

narrate "A RayCluster with a head and two workers; KubeRay creates its pods and kube-scheduler binds them to kwok nodes"
# pods_are CLUSTER COUNT [PHASE]: true when the Ray cluster has COUNT pods (in PHASE).
pods_are() {
	local c="$1" want="$2" phase="${3:-}"
	[[ "$(kubectl get pods -n "$NS" -l "ray.io/cluster=$c" ${phase:+--field-selector "status.phase=$phase"} -o name | wc -l)" == "$want" ]]
}
# wait_pods CLUSTER COUNT [PHASE]: until it does (60 s).
wait_pods() { wait_until 60 "$2 pods of $1${3:+ $3}" pods_are "$@"; }
# wait_pg PODGROUP PHASE: until the gate controller has written that phase (20 s).
pg_is() { [[ "$(kubectl get podgroups.scheduling.volcano.sh -n "$NS" "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" == "$2" ]]; }
wait_pg() { wait_until 20 "PodGroup $1 $2" pg_is "$@"; }

show kubectl apply -n "$NS" -f "$ROOT/samples/raycluster-plain.yaml"
wait_pods plain-cluster 3 Running || { show kubectl get pods -n "$NS" -o wide; exit 1; }
show kubectl get pods -n "$NS" -o wide

native=0
if kubectl get --raw /apis/scheduling.k8s.io/v1beta1 2>/dev/null | grep -q '"podgroups"'; then
	native=1
	narrate "This Kubernetes ($K8S_VERSION) has its own gang scheduling (scheduling.k8s.io/v1beta1): raygate's webhook and gate are restarted with --native-gang on, to hand it the last step (docs/native-gang.md)"
	"$here/cluster.sh" restart raygate-webhook --native-gang on >/dev/null
	"$here/cluster.sh" stop raygate-gate
	"$here/cluster.sh" start-gate --native-gang on >/dev/null
	wait_until 20 "raygate's webhook" curl -sf --max-time 2 --cacert "$STATE/raygate-certs/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/readyz"
fi

narrate "Gang admission, as in the KubeRay + Volcano guide. First a queue with room for 4 CPUs and 6Gi:"
show kubectl apply -f "$ROOT/samples/queue-kuberay-test-queue.yaml"

narrate "test-cluster-0 (head 1 CPU/2Gi + 2 workers 1 CPU/1Gi = cpu 3, memory 4Gi), labelled volcano.sh/queue-name: kuberay-test-queue"
show kubectl apply -n "$NS" -f "$ROOT/samples/raycluster-test-cluster-0.yaml"
narrate "raygate wrote into it the gang's PodGroup metadata (the webhook: min-member, min-resources, group name; held-suspended: it created the RayCluster suspended) and, once the gang fitted, the time it was admitted (the gate controller: admitted-at, held-generation):"
printf '\033[36m$ %s\033[0m\n' "kubectl get rayclusters.ray.io test-cluster-0 -o json | jq .metadata.annotations"
kubectl get rayclusters.ray.io -n "$NS" test-cluster-0 -o json |
	jq '.metadata.annotations | with_entries(select(.key | startswith("raygate.io/") or startswith("scheduling.k8s.io/")))'
narrate "KubeRay made no pod while the RayCluster was held suspended; the gate controller weighed the whole gang from its templates, and its admission record cleared spec.suspend. The webhook, which watches RayClusters, then let the 3 pods be created without the scheduling gate raygate.io/gang: one write for the gang, not one per pod (docs/design.md, Pods born ungated)"
wait_pods test-cluster-0 3 Running
show kubectl get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o wide

narrate "As with Volcano, the gang is a PodGroup (written by the gate controller, owned by the RayCluster): phase Running, condition Scheduled"
wait_pg ray-test-cluster-0-pg Running
show kubectl get podgroups.scheduling.volcano.sh -n "$NS" ray-test-cluster-0-pg -o yaml
narrate "And the queue shows 1 running gang and what it holds of the capability:"
show kubectl get queue kuberay-test-queue -o yaml

if ((native)); then
	narrate "This Kubernetes ($K8S_VERSION) schedules gangs itself (scheduling.k8s.io/v1beta1). raygate wrote the gang's own PodGroup, minCount 3, when it admitted it; the webhook named it in each pod's spec.schedulingGroup at creation, so kube-scheduler bound the 3 pods all at once or would have bound none (docs/native-gang.md)"
	show kubectl get podgroups.scheduling.k8s.io -n "$NS"
	show kubectl get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o custom-columns=POD:.metadata.name,GROUP:.spec.schedulingGroup.podGroupName,NODE:.spec.nodeName
fi

narrate "test-cluster-1, the same shape: the queue has only cpu 1 and memory 2Gi left, so the whole gang waits, held suspended: KubeRay makes none of its pods"
sed 's/test-cluster-0/test-cluster-1/' "$ROOT/samples/raycluster-test-cluster-0.yaml" | kubectl apply -n "$NS" -f -
# told: the gate controller has told the RayCluster that its gang does not fit (a GangWaiting Event)
told() {
	kubectl get events -n "$NS" --field-selector "involvedObject.kind=RayCluster,involvedObject.name=test-cluster-1,reason=GangWaiting" \
		-o jsonpath='{.items[*].message}' | grep -q 'does not fit queue'
}
wait_until 20 "the gate controller's GangWaiting Event on test-cluster-1" told
no_pods() { pods_are test-cluster-1 0; }
no_pods || { echo "demo: test-cluster-1 has pods though its gang waits" >&2; exit 1; }
show kubectl get rayclusters.ray.io -n "$NS" -o custom-columns=NAME:.metadata.name,SUSPEND:.spec.suspend,HELD:'.metadata.annotations.raygate\.io/held-suspended',ADMITTED:'.metadata.annotations.raygate\.io/admitted-at'
narrate "kubectl describe raycluster tells the user why:"
printf '\033[36m$ %s\033[0m\n' "kubectl describe rayclusters.ray.io test-cluster-1 | tail -n 4"
kubectl describe rayclusters.ray.io -n "$NS" test-cluster-1 | tail -n 4
narrate "So does its PodGroup: phase Pending, condition Unschedulable with reason NotEnoughResources and the same message"
wait_pg ray-test-cluster-1-pg Pending
show kubectl get podgroups.scheduling.volcano.sh -n "$NS" ray-test-cluster-1-pg -o yaml
narrate "The queue: 1 running, 1 pending"
show kubectl get queue kuberay-test-queue
narrate "kubectl raygate (the plugin build/cli/kubectl-raygate, found by kubectl on PATH) shows every gang: its state, pods bound, place in its queue and what it waits for"
export PATH="$BUILD/cli:$PATH"
show kubectl raygate gangs -n "$NS"
show kubectl raygate queues kuberay-test-queue
narrate "and why test-cluster-1 waits, with what would have to change:"
show kubectl raygate why test-cluster-1 -n "$NS"

narrate "Delete test-cluster-0: its room goes back to the queue, and test-cluster-1's gang is admitted whole"
show kubectl delete rayclusters.ray.io -n "$NS" test-cluster-0
wait_pods test-cluster-1 3 Running
show kubectl get pods -n "$NS" -o wide
printf '\033[36m$ %s\033[0m\n' "kubectl describe rayclusters.ray.io test-cluster-1 | tail -n 3"
kubectl describe rayclusters.ray.io -n "$NS" test-cluster-1 | tail -n 3
narrate "test-cluster-0's PodGroup went with its RayCluster (garbage collection); test-cluster-1's is now Running: Unschedulable turned False, Scheduled True"
wait_pg ray-test-cluster-1-pg Running
show kubectl raygate gangs -n "$NS"
show kubectl get podgroups.scheduling.volcano.sh -n "$NS"
show kubectl get podgroups.scheduling.volcano.sh -n "$NS" ray-test-cluster-1-pg -o yaml
show kubectl get queue kuberay-test-queue -o yaml

narrate "A RayJob is one gang too: rayjob-sample (samples/rayjob-sample.yaml) needs a cluster of cpu 3, memory 4Gi plus KubeRay's submitter (500m, 200Mi), in the same queue"
show kubectl apply -n "$NS" -f "$ROOT/samples/rayjob-sample.yaml"
narrate "The webhook sized the RayJob: minMember 3 (the submitter starts only once the cluster is Ready), minResources with the submitter"
printf '\033[36m$ %s\033[0m\n' "kubectl get rayjob rayjob-sample -o json | jq .metadata.annotations"
kubectl get rayjob -n "$NS" rayjob-sample -o json |
	jq '.metadata.annotations | with_entries(select(.key | startswith("raygate.io/") or startswith("scheduling.k8s.io/")))'
rayjob_cluster() { kubectl get rayclusters.ray.io -n "$NS" -l ray.io/originated-from-cr-name=rayjob-sample -o jsonpath='{.items[*].metadata.name}'; }
has_rayjob_cluster() { [[ -n "$(rayjob_cluster)" ]]; }
wait_until 30 "KubeRay's RayCluster for rayjob-sample" has_rayjob_cluster
job_cluster="$(rayjob_cluster)"
wait_pods "$job_cluster" 3
narrate "KubeRay made it the RayCluster $job_cluster; the queue has cpu 1 left, so the job waits whole (its pods gated, no submitter yet). Its PodGroup is named after the RayJob and owned by it:"
wait_pg ray-rayjob-sample-pg Pending
show kubectl get pods -n "$NS" -l ray.io/cluster="$job_cluster" -o wide
show kubectl get podgroups.scheduling.volcano.sh -n "$NS" ray-rayjob-sample-pg -o yaml
narrate "Delete test-cluster-1: the job's cluster is admitted whole, and once it is Ready KubeRay starts the submitter, whose share the queue already holds"
show kubectl delete rayclusters.ray.io -n "$NS" test-cluster-1
wait_pods "$job_cluster" 3 Running
submitter_pod() { [[ -n "$(kubectl get pods -n "$NS" -l batch.kubernetes.io/job-name=rayjob-sample -o name)" ]]; }
wait_until 60 "rayjob-sample's submitter pod" submitter_pod
show kubectl get pods -n "$NS" -o wide
wait_pg ray-rayjob-sample-pg Running
show kubectl get podgroups.scheduling.volcano.sh -n "$NS"
show kubectl get queue kuberay-test-queue -o jsonpath='{.status.allocated}{"\n"}'

narrate "Queues in a tree (Volcano's spec.parent): eng has cpu 4, shared by train (weight 3) and infer (weight 1, guaranteed cpu 1)"
show kubectl apply -f "$ROOT/samples/queue-tree.yaml"
# in_queue NAME QUEUE: the guide's test-cluster-0 renamed and put in QUEUE
in_queue() { sed "s/test-cluster-0/$1/; s/kuberay-test-queue/$2/" "$ROOT/samples/raycluster-test-cluster-0.yaml"; }
narrate "Only leaves hold gangs: the webhook denies a RayCluster that names eng, and names the field"
printf '\033[36m$ %s\033[0m\n' "kubectl apply -f eng-cluster.yaml   # volcano.sh/queue-name: eng"
if in_queue eng-cluster eng | kubectl apply -n "$NS" -f - 2>&1; then
	echo "the webhook admitted a RayCluster naming a queue with children" >&2
	exit 1
fi
narrate "train-0 (cpu 3) in train is admitted: eng's cpu 4 less infer's guarantee leaves train exactly 3"
in_queue train-0 train | kubectl apply -n "$NS" -f -
wait_pods train-0 3 Running
narrate "train-1, the same shape, waits whole: eng has cpu 1 left, and that one is infer's guarantee, never lent though infer is idle"
in_queue train-1 train | kubectl apply -n "$NS" -f -
# short_in_eng: train-1's PodGroup says it does not fit
short_in_eng() { kubectl get podgroups.scheduling.volcano.sh -n "$NS" ray-train-1-pg -o jsonpath='{.status.conditions[*].message}' 2>/dev/null | grep -q 'does not fit'; }
wait_until 20 "train-1 waits on eng's room" short_in_eng
show kubectl raygate queues
show kubectl raygate why train-1 -n "$NS"
narrate "Delete train-0: train-1 takes its room"
show kubectl delete rayclusters.ray.io -n "$NS" train-0
wait_pods train-1 3 Running
wait_pg ray-train-1-pg Running
show kubectl raygate gangs -n "$NS"

if kubectl get --raw /apis/resource.k8s.io/v1 2>/dev/null | grep -q '"resourceslices"'; then
	narrate "GPUs from Dynamic Resource Allocation (resource.k8s.io/v1; docs/dra.md). Two kwok nodes publish 4 devices each of the driver gpu.example.com in a ResourceSlice; no driver runs: kube-scheduler allocates the devices and kwok runs the pods"
	show "$here/cluster.sh" add-node gpu-a --dra gpu.example.com=4
	show "$here/cluster.sh" add-node gpu-b --dra gpu.example.com=4
	narrate "Their DeviceClass maps the devices to the queue resource example.com/gpu (spec.extendedResourceName)"
	show "$here/cluster.sh" device-class gpu.example.com --driver gpu.example.com --extended-resource example.com/gpu
	show kubectl get resourceslices,deviceclasses
	narrate "dra-cluster (samples/raycluster-dra-gpu.yaml): a head and 4 workers, each asking for one device through the ResourceClaimTemplate one-gpu, in dra-queue, capped at 6 GPUs. It is admitted whole; kube-controller-manager makes each worker its claim, and kube-scheduler allocates them"
	show kubectl apply -n "$NS" -f "$ROOT/samples/raycluster-dra-gpu.yaml"
	wait_pods dra-cluster 5 Running || { show kubectl get pods -n "$NS" -l ray.io/cluster=dra-cluster -o wide; exit 1; }
	show kubectl get pods -n "$NS" -l ray.io/cluster=dra-cluster -o wide
	show kubectl get resourceclaims -n "$NS"
	narrate "dra-cluster-2, the same shape: the nodes have 4 devices left, but the queue only 2 of its 6 GPUs, so the whole gang must wait"
	sed 's/name: dra-cluster$/name: dra-cluster-2/' "$ROOT/samples/raycluster-dra-gpu.yaml" | kubectl apply -n "$NS" -f -
	waits_dra2() { kubectl get podgroups.scheduling.volcano.sh -n "$NS" ray-dra-cluster-2-pg -o jsonpath='{.status.conditions[*].message}' 2>/dev/null | grep -q 'does not fit'; }
	wait_until 20 "dra-cluster-2 waits on dra-queue's GPUs" waits_dra2
	show kubectl get pods -n "$NS" -l ray.io/cluster=dra-cluster-2 -o wide
	if pods_are dra-cluster-2 0 && [[ "$(kubectl get rayclusters.ray.io -n "$NS" dra-cluster-2 -o jsonpath='{.spec.suspend}')" == true ]]; then
		narrate "It waits whole, held suspended with no pod, and says why:"
	else
		echo "demo: dra-cluster-2 was admitted past dra-queue's 6 GPUs (it has pods, or is no longer suspended)" >&2
		exit 1
	fi
	show kubectl raygate why dra-cluster-2 -n "$NS"
	show kubectl get events -n "$NS" --field-selector involvedObject.name=dra-cluster-2
	show kubectl get queue dra-queue -o jsonpath='{.status.allocated}{"\n"}'
fi
