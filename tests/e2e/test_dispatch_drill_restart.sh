#!/usr/bin/env bash
# The drill for the restart hole: at most once while a lost worker's
# gate restarts. A gang runs on a; a's gate records when it saw the lease
# counter change (raygate.io/dispatch-lease-seen). The manager is cut off from
# a (a's Secret points at a closed port) and a's gate is killed (SIGKILL) and
# started again every 8 s for the rest of the partition. Each new gate counts
# the lease (20 s) from the recorded sighting, not afresh, so a evicts the gang
# before the manager may send it to b (lease + margin, 10 s, after the last
# renewal). The sampler (both workers every 0.5 s) never sees the gang bound
# on both. (A gate that ignores the record counts a fresh 20 s at every
# restart and never evicts: the gang is then bound on both from the
# re-dispatch on, and the sampler fails the test.)
# Named dispatch_*: the many-cluster tests share a shard and its offsets (hack/e2e-shards.py).
. "$(dirname "$0")/multi.sh"
LEASE=20 MARGIN=10 EVERY=8
multi_setup --dispatch-lease "${LEASE}s" --dispatch-lease-margin "${MARGIN}s"
samp_start
U="$(e2e_uid)"
mq "hole-$U" a=4 b=2 # 3 CPUs: only a holds it at first
m_raycluster gang "hole-$U" workers=2
uid="$(m_uid rayclusters.ray.io gang)"
eventually 60 "gang is dispatched to a" is dispatched_to rayclusters.ray.io gang a
eventually 90 "gang's 3 pods all bound on a" w_all_bound a gang 3

# copy_ann KEY: an annotation of a's copy ("" when absent)
copy_ann() { on a get rayclusters.ray.io -n "$NS" gang -o json | jq -r --arg k "$1" '.metadata.annotations[$k] // ""'; }
# recorded: a's copy carries the sighting of its current counter
recorded() {
	local l s
	l="$(copy_ann raygate.io/dispatch-lease)" s="$(copy_ann raygate.io/dispatch-lease-seen)"
	[[ -n "$l" && "${s%%@*}" == "$l" && "$s" =~ ^[0-9]+@[0-9-]+T[0-9:.]+Z$ ]]
}
eventually 15 "a's gate records when it saw the lease (raygate.io/dispatch-lease-seen)" recorded
l0="$(copy_ann raygate.io/dispatch-lease)"
renewed() { [[ "$(copy_ann raygate.io/dispatch-lease)" != "$l0" ]]; }
eventually $((LEASE / 2 + 5)) "the dispatcher renews a's lease (it was $l0)" renewed
eventually 10 "the renewal's sighting is recorded too (the webhook keeps it, the dispatcher's bump leaves it)" recorded
say "    a's copy: raygate.io/dispatch-lease-seen $(copy_ann raygate.io/dispatch-lease-seen)"
mq_cap b "hole-$U" 4 # b could take it now; it must not while a may still run it

# a's gate killed and started again every EVERY seconds, until restarter_stop
# (which lets a cycle in progress finish: the gate is left running, once).
RESTARTER=""
restarter_start() {
	rm -f "$E2E_TMP/restarter-stop"
	(while :; do
		for ((i = 0; i < EVERY * 2; i++)); do
			[[ ! -e "$E2E_TMP/restarter-stop" ]] || exit 0
			sleep 0.5
		done
		killed_ms="$(now_ms)"
		"$ROOT/hack/cluster.sh" stop raygate-gate KILL >/dev/null 2>&1 || true
		"$ROOT/hack/cluster.sh" start-gate >/dev/null 2>&1 || true
		echo "$killed_ms" >>"$E2E_TMP/restarts"
	done) &
	RESTARTER=$!
}
restarter_stop() {
	[[ -n "$RESTARTER" ]] || return 0
	touch "$E2E_TMP/restarter-stop"
	wait "$RESTARTER" 2>/dev/null || true
	RESTARTER=""
}
e2e_on_exit 'restarter_stop'

