#!/usr/bin/env bash
# raygate-certs bootstrap against the real apiserver: it creates the TLS
# Secret, writes the CA into every webhook's caBundle, and a second run
# changes nothing.
. "$(dirname "$0")/lib.sh"
e2e_setup
WC="raygate-bootstrap-$(e2e_uid)"
e2e_on_exit 'kc delete mutatingwebhookconfiguration "$WC" --ignore-not-found >/dev/null 2>&1'
# A copy of raygate's configuration that no object selects, so it never
# intercepts another test's requests.
kc create --dry-run=client -o json -f "$ROOT/manifests/webhook-configuration.yaml" |
	jq --arg n "$WC" '.metadata.name = $n | .metadata.labels["e2e.raygate.io/added"] = "true" |
		.webhooks |= map(.objectSelector = {matchLabels: {"raygate.io/bootstrap-test": "never"}})' |
	kc create -f - >/dev/null

bootstrap() {
	"$BUILD/certs/raygate-certs" bootstrap --namespace "$NS" --secret webhook-tls --webhook-config "$WC" \
		--dns raygate-webhook.raygate-system.svc --server "https://127.0.0.1:$APISERVER_PORT" \
		--token-file "$STATE/pki/admin.token" --ca-file "$STATE/pki/ca.crt" 2>>"$STATE/logs/e2e-certs-bootstrap.log"
}
bootstrap || fail "raygate-certs bootstrap failed: $(tail -3 "$STATE/logs/e2e-certs-bootstrap.log")"
pass "bootstrap ran"

assert_eq "Secret type" kubernetes.io/tls "$(kc get secret -n "$NS" webhook-tls -o jsonpath='{.type}')"
ca="$(kc get secret -n "$NS" webhook-tls -o jsonpath='{.data.ca\.crt}')"
[[ -n "$ca" ]] || fail "the Secret has no ca.crt"
echo "$ca" | base64 -d >"$STATE/bootstrap-ca.crt"
kc get secret -n "$NS" webhook-tls -o jsonpath='{.data.tls\.crt}' | base64 -d >"$STATE/bootstrap-tls.crt"
openssl verify -CAfile "$STATE/bootstrap-ca.crt" "$STATE/bootstrap-tls.crt" >/dev/null || fail "tls.crt does not verify against ca.crt"
openssl x509 -in "$STATE/bootstrap-tls.crt" -noout -ext subjectAltName | grep -q "DNS:raygate-webhook.raygate-system.svc" ||
	fail "tls.crt does not name raygate-webhook.raygate-system.svc"
pass "tls.crt verifies against ca.crt and names the Service"
bundles="$(kc get mutatingwebhookconfiguration "$WC" -o json | jq -r '.webhooks[].clientConfig.caBundle' | sort -u)"
assert_eq "caBundle of both webhooks is the Secret's CA" "$ca" "$bundles"

rv="$(kc get secret -n "$NS" webhook-tls -o jsonpath='{.metadata.resourceVersion}')"
wrv="$(kc get mutatingwebhookconfiguration "$WC" -o jsonpath='{.metadata.resourceVersion}')"
bootstrap || fail "second bootstrap failed"
assert_eq "Secret unchanged by a second run" "$rv" "$(kc get secret -n "$NS" webhook-tls -o jsonpath='{.metadata.resourceVersion}')"
assert_eq "configuration unchanged by a second run" "$wrv" "$(kc get mutatingwebhookconfiguration "$WC" -o jsonpath='{.metadata.resourceVersion}')"
