#!/usr/bin/env bash
# "recovery": an admitted gang runs, bound whole; then it loses a
# worker, and its replacement (KubeRay's, ungated at once: the gang is
# admitted) cannot be placed (every node cordoned meanwhile). The placement
# timeout counts from the replacement's creation: the gang is evicted whole
# after it, not before, and its running pods go too.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
. "$(dirname "$0")/evict.sh"
evict_setup evict-recovery 15
uncordon_all() { for n in $(kc get nodes -o name); do kc uncordon "${n#node/}" >/dev/null 2>&1 || true; done; }
gate_with --placement-timeout 20s --requeue-backoff-base 10m
e2e_on_exit uncordon_all
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" rec "$Q" | kc apply -n "$NS" -f - >/dev/null
eventually 90 "rec bound whole and Running" pods_are rec 3 Running
stays 25 "placed and running: not evicted past the timeout" admitted rec

for n in $(kc get nodes -o name); do kc cordon "${n#node/}" >/dev/null; done
victim="$(kc get pods -n "$NS" -l ray.io/cluster=rec,ray.io/node-type=worker -o jsonpath='{.items[0].metadata.name}')"
kc delete pod -n "$NS" "$victim" --wait=false >/dev/null
replaced() { kc get pods -n "$NS" -l ray.io/cluster=rec,ray.io/node-type=worker -o json | jq -e --arg v "$victim" '[.items[] | select(.metadata.name != $v and .spec.nodeName == null)] | length == 1' >/dev/null; }
eventually 30 "KubeRay replaced $victim; the replacement is not bound (nodes cordoned)" replaced
t0=$SECONDS
stays 12 "the replacement has its own timeout: not evicted at once" admitted rec
eventually 40 "evicted after the replacement's placement timeout" evicted_not_admitted rec 1
say "evicted $((SECONDS - t0))s after the replacement was seen (placement timeout 20s)"
eventually 10 "the GangEvicted Event names the replacement" \
	evicted_event_says rec "1 of 3 members not bound to a node within the placement timeout (20s)"
eventually 30 "whole: its running pods gone too, none bound" none_bound_all_gated rec 3
inv_stop
