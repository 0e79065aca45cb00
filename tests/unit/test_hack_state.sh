#!/usr/bin/env bash
# hack/lib.sh's state folder and offsets without a cluster (two
# clusters in one checkout never share state; a relative RAYGATE_STATE works):
# STATE is absolute whatever the folder the command runs in, and the kubeconfig
# hack/cluster.sh writes there names its CA by a path kubectl resolves
# (relative paths in a kubeconfig are taken from the kubeconfig's folder);
# without RAYGATE_STATE each offset has its own folder; a state folder of
# another offset is refused; the offsets of tests/e2e/multi.sh are accepted.
#
#   test_hack_state.sh SOURCE_ROOT
set -uo pipefail
root="$1"
fails=0
check() { # what expected actual
	if [[ "$2" == "$3" ]]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; fails=$((fails + 1)); fi
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# lib VAR=VALUE... -- CODE: CODE run after sourcing hack/lib.sh in a clean environment, from $work
lib() {
	local env=()
	while [[ "$1" != -- ]]; do env+=("$1"); shift; done
	shift
	env -i PATH="$PATH" HOME="$HOME" "${env[@]}" bash -c ". '$root/hack/lib.sh'; $1" 2>&1
}

check "a relative RAYGATE_STATE is made absolute" "$work/.cluster-a" "$(lib RAYGATE_STATE=.cluster-a -- 'echo $STATE')"
check "... and exported so" "$work/.cluster-a" "$(lib RAYGATE_STATE=.cluster-a -- 'echo $RAYGATE_STATE')"
check "its kubeconfig is inside it" "$work/.cluster-a/kubeconfig" "$(lib RAYGATE_STATE=.cluster-a -- 'echo $KUBECONFIG')"
check "no RAYGATE_STATE, offset 0: .cluster" "$root/.cluster" "$(lib -- 'echo $STATE')"
check "no RAYGATE_STATE, offset 100: a folder of its own" "$root/.cluster-100" "$(lib RAYGATE_PORT_OFFSET=100 -- 'echo $STATE')"
check "multi.sh's worker offset N + 20 is accepted" "26663" "$(lib RAYGATE_PORT_OFFSET=220 -- 'echo $APISERVER_PORT')"
check "multi.sh's manager offset N + 40 is accepted" "26683" "$(lib RAYGATE_PORT_OFFSET=240 -- 'echo $APISERVER_PORT')"
check "offset 210 is refused (its etcd would be 200's etcd peer port)" 2 "$(lib RAYGATE_PORT_OFFSET=210 -- 'true' >/dev/null; echo $?)"

# The kubeconfig hack/cluster.sh writes, used by kubectl's rules for paths in it.
mkdir -p .cluster-a/pki && echo ca >.cluster-a/pki/ca.crt && echo tok >.cluster-a/pki/admin.token
ca="$(lib RAYGATE_STATE=.cluster-a -- 'PKI=$STATE/pki; eval "$(sed -n "/^write_kubeconfig() {/,/^}/p" "$ROOT/hack/cluster.sh")"; write_kubeconfig; sed -n "s/^ *certificate-authority: //p" "$KUBECONFIG"')"
check "the kubeconfig's CA path is absolute and names the CA" "$work/.cluster-a/pki/ca.crt" "$ca"

# A state folder records the offset its cluster was brought up on.
echo 100 >.cluster-a/port-offset
out="$(lib RAYGATE_STATE=.cluster-a RAYGATE_PORT_OFFSET=200 -- 'check_state_offset; echo accepted')"
check "another offset's state folder is refused" "refused" "$([[ "$out" == *"RAYGATE_PORT_OFFSET=100, not 200"* ]] && echo refused || echo "$out")"
check "the same offset's is accepted" "accepted" "$(lib RAYGATE_STATE=.cluster-a RAYGATE_PORT_OFFSET=100 -- 'check_state_offset; echo accepted')"

((fails == 0)) || { echo "$fails check(s) failed"; exit 1; }
