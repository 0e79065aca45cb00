#!/usr/bin/env bash
# Webhook: a RayCluster's device claims in the minResources the
# webhook writes (raygate.io/min-resources, webhook/snapwatch.c) and in its
# PodGroup's. A DeviceClass maps gpu.example.com to example.com/gpu; a gang of
# a head and 3 workers of one device each (ResourceClaimTemplate one-gpu) gets
# example.com/gpu 3 in both, and is admitted whole. A gang whose template does
# not exist gets minResources without devices, a kubectl warning naming the
# template, and waits, saying so. Skipped where resource.k8s.io/v1 is not served.
. "$(dirname "$0")/lib.sh"
e2e_setup
dra_or_skip
Q="dra-webhook-$(e2e_uid)"
dra_class extended
dra_nodes 1 4
dra_template one-gpu
dra_queue "$Q" 6

webhook_metric() {
	curl -sf --max-time 2 --cacert "$STATE/raygate-certs/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/metrics" |
		awk -v m="$1" '$1 == m {print $2}'
}
eventually 10 "the webhook has listed the DRA objects (raygate_webhook_dra_synced 1)" is webhook_metric raygate_webhook_dra_synced 1
sleep 1 # the webhook's watch sees the class and the template just made

pg_min() { kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$1-pg" -o json 2>/dev/null | jq -cS '.spec.minResources // empty'; }
rc_min() { rc_annotation "$1" raygate.io/min-resources | jq -cS . 2>/dev/null; }

dra_cluster gpus "$Q" 3 template:one-gpu
WANT='{"cpu":"4","example.com/gpu":"3","memory":"4Gi"}'
assert_eq "gpus's raygate.io/min-resources (the webhook's)" "$WANT" "$(rc_min gpus)"
eventually 30 "gpus's PodGroup minResources count its 3 devices" is pg_min gpus "$WANT"
all_or_none_watch gpus 4 90 || fail "gpus was not admitted whole"
pass "gpus's 4 pods ungated together"

WARN="$(mktemp)"
e2e_on_exit "rm -f $WARN"
dra_cluster nogpu "$Q" 2 template:no-such-template 2>"$WARN"
grep -q "resourceclaimtemplate no-such-template not found in $NS" "$WARN" ||
	fail "no kubectl warning names the missing template: $(cat "$WARN")"
pass "kubectl warns: $(grep -o 'raygate.io/min-resources counts no device.*' "$WARN" | head -1)"
assert_eq "nogpu's raygate.io/min-resources (without devices)" '{"cpu":"3","memory":"3Gi"}' "$(rc_min nogpu)"
waits_told nogpu 30 "no-such-template"
! admitted nogpu || fail "nogpu admitted without its claim template"
pass "nogpu waits for its template"
