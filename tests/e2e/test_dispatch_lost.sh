#!/usr/bin/env bash
# At most once when a worker is lost. A gang runs on a; the manager
# is cut off from a (a's Secret points at a closed port). a's gate, seeing its
# lease (20 s) unrenewed, evicts the gang whole; only after lease + margin
# (10 s) since the last renewal does the dispatcher send it to b. The sampler
# (both workers every 0.5 s) never sees the gang bound on both. When a's
# Secret is restored, a's stale copy is deleted.
. "$(dirname "$0")/multi.sh"
LEASE=20 MARGIN=10
multi_setup --dispatch-lease "${LEASE}s" --dispatch-lease-margin "${MARGIN}s"
samp_start
U="$(e2e_uid)"
mq "lost-$U" a=4 b=2 # 3 CPUs: only a holds it at first
m_raycluster gang "lost-$U" workers=2
uid="$(m_uid rayclusters.ray.io gang)"
eventually 60 "gang is dispatched to a" is dispatched_to rayclusters.ray.io gang a
eventually 90 "gang's 3 pods all bound on a" w_all_bound a gang 3
copy_lease() { on "$1" get rayclusters.ray.io -n "$NS" gang -o json | jq -r '.metadata.annotations["raygate.io/dispatch-lease"] // ""'; }
l0="$(copy_lease a)"
renewed() { [[ "$(copy_lease a)" != "$l0" ]]; }
eventually $((LEASE / 2 + 5)) "the dispatcher renews a's lease (it was $l0)" renewed
mq_cap b "lost-$U" 4 # b could take it now; it must not while a may still run it

# Cut the manager off from a.
secret="$(on m get secret -n raygate-system -l raygate.io/worker-cluster=a -o jsonpath='{.items[0].metadata.name}')"
on m get secret -n raygate-system "$secret" -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)' \
	>"$E2E_TMP/secret-a.json"
cut_cfg="$(jq -r '.data.kubeconfig | @base64d' "$E2E_TMP/secret-a.json" | jq -c '.clusters[0].cluster.server = "https://127.0.0.1:1"')"
on m patch secret -n raygate-system "$secret" --type merge -p "{\"data\":{\"kubeconfig\":\"$(printf %s "$cut_cfg" | base64 -w0)\"}}" >/dev/null ||
	fail "cannot point a's Secret at a closed port"
t_cut=$SECONDS
pass "a's Secret points at 127.0.0.1:1: the manager is cut off from a"

# The lease was renewed less than lease/4 before the cut: a keeps the gang for most of it.
stays $((LEASE / 2)) "a keeps the gang bound while its lease may be valid" w_all_bound a gang 3
[[ "$(dispatched_to rayclusters.ray.io gang)" == a ]] || fail "the gang left a before a's lease expired"
pass "the manager keeps the gang on a meanwhile"
a_evicted() { [[ "$(w_bound a gang)" == 0 ]]; }
eventually $((LEASE + 30)) "a's gate evicts the gang (its lease not renewed for ${LEASE}s)" a_evicted
t_evict=$SECONDS
evicted_event() { on a get events -n "$NS" --field-selector reason=DispatchLeaseExpired -o name | grep -q .; }
eventually 10 "a says so (Event DispatchLeaseExpired)" evicted_event
say "    evicted $((t_evict - t_cut))s after the cut"

eventually $((LEASE + MARGIN + 60)) "the gang is re-dispatched to b" is dispatched_to rayclusters.ray.io gang b
t_b=$SECONDS
((t_b - t_cut >= LEASE + MARGIN - LEASE / 4 - 2)) ||
	fail "re-dispatched $((t_b - t_cut))s after the cut, before lease + margin ($((LEASE + MARGIN))s) less a renewal period"
pass "re-dispatched $((t_b - t_cut))s after the cut (lease + margin: $((LEASE + MARGIN))s since the last renewal)"
lost_event() { on m get events -n "$NS" --field-selector reason=WorkerLost -o name | grep -q .; }
eventually 10 "the manager says a was lost (Event WorkerLost)" lost_event
eventually 90 "gang's 3 pods all bound on b" w_all_bound b gang 3
has_copy a rayclusters.ray.io gang "$uid" || say "    (a's copy already gone)"
samp_assert "the gang was never bound on a and b at once"

# a comes back: its stale copy goes.
on m apply -f "$E2E_TMP/secret-a.json" >/dev/null || fail "cannot restore a's Secret"
eventually 60 "a's stale copy is deleted once a is reachable again" no_copy a rayclusters.ray.io gang
w_all_bound b gang 3 || fail "the gang is no longer bound whole on b"
pass "the gang still runs whole on b"
assert_eq "the workers the gang was ever bound in" "a,b" "$(samp_ever "$uid")"
samp_stop
