#!/usr/bin/env bash
# One nomination, from a real fit. A gang that fits only worker b
# (a's Queue is too small for it) goes to b and never to a; two gangs that fit
# one worker each (each worker's Queue holds one of them) land one on each.
# The sampler watches both workers throughout: no gang is ever bound in both.
# Then deleting a manager's object deletes the worker's copy (the
# dispatcher's finalizer): the copy and its pods go there, then the manager's
# object goes.
. "$(dirname "$0")/multi.sh"
multi_setup
samp_start
U="$(e2e_uid)"

# 1. Fits only b: 6 CPUs (a head and two workers of 2), a's Queue holds 4.
mq "only-$U" a=4 b=16
m_raycluster big "only-$U" cpu=2 memory=1Gi group="w:2:2:2:cpu: \"2\", memory: 1Gi"
big_uid="$(m_uid rayclusters.ray.io big)"
eventually 60 "big is dispatched to b" is dispatched_to rayclusters.ray.io big b
eventually 30 "b has big's copy (origin uid $big_uid)" has_copy b rayclusters.ray.io big "$big_uid"
eventually 90 "big's 3 pods all bound on b" w_all_bound b big 3
stays 10 "a never has a copy of big" no_copy a rayclusters.ray.io big
assert_eq "the workers big was ever bound in" b "$(samp_ever "$big_uid")"

# 2. Two gangs of 3 CPUs, each worker's Queue holds one: one each.
mq "one-$U" a=3 b=3
m_raycluster g1 "one-$U" workers=2
m_raycluster g2 "one-$U" workers=2
g1_uid="$(m_uid rayclusters.ray.io g1)" g2_uid="$(m_uid rayclusters.ray.io g2)"
one_each() {
	local t1 t2
	t1="$(dispatched_to rayclusters.ray.io g1)" t2="$(dispatched_to rayclusters.ray.io g2)"
	[[ "$t1,$t2" == "a,b" || "$t1,$t2" == "b,a" ]] && w_all_bound "$t1" g1 3 && w_all_bound "$t2" g2 3
}
# In one pass the second is not weighed on the worker the first went to; in a
# later pass the first's copy there counts at its full demand even before
# KubeRay has made its pods (dispatchsim). So neither is withdrawn: the second
# goes straight to the other worker, not after --dispatch-timeout (30 s).
eventually 120 "g1 and g2 dispatched one to each worker, each bound whole there" one_each
withdrawn() { on m get events -n "$NS" --field-selector "involvedObject.name=$1,reason=DispatchWithdrawn" -o name | wc -l; }
assert_eq "DispatchWithdrawn Events of g1 and g2 (the second nominated where the first was about to fit)" "0 0" \
	"$(withdrawn g1) $(withdrawn g2)"
t1="$(dispatched_to rayclusters.ray.io g1)" t2="$(dispatched_to rayclusters.ray.io g2)"
other() { [[ "$1" == a ]] && echo b || echo a; }
eventually 60 "no copy of g1 left on $(other "$t1")" no_copy "$(other "$t1")" rayclusters.ray.io g1
eventually 60 "no copy of g2 left on $(other "$t2")" no_copy "$(other "$t2")" rayclusters.ray.io g2
stays 5 "g1 and g2 stay one on each worker" one_each
samp_stop "no gang bound in two clusters at once"

# 3. Deleting on the manager.
fin() { on m get rayclusters.ray.io -n "$NS" big -o json | jq -e '.metadata.finalizers // [] | index("raygate.io/dispatch")'; }
fin >/dev/null || fail "the manager's big lacks the dispatcher's finalizer raygate.io/dispatch"
pass "the manager's big carries the dispatcher's finalizer"
on m delete rayclusters.ray.io -n "$NS" big --wait=false >/dev/null
eventually 60 "big's copy is gone from b" no_copy b rayclusters.ray.io big
no_pods() { [[ "$(on b get pods -n "$NS" -l ray.io/cluster=big -o name | wc -l)" == 0 ]]; }
eventually 60 "big's pods are gone from b" no_pods
eventually 30 "big is gone from the manager" no_copy m rayclusters.ray.io big
