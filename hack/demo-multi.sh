# hack/demo.sh --multi: dispatch to many clusters (docs/dispatch.md).
# Sourced by hack/demo.sh after the build, with its narrate, show and keep.
# Three local clusters side by side (hack/multi.sh): worker east (small),
# worker west (room) and the manager hub, in RAYGATE_STATE-east, -west and
# -hub, on RAYGATE_PORT_OFFSET N, N + 20 and N + 40 (N a multiple of 50,
# default 0; N + 50 must be free).

. "$here/multi.sh"
((_po % 50 == 0)) || die "hack/demo.sh --multi needs a RAYGATE_PORT_OFFSET that is a multiple of 50, not $_po"
multi_init "$STATE-east" "$_po" "$STATE-west" $((_po + 20)) "$STATE-hub" $((_po + 40))
NS=raygate-demo
Q=demo-queue
export PATH="$BUILD/cli:$PATH"
LOGDIR="$(mktemp -d "${TMPDIR:-/tmp}/raygate-demo.XXXXXX")"
declare -A WNAME=([a]=east [b]=west [m]=hub)

# show_on a|b|m ARGS...: kubectl ARGS against that cluster, the command shown with the cluster's name
show_on() {
	printf '\033[36m[%s] $ kubectl %s\033[0m\n' "${WNAME[$1]}" "${*:2}"
	on "$@"
}
# show_apply_on a|b|m [ARG...] <YAML: kubectl apply ARGs -f - against that cluster, the YAML shown
show_apply_on() {
	local yaml
	yaml="$(cat)"
	printf '\033[36m[%s] $ kubectl apply %s-f - <<EOF\033[0m\n%s\n\033[36mEOF\033[0m\n' "${WNAME[$1]}" "${*:2}${2:+ }" "$yaml"
	on "$1" apply "${@:2}" -f - <<<"$yaml" >/dev/null
}
# cluster_cmd a|b|m ARGS...: hack/cluster.sh ARGS for that cluster, the command shown first
cluster_cmd() {
	printf '\033[36m$ RAYGATE_PORT_OFFSET=%s RAYGATE_STATE=%s hack/cluster.sh %s\033[0m\n' \
		"$(multi_po "$1")" "$(realpath --relative-to=. "$(multi_state "$1")")" "${*:2}"
}
multi_po() { case "$1" in a) echo "$MULTI_A_OFFSET" ;; b) echo "$MULTI_B_OFFSET" ;; m) echo "$MULTI_M_OFFSET" ;; esac; }

cleanup_multi() {
	local w
	if ((keep)); then
		printf '\nThe three clusters are still up (kubectl against one: KUBECONFIG=its state folder/kubeconfig):\n'
		for w in a b m; do printf '  %-5s %s\n' "${WNAME[$w]}" "$(multi_state "$w")/kubeconfig"; done
		printf 'Take them down: RAYGATE_PORT_OFFSET=N RAYGATE_STATE=FOLDER hack/cluster.sh down, for each\n'
	else
		for w in m a b; do multi_cluster "$w" down >/dev/null 2>&1 || true; done
	fi
	rm -rf "$LOGDIR"
}
trap cleanup_multi EXIT

