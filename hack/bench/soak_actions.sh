# The soak's world, actions and disruptions (hack/bench/soak.sh, which says
# what they are): sourced after tests/e2e/multi.sh, whose helpers (on, mq,
# multi_cluster, samp_start, raycluster) they use. Every random draw happens
# in this shell, never in a subshell ($(...) or a pipe): bash seeds a
# subshell's RANDOM afresh, and the seed must draw the same actions again.
SOAK_RACK=e2e.raygate.io/soak-rack SOAK_PREFIX=""
declare -A SOAK_N=()   # what the harness did: created-WHERE-KIND, deleted, scaled-up, ...
declare -A SOAK_INV=() # the invariant checkers' pids, by worker
SOAK_LIVE=()           # "WHERE KIND NAME" of the objects created and not deleted
SOAK_LEAVES=()
R=0

# draw N: R becomes a number from 0 to N - 1
draw() { R=$((RANDOM % $1)); }
# choose VAR ITEM...: VAR becomes one of the ITEMs
choose() {
	local -n _into="$1"
	shift
	_into="${*:RANDOM % $# + 1:1}"
}
count() { SOAK_N[$1]=$((${SOAK_N[$1]:-0} + 1)); }

# soak_world PREFIX: the PriorityClass, the rack labels and the queue tree: PREFIX-p (cpu 5 to 7 on a, 4 or 5
# on b, deserved 4, guarantee 1) -> {PREFIX-0 (deserved 2, guarantee 1), PREFIX-1 (deserved 2, the parent's
# capability)}, and
# PREFIX-2 at the root deserving by its weight. The two children share the parent, each deserving half of it:
# one that borrows the other's half is reclaimed from (raygate reclaims between queues with spec.deserved only).
soak_world() {
	local p="$1" w n i s0 s1 s2 pol
	SOAK_PREFIX="$p"
	for w in a b; do
		on "$w" apply -f "$ROOT/samples/priorityclass-ray-high.yaml" >/dev/null || fail "cannot make PriorityClass ray-high on $w"
		i=0
		for n in $(on "$w" get nodes -o name); do
			on "$w" label "$n" "$SOAK_RACK=r$((i++ % 2 + 1))" --overwrite >/dev/null || fail "cannot label $w's $n"
		done
	done
	choose s0 fifo traverse ""
	choose s1 fifo traverse ""
	choose s2 fifo traverse ""
	draw 3
	mq "$p-p" a=$((5 + R)) b=$((4 + R % 2)) to=none weight=$((1 + R)) deserved=4 guarantee=1
	draw 3
	mq "$p-0" parent="$p-p" a=$((4 + R % 2)) b=3 deserved=2 guarantee=1 ${s0:+strategy=$s0}
	draw 3
	mq "$p-1" parent="$p-p" weight=$((1 + R)) deserved=2 ${s1:+strategy=$s1}
	draw 3
	mq "$p-2" a=$((6 + R)) b=$((4 + R % 2)) weight=$((1 + R)) ${s2:+strategy=$s2}
	SOAK_LEAVES=("$p-0" "$p-1" "$p-2")
	# Preemption policies as drill_churn's: the default, LowerOrNewerEqualPriority, and a random one at the root
	# (Never on a preemptor's queue turns its reclaim off too: the children keep theirs)
	choose pol "" LowerOrNewerEqualPriority Never
	pol=("" LowerOrNewerEqualPriority "$pol")
	for i in 0 1 2; do
		for w in a b; do
			[[ -z "${pol[i]}" ]] || on "$w" annotate queue "${SOAK_LEAVES[i]}" "raygate.io/preemption=${pol[i]}" --overwrite >/dev/null
		done
	done
	for w in a b; do
		say "soak: $w's queues: $(on "$w" get queues "$p-p" "${SOAK_LEAVES[@]}" -o json |
			jq -c '[.items[] | {(.metadata.name): ((.spec | del(.reclaimable)) + {preemption: .metadata.annotations["raygate.io/preemption"]})}] | add')"
	done
}

