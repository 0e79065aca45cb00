#!/usr/bin/env bash
# Fault drill (docs/contributing.md): the webhook's certificate and key are replaced on
# disk while two streams of requests run: AdmissionReviews POSTed straight to
# the webhook on a new TLS connection each (verified against the CA), and
# pod creations (dry run) through the apiserver, which calls the webhook. Four
# rotations, each with a new leaf from the same CA: renamed into place,
# overwritten in place, swapped by a "..data" symlink the way Kubernetes
# updates a Secret volume, and after garbage was written over the
# certificate for a while. No request fails, and new connections see each
# new certificate within seconds. Connections accepted just before a reload
# but whose handshake starts after it complete it (they crashed the webhook:
# h2o kept a pointer to the freed context).
. "$(dirname "$0")/lib.sh"
e2e_setup
CERTS="$STATE/raygate-certs"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/raygate-rotation.XXXXXX")"
STREAM_PIDS=()
stop_streams() {
	local p
	for p in "${STREAM_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${STREAM_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	STREAM_PIDS=()
}
cleanup() {
	stop_streams
	# Leave regular files behind, whatever happened.
	if [[ -L "$CERTS/tls.crt" || -L "$CERTS/tls.key" ]]; then
		cp -L "$CERTS/tls.crt" "$WORK/keep.crt" && cp -L "$CERTS/tls.key" "$WORK/keep.key" &&
			mv -f "$WORK/keep.key" "$CERTS/tls.key" && mv -f "$WORK/keep.crt" "$CERTS/tls.crt"
		rm -rf "$CERTS"/..data "$CERTS"/..20*
	fi
	rm -rf "$WORK"
}
e2e_on_exit cleanup

served_fingerprint() {
	openssl s_client -connect "127.0.0.1:$WEBHOOK_PORT" -servername localhost </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2
}
file_fingerprint() { openssl x509 -in "$1" -noout -fingerprint -sha256 | cut -d= -f2; }
serves() { local got; got="$(served_fingerprint)"; echo "$got" >"$WORK/served"; [[ "$got" == "$1" ]]; }
rotated() { # WHAT FINGERPRINT
	wait_until 15 "$1" serves "$2" || fail "$1: expected $2, served $(cat "$WORK/served")"
	pass "$1"
}
new_leaf() { # DIR: a new key and certificate from the cluster's webhook CA
	mkdir -p "$1"
	cp "$CERTS/ca.crt" "$CERTS/ca.key" "$1/"
	"$BUILD/certs/raygate-certs" generate --dir "$1" --dns localhost --ip 127.0.0.1 >/dev/null 2>&1 ||
		fail "raygate-certs generate failed"
	cmp -s "$CERTS/ca.crt" "$1/ca.crt" || fail "the new leaf is not from the same CA"
}