# --------------------------------------------------------------- three clusters
narrate "Dispatch to many clusters: a manager cluster sends each Ray cluster, whole, to the one worker cluster whose raygate would admit it now. Three local control planes on this machine, each with its own state folder and ports"
for w in m a b; do multi_cluster "$w" down >/dev/null 2>&1 || true; done # what an earlier --keep left
bash "$here/build-upstream.sh" 2>&1 | sed -u '/: cached$/d; /^build-upstream: all upstream programs present$/d' >&2
narrate "Worker east, small: 1 kwok node of cpu 2, memory 8Gi. Worker west, with room: 2 nodes of cpu 8, memory 32Gi. Both run KubeRay and raygate (webhook and gate), as hack/demo.sh's cluster does"
cluster_cmd a up --nodes 1 --node-capacity cpu=2,memory=8Gi
cluster_cmd b up --nodes 2 --node-capacity cpu=8,memory=32Gi
narrate "The manager hub: etcd, kube-apiserver and controller-manager, KubeRay's and Volcano's CRDs served, no nodes and no KubeRay operator (it runs no Ray pods), and the dispatcher raygate-dispatch"
cluster_cmd m up --manager --cluster-name hub
multi_up_start a "$LOGDIR/up-east.log" --nodes 1 --node-capacity cpu=2,memory=8Gi
multi_up_start b "$LOGDIR/up-west.log" --nodes 2 --node-capacity cpu=8,memory=32Gi
multi_up_start m "$LOGDIR/up-hub.log" --manager --cluster-name hub
printf '(all three start side by side; this takes a minute or two)\n'
multi_up_wait a || die "worker east did not come up (its log: $(multi_state a)/logs)"
multi_up_wait b || die "worker west did not come up (its log: $(multi_state b)/logs)"
multi_up_wait m || die "the manager hub did not come up (its log: $(multi_state m)/logs)"
hub_status="$(multi_cluster m status 2>/dev/null)" || true # read whole: grep -q stopping early would fail the pipe
grep -q "^raygate-dispatch *running" <<<"$hub_status" ||
	die "raygate-dispatch does not run on the manager (is $BUILD/dispatch/raygate-dispatch built?)"
show_on a get nodes
show_on b get nodes
show_on m get nodes

narrate "Register both workers on the manager. add-worker grants the manager's dispatcher least privilege on the worker (manifests/dispatch/worker-rbac.yaml: read nodes, pods and Queues; write RayClusters and RayJobs), makes a token of that ServiceAccount and writes it, as a kubeconfig, into a Secret labelled raygate.io/worker-cluster in the manager's raygate-system"
cluster_cmd m add-worker east "$(realpath --relative-to=. "$(multi_state a)")/kubeconfig"
multi_register east a || die "add-worker east failed"
cluster_cmd m add-worker west "$(realpath --relative-to=. "$(multi_state b)")/kubeconfig"
multi_register west b || die "add-worker west failed"
# worker_up NAME: the dispatcher has reached the worker (its Secret says up)
worker_up() {
	[[ "$(on m get secret -n raygate-system "raygate-worker-$1" -o jsonpath='{.metadata.annotations.raygate\.io/worker-status}')" == up ]]
}
wait_until 30 "the dispatcher reaching east" worker_up east || die "the dispatcher does not reach worker east: $(on m get secret -n raygate-system raygate-worker-east -o jsonpath='{.metadata.annotations}')"
wait_until 30 "the dispatcher reaching west" worker_up west || die "the dispatcher does not reach worker west"
narrate "The dispatcher lists each worker's nodes, pods, Queues and RayClusters every 2 s, and writes on each Secret whether it reaches it:"
show_on m get secrets -n raygate-system -l raygate.io/worker-cluster \
	-o custom-columns='SECRET:.metadata.name,WORKER:.metadata.labels.raygate\.io/worker-cluster,STATUS:.metadata.annotations.raygate\.io/worker-status'

narrate "Opt in per queue: $Q on the manager, annotated raygate.io/dispatch-to: \"east,west\" (east preferred when both fit equally), and a Queue of the same name on each worker (no capability: there the nodes are the limit)"
for w in m a b; do on "$w" create namespace "$NS" --dry-run=client -o yaml | on "$w" apply -f - >/dev/null; done
for w in a b; do
	on "$w" apply -f - >/dev/null <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $Q}
		spec: {weight: 1}
	YAML
done
show_apply_on m <<-YAML
	apiVersion: scheduling.volcano.sh/v1beta1
	kind: Queue
	metadata:
	  name: $Q
	  annotations: {raygate.io/dispatch-to: "east,west"}
	spec: {weight: 1}