soak_unrack() {
	local w
	for w in a b; do on "$w" label nodes --all "$SOAK_RACK-" >/dev/null 2>&1 || true; done
}

# soak_metrics_addr WHO: the --metrics-addr a's or b's gate, or m's dispatcher, was first started with
soak_metrics_addr() {
	local c=raygate-gate
	[[ "$1" != m ]] || c=raygate-dispatch
	tr '\0' '\n' <"$(multi_state "$1")/pids/$c.args" | grep -x -A1 -- --metrics-addr | tail -1
}

# soak_scrape WHO [SIGN]: the soak's counters now on a's or b's gate or m's dispatcher, "WHO:KEY VALUE" lines
# appended to the bank (SIGN -1: taken away, the baseline), and WHO:scrapes 1; nothing when it does not answer
soak_scrape() {
	curl -sf --max-time 5 "http://$(soak_metrics_addr "$1")/metrics" 2>/dev/null |
		awk -v who="$1" -v sign="${2:-1}" -v q="\"$SOAK_PREFIX-" '
			function out(k, v) { printf "%s:%s %s\n", who, k, v * sign }
			$1 ~ /^raygate_gangs_admitted_total\{/ && index($1, q) { out("admitted", $2) }
			$1 ~ /^raygate_gangs_evicted_total\{/ && index($1, q) { match($1, /reason="[^"]*"/); out("evicted:" substr($1, RSTART + 8, RLENGTH - 9), $2) }
			$1 ~ /^raygate_preemptions_total\{/ && index($1, q) { match($1, /kind="[^"]*"/); out(substr($1, RSTART + 6, RLENGTH - 7), $2) }
			$1 ~ /^raygate_dispatch_actions_total\{action="(redispatch|withdraw)"\}/ { match($1, /"[a-z]*"/); out(substr($1, RSTART + 1, RLENGTH - 2), $2) }
			END { if (NR > 0 && sign > 0) out("scrapes", 1) }' >>"$SOAK_DIR/bank" || true
}

# soak_checkers_start: invariants.py on each worker, the sampler on both; the counters' baseline
soak_checkers_start() {
	local w api
	for w in a b; do
		read -r -a api <<<"$(multi_api "$w")"
		: >"$SOAK_DIR/inv-$w.violations"
		python3 "$ROOT/tests/e2e/invariants.py" --server "${api[0]}" --token "${api[1]}" --ca "${api[2]}" --namespace "$NS" \
			--interval 1 --grace 30 --evict-grace 30 --violations "$SOAK_DIR/inv-$w.violations" --status "$SOAK_DIR/inv-$w.status" &
		SOAK_INV[$w]=$!
	done
	_inv_polled() { [[ "$(jq -r .polls "$SOAK_DIR/inv-$1.status" 2>/dev/null || echo 0)" -gt 0 ]]; }
	for w in a b; do eventually 30 "the invariant checker's first poll of $w" _inv_polled "$w"; done
	samp_start
	: >"$SOAK_DIR/bank"
	for w in a b m; do soak_scrape "$w" -1; done
	SOAK_LOG_FROM=()
	for w in a b; do SOAK_LOG_FROM+=("$(($(wc -l <"$(multi_state "$w")/logs/raygate-gate.log") + 1))"); done
	SOAK_LOG_FROM+=("$(($(wc -l <"$MULTI_M_STATE/logs/raygate-dispatch.log") + 1))")
}

soak_checkers_kill() {
	local w
	for w in "${!SOAK_INV[@]}"; do
		kill "${SOAK_INV[$w]}" 2>/dev/null || true
		wait "${SOAK_INV[$w]}" 2>/dev/null || true
	done
	SOAK_INV=()
}

# ------------------------------------------------------------- the churn

# soak_churn SECONDS: one action a step, disruptions on their own clocks, until SECONDS have passed
soak_churn() {
	local t_end=$((SECONDS + $1)) step=0
	draw 40
	SOAK_NEXT_GATE=$((SECONDS + 20 + R)) # a gate killed every 20 to 60 s
	draw 75
	SOAK_NEXT_DISPATCH=$((SECONDS + 45 + R)) # the dispatcher every 45 to 120 s
	draw 60
	SOAK_NEXT_CUT=$((SECONDS + 30 + R)) SOAK_CUT_UNTIL=0 # a cut 30 to 90 s after the last ended
	draw 50
	SOAK_NEXT_BORROW=$((SECONDS + 40 + R)) # a borrowing episode every 40 to 90 s
	while ((SECONDS < t_end)); do
		soak_step "n$((step++))"
		SOAK_N[steps]=$step
		soak_disrupt
		soak_claim
		if ((SECONDS >= SOAK_NEXT_BORROW)); then
			soak_borrow "n$((step++))"
			draw 50
			SOAK_NEXT_BORROW=$((SECONDS + 40 + R))
		fi
		draw 7
		sleep "0.$((3 + R))" # pacing the churn (not a wait)
		((step % 15)) || say "soak: $((SECONDS - SOAK_T0))s, step $step: ${#SOAK_LIVE[@]} live; $(soak_counts_line)"
	done
}

soak_counts_line() {
	local k out=""
	for k in $(printf '%s\n' "${!SOAK_N[@]}" | sort); do out+="$k ${SOAK_N[$k]}, "; done
	echo "${out%, }"
}

# soak_step NAME: one random action (NAME: for an object it creates)
soak_step() {
	local where kind
	draw 100
	if ((R < 30 && ${#SOAK_LIVE[@]} < 16)) || ((${#SOAK_LIVE[@]} == 0)); then
		choose where m a b
		soak_new_cluster "$where" "$1"
	elif ((R < 38 && ${#SOAK_LIVE[@]} < 16)); then
		choose where m a b
		soak_new_job "$where" "$1"
	elif ((R < 58)); then
		soak_delete
	elif ((R < 80)); then
		choose where a b
		soak_scale "$where" up
	else
		choose where a b
		soak_scale "$where" down
	fi
}

# soak_new_cluster WHERE NAME: a random RayCluster created on WHERE (m: dispatched)
soak_new_cluster() {
	local args=() auto g groups r min q head req
	choose q "${SOAK_LEAVES[@]}"
	args+=(queue="$q")
	draw 3
	auto=$((R == 0))
	((auto)) && args+=(autoscaling=1)
	draw 3
	((R == 0)) && args+=(priority=ray-high)
	draw 4
	((R == 0)) && args+=(annotations="raygate.io/topology-required: $SOAK_RACK")
	choose head "cpu: 250m, memory: 256Mi" "cpu: 500m, memory: 512Mi" "cpu: 1, memory: 1Gi"
	args+=(head="$head")
	draw 3
	groups=$R
	for ((g = 0; g < groups; g++)); do
		draw 4
		r=$R
		draw $((r + 1))
		min=$R
		choose req "cpu: 250m, memory: 256Mi" "cpu: 500m, memory: 512Mi" "cpu: 1, memory: 1Gi"
		args+=(group="g$g:$r:$min:$((auto ? 3 : r)):$req")
	done
	raycluster "$2" "${args[@]}" >"$SOAK_DIR/new.yaml"
	soak_create "$1" rayclusters.ray.io "$2" <"$SOAK_DIR/new.yaml"
	[[ " ${args[*]} " != *topology-required* ]] || count topology
}

# soak_borrow NAME: on a worker, two gangs of cpu 2 (a head and a worker of cpu 1) in the parent's second child,
# which deserves 2: it borrows the first child's half; 10 s later (soak_claim) one of cpu 2 in the first child,
# which takes its half back (a reclaim, when the parent is full by then). Random churn seldom meets reclaim's terms (the borrower must
# keep its deserved after the eviction, the claimant stay within its own): this sets them up now and then.
soak_borrow() {
	local w i
	choose w a b
	for i in 1 2; do
		raycluster "$1-b$i" queue="${SOAK_LEAVES[1]}" head="cpu: 1, memory: 512Mi" group="g0:1:1:1:cpu: 1, memory: 512Mi" \
			>"$SOAK_DIR/new.yaml"
		soak_create "$w" rayclusters.ray.io "$1-b$i" <"$SOAK_DIR/new.yaml"
	done
	SOAK_CLAIM="$w $1-c" SOAK_CLAIM_AT=$((SECONDS + 10)) # once the borrower's gangs are admitted
	count borrow-episodes
}

# soak_claim: the claimant of the last borrowing episode, when its time has come
SOAK_CLAIM="" SOAK_CLAIM_AT=0
soak_claim() {
	[[ -n "$SOAK_CLAIM" ]] && ((SECONDS >= SOAK_CLAIM_AT)) || return 0
	local w name
	read -r w name <<<"$SOAK_CLAIM"
	raycluster "$name" queue="${SOAK_LEAVES[0]}" head="cpu: 1, memory: 512Mi" group="g0:1:1:1:cpu: 1, memory: 512Mi" \
		>"$SOAK_DIR/new.yaml"
	soak_create "$w" rayclusters.ray.io "$name" <"$SOAK_DIR/new.yaml"
	SOAK_CLAIM=""
}

# soak_new_job WHERE NAME: a RayJob (samples/rayjob-sample.yaml: a head and 2 workers of cpu 1, a submitter) on WHERE
soak_new_job() {
	local q
	choose q "${SOAK_LEAVES[@]}"
	sed -e "s/name: rayjob-sample/name: $2/" -e "s/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $q/" \
		"$ROOT/samples/rayjob-sample.yaml" >"$SOAK_DIR/new.yaml"
	soak_create "$1" rayjobs.ray.io "$2" <"$SOAK_DIR/new.yaml"
}

# soak_create WHERE KIND NAME: stdin created in NS on WHERE; recorded with its uid in objects.tsv
soak_create() {
	local uid
	if uid="$(on "$1" create -n "$NS" -f - -o jsonpath='{.metadata.uid}' 2>>"$SOAK_DIR/errors.log")"; then
		printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$uid" >>"$SOAK_DIR/objects.tsv"
		SOAK_LIVE+=("$1 $2 $3")
		count "created-$1-${2%%.*}"
	else
		count create-refused
	fi
}

soak_delete() {
	local i where kind name
	((${#SOAK_LIVE[@]})) || return 0
	draw ${#SOAK_LIVE[@]}
	i=$R
	read -r where kind name <<<"${SOAK_LIVE[i]}"
	SOAK_LIVE=("${SOAK_LIVE[@]:0:i}" "${SOAK_LIVE[@]:i+1}")
	on "$where" delete "$kind" -n "$NS" "$name" --wait=false >/dev/null 2>>"$SOAK_DIR/errors.log" && count deleted || count delete-failed
}

# soak_scale WORKER up|down: an autoscaling RayCluster there (a copy too: its autoscaler runs there) one worker bigger
# or smaller (down: KubeRay deletes the pod named in scaleStrategy.workersToDelete)
soak_scale() {
	local w="$1" list name r min max pod
	list="$(on "$w" get rayclusters.ray.io -n "$NS" -o json 2>/dev/null | jq -r '.items[] |
		select(.spec.enableInTreeAutoscaling == true and .metadata.deletionTimestamp == null and (.spec.workerGroupSpecs | length) > 0) |
		.spec.workerGroupSpecs[0] as $g | "\(.metadata.name) \($g.replicas // 0) \($g.minReplicas // 0) \($g.maxReplicas // 0)"')" || return 0
	[[ -n "$list" ]] || return 0
	mapfile -t list <<<"$list"
	draw ${#list[@]}
	read -r name r min max <<<"${list[R]}"
	if [[ "$2" == up ]]; then
		((r < max)) || return 0
		on "$w" patch rayclusters.ray.io -n "$NS" "$name" --type json \
			-p "[{\"op\":\"replace\",\"path\":\"/spec/workerGroupSpecs/0/replicas\",\"value\":$((r + 1))}]" >/dev/null 2>&1 &&
			count scaled-up
		return 0
	fi
	((r > min)) || return 0
	# (a pod of group g0, not already going: KubeRay keeps every pod of an autoscaling group but those named)
	pod="$(on "$w" get pods -n "$NS" -l "ray.io/cluster=$name,ray.io/group=g0" -o json 2>/dev/null |
		jq -r '[.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name] | last // ""')"
	[[ -n "$pod" ]] || return 0
	on "$w" patch rayclusters.ray.io -n "$NS" "$name" --type json -p "[{\"op\":\"replace\",\"path\":\"/spec/workerGroupSpecs/0/replicas\",\"value\":$((r - 1))},
		{\"op\":\"add\",\"path\":\"/spec/workerGroupSpecs/0/scaleStrategy\",\"value\":{\"workersToDelete\":[\"$pod\"]}}]" \
		>/dev/null 2>&1 && count scaled-down
	return 0
}

# ------------------------------------------------------------- disruptions

# soak_disrupt: whatever disruption's time has come
soak_disrupt() {
	local w
	if ((SECONDS >= SOAK_NEXT_GATE)); then
		choose w a b
		soak_gate_restart "$w"
		draw 40
		SOAK_NEXT_GATE=$((SECONDS + 20 + R))
	fi
	if ((SECONDS >= SOAK_NEXT_DISPATCH)); then
		soak_dispatch_restart
		draw 75
		SOAK_NEXT_DISPATCH=$((SECONDS + 45 + R))
	fi
	if ((SOAK_CUT_UNTIL == 0 && SECONDS >= SOAK_NEXT_CUT)); then
		draw 60
		soak_cut $((15 + R))
	elif ((SOAK_CUT_UNTIL > 0)); then
		soak_cut_seen
		if ((SECONDS >= SOAK_CUT_UNTIL)); then
			soak_restore
			draw 60
			SOAK_NEXT_CUT=$((SECONDS + 30 + R))
		fi
	fi
}

# soak_gate_restart WORKER: its gate killed (SIGKILL) after a last scrape, and started again
soak_gate_restart() {
	soak_scrape "$1"
	multi_cluster "$1" stop raygate-gate KILL >/dev/null
	count "gate-killed-$1"
	multi_cluster "$1" start-gate >/dev/null 2>>"$SOAK_DIR/errors.log" ||
		multi_cluster "$1" start-gate >/dev/null 2>>"$SOAK_DIR/errors.log" || fail "$1's gate did not start again"
}

soak_dispatch_restart() {
	soak_scrape m
	multi_dispatch_restart || multi_dispatch_restart || fail "raygate-dispatch did not start again"
	count dispatcher-killed
}

# soak_cut SECONDS: the manager cut off from a (its Secret points at a closed port) for that long
soak_cut() {
	local secret cfg
	secret="$(on m get secret -n raygate-system -l raygate.io/worker-cluster=a -o jsonpath='{.items[0].metadata.name}')" ||
		fail "cannot read a's Secret on the manager"
	on m get secret -n raygate-system "$secret" -o json |
		jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields, .metadata.annotations)' \
			>"$SOAK_DIR/secret-a.json"
	cfg="$(jq -r '.data.kubeconfig | @base64d' "$SOAK_DIR/secret-a.json" | jq -c '.clusters[0].cluster.server = "https://127.0.0.1:1"')"
	on m patch secret -n raygate-system "$secret" --type merge -p "{\"data\":{\"kubeconfig\":\"$(printf %s "$cfg" | base64 -w0)\"}}" \
		>/dev/null || fail "cannot point a's Secret at a closed port"
	SOAK_CUT_UNTIL=$((SECONDS + $1)) SOAK_CUT_SEEN=0
	count cuts
	say "soak: $((SECONDS - SOAK_T0))s: a cut off from the manager for ${1}s"
}

# soak_cut_seen: the manager marks a not up (its Secret's raygate.io/worker-status) during the cut
soak_cut_seen() {
	((SOAK_CUT_SEEN)) && return 0
	local st
	st="$(on m get secret -n raygate-system raygate-worker-a -o jsonpath='{.metadata.annotations.raygate\.io/worker-status}' 2>/dev/null)" || return 0
	[[ -z "$st" || "$st" == up ]] || SOAK_CUT_SEEN=1
}

soak_restore() {
	soak_cut_seen
	on m apply -f "$SOAK_DIR/secret-a.json" >/dev/null || fail "cannot restore a's Secret"
	((SOAK_CUT_SEEN)) && count partitions-seen
	SOAK_CUT_UNTIL=0
	say "soak: $((SECONDS - SOAK_T0))s: a's Secret restored$( ((SOAK_CUT_SEEN)) || echo " (the manager never marked a down meanwhile)")"
}

# ------------------------------------------------------------- the end

# soak_calm: the churn stopped: the cut restored, both gates and the dispatcher running
soak_calm() {
	local w st
	SOAK_CHURN_S=$((SECONDS - SOAK_T0))
	((SOAK_CUT_UNTIL == 0)) || soak_restore
	for w in a b m; do
		st="$(multi_cluster "$w" status 2>/dev/null)" || true # read whole: grep -q stopping early would fail the pipe
		if [[ "$w" == m ]]; then
			grep -q "^raygate-dispatch *running" <<<"$st" || { count crashed-dispatcher; multi_dispatch_restart || fail "no dispatcher"; }
		else
			grep -q "^raygate-gate *running" <<<"$st" || { count "crashed-gate-$w"; multi_cluster "$w" start-gate >/dev/null || fail "no gate on $w"; }
		fi
	done
	pass "churn done after ${SOAK_CHURN_S}s: $(soak_counts_line)"
}

# w_expected W: the pods KubeRay is to make on worker W for its RayClusters (a RayJob's submitter aside)
w_expected() {
	on "$1" get rayclusters.ray.io -n "$NS" -o json | jq '[.items[] | select(.spec.suspend != true and .metadata.deletionTimestamp == null) |
		1 + ([.spec.workerGroupSpecs[]? | (.replicas // 0) * (.numOfHosts // 1)] | add // 0)] | add // 0'
}
# w_snapshot W: its Ray pods: name, being deleted, gated
w_snapshot() {
	on "$1" get pods -n "$NS" -l ray.io/cluster -o json | jq -c '[.items[] | [.metadata.name, (.metadata.deletionTimestamp != null),
		([.spec.schedulingGates[]?.name] | index("raygate.io/gang") != null)]] | sort'
}
# soak_quiet: both workers: every cluster's pods made, none terminating, nothing changed for 10 s
SOAK_QUIET_SINCE=-1 SOAK_LAST=""
soak_quiet() {
	local s w snap=""
	for w in a b; do
		s="$(w_snapshot "$w")" || return 1
		[[ "$(jq '[.[] | select(.[1] == false)] | length' <<<"$s")" == "$(w_expected "$w")" &&
			"$(jq '[.[] | select(.[1])] | length' <<<"$s")" == 0 ]] || { SOAK_QUIET_SINCE=-1; return 1; }
		snap+="$s"
	done
	if [[ "$snap" != "$SOAK_LAST" || $SOAK_QUIET_SINCE -lt 0 ]]; then
		SOAK_LAST="$snap" SOAK_QUIET_SINCE=$SECONDS
		return 1
	fi
	((SECONDS - SOAK_QUIET_SINCE >= 10))
}

# soak_settle: once both workers are quiet, invariants.py --settled on each (exit 3: a gang that fits waits)
soak_settle() {
	local w api rc
	if wait_until 300 "both workers quiet" soak_quiet; then
		pass "both workers quiet ($((SECONDS - SOAK_T0 - SOAK_CHURN_S))s after the churn)"
	else
		echo "the workers were not quiet within 300 s of the churn's end" >"$SOAK_DIR/not-quiet"
		say "soak: the workers were not quiet within 300 s; the settled check runs anyway"
	fi
	for w in a b; do
		read -r -a api <<<"$(multi_api "$w")"
		rc=0
		python3 "$ROOT/tests/e2e/invariants.py" --server "${api[0]}" --token "${api[1]}" --ca "${api[2]}" --namespace "$NS" \
			--settled 2>"$SOAK_DIR/settled-$w.txt" || rc=$?
		echo "$rc" >"$SOAK_DIR/settled-$w.rc"
		sed 's/^/    /' "$SOAK_DIR/settled-$w.txt" >&2
	done
}

# soak_collect: what the report reads, into SOAK_DIR (soak_report.py says which file holds what)
soak_collect() {
	local w i=0 k
	for w in a b m; do soak_scrape "$w"; done
	for w in a b; do
		tail -n "+${SOAK_LOG_FROM[i++]:-1}" "$(multi_state "$w")/logs/raygate-gate.log" >"$SOAK_DIR/gate-$w.log" 2>/dev/null || true
		cp "$SOAK_DIR/inv-$w.status" "$SOAK_DIR/inv-$w.final" 2>/dev/null || true
		[[ -z "${SOAK_INV[$w]:-}" ]] || ! kill -0 "${SOAK_INV[$w]}" 2>/dev/null || echo running >"$SOAK_DIR/inv-$w.alive"
	done
	tail -n "+${SOAK_LOG_FROM[2]:-1}" "$MULTI_M_STATE/logs/raygate-dispatch.log" >"$SOAK_DIR/dispatch.log" 2>/dev/null || true
	if [[ -n "${SAMP_DIR:-}" ]]; then
		cp "$SAMP_DIR/violations" "$SOAK_DIR/samp.violations" 2>/dev/null || true
		cp "$SAMP_DIR/status" "$SOAK_DIR/samp.status" 2>/dev/null || true
		[[ -z "${SAMP_PID:-}" ]] || ! kill -0 "$SAMP_PID" 2>/dev/null || echo running >"$SOAK_DIR/samp.alive"
	fi
	{
		for k in "${!SOAK_N[@]}"; do printf '%s\t%s\n' "$k" "${SOAK_N[$k]}"; done
	} >"$SOAK_DIR/harness.tsv"
	local failed="${E2E_FAILED:-}"
	# (rc: e2e_teardown's, whose exit hooks run this after a run that did not reach its end)
	[[ -n "$failed" || -n "${SOAK_ENDED:-}" ]] || failed="the run stopped before its end (exit status ${rc:-unknown})"
	jq -n --arg seed "${SEED:-}" --argjson minutes "$SOAK_MINUTES" --arg started "${SOAK_STARTED:-}" \
		--arg ended "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson wall $((SECONDS - ${SOAK_T0:-0})) --argjson churn "${SOAK_CHURN_S:-0}" \
		--arg ns "$NS" --arg prefix "${SOAK_PREFIX:-}" --arg failed "$failed" --arg args "$SOAK_ARGS" \
		--arg offsets "$MULTI_A_OFFSET $MULTI_B_OFFSET $MULTI_M_OFFSET" \
		--arg raygate "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
		'{seed: $seed, minutes: $minutes, started: $started, ended: $ended, wall_s: $wall, churn_s: $churn, namespace: $ns,
		  queue_prefix: $prefix, harness_failure: $failed, args: $args, offsets: $offsets, raygate: $raygate, load_average_end: $load}' \
		>"$SOAK_DIR/run.json"
}
