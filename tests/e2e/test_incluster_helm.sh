#!/usr/bin/env bash
# `helm install` of charts/raygate on the real-node cluster (instead
# of kubectl apply -k) brings raygate up the same way, and the guide's
# walkthrough passes with it. Afterwards raygate is installed with kustomize
# again, as `hack/cluster.sh up --real-node` left it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/incluster.sh"
incluster_setup
[[ -x "$HELM" ]] || fail "helm not found at $HELM (hack/build-upstream.sh builds it)"
restore() {
	local rc=$?
	uninstall_raygate >/dev/null 2>&1 || true
	install_kustomize
	wait_until 180 "raygate reinstalled with kustomize" installed_ready || say "warning: raygate not Ready again after the helm test"
	e2e_teardown
	exit $rc
}
trap restore EXIT

uninstall_raygate
t0=$SECONDS
"$HELM" install raygate "$ROOT/charts/raygate" -n "$RG_NS" --create-namespace \
	-f "$ROOT/tests/e2e/helm-real-node-values.yaml" --wait --timeout 180s >/dev/null || fail "helm install failed"
pass "helm install --wait: done in $((SECONDS - t0))s"
assert_eq "helm release status" deployed "$("$HELM" status raygate -n "$RG_NS" -o json | jq -r .info.status)"
eventually 120 "raygate from the chart: Job complete, 2+2 pods Ready on $REAL_NODE_NAME, webhook through the Service" installed_ready
assert_eq "objects carry the chart's release" raygate \
	"$(kc get deployment -n "$RG_NS" raygate-gate -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}')"
bash "$ROOT/tests/e2e/test_gate_walkthrough.sh" || fail "the walkthrough failed with raygate installed by helm"
pass "the walkthrough passed with raygate installed by helm"
