#!/usr/bin/env bash
# Fifo vs traverse. Two queues of cpu 4, each with an admitted
# filler (cpu 3), then a big gang (cpu 3, does not fit) and, created later, a
# small one (cpu 1, fits). Under fifo the big head gang blocks the small one
# behind it; under traverse (the default) it does not. Once the fifo queue's
# filler goes, big and then small are admitted there.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
QF="fifo-$(e2e_uid)"
QT="trav-$(e2e_uid)"
make_queue "$QF" 4 16Gi fifo
make_queue "$QT" 4 16Gi
assert_eq "queue $QF's dequeueStrategy" fifo "$(kc get queue "$QF" -o jsonpath='{.spec.dequeueStrategy}')"
inv_start

for s in f t; do
	q="$QF"; [[ $s == t ]] && q="$QT"
	sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "$s-filler" "$q" | kc apply -n "$NS" -f - >/dev/null
done
all_or_none_watch f-filler 3 60 || fail "f-filler was not admitted"
all_or_none_watch t-filler 3 60 || fail "t-filler was not admitted"
pass "both fillers admitted (cpu 1 left in each queue)"

for s in f t; do
	q="$QF"; [[ $s == t ]] && q="$QT"
	sample_cluster "$ROOT/samples/raycluster-test-cluster-0.yaml" "$s-big" "$q" | kc apply -n "$NS" -f - >/dev/null
done
bigs() { [[ "$(count_pods f-big)" == 3 && "$(count_pods t-big)" == 3 ]]; }
eventually 60 "KubeRay created both big gangs' pods" bigs
eventually 10 "f-big waits on the queue" describe_has "$(head_pod f-big)" "does not fit queue $QF: cpu needs 3, 1 of 4 free"
eventually 10 "t-big waits on the queue" describe_has "$(head_pod t-big)" "does not fit queue $QT: cpu needs 3, 1 of 4 free"
created_before_now rayclusters.ray.io f-big t-big # the small ones come strictly after
head_only_cluster f-small "$QF"
head_only_cluster t-small "$QT"
smalls() { [[ "$(count_pods f-small)" == 1 && "$(count_pods t-small)" == 1 ]]; }
eventually 60 "KubeRay created both small gangs' pods" smalls

# traverse: the small gang goes past the big one.
all_or_none_watch t-small 1 30 || fail "t-small was not admitted under traverse"
pass "traverse: t-small (cpu 1) admitted past t-big"
eventually 60 "t-small Running" pods_are t-small 1 Running
# fifo: it waits behind the big one, and says so.
eventually 10 "fifo: f-small says it waits behind f-big" \
	describe_has "$(head_pod f-small)" "queue $QF is fifo: waiting behind gang ray-f-big-pg"
f_blocked() { [[ "$(gated_count f-small)" == 1 && "$(gated_count f-big)" == 3 && "$(gated_count t-big)" == 3 ]]; }
stays 5 "fifo: f-small stays gated behind f-big (1 cpu free notwithstanding); t-big still waits" f_blocked
assert_eq "f-small not admitted" "" "$(rc_annotation f-small raygate.io/admitted-at)"

# Room in the fifo queue: the head gang goes first, then the one behind it.
kc delete rayclusters.ray.io -n "$NS" f-filler >/dev/null
all_or_none_watch f-big 3 60 || fail "f-big was not admitted after f-filler was deleted"
all_or_none_watch f-small 1 30 || fail "f-small was not admitted after f-big"
pass "fifo: f-big, then f-small admitted (cpu 3 + 1 = 4)"
big_at="$(rc_annotation f-big raygate.io/admitted-at)"
small_at="$(rc_annotation f-small raygate.io/admitted-at)"
[[ ! "$small_at" < "$big_at" ]] || fail "f-small ($small_at) admitted before f-big ($big_at)"
pass "f-small admitted no earlier than f-big ($big_at, $small_at)"
eventually 60 "f-big's pods Running" pods_are f-big 3 Running
assert_eq "t-big still gated (its queue is still full)" 3 "$(gated_count t-big)"
inv_stop
