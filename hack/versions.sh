# Versions of the upstream programs the local control plane runs, each one
# setting: hack/build-upstream.sh derives the Kubernetes wrapper module from
# K8S_VERSION (every staging module pinned to it) and checks that the binaries
# were built from that version's code. Sourced by hack/*.sh (through
# hack/lib.sh, which also takes a running cluster's versions from its state).
#
# The support window (README: Kubernetes and KubeRay versions): the newest is
# the default; the oldest runs the e2e subset in a shard of its own
# (hack/e2e.sh --oldest). RAYGATE_K8S_VERSION and RAYGATE_KUBERAY_VERSION, or
# hack/cluster.sh up --k8s V --kuberay-version V, pick others.
# KubeRay v1.7.0 is not served by the module proxy here: v1.6.2 is the newest.
K8S_NEWEST=v1.37.2
K8S_OLDEST=v1.33.13
KUBERAY_NEWEST=v1.6.2
KUBERAY_OLDEST=v1.5.1
K8S_VERSION="${RAYGATE_K8S_VERSION:-$K8S_NEWEST}"
KUBERAY_VERSION="${RAYGATE_KUBERAY_VERSION:-$KUBERAY_NEWEST}"
KWOK_VERSION=v0.7.0
# etcd, from its Go module: Debian 12's etcd 3.4 lacks what kube-apiserver 1.37
# asks of its storage (RequestWatchProgress: watches that stream their initial
# list, which kwok's client-go uses); the 3.6 line serves both ends of the window.
ETCD_VERSION=v3.6.16
HELM_VERSION=v3.18.6
RAYGATE_CACHE="${RAYGATE_CACHE:-$HOME/.cache/raygate}"
ETCD_BIN="$RAYGATE_CACHE/etcd-$ETCD_VERSION/bin"
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
# Karpenter with its kwok cloud provider (the main package sigs.k8s.io/karpenter/kwok),
# built only by hack/build-upstream.sh --with karpenter (hack/cluster.sh up --karpenter:
# nodes made on demand; docs/nodes.md). Its CRDs come from its module.
KARPENTER_VERSION=v1.14.1
KARPENTER_BIN="$RAYGATE_CACHE/karpenter-$KARPENTER_VERSION/bin"
karpenter_module_dir() { echo "$(go env GOMODCACHE)/sigs.k8s.io/karpenter@$KARPENTER_VERSION"; }
