#!/usr/bin/env bash
# Issue 25: no worker fits. The gang waits on the manager, undispatched, with
# the reasons of each worker (annotation raygate.io/dispatch-reasons, JSON
# {"worker": "message"}), and is dispatched as soon as a worker has room (b's
# Queue grows).
. "$(dirname "$0")/multi.sh"
multi_setup
samp_start
U="$(e2e_uid)"
mq "wait-$U" a=2 b=2
m_raycluster big "wait-$U" workers=2 # 3 CPUs: neither Queue holds them
reasons() { m_annotation rayclusters.ray.io big raygate.io/dispatch-reasons; }
per_worker() { reasons | jq -e 'type == "object" and (.a | type == "string" and length > 0) and (.b | type == "string" and length > 0)'; }
eventually 60 "big waits on the manager with a reason for a and one for b" per_worker
say "    reasons: $(reasons)"
reasons | jq -e '[.a, .b] | all(test("cpu"))' >/dev/null || fail "the reasons do not name cpu: $(reasons)"
pass "both reasons name the resource that is short (cpu)"
undispatched() { [[ -z "$(dispatched_to rayclusters.ray.io big)" ]] && no_copy a rayclusters.ray.io big && no_copy b rayclusters.ray.io big; }
stays 10 "big is not dispatched while no worker fits" undispatched

mq_cap b "wait-$U" 4
big_uid="$(m_uid rayclusters.ray.io big)"
eventually 60 "big is dispatched to b once b's Queue has room" is dispatched_to rayclusters.ray.io big b
eventually 30 "b has big's copy" has_copy b rayclusters.ray.io big "$big_uid"
eventually 90 "big's 3 pods all bound on b" w_all_bound b big 3
no_copy a rayclusters.ray.io big || fail "a has a copy of big"
pass "a has no copy of big"
samp_stop
