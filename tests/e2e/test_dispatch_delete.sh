#!/usr/bin/env bash
# Issue 25: deleting the manager's object deletes the worker's copy (the
# dispatcher's finalizer): the copy and its pods go on the worker, then the
# manager's object goes.
. "$(dirname "$0")/multi.sh"
multi_setup
U="$(e2e_uid)"
mq "del-$U" a=8 b=8 to=b
m_raycluster doomed "del-$U" workers=2
uid="$(m_uid rayclusters.ray.io doomed)"
eventually 60 "doomed is dispatched to b" is dispatched_to rayclusters.ray.io doomed b
fin() { on m get rayclusters.ray.io -n "$NS" doomed -o json | jq -e '.metadata.finalizers // [] | index("raygate.io/dispatch")'; }
eventually 10 "the manager's doomed carries the dispatcher's finalizer" fin
eventually 30 "b has doomed's copy" has_copy b rayclusters.ray.io doomed "$uid"
eventually 90 "doomed's 3 pods all bound on b" w_all_bound b doomed 3
on m delete rayclusters.ray.io -n "$NS" doomed --wait=false >/dev/null
eventually 60 "doomed's copy is gone from b" no_copy b rayclusters.ray.io doomed
no_pods() { [[ "$(on b get pods -n "$NS" -l ray.io/cluster=doomed -o name | wc -l)" == 0 ]]; }
eventually 60 "doomed's pods are gone from b" no_pods
eventually 30 "doomed is gone from the manager" no_copy m rayclusters.ray.io doomed
