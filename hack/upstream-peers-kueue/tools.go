// Package upstreampeerskueue only anchors the wrapper module; Kueue's manager
// is built by path from hack/build-upstream.sh.
package upstreampeerskueue
