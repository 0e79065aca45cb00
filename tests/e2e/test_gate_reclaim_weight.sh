#!/usr/bin/env bash
# Reclaim by deserved derived by weight (raygate.io/reclaim-by-weight).
# test_gate_reclaim_deserved.sh's case with neither queue setting spec.deserved:
# equal weights on cpu 8 derive cpu 4 each while both ask for more, and qa's
# gang reclaims qb's two newest clusters whole, then nothing moves. Fails
# without the annotation's rule: a queue without spec.deserved never reclaimed.
RECLAIM_BY=weight exec bash "$(dirname "$0")/test_gate_reclaim_deserved.sh"