YAML

# --------------------------------------------------------------- fits west only
# is_dispatched NAME WORKER: the manager's RayCluster NAME says it runs on WORKER
is_dispatched() { [[ "$(on m get rayclusters.ray.io -n "$NS" "$1" -o jsonpath='{.metadata.annotations.raygate\.io/dispatched-to}')" == "$2" ]]; }
# running_on a|b NAME COUNT: the Ray cluster NAME has COUNT pods there, all Running
running_on() {
	[[ "$(on "$1" get pods -n "$NS" -l "ray.io/cluster=$2" --field-selector status.phase=Running -o name | wc -l)" == "$3" &&
		"$(on "$1" get pods -n "$NS" -l "ray.io/cluster=$2" -o name | wc -l)" == "$3" ]]
}
# no_raycluster a|b|m NAME: that cluster has no RayCluster NAME
no_raycluster() { ! on "$1" get rayclusters.ray.io -n "$NS" "$2" >/dev/null 2>&1; }

narrate "test-cluster-0 from the KubeRay + Volcano guide (a head of 1 CPU and two workers of 1 CPU: cpu 3, memory 4Gi), created on the manager in $Q. east's one node has cpu 2, so only west can run it"
printf '\033[36m[hub] $ kubectl apply -n %s -f samples/raycluster-test-cluster-0.yaml   # volcano.sh/queue-name: %s\033[0m\n' "$NS" "$Q"
sed "s/kuberay-test-queue/$Q/" "$ROOT/samples/raycluster-test-cluster-0.yaml" | on m apply -n "$NS" -f - >/dev/null
wait_until 60 "test-cluster-0 dispatched to west" is_dispatched test-cluster-0 west ||
	die "test-cluster-0 was not dispatched to west: dispatched-to is '$(on m get rayclusters.ray.io -n "$NS" test-cluster-0 -o jsonpath='{.metadata.annotations.raygate\.io/dispatched-to}')'"
narrate "The dispatcher weighed it against each worker with the gate's own admission pass (queue, nodes), picked west, created the copy there, and says so on the manager's object:"
printf '\033[36m[hub] $ kubectl get raycluster test-cluster-0 -o json | jq .metadata.annotations\033[0m\n'
on m get rayclusters.ray.io -n "$NS" test-cluster-0 -o json |
	jq '.metadata.annotations | with_entries(select(.key | startswith("raygate.io/dispatch")))'
# has_event NAME REASON: the manager has an Event REASON on its object NAME
has_event() { [[ -n "$(on m get events -n "$NS" --field-selector "involvedObject.name=$1,reason=$2" -o name)" ]]; }
wait_until 20 "the Dispatched Event on test-cluster-0" has_event test-cluster-0 Dispatched || true
show_on m get events -n "$NS" --field-selector involvedObject.name=test-cluster-0,reason=Dispatched
wait_until 90 "test-cluster-0's 3 pods Running on west" running_on b test-cluster-0 3 ||
	{ on b get pods -n "$NS" -o wide >&2; die "test-cluster-0's pods did not all run on west"; }
narrate "On west, the copy (same name, labelled raygate.io/dispatched-from: hub, with the lease the dispatcher renews) went through west's webhook and gate like any RayCluster: its gang admitted whole, KubeRay's pods bound to west's nodes"
printf '\033[36m[west] $ kubectl get raycluster test-cluster-0 -o json | jq .metadata\033[0m\n'
on b get rayclusters.ray.io -n "$NS" test-cluster-0 -o json |
	jq '.metadata | {labels: (.labels | with_entries(select(.key | startswith("raygate.io/")))),
		annotations: (.annotations | with_entries(select(.key | test("^raygate.io/(dispatch|admitted)"))))}'
