#!/usr/bin/env bash
# Installs the Debian packages raygate's build, tests, demo and benchmarks need.
# Idempotent: when everything is present it only checks and returns.
#
#   hack/deps.sh [--demo]   (--demo: only what the build and a local cluster need)
set -euo pipefail
pkgs=(
	# build
	meson ninja-build pkg-config gcc
	libh2o-evloop-dev libssl-dev libjansson-dev libcurl4-openssl-dev libyaml-dev libcmocka-dev
	# local control plane and tests
	etcd-client openssl curl jq bc procps iproute2 psmisc python3
)
case "${1:-}" in
--demo) ;;
"") pkgs+=(
	# the image (hack/image.sh) and the real node (hack/cluster.sh up --real-node)
	umoci containerd runc containernetworking-plugins iptables kmod util-linux
	# benchmarks and reliability tooling
	wrk valgrind clang libclang-rt-14-dev clang-format python3 python3-yaml
) ;;
*) echo "usage: hack/deps.sh [--demo]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's etcd-server package starts a system etcd on :2379; we run our own on
# other ports, but stop the system one so it does not hold resources.
if command -v systemctl >/dev/null && systemctl is-active --quiet etcd 2>/dev/null; then
	$SUDO systemctl disable --now etcd || true
fi
# Likewise Debian's containerd: the real node runs its own (hack/real-node.sh).
if command -v systemctl >/dev/null && systemctl is-active --quiet containerd 2>/dev/null; then
	$SUDO systemctl disable --now containerd || true
fi
echo "deps: done"
