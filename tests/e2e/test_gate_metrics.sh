#!/usr/bin/env bash
# The gate's --metrics-addr endpoint. After a gang is admitted,
# /metrics shows the admitted counter for its queue and non-empty pass and
# gate-removal histograms; /healthz and /readyz answer 200. A second gate that
# cannot reach the apiserver is alive (/healthz 200) but not ready (/readyz 503).
. "$(dirname "$0")/lib.sh"
e2e_setup
Q="metrics-$(e2e_uid)"
make_queue "$Q" 4 6Gi
base="http://127.0.0.1:$GATE_METRICS_PORT"

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
assert_eq "GET /healthz" 200 "$(code "$base/healthz")"
assert_eq "GET /readyz" 200 "$(code "$base/readyz")"
assert_eq "POST /metrics" 405 "$(code -X POST "$base/metrics")"
assert_eq "GET /nothing" 404 "$(code "$base/nothing")"

# sample VALUE of a series: metric NAME{LABELS} (exact label text), or empty
sample() { curl -sf --max-time 5 "$base/metrics" | awk -v s="$1" '$1 == s {print $2}'; }
before="$(sample "raygate_gangs_admitted_total{queue=\"$Q\"}")"
assert_eq "no admission counted for a new queue" "" "$before"

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" test-cluster-0 "$Q" | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch test-cluster-0 3 60 || fail "test-cluster-0 was not admitted"
pass "test-cluster-0 admitted"

# The histograms are observed once the controller's batch returns, a moment
# after the watch above saw the gates go: wait for a scrape that has all four,
# then judge that one scrape (passes go on between two).
hists=(raygate_admission_pass_duration_seconds raygate_gate_removal_duration_seconds raygate_gang_wait_duration_seconds
	raygate_gang_ungate_spread_seconds)
observed() {
	curl -sf --max-time 5 "$base/metrics" >"$E2E_TMP/metrics" || return 1
	local h n
	for h in "${hists[@]}"; do
		n="$(awk -v s="${h}_count" '$1 == s {print $2}' "$E2E_TMP/metrics")"
		[[ -n "$n" && "$n" -ge 1 ]] || return 1
	done
}
wait_until 10 "every histogram observed" observed || true
text="$(cat "$E2E_TMP/metrics")"
grep -q '^# TYPE raygate_gangs_admitted_total counter$' <<<"$text" || fail "no TYPE line for raygate_gangs_admitted_total"
assert_eq "raygate_gangs_admitted_total{queue=\"$Q\"}" 1 "$(sample "raygate_gangs_admitted_total{queue=\"$Q\"}")"
for h in "${hists[@]}"; do
	n="$(awk -v s="${h}_count" '$1 == s {print $2}' <<<"$text")"
	[[ -n "$n" && "$n" -ge 1 ]] || fail "$h has no observations (count '$n')"
	inf="$(awk -v s="${h}_bucket{le=\"+Inf\"}" '$1 == s {print $2}' <<<"$text")"
	assert_eq "$h +Inf bucket equals its count" "$n" "$inf"
done
grep -Eq '^raygate_kube_requests_total\{.*code="200".*\} [1-9]' <<<"$text" || fail "no successful API request counted"
pass "API requests counted by verb and code"
assert_eq "raygate_leader (acting; this gate runs without leader election)" 1 "$(sample raygate_leader)"

# A second controller whose apiserver is unreachable: alive, never ready.
port2=$((GATE_METRICS_PORT + 7))
bad="$(mktemp)"
sed -E "s#server: https://127.0.0.1:[0-9]+#server: https://127.0.0.1:1#" "$KUBECONFIG" >"$bad"
"$BUILD/gate/raygate-gate" --kubeconfig "$bad" --metrics-addr "127.0.0.1:$port2" --log-level error 2>/dev/null &
pid2=$!
e2e_on_exit 'kill $pid2 2>/dev/null || true; rm -f "$bad"'
eventually 10 "second gate's /healthz answers" bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port2/healthz) == 200 ]]"
not_ready() { [[ "$(code "http://127.0.0.1:$port2/readyz")" == 503 ]]; }
stays 2 "second gate's /readyz 503: its caches never sync" not_ready
curl -s --max-time 5 "http://127.0.0.1:$port2/readyz" | grep -q "caches not synced" || fail "/readyz does not say why"
kill -TERM "$pid2"
wait "$pid2" || true
pass "second gate stopped"