show_on b get pods -n "$NS" -o wide
narrate "east never had a copy: one nomination, not a copy on every worker"
no_raycluster a test-cluster-0 || die "east has a copy of test-cluster-0"
show_on a get rayclusters.ray.io -n "$NS"
narrate "On the manager, kubectl raygate (the plugin build/cli/kubectl-raygate) shows where the gang runs"
# has_pg NAME: the manager has the PodGroup of its object NAME (the dispatcher's, condition Dispatched)
has_pg() { on m get podgroups.scheduling.volcano.sh -n "$NS" "ray-$1-pg" >/dev/null; }
wait_until 20 "the manager's PodGroup of test-cluster-0" has_pg test-cluster-0 || true
show_on m raygate gangs -n "$NS"

# --------------------------------------------------------------- fits nowhere
# reasons_for_both NAME: the manager's NAME carries why it fits neither worker
reasons_for_both() {
	on m get rayclusters.ray.io -n "$NS" "$1" -o json |
		jq -e '.metadata.annotations["raygate.io/dispatch-reasons"] // "{}" | fromjson | (.east | length > 0) and (.west | length > 0)'
}
narrate "too-big: a head of 1 CPU and three workers of 6 CPUs (cpu 19). east has cpu 2 in all, west cpu 16: no worker can run it, so the manager keeps it and says why, per worker"
show_apply_on m -n "$NS" <<-YAML
	apiVersion: ray.io/v1
	kind: RayCluster
	metadata: {name: too-big, labels: {volcano.sh/queue-name: $Q}}
	spec:
	  rayVersion: "2.9.0"
	  headGroupSpec:
	    rayStartParams: {}
	    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.9.0, resources: {requests: {cpu: "1", memory: 2Gi}}}]}}
	  workerGroupSpecs:
	  - groupName: worker
	    replicas: 3
	    minReplicas: 3
	    maxReplicas: 3
	    rayStartParams: {}
	    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.9.0, resources: {requests: {cpu: "6", memory: 4Gi}}}]}}
YAML
wait_until 60 "too-big's reasons for east and west" reasons_for_both too-big ||
	die "the manager's too-big has no reason per worker: $(on m get rayclusters.ray.io -n "$NS" too-big -o jsonpath='{.metadata.annotations}')"
wait_until 20 "the manager's PodGroup of too-big" has_pg too-big || true
show_on m raygate why too-big -n "$NS"
show_on m raygate gangs -n "$NS"
narrate "Neither worker has a copy of it; it is dispatched as soon as one has room (or, with raygate.io/dispatch-give-up, marked unschedulable after that long, holding no manager quota)"
no_raycluster a too-big && no_raycluster b too-big || die "a worker has a copy of too-big"
show_on b get rayclusters.ray.io -n "$NS"

# --------------------------------------------------------------- delete
narrate "Delete test-cluster-0 on the manager: the dispatcher's finalizer (raygate.io/dispatch) deletes west's copy first, west's pods go with it, then the manager's object goes"
show_on m delete rayclusters.ray.io -n "$NS" test-cluster-0 --wait=false
wait_until 60 "west's copy of test-cluster-0 deleted" no_raycluster b test-cluster-0 || die "west's copy of test-cluster-0 is still there"
no_pods() { [[ -z "$(on b get pods -n "$NS" -l ray.io/cluster=test-cluster-0 -o name)" ]]; }
wait_until 60 "test-cluster-0's pods gone from west" no_pods || die "test-cluster-0's pods are still on west"
wait_until 30 "test-cluster-0 gone from the manager" no_raycluster m test-cluster-0 || die "the manager's test-cluster-0 is still there"
show_on b get rayclusters.ray.io,pods -n "$NS"
show_on m get rayclusters.ray.io -n "$NS"
narrate "Done: dispatched to the one worker with room, a gang no worker fits kept on the manager with the reasons per worker, and the copy deleted with the manager's object. docs/dispatch.md tells the rest (the lease that keeps a gang from running twice when a worker is lost)$( ((keep)) || echo "; the three clusters go down now (--keep leaves them up)")"
