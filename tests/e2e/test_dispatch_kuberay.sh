#!/usr/bin/env bash
# A manager that runs KubeRay (hack/cluster.sh up --manager --kuberay).
# Its webhook (/dispatch-suspend) suspends the RayClusters and RayJobs of a
# dispatching Queue before KubeRay sees them, so KubeRay on the manager makes no
# pods for them (sampled every half second on the manager all along), while their
# copies run on worker b. KubeRay owns a suspended object's status.state and
# jobDeploymentStatus, and rewrites them at every reconcile (a RayCluster's at
# each annotation change: the dispatcher renews the lease every 5 s here; a
# RayJob's every 3 s), so the manager shows b's live state in the annotation
# raygate.io/dispatch-worker-state; both must hold still for 12 s (no flapping
# between KubeRay's value and b's). A RayJob that succeeds on b is Complete on
# the manager, and stays so. Deleting on the manager deletes the copies.
. "$(dirname "$0")/multi.sh"
MULTI_MANAGER_KUBERAY=1 multi_setup --dispatch-lease 20s
U="$(e2e_uid)"
grep -q "^kuberay-operator *running" <<<"$MULTI_M_STATUS" || fail "KubeRay's operator does not run on the manager"
pass "the manager runs KubeRay's operator"

# Pods on the manager, every half second, until the end: there must never be one.
M_PODS="$E2E_TMP/m-pods"
(while :; do on m get pods -A --no-headers 2>/dev/null | wc -l >>"$M_PODS"; sleep 0.5; done) &
M_PODS_PID=$!
e2e_on_exit 'kill $M_PODS_PID 2>/dev/null || true'
_m_sampled() { [[ -s "$M_PODS" ]]; }
eventually 30 "the first sample of the manager's pods, before anything is created" _m_sampled

mq "k-$U" a=8 b=8 to=b
# The webhook refuses an object of a Queue it has not seen yet (created a moment ago): the client tries again.
make_rc() { raycluster rc queue="k-$U" workers=2 | on m apply -n "$NS" -f - >/dev/null; }
make_job() {
	sed -e "s/name: rayjob-sample/name: job/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: k-$U/" \
		"$ROOT/samples/rayjob-sample.yaml" | on m apply -n "$NS" -f - >/dev/null
}
eventually 20 "RayCluster rc created on the manager" make_rc
eventually 20 "RayJob job created on the manager" make_job
m_get() { on m get "$1" -n "$NS" "$2" -o json 2>/dev/null | jq -r "$3"; }
for o in rayclusters.ray.io/rc rayjob/job; do
	[[ "$(m_get "${o%/*}" "${o#*/}" '"\(.spec.suspend) \(.metadata.annotations["raygate.io/dispatch-suspended"])"')" == "true true" ]] ||
		fail "$o on the manager is not suspended by the webhook"
done
pass "the webhook suspended rc and job on the manager (spec.suspend, raygate.io/dispatch-suspended)"

# A RayJob KubeRay would refuse to suspend is refused at once, with the reason.
if out="$(sed -e "s/name: rayjob-sample/name: job-keep/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: k-$U/" \
	-e "s/shutdownAfterJobFinishes: true/shutdownAfterJobFinishes: false/" "$ROOT/samples/rayjob-sample.yaml" |
	on m apply -n "$NS" -f - 2>&1)"; then
	fail "a RayJob with shutdownAfterJobFinishes false was admitted on the manager"
fi
[[ "$out" == *shutdownAfterJobFinishes* ]] || fail "its denial does not say why: $out"
pass "a RayJob with shutdownAfterJobFinishes false is denied, naming the field"

uid="$(m_uid rayclusters.ray.io rc)"
eventually 60 "rc is dispatched to b" is dispatched_to rayclusters.ray.io rc b
eventually 30 "b has rc's copy" has_copy b rayclusters.ray.io rc "$uid"
[[ "$(on b get rayclusters.ray.io -n "$NS" rc -o jsonpath='{.spec.suspend}')" != true ]] || fail "b's copy of rc is suspended"
eventually 90 "rc's 3 pods all bound on b" w_all_bound b rc 3
eventually 60 "job is dispatched to b" is dispatched_to rayjob job b
job_cluster() { on b get rayclusters.ray.io -n "$NS" -l ray.io/originated-from-cr-name=job -o jsonpath='{.items[0].metadata.name}'; }
has_job_cluster() { [[ -n "$(job_cluster 2>/dev/null)" ]]; }
eventually 60 "b's KubeRay made job's RayCluster" has_job_cluster
rc_job="$(job_cluster)"

# KubeRay acts on the manager (so no pods there is its doing, not its absence), and the mirror is beside it.
rc_view() { m_get rayclusters.ray.io rc '"\(.status.state) \(.metadata.annotations["raygate.io/dispatch-worker-state"])"'; }
job_view() { m_get rayjob job '"\(.status.jobDeploymentStatus) \(.metadata.annotations["raygate.io/dispatch-worker-state"])"'; }
job_running() { [[ "$(job_view)" =~ ^Suspended\ (Initializing|Running)$ ]]; }
eventually 60 "the manager's job: KubeRay's Suspended, and b's Initializing or Running" job_running
say "    manager's job: $(job_view)"

# Ray's success, as KubeRay records it on b. kwok runs no Ray (b's KubeRay fails the job after about 30 s): played at once.
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
on b patch rayjob -n "$NS" job --subresource status --type merge \
	-p "{\"status\":{\"jobStatus\":\"SUCCEEDED\",\"jobDeploymentStatus\":\"Complete\",\"endTime\":\"$now\"}}" >/dev/null ||
	fail "cannot set the status of b's job"
eventually 90 "job's cluster: 3 pods all bound on b" w_all_bound b "$rc_job" 3
m_status() { m_get rayjob job '"\(.status.jobStatus) \(.status.jobDeploymentStatus) \(.metadata.annotations["raygate.io/dispatch-worker-state"])"'; }
eventually 60 "the manager's job is SUCCEEDED and Complete" is m_status "SUCCEEDED Complete Complete"
eventually 60 "the manager's rc: KubeRay's state suspended, b's ready" is rc_view "suspended ready"
steady() { [[ "$(rc_view)" == "suspended ready" && "$(m_status)" == "SUCCEEDED Complete Complete" ]]; }
stays 12 "both hold still through lease renewals (every 5 s) and the manager's KubeRay" steady

# Deleting on the manager deletes the copies.
on m delete rayclusters.ray.io -n "$NS" rc --wait=false >/dev/null || fail "cannot delete rc on the manager"
on m delete rayjob -n "$NS" job --wait=false >/dev/null || fail "cannot delete job on the manager"
eventually 60 "rc's copy is gone from b" no_copy b rayclusters.ray.io rc
eventually 60 "job's copy is gone from b" no_copy b rayjob job
eventually 60 "rc and job are gone from the manager" eval 'no_copy m rayclusters.ray.io rc && no_copy m rayjob job'

kill "$M_PODS_PID" 2>/dev/null || true
samples="$(wc -l <"$M_PODS")"
# (At least 10: the test lasts about 30 s on a quiet machine, and kubectl is slow on a busy one.)
((samples >= 10)) || fail "only $samples samples of the manager's pods"
[[ "$(sort -n "$M_PODS" | tail -1)" == 0 ]] || fail "the manager had pods at some sample: $(sort -n "$M_PODS" | uniq -c | tr '\n' ' ')"
pass "no pod on the manager at any of $samples samples"
