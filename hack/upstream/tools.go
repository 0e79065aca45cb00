// Package upstream only anchors the wrapper module; the programs are built by
// path from hack/build-upstream.sh.
package upstream
