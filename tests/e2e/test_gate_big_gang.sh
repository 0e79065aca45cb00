#!/usr/bin/env bash
# A gang too big to release at once (80 pods) has its gates removed
# head first, then in batches paced by the binds (gate/apply/ungate.c, ungatepace.h).
# It ends fully ungated and bound, never partly ungated past the invariant
# checker's grace, and the gate log shows one ADMIT releasing all 80.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="big-$(e2e_uid)"
N=80
from="$(gate_log_from)"
raycluster big queue="$Q" cpu=100m memory=128Mi "group=w:$((N - 1)):$((N - 1)):$((N - 1)):cpu: 10m, memory: 16Mi" |
	kc apply -n "$NS" -f - >/dev/null
inv_start --grace 5
eventually 120 "KubeRay created big's $N pods, all gated" all_gated big "$N"
make_queue "$Q" 100 100Gi
E2E_HALF_MS=5000 all_or_none_watch big "$N" 90 || fail "big not fully ungated"
pass "all $N gates removed, never partly ungated over 5 s"
eventually 90 "all $N pods bound" is bound_count big "$N"
log="$(tail -n "+$from" "$STATE/logs/raygate-gate.log")"
grep -F "admit $NS/ray-big-pg" <<<"$log" | grep -F "gates removed from $N of $N pods" >/dev/null ||
	fail "no admission releasing all $N gates in the gate log: $(grep -F "$NS/" <<<"$log" | tail -3)"
batches="$(sed -n "s/.*ungate: $N gates paced in \([0-9]*\) batches.*/\1/p" <<<"$log" | tail -1)"
[[ -n "$batches" ]] && ((batches > 2)) || fail "the $N gates were not paced (batches: ${batches:-none})"
pass "one admission released all $N gates, paced in $batches batches (head first, then by the binds)"
inv_assert "the big gang's admission"
inv_stop
