// Package upstreampeerscoscheduling only anchors the wrapper module; the
// scheduler is built by path from hack/build-upstream.sh.
package upstreampeerscoscheduling
