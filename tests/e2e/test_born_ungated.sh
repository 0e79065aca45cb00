#!/usr/bin/env bash
# Pods born ungated: with the webhook's --hold-gangs, a queued
# RayCluster is created suspended (raygate.io/held-suspended), the gate admits
# its gang from its declaration, and its admission record clears spec.suspend:
# KubeRay then makes the pods, which the webhook (its RayCluster watch) creates
# without the gate, so the gate PATCHes none of them. A second RayCluster that
# does not fit stays suspended with no pod at all, and says why; it is
# admitted whole when the first is deleted, and KubeRay is told it is resumed
# (raygate.io/held-resumed), as it waited suspended. Evicted (its pods not Ready past
# --pods-ready-timeout), a held gang is suspended again by its eviction record:
# KubeRay deletes its pods and makes none until the gate admits it again, when
# they are born ungated again. A second head of an admitted held RayCluster,
# born ungated, is deleted by the gate. The invariant checker runs throughout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/evict.sh"
evict_setup born 15
hold_gangs

# patched_by_gate CLUSTER: how many of its pods had their spec changed since creation (metadata.generation over 1:
# a gate removed), where a pod born ungated stays at 1
patched_by_gate() {
	kc get pods -n "$NS" -l "ray.io/cluster=$1" -o json | jq '[.items[] | select((.metadata.generation // 1) > 1)] | length'
}
suspended() { [[ "$(kc get rayclusters.ray.io -n "$NS" "$1" -o jsonpath='{.spec.suspend}')" == "$2" ]]; }

sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" first "$Q" | kc apply -n "$NS" -f - >/dev/null
assert_eq "first is held" true "$(rc_annotation first raygate.io/held-suspended)"
all_or_none_watch first 3 60 || fail "first was not admitted"
admitted first || fail "first's pods exist but it has no raygate.io/admitted-at"
suspended first false || fail "first admitted but still suspended"
pass "first admitted from its declaration; its record cleared spec.suspend"
eventually 60 "first's 3 pods Running" pods_are first 3 Running
assert_eq "first's pods the gate PATCHed (born ungated)" 0 "$(patched_by_gate first)"

# A second head of the admitted first (KubeRay can make one from a stale view; here made by hand from the head's own
# JSON: pod_copy): the webhook sees a member of an admitted RayCluster and creates it ungated; the
# admission counted one head, so the gate deletes the later one and keeps first's own.
head="$(head_pod first)"
pod_copy "$head" "$head-extra" |
	kc create -f - -o jsonpath='{.spec.schedulingGates[*].name}' >"$E2E_TMP/extra-gates"
assert_eq "the second head $head-extra born ungated (a member of an admitted RayCluster)" "" "$(cat "$E2E_TMP/extra-gates")"
extra_gone() { ! kc get pod -n "$NS" "$head-extra" -o name >/dev/null 2>&1 ||
	[[ -n "$(kc get pod -n "$NS" "$head-extra" -o jsonpath='{.metadata.deletionTimestamp}')" ]]; }
eventually 30 "the gate deleted the second head" extra_gone
assert_eq "first keeps its own head" "$head" "$(head_pod first)"
eventually 30 "first back to its 3 pods" is count_pods first 3

# 6 CPUs: does not fit next to first (3 of 8), so it stays suspended: no pod at all, and says why.
raycluster second queue="$Q" workers=5 | kc apply -n "$NS" -f - >/dev/null
eventually 20 "second waits, saying so" pg_says ray-second-pg "does not fit queue $Q"
stays 5 "second suspended, not one pod made" is count_pods second 0
suspended second true || fail "second is not suspended"
kc delete rayclusters.ray.io -n "$NS" first >/dev/null
eventually 60 "second admitted once first is gone" admitted second
# second waited: KubeRay had marked it suspended, and takes its resume in two rounds, the second after a 2 s
# requeue; the gate tells it at once (heldresume.h) with the held generation, once.
resumed_told() { [[ -n "$(rc_annotation second raygate.io/held-generation)" &&
	"$(rc_annotation second raygate.io/held-resumed)" == "$(rc_annotation second raygate.io/held-generation)" ]]; }
eventually 30 "KubeRay told second is resumed (raygate.io/held-resumed)" resumed_told
eventually 60 "second's 6 pods Running" pods_are second 6 Running
assert_eq "second's pods the gate PATCHed" 0 "$(patched_by_gate second)"

# Evicted whole: suspended again by its eviction record, no pod made while it waits out its backoff.
gate_with --placement-timeout 5m --pods-ready-timeout 15s --requeue-backoff-base 20s --requeue-backoff-max 20s
for p in $(kc get pods -n "$NS" -l ray.io/cluster=second -o name); do
	kc patch -n "$NS" "$p" --subresource status --type strategic \
		-p '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady"}]}}' >/dev/null
done
eventually 60 "second evicted by the readiness timeout" evicted_not_admitted second 1
suspended second true || fail "second evicted but not suspended again"
eventually 60 "KubeRay deleted second's pods" is count_pods second 0
pass "second's eviction record suspended it: its pods went, none made"
eventually 90 "second admitted again after its backoff" admitted second
eventually 60 "second's 6 pods Running again" pods_are second 6 Running
assert_eq "second's new pods the gate PATCHed" 0 "$(patched_by_gate second)"
inv_stop
