# Helpers for the in-cluster tests (tests/e2e/test_incluster_*.sh, meson suite
# incluster): raygate installed from its image onto the real node of
# `hack/cluster.sh up --real-node`. Source after lib.sh. These tests never
# skip: without a real node they fail, saying why.
. "$ROOT/hack/real-node.sh"
RG_NS=raygate-system
OVERLAY="$ROOT/hack/real-node-overlay"

# incluster_setup: starts a real-node cluster if none is up, fails if the
# cluster that is up has no real node, then e2e_setup (the test's namespace).
incluster_setup() {
	if ! "$ROOT/hack/cluster.sh" status >/dev/null 2>&1; then
		"$ROOT/hack/cluster.sh" up --real-node || fail "hack/cluster.sh up --real-node did not come up (see its error above)"
	fi
	[[ -f "$STATE/real-node.enabled" ]] ||
		fail "the cluster that is up has no real node: run hack/cluster.sh down, then hack/cluster.sh up --real-node"
	e2e_setup
}

rg_pods() { # component: name node ready-count phase, one line per pod
	kc get pods -n "$RG_NS" -l "app.kubernetes.io/name=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase} {.metadata.deletionTimestamp} {range .status.containerStatuses[*]}{.ready} {.containerID}{end}{"\n"}{end}'
}

# ready_on_node COMPONENT N: exactly N pods, all Running and ready, not being
# deleted, on the real node, in containerd.
ready_on_node() {
	local lines
	lines="$(rg_pods "$1")"
	[[ "$(grep -c . <<<"$lines")" == "$2" ]] || return 1
	! grep -qv " $REAL_NODE_NAME Running  true containerd://" <<<"$lines"
}

lease_holder_pod() {
	local h
	h="$(kc get lease -n "$RG_NS" raygate-gate -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)"
	echo "${h%_*}"
}

# Every webhook of the configuration goes to the Service, with a CA bundle.
webhook_via_service() {
	kc get mutatingwebhookconfiguration raygate -o json | jq -e '(.webhooks | length) as $n | $n > 0 and
		([.webhooks[] | .clientConfig | select(.url == null and .service.name == "raygate-webhook"
			and .service.namespace == "raygate-system" and (.caBundle // "") != "")] | length) == $n' >/dev/null
}

installed_ready() {
	kc wait -n "$RG_NS" --for=condition=Complete job/raygate-certs --timeout 1s >/dev/null 2>&1 &&
		ready_on_node raygate-webhook 2 && ready_on_node raygate-gate 2 && webhook_via_service &&
		[[ -n "$(lease_holder_pod)" ]]
}

# uninstall_raygate: removes raygate (both ways of installing it) but its CRDs.
uninstall_raygate() {
	"$HELM" uninstall raygate -n "$RG_NS" --wait >/dev/null 2>&1 || true
	# The cluster-scoped objects of manifests/ but the CRDs, by kind/name.
	local objs
	objs="$(kc kustomize "$OVERLAY" | kc create --dry-run=client -o json -f - | jq -r '(.items[]? // .)
		| select(.metadata.namespace == null and (.kind | IN("Namespace", "CustomResourceDefinition") | not))
		| "\(.kind)/\(.metadata.name)"')"
	[[ -n "$objs" ]] || fail "no cluster-scoped objects found in $OVERLAY"
	kc delete mutatingwebhookconfiguration raygate --ignore-not-found >/dev/null
	kc delete namespace "$RG_NS" --ignore-not-found --wait=true --timeout 120s >/dev/null ||
		fail "namespace $RG_NS was not deleted"
	# shellcheck disable=SC2086
	kc delete $objs --ignore-not-found >/dev/null
}

install_kustomize() {
	kc apply --server-side --force-conflicts -k "$OVERLAY" >/dev/null || fail "kubectl apply -k $OVERLAY failed"
}

HELM="${RAYGATE_HELM:-$HELM_BIN/helm}"

# pod_rss COMPONENT: "pod rss=MiB working-set=MiB" of its pods, from the
# kubelet's stats summary (the pod cgroup's memory; on cgroup v1, rss is the
# anonymous memory, without the mapped shared libraries).
pod_rss() {
	kc get --raw "/api/v1/nodes/$REAL_NODE_NAME/proxy/stats/summary" |
		jq -r --arg c "$1" '.pods[] | select(.podRef.namespace == "raygate-system" and (.podRef.name | startswith($c)))
			| select((.memory.rssBytes // 0) > 0)
			| "\(.podRef.name) rss=\((.memory.rssBytes / 104857.6 | round) / 10)MiB working-set=\((.memory.workingSetBytes / 104857.6 | round) / 10)MiB"'
}
