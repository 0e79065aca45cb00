#!/usr/bin/env bash
# No flapping (Kueue's preemptions flapped 33+ times, kueue #7101).
# Two leaves fa and fb, each deserving cpu 4, under a parent of capability
# cpu 8; gangs of one head of cpu 2. fa first fills the parent (it borrows
# fb's idle 4); then fb and fa alternately submit two gangs each, for
# RAYGATE_FLAP_ROUNDS rounds (default 4). fb reclaims its deserved once: the
# evictions (the gate's raygate_preemptions_total of both queues; as many
# RayClusters carry raygate.io/preempted-by) are at most the 2 gangs fa borrowed,
# both queues end at their deserved, and once they settle nothing more is
# evicted for RAYGATE_FLAP_WINDOW seconds (default 30; a fresh gang of either
# queue, not in its requeue backoff, waits all that time). Prints the count.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
ROUNDS="${RAYGATE_FLAP_ROUNDS:-4}"
WINDOW="${RAYGATE_FLAP_WINDOW:-30}"
U="$(e2e_uid)"
P="flap-$U" FA="flap-a-$U" FB="flap-b-$U"
tree_queue "$P" cpu=8
tree_queue "$FA" parent="$P" deserved=4
tree_queue "$FB" parent="$P" deserved=4
inv_start --grace 15
lap=$SECONDS

submit() { # QUEUE NAME...: head-only gangs of cpu 2, in one apply
	local q="$1" c yaml=""
	shift
	for c; do yaml+="---"$'\n'"$(raycluster "$c" queue="$q" cpu=2 memory=256Mi)"$'\n'; done
	kc apply -n "$NS" -f - >/dev/null <<<"$yaml"
}
decided() { # NAME...: each admitted, or its pod created and gated
	local c
	for c; do admitted "$c" && [[ "$(gated_count "$c")" == 0 ]] || all_gated "$c" 1 || return 1; done
}
evictions() { # the gate's count over both queues, both kinds
	curl -sf "http://127.0.0.1:$GATE_METRICS_PORT/metrics" |
		awk -v a="raygate_preemptions_total{queue=\"$FA\"" -v b="raygate_preemptions_total{queue=\"$FB\"" \
			'index($1, a) == 1 || index($1, b) == 1 {s += $2} END {print s + 0}'
}
preempted() { # the RayClusters preempted at least once (raygate.io/preempted-by)
	kc get rayclusters.ray.io -n "$NS" -o json | jq '[.items[] | select(.metadata.annotations["raygate.io/preempted-by"])] | length'
}
admitted_in() { # QUEUE: its admitted gangs
	kc get rayclusters.ray.io -n "$NS" -l "volcano.sh/queue-name=$1" -o json |
		jq '[.items[] | select(.metadata.annotations["raygate.io/admitted-at"])] | length'
}

submit "$FA" a0 a1 a2 a3
for c in a0 a1 a2 a3; do all_or_none_watch "$c" 1 90 || fail "$c was not admitted"; done
pass "fa fills the parent's cpu 8 (4 above its deserved) (took $((SECONDS - lap))s)"
lap=$SECONDS

for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then q="$FB" names=("b$r-0" "b$r-1"); else q="$FA" names=("a$r-0" "a$r-1"); fi
	submit "$q" "${names[@]}"
	eventually 60 "round $r: ${names[*]} ($q) admitted or waiting" decided "${names[@]}"
	sleep 2 # a reclaim the round starts is carried out
	say "    round $r: fa $(admitted_in "$FA") gangs, fb $(admitted_in "$FB"); $(evictions) evictions so far"
done
both_deserved() { [[ "$(admitted_in "$FA") $(admitted_in "$FB")" == "2 2" ]]; }
eventually 60 "both queues at their deserved (2 gangs of cpu 2 each)" both_deserved
count="$(evictions)"
say "flapping: $count evictions ($(preempted) RayClusters preempted) over $ROUNDS alternating rounds (took $((SECONDS - lap))s)"
((count <= 2)) || fail "$count evictions: more than the 2 gangs fa borrowed"
((count == 2)) || fail "$count evictions: fb did not reclaim its deserved from fa (2 expected)"
assert_eq "RayClusters preempted (each once)" "$count" "$(preempted)"
lap=$SECONDS
settled() { [[ "$(evictions)" == "$count" ]] && both_deserved; }
stays "$WINDOW" "no eviction once settled; fa and fb keep their deserved" settled
say "flapping: $(evictions) evictions in all; none in the last ${WINDOW}s"
inv_stop
