#!/usr/bin/env bash
# A rolling restart of the webhook Deployment under a steady stream
# of pod creations (each one through the webhook: fail closed) fails none of
# them: readiness, the rolling update (maxUnavailable 0 with 2 replicas), the
# webhook's SIGTERM drain (--shutdown-delay, then open connections finish), and
# the Service's endpoints moving with kube-proxy. Then a drain's two evictions:
# the PodDisruptionBudget lets one through and refuses the other, and still no
# creation fails. Every pod created is gated.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/incluster.sh"
incluster_setup
Q="inroll-$(e2e_uid)"
make_queue "$Q" 1 1Gi
eventually 180 "raygate in-cluster and Ready" installed_ready

api="https://127.0.0.1:$APISERVER_PORT/api/v1/namespaces/$NS/pods"
auth=(--cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $(cat "$STATE/pki/admin.token")" -H "Content-Type: application/json")
create_pod() { # n -> HTTP status
	curl -s -o "$STATE/rollout-last.json" -w '%{http_code}' --max-time 30 "${auth[@]}" -X POST "$api" -d '{
	  "apiVersion": "v1", "kind": "Pod",
	  "metadata": {"name": "stream-'"$1"'", "labels": {"ray.io/cluster": "stream", "ray.io/node-type": "worker",
	               "ray.io/group": "g", "volcano.sh/queue-name": "'"$Q"'"}},
	  "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1m"}}}]}}'
}
stream() { # runs until $STATE/rollout-stop exists; one line per creation: n status
	local n=0 code
	while [[ ! -f "$STATE/rollout-stop" ]]; do
		n=$((n + 1))
		code="$(create_pod "$n")"
		[[ "$code" == 201 ]] || { echo "failed $n: $code $(head -c 300 "$STATE/rollout-last.json")" >&2; }
		echo "$n $code"
		sleep 0.05 # pacing the creations (not a wait)
	done
}
assert_eq "a pod before the restart" 201 "$(create_pod 0)"
rm -f "$STATE/rollout-stop"
stream >"$STATE/rollout-codes" &
spid=$!
created() { local n; n="$(grep -c . "$STATE/rollout-codes" 2>/dev/null)" || true; echo "${n:-0}"; }
more_created() { (($(created) >= $1)); }
eventually 60 "20 pod creations before the restart" more_created 20
before="$(kc get pods -n "$RG_NS" -l app.kubernetes.io/name=raygate-webhook -o jsonpath='{.items[*].metadata.name}')"
kc rollout restart -n "$RG_NS" deployment/raygate-webhook >/dev/null
kc rollout status -n "$RG_NS" deployment/raygate-webhook --timeout 180s >/dev/null || { touch "$STATE/rollout-stop"; wait $spid; fail "the rollout did not finish"; }
old_gone() { ! kc get pods -n "$RG_NS" -l app.kubernetes.io/name=raygate-webhook -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -qxF -f <(tr ' ' '\n' <<<"$before"); }
eventually 120 "the old webhook pods ($before) are gone" old_gone
eventually 60 "webhook: 2 new pods Ready" ready_on_node raygate-webhook 2
# A drain's evictions, still under the stream: the PodDisruptionBudget
# (minAvailable 1) lets one webhook pod go and refuses the other until the
# replacement is Ready.
evict() { # pod -> HTTP status
	curl -s -o /dev/null -w '%{http_code}' --max-time 30 "${auth[@]}" -X POST \
		"https://127.0.0.1:$APISERVER_PORT/api/v1/namespaces/$RG_NS/pods/$1/eviction" \
		-d '{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "'"$1"'", "namespace": "'"$RG_NS"'"}}'
}
read -r -a wh <<<"$(kc get pods -n "$RG_NS" -l app.kubernetes.io/name=raygate-webhook -o jsonpath='{.items[*].metadata.name}')"
assert_eq "eviction of ${wh[0]}" 201 "$(evict "${wh[0]}")"
assert_eq "eviction of ${wh[1]} at once (refused by the PDB)" 429 "$(evict "${wh[1]}")"
eventually 60 "webhook: 2 pods Ready again after the eviction" ready_on_node raygate-webhook 2
n="$(created)"
eventually 60 "20 more pod creations against the new webhook pods" more_created $((n + 20))
touch "$STATE/rollout-stop"
wait $spid
total="$(grep -c . "$STATE/rollout-codes")"
bad="$(awk '$2 != 201' "$STATE/rollout-codes" | wc -l)"
((total >= 50)) || fail "only $total creations during the rollout"
assert_eq "pod creations failed during the rolling restart and the eviction (of $total)" 0 "$bad"
gated="$(kc get pods -n "$NS" -l ray.io/cluster=stream -o json |
	jq '[.items[] | select([.spec.schedulingGates[]?.name] | index("raygate.io/gang"))] | length')"
assert_eq "pods created, all gated by the webhook" "$((total + 1))" "$gated"
eventually 60 "webhook: 2 new pods Ready" ready_on_node raygate-webhook 2