# Stream 1: straight to the webhook, a new TLS connection per request.
direct_stream() {
	local out="$WORK/direct.log" code
	while :; do
		code="$(curl -sS --max-time 5 --cacert "$CERTS/ca.crt" -H 'Content-Type: application/json' \
			--data-binary @"$ROOT/tests/fixtures/bench/pod-review.json" -o "$WORK/direct.body" -w '%{http_code}' \
			"https://127.0.0.1:$WEBHOOK_PORT/mutate" 2>>"$WORK/direct.err")" || code="curl-failed"
		if [[ "$code" == 200 ]] && jq -e '.response.allowed == true and (.response.patch | length > 0)' "$WORK/direct.body" >/dev/null 2>&1; then
			echo ok >>"$out"
		else
			echo "FAILED $code $(date +%T.%N)" >>"$out"
		fi
	done
}
# Stream 2: through the apiserver (dry run: nothing is stored), which must call the webhook.
api_stream() {
	local out="$WORK/api.log" body code token
	token="$(cat "$STATE/pki/admin.token")"
	body="$(jq -nc --arg q "rotation-queue" '{apiVersion:"v1",kind:"Pod",metadata:{generateName:"rotation-",
		labels:{"ray.io/cluster":"rotation","volcano.sh/queue-name":$q}},
		spec:{containers:[{name:"c",image:"rayproject/ray:2.9.0"}]}}')"
	while :; do
		code="$(curl -sS --max-time 10 --cacert "$STATE/pki/ca.crt" -H "Authorization: Bearer $token" \
			-H 'Content-Type: application/json' --data-binary "$body" -o "$WORK/api.body" -w '%{http_code}' \
			"https://127.0.0.1:$APISERVER_PORT/api/v1/namespaces/$NS/pods?dryRun=All" 2>>"$WORK/api.err")" || code="curl-failed"
		if [[ "$code" == 201 ]] && jq -e '[.spec.schedulingGates[]?.name] | index("raygate.io/gang")' "$WORK/api.body" >/dev/null 2>&1; then
			echo ok >>"$out"
		else
			echo "FAILED $code $(date +%T.%N) $(head -c 300 "$WORK/api.body" 2>/dev/null)" >>"$out"
		fi
	done
}
count() { grep -c "^$2" "$WORK/$1.log" 2>/dev/null || true; }
streams_ran() { (($(count direct ok) >= $1 && $(count api ok) >= $1)); }

# kube-controller-manager may still be recovering from an earlier drill's
# apiserver restart (seen: no default service account within 60 s); this drill
# is about certificates, so it makes the account itself when it is late.
sa() { kc get serviceaccount -n "$NS" default || kc create serviceaccount -n "$NS" default; }
eventually 60 "namespace $NS has its default service account (pods can be created)" sa
old="$(file_fingerprint "$CERTS/tls.crt")"
assert_eq "the webhook serves the certificate on disk" "$old" "$(served_fingerprint)"
direct_stream & STREAM_PIDS+=($!)
api_stream & STREAM_PIDS+=($!)
eventually 30 "both request streams running" streams_ran 5

# 1. New files renamed into place (key first, then certificate), with 20
# connections accepted before and handshaking after.
new_leaf "$WORK/r1"
python3 "$ROOT/tests/e2e/early_handshake.py" --port "$WEBHOOK_PORT" --ca "$CERTS/ca.crt" \
	--log "$STATE/logs/raygate-webhook.log" --ready "$WORK/early.ready" >"$WORK/early.out" 2>&1 &
early=$!
early_ready() { [[ -f "$WORK/early.ready" ]]; }
eventually 10 "20 connections open, no byte sent" early_ready
cp "$WORK/r1/tls.key" "$CERTS/.tls.key.new" && cp "$WORK/r1/tls.crt" "$CERTS/.tls.crt.new"
mv -f "$CERTS/.tls.key.new" "$CERTS/tls.key" && mv -f "$CERTS/.tls.crt.new" "$CERTS/tls.crt"
fp="$(file_fingerprint "$WORK/r1/tls.crt")"
wait "$early" || { cat "$WORK/early.out" >&2; fail "connections accepted before the reload failed their handshake"; }
pass "$(cat "$WORK/early.out")"
rotated "rotation 1 (rename): new connections get the new certificate" "$fp"
webhook_alive() { "$ROOT/hack/cluster.sh" status 2>/dev/null | grep "^raygate-webhook *running" >/dev/null; }
webhook_alive || fail "the webhook died"

# 2. Overwritten in place (what an editor or a careless script does).
new_leaf "$WORK/r2"
cat "$WORK/r2/tls.key" >"$CERTS/tls.key"
cat "$WORK/r2/tls.crt" >"$CERTS/tls.crt"
fp="$(file_fingerprint "$WORK/r2/tls.crt")"
rotated "rotation 2 (in place): new connections get the new certificate" "$fp"

