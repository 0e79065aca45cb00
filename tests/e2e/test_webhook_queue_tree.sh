#!/usr/bin/env bash
# The queue tree at admission, on the real control plane: with
# root -> eng (cpu 16) -> {train (cpu 8), infer}, a RayCluster naming eng is
# denied with eng's children named, one naming train is admitted; a Queue with
# a missing parent, its own parent, or closing a cycle (a -> b, then b -> a)
# is denied naming spec.parent; deleting eng (it has children) or train (it
# holds a running gang) is denied; a capability above the parent's is allowed
# with a warning. A leaf that holds a running gang cannot gain a child
# (as Volcano does): the child is denied, the gang keeps running, and its
# RayCluster can still be updated. Deletions are tried with --dry-run=server: the
# webhooks run, nothing is deleted.
. "$(dirname "$0")/lib.sh"
e2e_setup
u="$(e2e_uid)"
ENG="eng-$u" TRAIN="train-$u" INFER="infer-$u"

# tree_queue NAME PARENT [CPU]: applies a Queue under PARENT ("" for the root),
# capability cpu CPU when given; kubectl's output (warnings included) on stdout
tree_queue() {
	local out rc=0 spec="weight: 1"
	spec+="${2:+, parent: $2}${3:+, capability: {cpu: \"$3\"\}}"
	out="$(kc apply -f - 2>&1 <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $1, labels: {e2e.raygate.io/added: "true"}}
		spec: {$spec}
	YAML
	)" || rc=$?
	[[ " ${E2E_QUEUES[*]} " == *" $1 "* ]] || ((rc != 0)) || E2E_QUEUES+=("$1")
	echo "$out"
	return $rc
}

# refused WHAT WANT COMMAND...: COMMAND fails, and its output holds WANT
refused() {
	local what="$1" want="$2" out
	shift 2
	out="$("$@" 2>&1)" && fail "$what: allowed: $out"
	[[ "$out" == *"$want"* ]] || fail "$what: refused, but the message lacks '$want': $out"
	say "    $out"
	pass "$what: denied"
}

# The webhook watches Queues: a child is created once the webhook has seen its parent.
tree_queue "$ENG" "" 16 >/dev/null || fail "Queue $ENG not created"
eventually 20 "Queue $TRAIN created under $ENG" tree_queue "$TRAIN" "$ENG" 8
eventually 20 "Queue $INFER created under $ENG" tree_queue "$INFER" "$ENG"

# denied_naming CLUSTER QUEUE CHILDREN: creating the RayCluster CLUSTER in QUEUE
# is denied, naming CHILDREN (one created before the webhook saw them is
# deleted, for the caller's next try)
denied_naming() {
	local out
	if out="$(raycluster "$1" queue="$2" workers=1 | kc create -n "$NS" -f - 2>&1)"; then
		kc delete rayclusters.ray.io -n "$NS" "$1" --wait=true >/dev/null
		return 1
	fi
	echo "$out" >"$E2E_TMP/denied"
	[[ "$out" == *"metadata.labels[volcano.sh/queue-name]: queue $2 has children ($3): only leaf queues hold gangs"* ]]
}

# Non-leaf denial, with the children named (eventually: until the webhook has seen both children).
eventually 20 "a RayCluster naming $ENG is denied, naming its children $INFER and $TRAIN" denied_naming c-eng "$ENG" "$INFER, $TRAIN"
say "    $(cat "$E2E_TMP/denied")"
gone rayclusters.ray.io c-eng || fail "RayCluster c-eng exists"
refused "a RayJob naming $ENG" "queue $ENG has children ($INFER, $TRAIN)" \
	bash -c "sed -e 's/name: rayjob-sample/name: j-eng/' -e 's/volcano.sh\/queue-name: .*/volcano.sh\/queue-name: $ENG/' \
		'$ROOT/samples/rayjob-sample.yaml' | '$KUBECTL' create -n '$NS' -f -"

# A leaf is admitted by the webhook, and its gang runs.
raycluster c-train queue="$TRAIN" workers=1 | kc create -n "$NS" -f - >/dev/null || fail "a RayCluster naming the leaf $TRAIN was denied"
pass "a RayCluster naming the leaf $TRAIN is admitted by the webhook"
all_or_none_watch c-train 2 90 || fail "c-train was not admitted whole"
eventually 60 "c-train's 2 pods Running" pods_are c-train 2 Running

# Queue validation: spec.parent.
refused "a Queue whose parent does not exist" "spec.parent: parent queue ghost-$u does not exist" tree_queue "x-$u" "ghost-$u"
refused "a Queue that is its own parent" "spec.parent: queue self-$u cannot be its own parent" tree_queue "self-$u" "self-$u"
tree_queue "a-$u" "" >/dev/null || fail "Queue a-$u not created"
eventually 20 "Queue b-$u created under a-$u" tree_queue "b-$u" "a-$u"
cycle() { ! tree_queue "a-$u" "b-$u" >"$E2E_TMP/cycle" 2>&1 && grep -qF "spec.parent: parent b-$u makes a cycle: a-$u -> b-$u -> a-$u" "$E2E_TMP/cycle"; }
eventually 20 "a-$u under b-$u (a cycle) is denied naming spec.parent and the cycle" cycle
say "    $(cat "$E2E_TMP/cycle")"
assert_eq "a-$u's parent after the denied update" "" "$(kc get queue "a-$u" -o jsonpath='{.spec.parent}')"

# Deletions (dry run on the server: the webhook decides, nothing is deleted).
refused "deleting $ENG (it has children)" "queue $ENG has children ($INFER, $TRAIN)" kc delete queue "$ENG" --dry-run=server
holds() { ! kc delete queue "$TRAIN" --dry-run=server >"$E2E_TMP/del" 2>&1 && grep -qE "status\.(running|inqueue|allocated): queue $TRAIN" "$E2E_TMP/del"; }
eventually 30 "deleting $TRAIN (it holds the running gang c-train) is denied, naming the status field" holds
say "    $(cat "$E2E_TMP/del")"
kc delete queue "$INFER" --dry-run=server >/dev/null 2>&1 || fail "deleting the idle leaf $INFER (dry run) was denied"
pass "deleting the idle leaf $INFER is allowed (dry run)"

# A capability above the parent's: allowed, with a warning.
out="$(tree_queue "big-$u" "$ENG" 32)" || fail "Queue big-$u (capability above its parent's) was denied: $out"
E2E_QUEUES+=("big-$u") # (created in a subshell)
say "    $out"
[[ "$out" == *"Warning:"*"spec.capability.cpu: 32 is above 16, the capability of its parent $ENG"* ]] ||
	fail "no warning for a capability above the parent's: $out"
pass "a capability above the parent's is allowed with a warning"

# The leaf holding a running gang cannot gain a child (as Volcano):
# only leaves hold gangs, so the running gang would be orphaned; it keeps running.
parent_holds() { ! tree_queue "sub-$u" "$TRAIN" >"$E2E_TMP/sub" 2>&1 &&
	grep -qF "queue $TRAIN cannot be the parent queue of queue sub-$u because it has allocated Pods" "$E2E_TMP/sub"; }
eventually 30 "a child of $TRAIN (which holds the running gang c-train) is denied" parent_holds
say "    $(cat "$E2E_TMP/sub")"
kc label rayclusters.ray.io -n "$NS" c-train e2e.raygate.io/touched=yes >/dev/null || fail "an update of c-train was denied"
pass "c-train can still be updated"
stays 8 "c-train keeps its 2 pods Running" pods_are c-train 2 Running
