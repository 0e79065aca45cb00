// Package upstreamkuberay only anchors the wrapper module; the operator is
// built by path from hack/build-upstream.sh.
package upstreamkuberay
