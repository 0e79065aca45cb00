#!/usr/bin/env bash
# KubeRay's own samples through raygate's webhook, as a user applies them with
# a queue label: every RayCluster, RayJob and RayService document of
# config/samples (recursively) in the ray-operator module of the release the
# cluster runs (KUBERAY_VERSION), labelled volcano.sh/queue-name and applied
# with a server-side dry run (`kubectl apply --dry-run=server -o json`; a
# document with only generateName through kubectl create): the mutating
# webhook runs, nothing is stored, no Ray starts. Each must be allowed (but
# those listed in DENY) and come back mutated as raygate mutates its kind
# (kuberay_samples.py says what is checked); a kind the cluster does not serve
# ("no matches for kind") and the ray.io kinds raygate admits none of
# (RayCronJob) are skipped and listed. At least 60 documents must be checked,
# so that samples not found cannot pass. RayServices are only checked by the
# webhook, never mutated: one labelled with a queue that has children is
# denied, which shows that they reach it.
. "$(dirname "$0")/lib.sh"
e2e_setup
webhook_running || fail "raygate's webhook is not running (cluster started with --no-raygate?)"

SAMPLES="$(go env GOMODCACHE)/github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION/config/samples"
[[ -d "$SAMPLES" ]] || fail "KubeRay $KUBERAY_VERSION's samples are not in the Go module cache: $SAMPLES"
# Samples raygate is right to deny, as FILE=TEXT (FILE relative to config/samples,
# TEXT a part of the denial that says why): none in KubeRay v1.5.1 nor v1.6.2.
DENY=()

Q="samples-$(e2e_uid)"
make_queue "$Q" 10000 100000Gi
D="$E2E_TMP/samples"
python3 "$ROOT/tests/e2e/kuberay_samples.py" split "$SAMPLES" "$D" "$Q" || fail "could not read the samples in $SAMPLES"

t0=$SECONDS
while read -r n kind verb src; do
	[[ "$verb" != skip ]] || continue
	rc=0
	kc "$verb" --dry-run=server -o json -n "$NS" -f "$D/$n.json" >"$D/$n.out" 2>"$D/$n.err" || rc=$?
	echo "$rc" >"$D/$n.rc"
done <"$D/index"
pass "KubeRay $KUBERAY_VERSION's samples applied with a server-side dry run in $((SECONDS - t0))s"

deny_args=()
for d in ${DENY[@]+"${DENY[@]}"}; do deny_args+=(--deny "$d"); done
rc=0
python3 "$ROOT/tests/e2e/kuberay_samples.py" check "$D" "$Q" ${deny_args[@]+"${deny_args[@]}"} \
	>"$E2E_TMP/report" || rc=$?
grep -v '^summary: ' "$E2E_TMP/report" | sed 's/^/    /' >&2 || true
summary="$(grep '^summary: ' "$E2E_TMP/report")" || fail "no summary from kuberay_samples.py check (status $rc)"
((rc == 0)) || fail "$(grep -c '^FAIL: ' "$E2E_TMP/report") failures; the first: $(grep -m1 '^FAIL: ' "$E2E_TMP/report" | cut -c7-)"
checked="${summary#summary: }"
checked="${checked%% *}"
((checked >= 60)) || fail "only $checked RayCluster, RayJob and RayService documents checked in $SAMPLES (at least 60 expected)"
pass "every sample admitted as raygate mutates its kind: ${summary#summary: }"

# A RayService naming a queue that has children: denied by the webhook
# (eventually: until its queue watch has seen the child). The first RayService
# checked above; none when the cluster serves no RayService (skipped above).
svc="" src=""
while read -r n kind verb src; do
	[[ "$kind" == RayService && "$verb" != skip && "$(cat "$D/$n.rc")" == 0 ]] && { svc="$n"; break; }
done <"$D/index"
if [[ -z "$svc" ]]; then
	say "no RayService was checked: the check that RayServices reach the webhook is skipped"
	exit 0
fi
tree_queue "$Q-parent"
tree_queue "$Q-child" parent="$Q-parent"
sed "s|\"volcano.sh/queue-name\": \"$Q\"|\"volcano.sh/queue-name\": \"$Q-parent\"|" "$D/$svc.json" >"$D/parent.json"
grep -qF "\"$Q-parent\"" "$D/parent.json" || fail "could not relabel $D/$svc.json"
parent_denied() {
	! kc apply --dry-run=server -n "$NS" -f "$D/parent.json" >"$D/parent.err" 2>&1 &&
		grep -qF "queue $Q-parent has children ($Q-child): only leaf queues hold gangs" "$D/parent.err"
}
eventually 20 "the RayService of $src in queue $Q-parent (it has children) is denied" parent_denied
