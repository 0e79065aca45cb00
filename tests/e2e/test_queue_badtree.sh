#!/usr/bin/env bash
# A bad tree put in while the webhook is down closes only the queues
# in it. Gangs ga (queue a) and gd (queue d) are created while neither queue
# exists (they wait: "does not exist"); c exists. With the webhook process
# killed (as drill 1, test_drill_webhook_down.sh; a Queue validation that
# fails closed is unregistered meanwhile, as if the Queues came before
# raygate), queues b (parent a), a (parent b) and d (parent b) make a cycle a
# -> b -> a with d hanging under it. The webhook back: ga waits, told a is in
# a cycle, gd waits, told it is under one; a new gang in the unrelated queue c
# is admitted. b's parent removed (the cycle fixed): ga and gd are admitted.
. "$(dirname "$0")/lib.sh"
pods_gated # it watches the gated pods of waiting gangs (--hold-gangs=false)
e2e_setup
U="$(e2e_uid)"
A="bad-a-$U" B="bad-b-$U" C="bad-c-$U" D="bad-d-$U"
e2e_on_exit restore_webhook
tree_queue "$C" cpu=4
inv_start
lap=$SECONDS

for g in ga:"$A" gd:"$D"; do raycluster "${g%%:*}" queue="${g#*:}" cpu=1 | kc apply -n "$NS" -f - >/dev/null; done
for g in ga:"$A" gd:"$D"; do
	wait_until 60 "${g%%:*} waits for its queue" waits_saying "${g%%:*}" "queue ${g#*:} does not exist" ||
		{ wait_texts "${g%%:*}"; fail "${g%%:*} does not wait for its missing queue ${g#*:}"; }
done
pass "ga and gd wait for their queues (took $((SECONDS - lap))s)"

"$ROOT/hack/cluster.sh" stop raygate-webhook KILL
webhook_running && fail "the webhook is still running"
pass "webhook killed"
# queue_hooks: the registered webhook configurations with a rule on Queues
queue_hooks() {
	kc get validatingwebhookconfigurations,mutatingwebhookconfigurations -o json |
		jq -r '.items[] | select(any(.webhooks[]?; any(.rules[]?; .resources | index("queues")))) | "\(.kind)/\(.metadata.name)"'
}
if ! tree_queue "$B" parent="$A" 2>"$E2E_TMP/err"; then
	grep -F 'failed calling webhook' "$E2E_TMP/err" >/dev/null || { cat "$E2E_TMP/err" >&2; fail "could not create queue $B"; }
	say "    the Queue validation fails closed: unregistering it meanwhile ($(echo $(queue_hooks)))"
	for h in $(queue_hooks); do
		kc get "$h" -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields)' \
			>"$E2E_TMP/hook-${h//\//_}.json"
		e2e_on_exit "kc apply -f $E2E_TMP/hook-${h//\//_}.json >/dev/null 2>&1"
		kc delete "$h" >/dev/null
	done
	tree_queue "$B" parent="$A"
fi
tree_queue "$A" parent="$B"
tree_queue "$D" parent="$B"
pass "the cycle $A -> $B -> $A (and $D under $B) put in while the webhook was down"
"$ROOT/hack/cluster.sh" start-webhook
for f in "$E2E_TMP"/hook-*.json; do [[ -e "$f" ]] && kc apply -f "$f" >/dev/null; done
pass "webhook back (took $((SECONDS - lap))s)"
lap=$SECONDS

wait_until 30 "ga told its queue is in a cycle" waits_saying ga "$A" "cycle" || { wait_texts ga; fail "ga is not told $A is in a cycle"; }
pass "ga waits: $A is in a cycle"
wait_until 30 "gd told it is under the cycle" waits_saying gd "$D" "$B" || { wait_texts gd; fail "gd is not told $D is under a bad queue"; }
pass "gd waits: $D is under $B"
raycluster gc queue="$C" cpu=1 | kc apply -n "$NS" -f - >/dev/null
all_or_none_watch gc 1 60 || fail "gc (queue $C, outside the cycle) was not admitted"
pass "gc admitted: the rest of the tree goes on (took $((SECONDS - lap))s)"
bad_wait() { all_gated ga 1 && all_gated gd 1 && ! admitted ga && ! admitted gd; }
stays 3 "ga and gd still wait" bad_wait
lap=$SECONDS

kc patch queue "$B" --type json -p '[{"op":"remove","path":"/spec/parent"}]' >/dev/null
pass "the cycle fixed: $B's parent removed ($A and $D are its leaves)"
all_or_none_watch ga 1 60 || { wait_texts ga; fail "ga was not admitted once the cycle was fixed"; }
all_or_none_watch gd 1 60 || { wait_texts gd; fail "gd was not admitted once the cycle was fixed"; }
pass "ga and gd admitted (took $((SECONDS - lap))s)"
inv_stop
