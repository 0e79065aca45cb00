#!/usr/bin/env bash
# The guide's walkthrough (test_gate_walkthrough.sh: test-cluster-0
# admitted whole, test-cluster-1 waits whole and says why in
# `kubectl describe pod`, and is admitted once test-cluster-0 is deleted) with
# raygate in-cluster on the real node instead of the host binaries.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/incluster.sh"
incluster_setup
if ! installed_ready; then
	uninstall_raygate
	install_kustomize
fi
eventually 180 "raygate in-cluster: Job complete, 2+2 pods Ready on $REAL_NODE_NAME, webhook through the Service" installed_ready
bash "$ROOT/tests/e2e/test_gate_walkthrough.sh" || fail "the walkthrough failed with raygate in-cluster"
pass "the walkthrough passed with raygate in-cluster"
