#!/usr/bin/env bash
# A Ray cluster whose queue does not exist yet waits
# with "does not exist", and is admitted as soon as the queue is created.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
Q="later-$(e2e_uid)"
sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" early "$Q" | kc apply -n "$NS" -f - >/dev/null
three() { [[ "$(count_pods early)" == 3 ]]; }
eventually 60 "KubeRay created early's 3 pods" three
head="$(head_pod early)"
eventually 10 "describe pod shows the missing queue" describe_has "$head" "queue $Q does not exist"
assert_eq "pods still gated" 3 "$(gated_count early)"
make_queue "$Q" 4 6Gi
all_or_none_watch early 3 30 || fail "not admitted after the queue was created"
pass "admitted once the queue exists"
eventually 60 "early's pods Running" pods_are early 3 Running
