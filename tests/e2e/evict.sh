# Helpers of the eviction tests (tests/e2e/test_gate_evict_*.sh).
# Sourced after lib.sh.

# evict_setup PREFIX EVICT-GRACE: e2e_setup, then the test's queue Q (named
# PREFIX-<uid>, cpu 8, memory 16Gi) and the invariant checker (grace 5 s,
# evictions EVICT-GRACE s)
evict_setup() {
	e2e_setup
	Q="$1-$(e2e_uid)"
	make_queue "$Q" 8 16Gi
	inv_start --grace 5 --evict-grace "$2"
}

# gate_with ARGS...: restarts raygate's gate controller with ARGS (eviction
# flags); the usual one is started again when the test ends (restore_gate,
# through e2e_on_exit; a killed test's is restored by the next e2e_baseline).
gate_with() {
	if [[ -z "${EVICT_GATE_RESTORE:-}" ]]; then
		EVICT_GATE_RESTORE=1
		e2e_on_exit restore_gate
	fi
	"$ROOT/hack/cluster.sh" stop raygate-gate >/dev/null 2>&1 || true
	"$ROOT/hack/cluster.sh" start-gate "$@" >/dev/null || fail "the gate did not start with $*"
	pass "gate restarted with $*"
}

requeue_count_is() { [[ "$(rc_annotation "$1" raygate.io/requeue-count)" == "$2" ]]; }
evicted_not_admitted() { requeue_count_is "$1" "$2" && ! admitted "$1"; }

# none_bound_all_gated CLUSTER N: exactly N live pods, none bound, all gated
none_bound_all_gated() {
	local j
	j="$(kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json)"
	[[ "$(jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length' <<<"$j")" == "$2" ]] &&
		[[ "$(jq '[.items[] | select(.spec.nodeName != null)] | length' <<<"$j")" == 0 ]] &&
		[[ "$(jq '[.items[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang"))] | length' <<<"$j")" == "$2" ]]
}

# all_bound CLUSTER N: exactly N pods, all bound
all_bound() {
	[[ "$(count_pods "$1")" == "$2" && "$(bound_count "$1")" == "$2" ]]
}

# evicted_events OBJECT-NAME: the messages of its GangEvicted Events, one per line
evicted_events() {
	kc get events -n "$NS" --field-selector "involvedObject.name=$1,reason=GangEvicted" -o json | jq -r '.items[].message'
}

# evicted_event_says OBJECT-NAME TEXT: one of its GangEvicted Events says TEXT. The
# gate posts them just after the eviction record, so wait for it (eventually).
evicted_event_says() { evicted_events "$1" | grep -qF -- "$2"; }

# pvc_cluster NAME QUEUE CLAIM [WORKERS]: a RayCluster (head 1 cpu, WORKERS
# workers of 1 cpu, default 2) whose workers mount the PersistentVolumeClaim CLAIM
pvc_cluster() {
	raycluster "$1" queue="$2" workers="${4:-2}" claim="$3" | kc apply -n "$NS" -f - >/dev/null
}

# make_claim CLAIM: a PersistentVolume and the claim bound to it (static
# binding, storage class "manual"). The PersistentVolume (cluster-scoped,
# named after the test's namespace) is deleted when the test ends; labelled
# e2e.raygate.io/added, a killed test's is deleted by the next e2e_baseline.
make_claim() {
	e2e_on_exit "kc delete pv '$NS-$1' --wait=false >/dev/null 2>&1"
	kc apply -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: PersistentVolume
		metadata: {name: $NS-$1, labels: {e2e.raygate.io/added: "true"}}
		spec:
		  capacity: {storage: 1Gi}
		  accessModes: [ReadWriteMany]
		  storageClassName: manual
		  hostPath: {path: /tmp/$NS-$1}
		  claimRef: {namespace: $NS, name: $1}
	YAML
	kc apply -n "$NS" -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: PersistentVolumeClaim
		metadata: {name: $1}
		spec:
		  accessModes: [ReadWriteMany]
		  storageClassName: manual
		  resources: {requests: {storage: 1Gi}}
		  volumeName: $NS-$1
	YAML
}

claim_bound() { [[ "$(kc get pvc -n "$NS" "$1" -o jsonpath='{.status.phase}')" == Bound ]]; }

# disruption_seen FILE: a DisruptionTarget condition naming raygate in a `kubectl get pods -w -o json` capture
disruption_seen() {
	jq -s '[.[] | .status.conditions[]? | select(.type == "DisruptionTarget" and .reason == "EvictionByRaygate")] | length > 0' "$1" 2>/dev/null | grep -q true
}
