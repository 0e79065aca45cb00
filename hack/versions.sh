# Versions of the upstream programs the local control plane runs.
# Sourced by hack/*.sh; change a version here and hack/build-upstream.sh rebuilds.
K8S_VERSION=v1.33.13
KWOK_VERSION=v0.7.0
KUBERAY_VERSION=v1.5.1
HELM_VERSION=v3.18.6
RAYGATE_CACHE="${RAYGATE_CACHE:-$HOME/.cache/raygate}"
K8S_BIN="$RAYGATE_CACHE/k8s-$K8S_VERSION/bin"
KWOK_BIN="$RAYGATE_CACHE/kwok-$KWOK_VERSION/bin"
KUBERAY_BIN="$RAYGATE_CACHE/kuberay-$KUBERAY_VERSION/bin"
HELM_BIN="$RAYGATE_CACHE/helm-$HELM_VERSION/bin"
# KubeRay's CRDs, taken from its module in the Go module cache.
kuberay_crd_dir() {
	echo "$(go env GOMODCACHE)/github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION/config/crd/bases"
}