# Cut the manager off from a, and restart a's gate throughout.
secret="$(on m get secret -n raygate-system -l raygate.io/worker-cluster=a -o jsonpath='{.items[0].metadata.name}')"
on m get secret -n raygate-system "$secret" -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)' \
	>"$E2E_TMP/secret-a.json"
cut_cfg="$(jq -r '.data.kubeconfig | @base64d' "$E2E_TMP/secret-a.json" | jq -c '.clusters[0].cluster.server = "https://127.0.0.1:1"')"
on m patch secret -n raygate-system "$secret" --type merge -p "{\"data\":{\"kubeconfig\":\"$(printf %s "$cut_cfg" | base64 -w0)\"}}" >/dev/null ||
	fail "cannot point a's Secret at a closed port"
t_cut=$SECONDS cut_s=$(date +%s)
: >"$E2E_TMP/restarts"
restarter_start
pass "a's Secret points at 127.0.0.1:1 (the manager is cut off from a); a's gate restarted every ${EVERY}s from now on"

a_evicted() { [[ "$(w_bound a gang)" == 0 ]]; }
eventually $((LEASE + MARGIN + 60)) "the gang is re-dispatched to b" is dispatched_to rayclusters.ray.io gang b
t_b=$SECONDS
((t_b - t_cut >= LEASE + MARGIN - LEASE / 4 - 2)) ||
	fail "re-dispatched $((t_b - t_cut))s after the cut, before lease + margin ($((LEASE + MARGIN))s) less a renewal period"
pass "re-dispatched $((t_b - t_cut))s after the cut (lease + margin: $((LEASE + MARGIN))s since the last renewal)"
eventually 90 "gang's 3 pods all bound on b" w_all_bound b gang 3
sleep $((2 * EVERY)) # b runs it, a's gate goes on restarting
restarter_stop
say "    $(wc -l <"$E2E_TMP/restarts") restart(s) of a's gate during the partition"
(($(wc -l <"$E2E_TMP/restarts") >= 4)) || fail "a's gate was restarted only $(wc -l <"$E2E_TMP/restarts") time(s)"
# restart_gaps: at each restart, ms from the SIGKILL to the new gate's "caches synced" (G in docs/dispatch.md)
restart_gaps() {
	python3 - "$E2E_TMP/restarts" "$STATE/logs/raygate-gate.log" <<-'PY'
		import datetime, json, sys
		kills = [int(l) for l in open(sys.argv[1]) if l.strip()]
		synced = []
		for line in open(sys.argv[2]):
		    if '"caches synced' in line:
		        ts = json.loads(line)["ts"].replace("Z", "+00:00")
		        synced.append(int(datetime.datetime.fromisoformat(ts).timestamp() * 1000))
		print(" ".join(str(min((s - k for s in synced if s >= k), default=-1)) for k in kills))
	PY
}
say "    a's gate away at each restart (SIGKILL to caches synced, ms): $(restart_gaps)"
samp_assert "the gang was never bound on a and b at once, a's gate restarted every ${EVERY}s"
a_evicted || fail "the gang is still bound on a"
evicted_at="$(copy_ann raygate.io/evicted-at)"
[[ "$(copy_ann raygate.io/evicted-reason)" == DispatchLeaseExpired && -n "$evicted_at" ]] ||
	fail "a's copy has no eviction record of reason DispatchLeaseExpired"
pass "a's gate evicted the gang $(($(date -d "$evicted_at" +%s) - cut_s))s after the cut (its record: $evicted_at)"

# a comes back: its stale copy goes, the gang stays whole on b.
on m apply -f "$E2E_TMP/secret-a.json" >/dev/null || fail "cannot restore a's Secret"
eventually 60 "a's stale copy is deleted once a is reachable again" no_copy a rayclusters.ray.io gang
w_all_bound b gang 3 || fail "the gang is no longer bound whole on b"
pass "the gang still runs whole on b"
assert_eq "the workers the gang was ever bound in" "a,b" "$(samp_ever "$uid")"
samp_stop
