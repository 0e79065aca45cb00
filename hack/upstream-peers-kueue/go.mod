// Wrapper module used only by hack/build-upstream.sh to build Kueue, a peer
// that hack/bench.sh --parts peers compares raygate with. Never part of raygate.
// (`go install mod@version` needs the module proxy's version list; an exact
// require in a wrapper module does not.)
module raygate.local/upstream-peers-kueue

go 1.24.0

require sigs.k8s.io/kueue v0.13.10
