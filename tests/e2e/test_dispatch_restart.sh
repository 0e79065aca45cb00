#!/usr/bin/env bash
# A dispatcher restart mid-dispatch leaves no orphan and no
# duplicate. The sampler (both workers every 0.5 s) runs throughout.
# 1. A crash between the two writes of a nomination: the dispatcher runs with
#    --test-fault-exit-at-nomination 2 and exits, as a crash would, right
#    after writing raygate.io/dispatched-to of its second nomination and
#    before creating that copy. Restarted, it creates the copy on that worker,
#    never on the other.
# 2. SIGKILLs in a tight loop (each 0.2-1.5 s after start-dispatch, which
#    waits 1 s: a pass or two at --resync 1s; then a restart) during a burst
#    of four more RayClusters, each created just before one of the kills.
# 3. SIGKILLs while the eight gangs run and their leases are renewed (lease
#    40 s, renewed every 10 s): the renewals go on after the restarts, and no
#    gang moves or is evicted.
# 4. Two objects deleted on the manager while the dispatcher is down, one of
#    them with its finalizer dropped by hand (its copy is then an orphan):
#    restarted, the dispatcher deletes both copies.
# Throughout: each manager object has exactly one copy, on the worker its
# dispatched-to names, all pods bound there, none on the other worker; no copy
# whose origin uid names no manager object; no gang ever bound on both.
. "$(dirname "$0")/multi.sh"
LEASE=40
# A restart within the dispatch timeout creates a nominated copy again (beyond it, the gang is nominated afresh):
# the product's default, not the harness's 30 s, so that a busy machine's slow restart stays within it.
multi_setup --dispatch-lease "${LEASE}s" --dispatch-timeout 60s
samp_start
U="$(e2e_uid)"
KINDS=rayclusters.ray.io
other() { [[ "$1" == a ]] && echo b || echo a; }
dispatcher_gone() { ! kill -0 "$(multi_dispatch_pid 2>/dev/null)" 2>/dev/null; }
dispatcher_log() { cat "$(multi_state m)/logs/raygate-dispatch.log"; }

