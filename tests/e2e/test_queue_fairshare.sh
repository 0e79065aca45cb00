#!/usr/bin/env bash
# Fair sharing under saturation. Three leaves a, b, c of weights
# 1:2:1 and no spec.deserved (derived by weight: 3, 6, 3) under a parent of
# capability cpu 12 (the room they share; the nodes have more). Each keeps a
# backlog of 7 equal gangs (one head of cpu 1). An admitted gang is deleted
# after it has run RAYGATE_FAIRSHARE_RUN seconds (default 15: a simulated
# completion), for RAYGATE_FAIRSHARE_SECONDS (default 180); every ~3 s the
# cpu each queue has admitted is sampled. After a warm-up (two runs and 15 s), the
# time-averaged allocation must be within +-10% of 1:2:1 of the total
# (0.25/0.50/0.25). Prints the figure ("fairshare: a 0.26 b 0.49 c 0.25 ...").
# The invariant checker runs throughout.
. "$(dirname "$0")/lib.sh"
e2e_setup
DURATION="${RAYGATE_FAIRSHARE_SECONDS:-180}"
RUN="${RAYGATE_FAIRSHARE_RUN:-15}"
WARMUP=$((2 * RUN + 15))
# Waiting gangs each queue keeps: more than any queue's deserved, so that room
# freed at once (completions come in batches) finds every queue waiting.
BACKLOG=7
ROOM=12
U="$(e2e_uid)"
P="fair-$U"
tree_queue "$P" cpu="$ROOM"
declare -A W=([a]=1 [b]=2 [c]=1) QN=()
for l in a b c; do
	QN[$l]="fair-$l-$U"
	tree_queue "${QN[$l]}" parent="$P" weight="${W[$l]}"
done
inv_start --interval 2 --grace 15

# state: one line per queue letter: "LETTER ADMITTED WAITING", then "expire NAME" for each gang that has run RUN s
state() {
	kc get rayclusters.ray.io -n "$NS" -o json | jq -r --argjson run "$RUN" --argjson now "$(date +%s)" '
		[.items[] | select(.metadata.deletionTimestamp == null)
		 | {q: .metadata.labels["volcano.sh/queue-name"], name: .metadata.name,
		    at: (.metadata.annotations["raygate.io/admitted-at"] // "")}] as $all
		| (["a", "b", "c"][] as $l | [$all[] | select(.name | startswith($l + "-"))] as $mine
		   | "\($l) \([$mine[] | select(.at != "")] | length) \([$mine[] | select(.at == "")] | length)"),
		  ($all[] | select(.at != "" and ($now - (.at | fromdate)) >= $run) | "expire \(.name)")'
}

n=0 samples=0 completed=0 created=0
declare -A SUM=([a]=0 [b]=0 [c]=0)
t0=$SECONDS
while ((SECONDS - t0 < DURATION)); do
	tick=$SECONDS
	expire=() yaml=""
	declare -A MISSING=()
	while read -r l adm wait; do
		if [[ "$l" == expire ]]; then
			expire+=("$adm")
			continue
		fi
		((SECONDS - t0 < WARMUP)) || SUM[$l]=$((SUM[$l] + adm))
		MISSING[$l]=$((BACKLOG - wait))
	done < <(state)
	# The new gangs interleaved (a b c a b c ...): KubeRay makes pods in about
	# the order it is given the clusters, and on a loaded machine that takes
	# seconds; created queue by queue, the last queue's gangs would wait for
	# pods while the others' took the room, and the figure would measure that.
	for ((more = 1; more > 0;)); do
		more=0
		for l in a b c; do
			((${MISSING[$l]:-0} > 0)) || continue
			yaml+="---"$'\n'"$(raycluster "$l-$n" queue="${QN[$l]}" cpu=1 memory=256Mi)"$'\n'
			n=$((n + 1)) created=$((created + 1)) MISSING[$l]=$((MISSING[$l] - 1)) more=1
		done
	done
	((SECONDS - t0 < WARMUP)) || samples=$((samples + 1))
	if ((${#expire[@]})); then
		kc delete rayclusters.ray.io -n "$NS" "${expire[@]}" --ignore-not-found --wait=false >/dev/null ||
			say "    (deleting ${expire[*]} failed; tried again next time)"
		completed=$((completed + ${#expire[@]}))
	fi
	[[ -z "$yaml" ]] || kc apply -n "$NS" -f - >/dev/null <<<"$yaml" || say "    (creating gangs failed; tried again next time)"
	((samples == 0 || samples % 10)) || say "    ${SECONDS}s: $samples samples, $created gangs created, $completed completed; admitted cpu so far a ${SUM[a]} b ${SUM[b]} c ${SUM[c]}"
	sleep $((tick + 3 - SECONDS > 0 ? tick + 3 - SECONDS : 0)) # the sampling period
done
((samples > 0)) || fail "no sample after the warm-up (RAYGATE_FAIRSHARE_SECONDS $DURATION <= warm-up $WARMUP)"
total=$((SUM[a] + SUM[b] + SUM[c]))
((total > 0)) || fail "nothing was admitted"
preempted="$(curl -sf "http://127.0.0.1:$GATE_METRICS_PORT/metrics" |
	awk -v u="-$U\"" 'index($1, "raygate_preemptions_total{queue=\"fair-") == 1 && index($1, u) {s += $2} END {print s + 0}')"
figure="$(awk -v a="${SUM[a]}" -v b="${SUM[b]}" -v c="${SUM[c]}" -v t="$total" -v s="$samples" -v room="$ROOM" \
	'BEGIN {printf "a %.2f b %.2f c %.2f (target 0.25/0.50/0.25); the room %.0f%% used", a / t, b / t, c / t, 100 * t / s / room}')"
say "fairshare: $figure; $samples samples over $((DURATION - WARMUP))s after a ${WARMUP}s warm-up, gangs of cpu 1 running ${RUN}s," \
	"$completed completed, $preempted evicted by the gate"
inv_assert "invariants held throughout"
within() { # SUM TARGET: SUM / total within 10% of TARGET
	awk -v s="$1" -v t="$total" -v want="$2" 'BEGIN {d = s / t - want; exit !(d <= want / 10 && -d <= want / 10)}'
}
within "${SUM[a]}" 0.25 && within "${SUM[b]}" 0.5 && within "${SUM[c]}" 0.25 ||
	fail "the time-averaged allocation is not within 10% of 1:2:1: $figure"
pass "fair share within 10% of 1:2:1: $figure"
inv_stop
