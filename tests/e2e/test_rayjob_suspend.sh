#!/usr/bin/env bash
# A suspended RayJob holds no share; once resumed it queues like any
# other, and its PodGroup (ray-<rayjob>-pg, owned by the RayJob) is the same
# object across the RayClusters KubeRay makes for it. With the real KubeRay
# RayJob controller: suspending deletes the job's RayCluster and submitter Job,
# resuming creates a new RayCluster (another name).
# A queue with room for one job (cpu 5; a job is cpu 3500m with its submitter):
# job-s admitted; suspended, its share is free and job-t is admitted; resumed,
# job-s waits whole behind job-t; job-t deleted, job-s is admitted again.
. "$(dirname "$0")/lib.sh"
e2e_setup
Q="rjs-$(e2e_uid)"
make_queue "$Q" 5 8Gi
inv_start

no_cluster() { [[ -z "$(cluster_of "$1")" && "$(kc get pods -n "$NS" -l "ray.io/originated-from-cr-name=$1" -o name | grep -c .)" == 0 ]]; }
waits_whole() { [[ "$(bound_count "$1")" == 0 ]] && gone job "$2"; }
pg_uid() { kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$1-pg" -o jsonpath='{.metadata.uid}'; }
suspend() { kc patch rayjob -n "$NS" "$1" --type merge -p "{\"spec\":{\"suspend\":$2}}" >/dev/null; }
deployment_status() { kc get rayjob -n "$NS" "$1" -o jsonpath='{.status.jobDeploymentStatus}'; }

ONE='{"cpu":"3500m","memory":"4296Mi"}'
sample_job job-s "$Q"
eventually 30 "KubeRay created job-s's RayCluster" has_cluster job-s
C1="$(cluster_of job-s)"
all_or_none_watch "$C1" 3 90 || fail "$C1 was not admitted whole"
pass "job-s's first cluster $C1 admitted whole"
eventually 60 "job-s's submitter bound" submitter_bound job-s
eventually 20 "queue $Q holds job-s's share" is allocated "$Q" "$ONE"
eventually 20 "ray-job-s-pg exists" kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-s-pg
pg1="$(pg_uid job-s)"

# --- Suspended: KubeRay deletes its cluster and submitter; the share is free.
eventually 60 "job-s Running (KubeRay suspends only a Running or Initializing RayJob)" is deployment_status job-s Running
suspend job-s true
eventually 90 "job-s suspended: its RayCluster and pods gone" no_cluster job-s
eventually 30 "job-s's submitter Job gone" gone job job-s
eventually 30 "a suspended RayJob holds no share: queue $Q's allocated is empty" is allocated "$Q" '{}'
eventually 30 "job-s is Suspended" is deployment_status job-s Suspended
assert_eq "ray-job-s-pg kept while job-s is suspended (same uid)" "$pg1" "$(pg_uid job-s)"

# --- Its room goes to job-t.
sample_job job-t "$Q"
eventually 30 "KubeRay created job-t's RayCluster" has_cluster job-t
CT="$(cluster_of job-t)"
all_or_none_watch "$CT" 3 90 || fail "job-t's cluster $CT was not admitted while job-s is suspended"
pass "job-t admitted in job-s's room"
eventually 20 "queue $Q holds job-t's share" is allocated "$Q" "$ONE"

# --- Resumed: job-s queues like any other, behind job-t, whole.
suspend job-s false
eventually 60 "job-s resumed: KubeRay made it a new RayCluster" has_cluster job-s
C2="$(cluster_of job-s)"
[[ "$C2" != "$C1" ]] || fail "job-s's cluster after resume has the old name $C1"
pass "job-s's new cluster $C2 (was $C1)"
eventually 30 "$C2's 3 pods created, all gated" is gated_count "$C2" 3
eventually 30 "ray-job-s-pg says job-s waits for queue $Q" pg_says ray-job-s-pg "gang ray-job-s-pg (3 pods; cpu 3500m, memory 4296Mi) does not fit queue $Q"
stays 8 "job-s waits whole after resume: none of its pods bound, no submitter" waits_whole "$C2" job-s
assert_eq "ray-job-s-pg is the same object across job-s's clusters" "$pg1" "$(pg_uid job-s)"
kc get podgroups.scheduling.volcano.sh -n "$NS" "ray-$C1-pg" "ray-$C2-pg" >/dev/null 2>&1 && fail "a PodGroup is named after one of job-s's RayClusters"
pass "no PodGroup named after $C1 or $C2"

# --- job-t deleted: job-s is admitted again.
job_follows job-s "$C2" job-t
eventually 30 "queue $Q holds job-s's share again" is allocated "$Q" "$ONE"
eventually 30 "ray-job-s-pg Running again" is kc get podgroups.scheduling.volcano.sh -n "$NS" ray-job-s-pg -o 'jsonpath={.status.phase}' Running
inv_stop