# 3. A Secret volume's way: tls.crt -> ..data/tls.crt, and ..data swapped atomically.
new_leaf "$WORK/r3"
mkdir "$CERTS/..2020_01_01_a" "$CERTS/..2020_01_01_b"
cp "$WORK/r2/tls.crt" "$WORK/r2/tls.key" "$CERTS/..2020_01_01_a/"
cp "$WORK/r3/tls.crt" "$WORK/r3/tls.key" "$CERTS/..2020_01_01_b/"
ln -sfn ..2020_01_01_a "$CERTS/..data"
ln -sfn ..data/tls.key "$WORK/key.link" && mv -fT "$WORK/key.link" "$CERTS/tls.key"
ln -sfn ..data/tls.crt "$WORK/crt.link" && mv -fT "$WORK/crt.link" "$CERTS/tls.crt"
# The webhook looks every second: over 3 s it looked at least twice.
stays 3 "the same pair behind symlinks is no change" serves "$(file_fingerprint "$WORK/r2/tls.crt")"
ln -sfn ..2020_01_01_b "$CERTS/..data.tmp" && mv -fT "$CERTS/..data.tmp" "$CERTS/..data"
fp="$(file_fingerprint "$WORK/r3/tls.crt")"
rotated "rotation 3 (..data symlink swap): new connections get the new certificate" "$fp"

# 4. Garbage first: the webhook keeps serving rotation 3's certificate; then a good pair.
new_leaf "$WORK/r4"
webhook_log_from=$(($(wc -l <"$STATE/logs/raygate-webhook.log") + 1))
mkdir "$CERTS/..2020_01_01_c"
echo "not a certificate" >"$CERTS/..2020_01_01_c/tls.crt"
cp "$WORK/r3/tls.key" "$CERTS/..2020_01_01_c/"
ln -sfn ..2020_01_01_c "$CERTS/..data.tmp" && mv -fT "$CERTS/..data.tmp" "$CERTS/..data"
webhook_log_says() {
	tail -n "+$webhook_log_from" "$STATE/logs/raygate-webhook.log" | grep -F "unusable, keeping the current one" >/dev/null
}
eventually 30 "the webhook logs that it keeps the current certificate" webhook_log_says
assert_eq "with an unusable certificate on disk, the last good one is served" "$fp" "$(served_fingerprint)"
cp "$WORK/r4/tls.crt" "$WORK/r4/tls.key" "$CERTS/..2020_01_01_c/"
fp="$(file_fingerprint "$WORK/r4/tls.crt")"
rotated "rotation 4 (after garbage): new connections get the new certificate" "$fp"

# Enough requests to judge (50 direct, 20 through the apiserver), 5 of each after the last rotation.
d_want=$(($(count direct ok) + 5)) a_want=$(($(count api ok) + 5))
((d_want >= 50)) || d_want=50
((a_want >= 20)) || a_want=20
enough() { (($(count direct ok) >= d_want && $(count api ok) >= a_want)); }
eventually 120 "both streams answered after the last rotation ($d_want direct, $a_want through the apiserver)" enough
stop_streams
webhook_alive || fail "the webhook died"
direct_ok="$(count direct ok)" direct_failed="$(count direct FAILED)"
api_ok="$(count api ok)" api_failed="$(count api FAILED)"
say "direct: $direct_ok ok, $direct_failed failed; through the apiserver: $api_ok ok, $api_failed failed"
if ((direct_failed + api_failed > 0)); then
	grep FAILED "$WORK/direct.log" "$WORK/api.log" | head -10 >&2
	tail -5 "$WORK/direct.err" "$WORK/api.err" >&2 2>/dev/null || true
	fail "requests failed during the rotations"
fi
((direct_ok >= 50 && api_ok >= 20)) || fail "too few requests to judge ($direct_ok direct, $api_ok through the apiserver)"
pass "no failed request across 4 rotations ($direct_ok direct, $api_ok through the apiserver)"
# The cluster keeps working with the final certificate.
