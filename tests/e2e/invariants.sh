# The fault drills' invariant checker (issue 7; source after lib.sh). A
# background sampler reads the test namespace's pods, then its RayClusters,
# then the Queues, about twice a second, and records:
# - a pod of a managed RayCluster (one with volcano.sh/queue-name) bound to a
#   node while the RayCluster carries no raygate.io/admitted-at (pods are read
#   first: the admission is recorded before any gate is removed);
# - a queue whose admitted pods (live, without our gate) request more cpu or
#   memory than its capability;
# - intervals during which a RayCluster was partly ungated (some of its live
#   pods gated, some not), to be judged by invariants_check.
#
#   invariants_start DIR          start sampling $NS into DIR
#   invariants_stop DIR           stop it (closes open intervals)
#   invariants_check DIR [KILL_MS TAKEOVER_MS]
#       fails on any violation, or a partial interval over 3 s; an interval
#       that began by KILL_MS (+ one sample) may last until TAKEOVER_MS + 3 s:
#       a leader killed mid-ungate leaves its gang to its successor.

_INV_JQ='
def qty: if type == "number" then . else
  (capture("^(?<n>[0-9.]+)(?<u>[a-zA-Z]*)$") // {n: "0", u: ""}) as $c |
  ($c.n | tonumber) * ({"": 1, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
     "Ki": 1024, "Mi": 1048576, "Gi": 1073741824, "Ti": 1099511627776}[$c.u] // 1) end;
def req($r): [.spec.containers[]?.resources.requests[$r]? // 0 | qty] | add // 0;
($rcs[0].items | map({key: .metadata.name, value: {
    queue: .metadata.labels["volcano.sh/queue-name"],
    admitted: (.metadata.annotations["raygate.io/admitted-at"] != null)}}) | from_entries) as $rc |
($queues[0].items | map({key: .metadata.name, value: (.spec.capability // {})}) | from_entries) as $cap |
[$pods[0].items[] | {
    name: .metadata.name,
    cluster: .metadata.labels["ray.io/cluster"],
    gated: any(.spec.schedulingGates[]?; .name == "raygate.io/gang"),
    bound: (.spec.nodeName != null),
    live: (.metadata.deletionTimestamp == null and (.status.phase // "") != "Succeeded" and (.status.phase // "") != "Failed"),
    cpu: req("cpu"), memory: req("memory")}
  | . + {rc: $rc[.cluster]}
  | select(.rc != null and .rc.queue != null)] as $p |
( $p[] | select(.bound and (.rc.admitted | not)) | "violation pod \(.name) of \(.cluster) bound but its gang was never admitted" ),
( $p | map(select(.live and (.gated | not))) | group_by(.rc.queue)[] |
  .[0].rc.queue as $q | ($cap[$q] // {}) as $c |
  {cpu: (map(.cpu) | add), memory: (map(.memory) | add)} as $used |
  ( if $c.cpu != null and $used.cpu > ($c.cpu | qty) + 1e-9 then
      "violation queue \($q): admitted pods request cpu \($used.cpu) > capability \($c.cpu)" else empty end ),
  ( if $c.memory != null and $used.memory > ($c.memory | qty) then
      "violation queue \($q): admitted pods request memory \($used.memory) > capability \($c.memory)" else empty end ) ),
( $p | map(select(.live)) | group_by(.cluster)[] |
  (map(select(.gated)) | length) as $g |
  if $g > 0 and $g < length then "partial \(.[0].cluster) \($g)/\(length)" else empty end )
'

_invariants_loop() {
	local dir="$1" t line c
	declare -A since=()
	local -A now_partial
	: >"$dir/violations"
	: >"$dir/partial"
	echo 0 >"$dir/samples"
	local samples=0
	while [[ ! -f "$dir/stop" ]]; do
		t="$(date +%s%3N)"
		if kc get pods -n "$NS" -l ray.io/cluster -o json >"$dir/pods.json" 2>/dev/null &&
			kc get rayclusters -n "$NS" -o json >"$dir/rcs.json" 2>/dev/null &&
			kc get queues -o json >"$dir/queues.json" 2>/dev/null; then
			now_partial=()
			while read -r line; do
				case "$line" in
				violation*) echo "$t ${line#violation }" >>"$dir/violations" ;;
				partial*) c="${line#partial }"; c="${c%% *}"; now_partial[$c]=1 ;;
				esac
			done < <(jq -rn --slurpfile pods "$dir/pods.json" --slurpfile rcs "$dir/rcs.json" \
				--slurpfile queues "$dir/queues.json" "$_INV_JQ")
			for c in "${!now_partial[@]}"; do [[ -n "${since[$c]:-}" ]] || since[$c]="$t"; done
			for c in "${!since[@]}"; do
				if [[ -z "${now_partial[$c]:-}" ]]; then
					echo "$c ${since[$c]} $t" >>"$dir/partial"
					unset "since[$c]"
				fi
			done
			samples=$((samples + 1))
			echo "$samples" >"$dir/samples"
		fi
		sleep 0.2
	done
	t="$(date +%s%3N)"
	for c in "${!since[@]}"; do echo "$c ${since[$c]} $t open" >>"$dir/partial"; done
	touch "$dir/done"
}

invariants_start() {
	local dir="$1"
	mkdir -p "$dir"
	rm -f "$dir/stop" "$dir/done"
	_invariants_loop "$dir" &
	echo $! >"$dir/pid"
}

invariants_stop() {
	local dir="$1"
	[[ -f "$dir/pid" ]] || return 0
	touch "$dir/stop"
	wait_until 30 "the invariant checker to stop" test -f "$dir/done" || kill "$(cat "$dir/pid")" 2>/dev/null || true
	rm -f "$dir/pid"
}

invariants_check() {
	local dir="$1" kill_ms="${2:-}" take_ms="${3:-}" c s e rest max=0 bad=0
	local n
	n="$(cat "$dir/samples")"
	((n >= 10)) || fail "the invariant checker took only $n samples"
	if [[ -s "$dir/violations" ]]; then
		sed 's/^/    /' "$dir/violations" >&2
		fail "invariants violated ($(wc -l <"$dir/violations") samples)"
	fi
	while read -r c s e rest; do
		local d=$((e - s))
		((d > max)) && max=$d
		((d <= 3000)) && continue
		if [[ -n "$kill_ms" ]] && ((s <= kill_ms + 1000 && e <= take_ms + 3000)); then
			say "    $c partly ungated ${d} ms across the failover (killed mid-ungate; finished by the new leader)"
			continue
		fi
		say "    $c partly ungated from $s to $e (${d} ms)${rest:+ (still at the end)}"
		bad=1
	done <"$dir/partial"
	((bad == 0)) || fail "a gang stayed partly ungated for over 3 s"
	pass "invariants held over $n samples (longest partly-ungated gang: ${max} ms)"
}
