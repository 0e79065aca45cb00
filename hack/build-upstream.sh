#!/usr/bin/env bash
# Builds the upstream programs of the local test control plane from their Go
# modules into ${RAYGATE_CACHE:-$HOME/.cache/raygate}/<name>-<version>/bin,
# skipping what is already built. Go is used here only for these upstream
# programs; raygate itself is C.
#
#   hack/build-upstream.sh [--peers kueue,coscheduling]
#
# --peers also builds the gang systems raygate is compared with (hack/bench.sh
# --parts peers): Kueue's manager, and scheduler-plugins' scheduler (with the
# Coscheduling plugin) and PodGroup controller.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/versions.sh"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
export CGO_ENABLED=0

log() { printf 'build-upstream: %s\n' "$*" >&2; }

command -v go >/dev/null || { log "go not found (Go 1.24+ is needed to build the upstream programs)"; exit 1; }

build_k8s() {
	# kubelet and kube-proxy: the real node of `hack/cluster.sh up --real-node`.
	local progs=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy) missing=() p
	for p in "${progs[@]}"; do [[ -x "$K8S_BIN/$p" ]] || missing+=("$p"); done
	if ((${#missing[@]} == 0)); then log "kubernetes $K8S_VERSION: cached"; return; fi
	log "kubernetes $K8S_VERSION: building ${missing[*]}"
	log "(compiling Kubernetes from source takes several minutes; it happens once: later runs reuse $K8S_BIN)"
	local v="${K8S_VERSION#v}" major minor pkg ld
	major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
	pkg=k8s.io/component-base/version
	ld="-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	ld+=" -X $pkg/verflag.programName=kubernetes"
	# The wrapper module pins every k8s.io staging module to its published
	# version, which k8s.io/kubernetes' own go.mod replaces with local paths.
	local tmp="$K8S_BIN.tmp"
	rm -rf "$tmp"; mkdir -p "$tmp"
	local pkgs=() 
	for p in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$p"); done
	(cd "$here/upstream" && go build -mod=mod -trimpath -ldflags "$ld" -o "$tmp/" "${pkgs[@]}")
	mkdir -p "$K8S_BIN"
	mv "$tmp"/* "$K8S_BIN/"; rmdir "$tmp"
}

go_install() { # name version bindir module-path
	local name="$1" version="$2" bin="$3" mod="$4" prog
	prog="$(basename "$mod")"
	if [[ -x "$bin/$prog" ]]; then log "$name $version: cached"; return; fi
	log "$name $version: building"
	mkdir -p "$bin"
	GOBIN="$bin" go install -trimpath -ldflags "-s -w" "$mod@$version"
}

build_kuberay() {
	if [[ -x "$KUBERAY_BIN/ray-operator" ]]; then log "kuberay $KUBERAY_VERSION: cached"; return; fi
	log "kuberay $KUBERAY_VERSION: building"
	# A wrapper module, because `go install mod@version` also asks the module
	# proxy for the module's version list, which it does not serve for KubeRay.
	local wrapper="$here/upstream-kuberay"
	grep -q "ray-operator $KUBERAY_VERSION\$" "$wrapper/go.mod" || { log "hack/upstream-kuberay/go.mod does not require $KUBERAY_VERSION"; exit 1; }
	mkdir -p "$KUBERAY_BIN"
	(cd "$wrapper" && go build -mod=mod -trimpath -ldflags "-s -w" -o "$KUBERAY_BIN/ray-operator.tmp" github.com/ray-project/kuberay/ray-operator)
	mv "$KUBERAY_BIN/ray-operator.tmp" "$KUBERAY_BIN/ray-operator"
}

# helm (Debian 12 has none): the chart's lint and template in the unit suite, and
# `helm install` on the real-node cluster.
build_helm() {
	if [[ -x "$HELM_BIN/helm" ]]; then log "helm $HELM_VERSION: cached"; return; fi
	log "helm $HELM_VERSION: building"
	mkdir -p "$HELM_BIN"
	# As helm's Makefile: the Kubernetes version it assumes without a cluster
	# (helm template, lint) is that of its client-go (v0.33: 1.33).
	local ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" p
	for p in pkg/lint/rules pkg/chartutil; do ld+=" -X helm.sh/helm/v3/$p.k8sVersionMajor=1 -X helm.sh/helm/v3/$p.k8sVersionMinor=33"; done
	GOBIN="$HELM_BIN" go install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

# build_wrapped NAME VERSION BINDIR WRAPPER LDFLAGS PACKAGE...: builds
# PACKAGEs from the wrapper module hack/WRAPPER into BINDIR, named by their last
# path element.
build_wrapped() {
	local name="$1" version="$2" bin="$3" wrapper="$here/$4" ld="$5" p missing=()
	shift 5
	for p in "$@"; do [[ -x "$bin/$(basename "$p")" ]] || missing+=("$p"); done
	if ((${#missing[@]} == 0)); then log "$name $version: cached"; return; fi
	log "$name $version: building ${missing[*]##*/}"
	grep -q " $version\$" "$wrapper/go.mod" || { log "hack/$4/go.mod does not require $version"; exit 1; }
	local tmp="$bin.tmp"
	rm -rf "$tmp"; mkdir -p "$tmp" "$bin"
	(cd "$wrapper" && nice -n 10 go build -mod=mod -trimpath -ldflags "-s -w $ld" -o "$tmp/" "${missing[@]}")
	mv "$tmp"/* "$bin/"; rmdir "$tmp"
}

build_peers() {
	local peer
	for peer in ${1//,/ }; do
		case "$peer" in
		kueue)
			build_wrapped kueue "$KUEUE_VERSION" "$KUEUE_BIN" upstream-peers-kueue \
				"-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" sigs.k8s.io/kueue/cmd/kueue
			[[ -d "$(kueue_module_dir)/config/components/crd/bases" ]] || { log "Kueue's CRDs not found in $(kueue_module_dir)"; exit 1; }
			;;
		coscheduling)
			# Built against the control plane's Kubernetes (the wrapper pins it), not the v1.33.5 of the
			# release, and stamped with its version: component-base checks it (emulation version).
			build_wrapped scheduler-plugins "$SCHEDPLUGINS_VERSION" "$SCHEDPLUGINS_BIN" upstream-peers-coscheduling \
				"-X k8s.io/component-base/version.gitVersion=$K8S_VERSION" \
				sigs.k8s.io/scheduler-plugins/cmd/scheduler sigs.k8s.io/scheduler-plugins/cmd/controller
			[[ -f "$(schedplugins_module_dir)/manifests/coscheduling/crd.yaml" ]] || { log "the PodGroup CRD not found in $(schedplugins_module_dir)"; exit 1; }
			;;
		*) log "--peers takes kueue and/or coscheduling, not '$peer'"; exit 2 ;;
		esac
	done
}

PEERS=""
while (($#)); do
	case "$1" in
	--peers) PEERS="${2:-}"; shift 2 || { log "--peers takes a list"; exit 2; } ;;
	--peers=*) PEERS="${1#*=}"; shift ;;
	*) log "unknown argument '$1' (usage: hack/build-upstream.sh [--peers kueue,coscheduling])"; exit 2 ;;
	esac
done

build_k8s
build_helm
go_install kwok "$KWOK_VERSION" "$KWOK_BIN" sigs.k8s.io/kwok/cmd/kwok
build_kuberay
# The CRDs come from the module cache; make sure the module is there.
if [[ ! -d "$(kuberay_crd_dir)" ]]; then
	(cd /tmp && GOFLAGS=-mod=mod go mod download "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION")
fi
[[ -d "$(kuberay_crd_dir)" ]] || { log "KubeRay CRDs not found in $(kuberay_crd_dir)"; exit 1; }
[[ -z "$PEERS" ]] || build_peers "$PEERS"
log "all upstream programs present"
