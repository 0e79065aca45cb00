#!/usr/bin/env bash
# raygate installed as users install it, `kubectl apply -k` of
# manifests/ (through hack/real-node-overlay: the image built here, the
# real node), onto a cluster where it was not: the certificate Job completes,
# the webhook (2 replicas) and the gate (2 replicas, one Lease holder) become
# Ready as real pods in containerd on the real node, the webhook configuration
# goes through the Service with the Job's CA, and a gang created at once is
# admitted. Prints the time from `kubectl apply -k` to that gang admitted and
# the pods' RSS as the kubelet reports it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/incluster.sh"
incluster_setup
Q="install-$(e2e_uid)"

uninstall_raygate
pass "raygate uninstalled (namespace $RG_NS, webhook configuration, cluster RBAC)"
make_queue "$Q" 4 6Gi

t0=$(date +%s%3N)
install_kustomize
say "kubectl apply -k hack/real-node-overlay: done in $(($(date +%s%3N) - t0)) ms"
# A user creates a RayCluster right away: refused (fail closed) until the
# webhook serves with the bootstrapped CA, then accepted.
create_rc() { sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null 2>&1; }
eventually 180 "the RayCluster is accepted (the webhook serves through its Service)" create_rc
t_accepted=$(date +%s%3N)
all_or_none_watch test-cluster-0 3 120 || fail "test-cluster-0 was not admitted"
t_admitted=$(date +%s%3N)
pass "test-cluster-0's 3 pods ungated together"
assert_eq "gated by raygate: the RayCluster's admission record" 1 \
	"$(kc get rayclusters.ray.io -n "$NS" test-cluster-0 -o json | jq '[.metadata.annotations["raygate.io/admitted-at"] // empty] | length')"
say "MEASURE apply-to-accepted-ms=$((t_accepted - t0)) apply-to-gang-admitted-ms=$((t_admitted - t0))"

eventually 60 "raygate-certs Job Complete" kc wait -n "$RG_NS" --for=condition=Complete job/raygate-certs --timeout 1s
eventually 120 "webhook: 2 pods Ready on $REAL_NODE_NAME (containerd)" ready_on_node raygate-webhook 2
eventually 120 "gate: 2 pods Ready on $REAL_NODE_NAME (containerd)" ready_on_node raygate-gate 2
eventually 10 "webhook configuration: every webhook through the Service, with a CA bundle" webhook_via_service
# The CA bundle is the CA of the Secret the Job wrote, which the webhook serves with.
bundle="$(kc get mutatingwebhookconfiguration raygate -o jsonpath='{.webhooks[0].clientConfig.caBundle}')"
secret_ca="$(kc get secret -n "$RG_NS" raygate-webhook-tls -o jsonpath='{.data.ca\.crt}')"
[[ -n "$bundle" && "$bundle" == "$secret_ca" ]] || fail "caBundle is not the ca.crt of the Secret raygate-webhook-tls"
pass "caBundle is the Secret's ca.crt"
holder="$(lease_holder_pod)"
kc get pod -n "$RG_NS" "$holder" >/dev/null 2>&1 || fail "the Lease holder '$holder' is not a gate pod"
pass "the Lease is held by gate pod $holder"
# Nothing of raygate runs on the host: no host binaries were started.
for c in raygate-webhook raygate-gate; do
	[[ ! -f "$STATE/pids/$c.pid" ]] || fail "$c runs from the host (.cluster/pids/$c.pid)"
done
pass "no raygate host process"
# Ray pods stay on kwok nodes; raygate's pods on the real node only.
nodes="$(kc get pods -n "$NS" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)"
grep -q "$REAL_NODE_NAME" <<<"$nodes" && fail "a Ray pod runs on $REAL_NODE_NAME"
pass "Ray pods on kwok nodes only: $(echo $nodes)"
others="$(kc get pods -A --field-selector "spec.nodeName=$REAL_NODE_NAME" -o jsonpath='{range .items[*]}{.metadata.namespace}{"\n"}{end}' | sort -u)"
assert_eq "namespaces with pods on $REAL_NODE_NAME" "$RG_NS" "$(echo $others)"

rss() { [[ "$(pod_rss raygate- | grep -c .)" == 4 ]]; }
eventually 90 "the kubelet's stats summary has the 4 pods' memory" rss
pod_rss raygate-webhook | sed 's/^/MEASURE /' >&2
pod_rss raygate-gate | sed 's/^/MEASURE /' >&2