# all_one_copy NAME...: each NAME's copy (its origin uid) on the worker its
# dispatched-to names, none on the other, its 3 pods all bound there (five
# lists in all: a busy machine's kubectl is slow; read from files: too long
# for an argument)
all_one_copy() {
	local d="$E2E_TMP/one"
	mkdir -p "$d"
	on m get $KINDS -n "$NS" -o json >"$d/m" && on a get $KINDS -n "$NS" -o json >"$d/a" &&
		on b get $KINDS -n "$NS" -o json >"$d/b" && on a get pods -n "$NS" -o json >"$d/pa" &&
		on b get pods -n "$NS" -o json >"$d/pb" || return 1
	jq -en --slurpfile m "$d/m" --slurpfile a "$d/a" --slurpfile b "$d/b" --slurpfile pa "$d/pa" --slurpfile pb "$d/pb" --args '
		def copies($l): [$l[0].items[] | {key: .metadata.name, value: (.metadata.annotations["raygate.io/dispatch-origin-uid"] // "")}] | from_entries;
		def bound($p; $n): [$p[0].items[] | select(.metadata.labels["ray.io/cluster"] == $n)] | length == 3 and all(.spec.nodeName != null);
		(copies($a)) as $ca | (copies($b)) as $cb | ($m[0].items | map({key: .metadata.name, value: .}) | from_entries) as $mo |
		all($ARGS.positional[]; . as $n | $mo[$n] as $o | $o != null and
			($o.metadata.annotations["raygate.io/dispatched-to"] // "") as $to |
			if $to == "a" then $ca[$n] == $o.metadata.uid and $cb[$n] == null and bound($pa; $n)
			elif $to == "b" then $cb[$n] == $o.metadata.uid and $ca[$n] == null and bound($pb; $n)
			else false end)' "$@" >/dev/null
}

# no_orphan: every copy of this manager's on a worker names a manager object by its origin uid
no_orphan() {
	local uids w orphans
	uids="$(on m get $KINDS -n "$NS" -o json | jq -c '[.items[].metadata.uid]')"
	for w in a b; do
		orphans="$(on "$w" get $KINDS -n "$NS" -o json | jq -r --argjson u "$uids" \
			'.items[] | (.metadata.annotations["raygate.io/dispatch-origin-uid"] // empty) as $o |
			 select($u | index($o) | not) | "\(.metadata.name) (origin uid \($o))"')"
		[[ -z "$orphans" ]] || fail "orphan copies on $w: $orphans"
	done
	pass "no copy on a or b whose origin uid names no manager object"
}

# 1. A crash between writing dispatched-to and creating the copy.
multi_dispatch_restart --test-fault-exit-at-nomination 2 || fail "raygate-dispatch with the test fault did not start"
mq "r-$U" a=6 b=6 # each worker's Queue holds two gangs of 3 CPUs
for g in g1 g2 g3 g4; do raycluster "$g" queue="r-$U" workers=2; echo ---; done | on m apply -n "$NS" -f - >/dev/null ||
	fail "cannot create g1..g4 on the manager"
eventually 60 "the dispatcher exits at its second nomination (the test fault)" dispatcher_gone
dispatcher_log | grep -q 'test fault: exiting at nomination 2,' || fail "the dispatcher ended otherwise than at the test fault"
# The one nominated but not created: dispatched-to set, no copy anywhere (three lists: quick, within the timeout).
names() { on "$1" get $KINDS -n "$NS" -o json | jq -c '[.items[].metadata.name]'; }
read -r faulted fw < <(on m get $KINDS -n "$NS" -o json | jq -r --argjson a "$(names a)" --argjson b "$(names b)" \
	'[.items[] | (.metadata.annotations["raygate.io/dispatched-to"] // "") as $to | .metadata.name as $n |
	  select($to != "" and ($a | index($n) | not) and ($b | index($n) | not)) | "\($n) \($to)"] |
	 if length == 1 then .[0] else "\(length) -" end')
[[ "$fw" == a || "$fw" == b ]] || fail "not one object dispatched without its copy after the test fault: $faulted"
pass "$faulted is dispatched to $fw, its copy not made (the dispatcher exited between the two writes)"
faulted_uid="$(m_uid $KINDS "$faulted")"
multi_dispatch_restart || fail "raygate-dispatch did not start again"
eventually 30 "$faulted's copy is created on $fw after the restart" has_copy "$fw" $KINDS "$faulted" "$faulted_uid"
eventually 120 "g1..g4: each has one copy, on its dispatched-to worker, bound whole there" all_one_copy g1 g2 g3 g4
assert_eq "$faulted's worker after the restart" "$fw" "$(dispatched_to $KINDS "$faulted")"
assert_eq "the workers $faulted was ever bound in" "$fw" "$(samp_ever "$faulted_uid")"

# 2. SIGKILLs in a tight loop during a burst.
mq "k-$U" a=6 b=6
# Each created just before a kill: the kill lands before, during or after its nomination.
for i in $(seq 1 8); do
	if ((i <= 4)); then
		raycluster "h$i" queue="k-$U" workers=2 | on m apply -n "$NS" -f - >/dev/null || fail "cannot create h$i on the manager"
	fi
	ms=$((200 + RANDOM % 1300))
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	multi_dispatch_restart || fail "raygate-dispatch did not start again (kill $i)"
done
pass "the dispatcher killed (SIGKILL) and restarted 8 times during the burst (h1..h4 created before the first four kills)"
eventually 150 "h1..h4: each has one copy, on its dispatched-to worker, bound whole there" all_one_copy h1 h2 h3 h4
all_one_copy g1 g2 g3 g4 || fail "g1..g4 no longer one copy each, bound whole"
samp_assert "no gang bound in two clusters at once after the kills during the burst"

# 3. SIGKILLs while the gangs run and are renewed.
copy_lease() { on "$1" get $KINDS -n "$NS" "$2" -o json | jq -r '.metadata.annotations["raygate.io/dispatch-lease"] // ""'; }
declare -A where lease0
for g in g1 g2 g3 g4 h1 h2 h3 h4; do
	where[$g]="$(dispatched_to $KINDS "$g")"
	lease0[$g]="$(copy_lease "${where[$g]}" "$g")"
done
for i in $(seq 1 5); do
	sleep "$((1 + RANDOM % 3))"
	multi_dispatch_restart || fail "raygate-dispatch did not start again (kill $i)"
done
pass "the dispatcher killed (SIGKILL) and restarted 5 times while the gangs ran"
all_renewed() {
	local g
	for g in "${!where[@]}"; do [[ "$(copy_lease "${where[$g]}" "$g")" != "${lease0[$g]}" ]] || return 1; done
}
eventually $((LEASE / 4 + 20)) "every copy's lease renewed since the kills began" all_renewed
in_place() {
	local g
	for g in "${!where[@]}"; do
		[[ "$(dispatched_to $KINDS "$g")" == "${where[$g]}" ]] && w_all_bound "${where[$g]}" "$g" 3 || return 1
	done
}
stays 10 "every gang stays bound whole on its worker" in_place
expired() { on "$1" get events -n "$NS" --field-selector reason=DispatchLeaseExpired -o name | grep -q .; }
! expired a && ! expired b || fail "a worker's gate evicted a gang for its lease"
pass "no gang's lease expired on a or b"
all_one_copy g1 g2 g3 g4 h1 h2 h3 h4 || fail "not one copy each, bound whole on its worker"
pass "g1..g4, h1..h4: one copy each, on the worker dispatched-to names, none on the other"
no_orphan
declare -A muid
for g in g1 g2 g3 g4 h1 h2 h3 h4; do
	muid[$g]="$(m_uid $KINDS "$g")"
	[[ "$(samp_ever "${muid[$g]}")" == "${where[$g]}" ]] || fail "$g was bound in $(samp_ever "${muid[$g]}")"
done
pass "each gang was only ever bound on its one worker"

# 4. Deleted on the manager while the dispatcher is down: g1 as usual (its
#    finalizer waits for the dispatcher); h1 with its finalizer dropped by
#    hand, so that its manager object goes at once and its copy is an orphan.
multi_cluster m stop raygate-dispatch KILL
on m delete $KINDS -n "$NS" g1 --wait=false >/dev/null
on m patch $KINDS -n "$NS" h1 --type json -p '[{"op": "remove", "path": "/metadata/finalizers"}]' >/dev/null ||
	fail "cannot drop h1's finalizer"
on m delete $KINDS -n "$NS" h1 --timeout 30s >/dev/null || fail "h1 is not gone from the manager"
has_copy "${where[h1]}" $KINDS h1 "${muid[h1]}" || fail "h1's copy went with the dispatcher down"
pass "g1 deleted and h1 gone on the manager while the dispatcher is down; h1's copy left on ${where[h1]}"
multi_dispatch_restart || fail "raygate-dispatch did not start again"
eventually 60 "g1's copy is deleted on ${where[g1]}" no_copy "${where[g1]}" $KINDS g1
eventually 60 "g1 is gone from the manager (its finalizer dropped)" no_copy m $KINDS g1
eventually 60 "h1's orphan copy is deleted on ${where[h1]}" no_copy "${where[h1]}" $KINDS h1
no_orphan
all_one_copy g2 g3 g4 h2 h3 h4 || fail "the others are no longer one copy each, bound whole on their worker"
pass "g2..g4, h2..h4 still one copy each, bound whole on their worker"
samp_stop
