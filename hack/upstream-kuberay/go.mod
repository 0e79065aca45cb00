// Wrapper module used only by hack/build-upstream.sh to build the KubeRay
// operator for the local test control plane (plain `go install mod@version`
// needs the module proxy's version list, which is not always served).
module raygate.local/upstream-kuberay

go 1.24.0

require github.com/ray-project/kuberay/ray-operator v1.5.1
