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
# Peers raygate is compared with (hack/bench.sh --parts peers), built only by
# hack/build-upstream.sh --peers (hack/cluster.sh up --gang kueue|coscheduling).
KUEUE_VERSION=v0.13.10
SCHEDPLUGINS_VERSION=v0.33.5
KUEUE_BIN="$RAYGATE_CACHE/kueue-$KUEUE_VERSION/bin"
SCHEDPLUGINS_BIN="$RAYGATE_CACHE/scheduler-plugins-$SCHEDPLUGINS_VERSION/bin"
# Their modules in the Go module cache (CRDs, webhook manifests, scheduler configuration).
kueue_module_dir() { echo "$(go env GOMODCACHE)/sigs.k8s.io/kueue@$KUEUE_VERSION"; }
schedplugins_module_dir() { echo "$(go env GOMODCACHE)/sigs.k8s.io/scheduler-plugins@$SCHEDPLUGINS_VERSION"; }
