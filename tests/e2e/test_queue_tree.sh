#!/usr/bin/env bash
# The queue tree, on the gate's side. root -> eng (capability cpu
# 16) -> {train (deserved cpu 8), infer (deserved cpu 8)}, and research
# (capability cpu 8), on the 4 kwok nodes of cpu 8 (room for all 24). Gangs
# of cpu 4 (a head and a worker of cpu 2; research's: head only).
# - research cannot exceed 8 even with eng idle: 2 of its 3 gangs run.
# - train borrows infer's idle room: 4 gangs (16 > its deserved 8) run, a
#   fifth waits at eng's capability (the message names eng).
# - infer's new gang reclaims it whole: one train gang (the newest) evicted
#   whole, infer's admitted, the other three keep running.
# - guarantee: infer gets spec.guarantee.resource cpu 4 (eng first guarantees
#   as much, within a deserved of its own, as Volcano's webhook requires), then
#   goes idle: the 4 it frees stay reserved; train's waiting gangs wait (the
#   message names the guarantee), and infer's next gang is admitted at once.
# - research gains a child while it holds two running gangs: the webhook
#   refuses it; one stored with the webhook down leaves them
#   running, and its waiting gang waits with the non-leaf reason.
# The invariant checker runs throughout (every level's capability, no
# guarantee lent, no gang partly admitted or evicted).
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
U="$(e2e_uid)"
ENG="eng-$U" TRAIN="train-$U" INFER="infer-$U" RESEARCH="research-$U" SUB="research-sub-$U"
tree_queue "$ENG" cpu=16
tree_queue "$TRAIN" parent="$ENG" deserved=8
tree_queue "$INFER" parent="$ENG" deserved=8
tree_queue "$RESEARCH" cpu=8
inv_start
lap=$SECONDS
timing() { say "    ($1: $((SECONDS - lap))s)"; lap=$SECONDS; }

gang() { # NAME QUEUE: a head and a worker of cpu 2 each
	raycluster "$1" queue="$2" cpu=2 'group=worker:1:1:1:cpu: "2", memory: 1Gi' | kc apply -n "$NS" -f - >/dev/null
}
admit() { # NAME PODS
	all_or_none_watch "$1" "$2" 120 || fail "$1 was not admitted"
	pass "$1 admitted whole"
}
waits() { # NAME PODS: complete and all gated (fails at once when admitted)
	_settled() { all_gated "$1" "$2" || admitted "$1"; }
	eventually 60 "$1's $2 pods created, and gated or admitted" _settled "$1" "$2"
	! admitted "$1" || fail "$1 was admitted: it should wait"
	all_gated "$1" "$2" || fail "$1: not all of its $2 pods gated"
	pass "$1 waits"
}
says() { # NAME TEXT...: its wait message says every TEXT
	local c="$1"
	shift
	wait_until 30 "$c's wait message says: $*" waits_saying "$c" "$@" || { wait_texts "$c"; fail "$c's wait message does not say: $*"; }
	pass "$c waits saying: $*"
}

# research: capability 8 with eng idle.
for r in r1 r2 r3; do raycluster "$r" queue="$RESEARCH" cpu=4 | kc apply -n "$NS" -f - >/dev/null; done
admit r1 1
admit r2 1
waits r3 1
says r3 "$RESEARCH" "cpu"
timing "research capped at 8"

# train borrows infer's idle room, up to eng's 16.
for t in t1 t2 t3 t4; do
	gang "$t" "$TRAIN"
	admit "$t" 2
	sleep 1 # admission times a second apart: the newest is unambiguous
done
gang t5 "$TRAIN"
waits t5 2
says t5 "$ENG" "cpu 16 of 16"
timing "train borrows to 16"

# infer reclaims its deserved: one train gang, the newest, whole.
gang i1 "$INFER"
admit i1 2
assert_eq "t4 (the newest) reclaimed by i1" "$NS/i1" "$(rc_annotation t4 raygate.io/preempted-by)"
assert_eq "t4's eviction reason" Reclaimed "$(rc_annotation t4 raygate.io/evicted-reason)"
for t in t1 t2 t3; do admitted "$t" || fail "$t lost its admission: more than one train gang was taken"; done
pass "i1 reclaimed one train gang whole; t1..t3 keep running"
waits t4 2
timing "infer reclaims"

# Guarantee: infer's cpu 4 (within its deserved 8), reserved while infer is idle. Its parent eng
# guarantees as much first (the children's sum; within eng's deserved, here its capability 16).
kc patch queue "$ENG" --type merge -p '{"spec":{"deserved":{"cpu":"16"},"guarantee":{"resource":{"cpu":"4"}}}}' >/dev/null
infer_guaranteed() { kc patch queue "$INFER" --type merge -p '{"spec":{"guarantee":{"resource":{"cpu":"4"}}}}' >/dev/null; }
eventually 20 "$INFER guaranteed cpu 4 (once the webhook has seen $ENG's guarantee)" infer_guaranteed
kc delete rayclusters.ray.io -n "$NS" i1 --wait=false >/dev/null
eventually 60 "i1's pods are gone" has_pods i1 0
t_waits() { ! admitted t4 && ! admitted t5 && [[ "$(gated_count t4) $(gated_count t5)" == "2 2" ]]; }
stays 10 "train's t4 and t5 wait: eng's free cpu 4 is infer's guarantee" t_waits
says t5 "guarantee" "$INFER"
gang i2 "$INFER"
admit i2 2
timing "guarantee"

# research gains a child while it holds two running gangs: refused, as Volcano; one
# stored anyway (made while the webhook was down) is the gate's to handle.
sub_refused() {
	! tree_queue "$SUB" parent="$RESEARCH" 2>"$E2E_TMP/sub" &&
		grep -qF "queue $RESEARCH cannot be the parent queue of queue $SUB because it has allocated Pods" "$E2E_TMP/sub"
}
eventually 30 "a child of $RESEARCH (it holds r1 and r2) is refused by the webhook" sub_refused
say "    $(cat "$E2E_TMP/sub")"
queue_unchecked tree_queue "$SUB" parent="$RESEARCH"
r_run() { admitted r1 && admitted r2 && pods_are r1 1 Running && pods_are r2 1 Running && all_gated r3 1; }
says r3 "$RESEARCH" "$SUB"
stays 5 "r1 and r2 keep running, r3 waits" r_run
timing "non-leaf"
inv_stop
pass "queue tree: $SECONDS s in all"
