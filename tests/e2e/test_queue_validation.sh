#!/usr/bin/env bash
# Volcano's own Queue and HyperNode admission cases
# (volcano-sh/volcano validate_queue_test.go, admit_hypernode_test.go; all of
# them in tests/fixtures/queuecheck/volcano.json and hypercheck/cases.json)
# replayed, a subset, through kubectl against the real webhook: quantities
# (guarantee without deserved, deserved above capability, negative), the
# siblings' guarantees above their parent's, a parent's guarantee lowered
# below its children's, a child's capability above its parent's (a warning),
# and a HyperNode whose regexMatch.pattern does not compile. Each is
# refused naming the field, in Volcano's words.
. "$(dirname "$0")/lib.sh"
e2e_setup
u="$(e2e_uid)"
P="vp-$u" A="va-$u"

# queue NAME SPEC: applies a Queue with spec {SPEC}; kubectl's output (warnings included) on stdout
queue() {
	local out rc=0
	out="$(kc apply -f - 2>&1 <<-YAML
		apiVersion: scheduling.volcano.sh/v1beta1
		kind: Queue
		metadata: {name: $1, labels: {e2e.raygate.io/added: "true"}}
		spec: {$2}
	YAML
	)" || rc=$?
	[[ " ${E2E_QUEUES[*]} " == *" $1 "* ]] || ((rc != 0)) || E2E_QUEUES=("$1" "${E2E_QUEUES[@]}")
	echo "$out"
	return $rc
}

# refused CASE WANT COMMAND...: COMMAND fails (eventually: the webhook's watch may lag), its output holding WANT
refused() {
	local what="$1" want="$2"
	shift 2
	try() { ! "$@" >"$E2E_TMP/out" 2>&1 && grep -qF -- "$want" "$E2E_TMP/out"; }
	eventually 20 "$what: denied, naming '$want'" try "$@"
	say "    $(cat "$E2E_TMP/out")"
}

refused "Create queue with guarantee but no deserved should be rejected" \
	"spec.deserved.cpu: deserved[cpu] must be >= guarantee[cpu]=1" queue "g-$u" 'guarantee: {resource: {cpu: "1"}}'
refused "Create queue with capability less deserved" \
	"spec.deserved.cpu: deserved[cpu]=2 must be <= capability[cpu]=1" queue "c-$u" 'capability: {cpu: "1"}, deserved: {cpu: "2"}'
refused "Queue with negative capability should be rejected" \
	"spec.capability.cpu: -10 must be greater than or equal to 0" queue "n-$u" 'capability: {cpu: "-10"}'
refused "Queue with negative guarantee should be rejected" \
	"spec.guarantee.resource.cpu: -2 must be greater than or equal to 0" queue "ng-$u" 'guarantee: {resource: {cpu: "-2"}}'
queue "d-$u" 'deserved: {cpu: "1"}, guarantee: {resource: {cpu: "1"}}' >/dev/null || fail "a Queue with guarantee = deserved was denied"
pass "Create queue with deserved resource (and as much guarantee): allowed"

# The tree: P guarantees cpu 8, A (under P) 2; a sibling guaranteed 7 would make 9.
queue "$P" 'capability: {cpu: "10"}, deserved: {cpu: "8"}, guarantee: {resource: {cpu: "8"}}' >/dev/null || fail "Queue $P not created"
eventually 20 "Queue $A created under $P" queue "$A" "parent: $P, deserved: {cpu: \"2\"}, guarantee: {resource: {cpu: \"2\"}}"
refused "Siblings guarantee sum exceeds parent guarantee" \
	"parent queue $P validation failed: spec.guarantee.resource.cpu: sum of children's guarantee (cpu 9) exceeds parent's guarantee limit (cpu 8)" \
	queue "vb-$u" "parent: $P, deserved: {cpu: \"7\"}, guarantee: {resource: {cpu: \"7\"}}"
refused "Sum of children's guarantee exceeds parent guarantee on UPDATE" \
	"queue $P validation failed: spec.guarantee.resource.cpu: sum of children's guarantee (cpu 2) exceeds parent's guarantee limit (cpu 1)" \
	queue "$P" 'capability: {cpu: "10"}, deserved: {cpu: "8"}, guarantee: {resource: {cpu: "1"}}'
assert_eq "$P's guarantee after the denied update" "8" "$(kc get queue "$P" -o jsonpath='{.spec.guarantee.resource.cpu}')"

# Volcano denies a child's capability above its parent's; raygate warns (the parent's applies).
out="$(queue "big-$u" "parent: $P, capability: {cpu: \"20\"}")" || fail "Queue big-$u was denied: $out"
E2E_QUEUES=("big-$u" "${E2E_QUEUES[@]}") # (created in a subshell)
say "    $out"
[[ "$out" == *"Warning:"*"spec.capability.cpu: 20 is above 10, the capability of its parent $P"* ]] ||
	fail "no warning for a capability above the parent's: $out"
pass "Child capability exceeds parent capability: allowed with a kubectl Warning"

# HyperNodes: a pattern that does not compile is refused; a valid one is stored.
hypernode() {
	kc apply -f - 2>&1 <<-YAML
		apiVersion: topology.volcano.sh/v1alpha1
		kind: HyperNode
		metadata: {name: $1, labels: {e2e.raygate.io/added: "true"}}
		spec: {tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: "$2"}}}]}
	YAML
}
refused "validate invalid hypernode with invalid regexMatch" \
	'spec.members[0].selector.regexMatch.pattern: "a(b" is not a valid regular expression' hypernode "hn-bad-$u" "a(b"
hypernode "hn-ok-$u" "^node-[0-9]+$" >/dev/null || fail "a HyperNode with a valid pattern was denied"
pass "a HyperNode with a valid pattern is stored"
kc delete hypernode "hn-ok-$u" --wait=true >/dev/null
