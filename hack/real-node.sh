# The real node of `hack/cluster.sh up --real-node`, sourced by hack/cluster.sh
# (it uses its start/stop/wait helpers): containerd and runc from Debian, the
# kubelet and kube-proxy built from k8s.io/kubernetes (hack/build-upstream.sh),
# CNI bridge + host-local + loopback from Debian's containernetworking-plugins,
# a pause image built here from k8s.io/kubernetes' build/pause/linux/pause.c,
# and raygate's image from hack/image.sh imported into containerd: nothing is
# pulled from a registry.
#
# The node (raygate-node) is tainted raygate.io/real-node=raygate-system:NoSchedule
# and labelled raygate.io/real-node=true: only raygate's pods (which tolerate the
# taint and select the label, hack/real-node-overlay) run there; Ray pods
# stay on the kwok nodes.
#
# How the apiserver reaches the webhook: through its Service's ClusterIP, made
# real by kube-proxy (iptables mode, the same Kubernetes release). kube-proxy
# is needed anyway: the gate and the certificate Job reach the apiserver as
# every in-cluster client does, through the `kubernetes` Service (10.96.0.1),
# which --enable-aggregator-routing would not give them; with kube-proxy the
# apiserver's call to the webhook takes the same Service path it takes on a
# real cluster. Hence the apiserver listens on all addresses with --real-node
# and advertises the host's address (the endpoint of the `kubernetes` Service).
#
# One real node per machine: kube-proxy's iptables chains and the cgroup tree
# are the host's; .cluster/real-node.lock (flock on /run/raygate-real-node.lock)
# makes a second one fail with a clear error.

REAL_NODE_NAME=raygate-node
REAL_NODE_TAINT="raygate.io/real-node=raygate-system:NoSchedule"
KUBELET_PORT="${RAYGATE_KUBELET_PORT:-$((20250 + _po))}"
KUBELET_HEALTHZ_PORT="${RAYGATE_KUBELET_HEALTHZ_PORT:-$((20248 + _po))}"
KUBE_PROXY_METRICS_PORT="${RAYGATE_KUBE_PROXY_METRICS_PORT:-$((20249 + _po))}"
KUBE_PROXY_HEALTHZ_PORT="${RAYGATE_KUBE_PROXY_HEALTHZ_PORT:-$((20256 + _po))}"
RN="$STATE/real-node"
CTRD_SOCK="$RN/containerd.sock"
CGROUP_ROOT="/raygate-$_po"
POD_CIDR="10.245.$((_po / 50)).0/24"
CNI_BRIDGE="raygate$_po"
PAUSE_IMAGE=raygate.local/pause:3.10.1
RAYGATE_IMAGE=raygate.local/raygate:dev
CNI_BIN=/usr/lib/cni

rn_ctr() { ctr -a "$CTRD_SOCK" -n k8s.io "$@"; }

# The host's own address: the node's InternalIP and the apiserver's advertised address.
real_node_ip() {
	ip -4 route get 1.1.1.1 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") {print $(i + 1); exit}}'
}

# Checks that this machine can run the node, before anything starts; dies with
# the exact reason otherwise.
real_node_check() {
	local t
	for t in containerd ctr runc umoci iptables ip gcc; do
		command -v "$t" >/dev/null || die "--real-node: $t not found (hack/deps.sh installs it)"
	done
	for t in bridge host-local loopback; do
		[[ -x "$CNI_BIN/$t" ]] || die "--real-node: CNI plugin $CNI_BIN/$t not found (containernetworking-plugins)"
	done
	for t in kubelet kube-proxy; do
		[[ -x "$K8S_BIN/$t" ]] || die "--real-node: $K8S_BIN/$t is not built (hack/build-upstream.sh)"
	done
	[[ $(id -u) -eq 0 ]] || die "--real-node needs root (containerd, kubelet, iptables)"
	[[ -n "$(real_node_ip)" ]] || die "--real-node: no IPv4 address with a route (ip -4 route get 1.1.1.1)"
	local c
	for c in cpu cpuacct cpuset memory pids; do
		[[ -d /sys/fs/cgroup/$c || -f /sys/fs/cgroup/cgroup.controllers ]] ||
			die "--real-node: cgroup v1 controller $c is not mounted at /sys/fs/cgroup/$c, and there is no cgroup v2"
	done
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
		die "--real-node: the kernel has no overlay file system (containerd's overlayfs snapshotter)"
	exec {_rn_lock}>/run/raygate-real-node.lock
	# One real node per machine (kube-proxy's iptables chains are the host's):
	# a second one waits its turn, up to RAYGATE_REAL_NODE_WAIT seconds.
	if ! flock -n "$_rn_lock"; then
		local wait="${RAYGATE_REAL_NODE_WAIT:-1200}"
		say "--real-node: another real node runs on this machine ($(cat /run/raygate-real-node.owner 2>/dev/null)); waiting up to ${wait}s for it to go"
		flock -w "$wait" "$_rn_lock" || die "--real-node: another real node still runs on this machine after ${wait}s ($(cat /run/raygate-real-node.owner 2>/dev/null)); one per machine (kube-proxy's iptables chains are the host's)"
	fi
	echo "$STATE (pid $$)" >/run/raygate-real-node.owner
}

# kubelet client certificate for the apiserver (logs, exec, stats through the node proxy).
real_node_pki() {
	[[ -f "$PKI/kubelet-client.crt" ]] && return 0
	(
		cd "$PKI"
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
			-keyout kubelet-client.key -out kubelet-client.csr 2>/dev/null
		printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' >client.ext
		openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
			-extfile client.ext -out kubelet-client.crt 2>/dev/null
		chmod 600 kubelet-client.key
	)
}

# The apiserver's extra arguments with --real-node.
real_node_apiserver_args() {
	printf '%s\0' --bind-address 0.0.0.0 --advertise-address "$(real_node_ip)" \
		--kubelet-client-certificate "$PKI/kubelet-client.crt" --kubelet-client-key "$PKI/kubelet-client.key" \
		--kubelet-preferred-address-types InternalIP,Hostname
}

# The pause image: k8s.io/kubernetes' pause.c (from the Go module cache),
# static, alone in its image.
real_node_pause_image() {
	local src out="$RN/pause"
	src="$(go env GOMODCACHE 2>/dev/null)/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c"
	if [[ ! -f "$src" ]]; then
		(cd /tmp && GOFLAGS=-mod=mod go mod download "k8s.io/kubernetes@$K8S_VERSION") >/dev/null 2>&1 || true
	fi
	[[ -f "$src" ]] || die "--real-node: $src not found (the k8s.io/kubernetes module)"
	rm -rf "$out"; mkdir -p "$out/rootfs"
	gcc -Os -Wall -Werror -static -DVERSION="v3.10.1-raygate" -o "$out/rootfs/pause" "$src"
	strip "$out/rootfs/pause"
	umoci init --layout "$out/oci"
	umoci new --image "$out/oci:3.10.1"
	umoci unpack --image "$out/oci:3.10.1" "$out/bundle" >/dev/null
	cp -a "$out/rootfs/." "$out/bundle/rootfs/"
	umoci repack --image "$out/oci:3.10.1" "$out/bundle"
	umoci config --image "$out/oci:3.10.1" --os linux --architecture amd64 \
		--config.user 65535:65535 --config.entrypoint /pause
	jq --arg ref "$PAUSE_IMAGE" '.manifests |= map(.annotations["io.containerd.image.name"] = $ref)' \
		"$out/oci/index.json" >"$out/index.json" && mv "$out/index.json" "$out/oci/index.json"
	tar -C "$out/oci" -cf "$out/pause.oci.tar" .
	rn_ctr images import "$out/pause.oci.tar" >/dev/null
}

# true when this process cannot lower its oom_score_adj (no CAP_SYS_RESOURCE).
real_node_restrict_oom() {
	local eff
	eff="$(awk '/^CapEff:/ {print $2}' /proc/self/status)"
	if (((0x$eff >> 24) & 1)); then echo false; else echo true; fi
}

real_node_write_config() {
	local ip; ip="$(real_node_ip)"
	mkdir -p "$RN/cni/net.d" "$RN/cni/ipam" "$RN/kubelet" "$RN/pod-logs"
	cat >"$RN/containerd.toml" <<-EOF
		version = 2
		root = "$RN/containerd"
		state = "$RN/containerd-state"
		[grpc]
		  address = "$CTRD_SOCK"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$PAUSE_IMAGE"
		  # This machine's sandbox withholds CAP_SYS_RESOURCE (CapEff 0x1fffeffffff), so
		  # runc cannot lower a process's oom_score_adj ("nsexec: failed to update
		  # /proc/self/oom_score_adj: Permission denied" for the pause container's -998):
		  # keep every container's at or above containerd's own.
		  restrict_oom_score_adj = $(real_node_restrict_oom)
		  stream_server_address = "127.0.0.1"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "$CNI_BIN"
		    conf_dir = "$RN/cni/net.d"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
	EOF
	# No ipMasq: pods talk only to each other and to this host, so CNI adds no iptables rules.
	cat >"$RN/cni/net.d/10-raygate.conflist" <<-EOF
		{
		  "cniVersion": "0.4.0",
		  "name": "raygate-$_po",
		  "plugins": [
		    {"type": "bridge", "bridge": "$CNI_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
		     "ipam": {"type": "host-local", "dataDir": "$RN/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
		              "routes": [{"dst": "0.0.0.0/0"}]}},
		    {"type": "loopback"}
		  ]
		}
	EOF
	cat >"$RN/kubelet-config.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		address: $ip
		port: $KUBELET_PORT
		readOnlyPort: 0
		healthzBindAddress: 127.0.0.1
		healthzPort: $KUBELET_HEALTHZ_PORT
		containerRuntimeEndpoint: unix://$CTRD_SOCK
		cgroupDriver: cgroupfs
		cgroupRoot: $CGROUP_ROOT
		podLogsDir: $RN/pod-logs
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: true}
		  x509: {clientCAFile: $PKI/ca.crt}
		authorization: {mode: Webhook}
		failSwapOn: false
		# Kubernetes 1.35 and later refuse a cgroup v1 host unless told (this
		# machine's /sys/fs/cgroup is v1); the node only runs raygate's pods.
		failCgroupV1: false
		maxPods: 30
		registerWithTaints:
		- {key: raygate.io/real-node, value: raygate-system, effect: NoSchedule}
		# The images were imported, not pulled: never collect them.
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
		evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
		serializeImagePulls: false
		staticPodPath: ""
	EOF
	for who in kubelet kube-proxy; do
		cat >"$RN/$who.kubeconfig" <<-EOF
			apiVersion: v1
			kind: Config
			clusters:
			- name: raygate-local
			  cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: $PKI/ca.crt}
			users:
			- name: $who
			  user: {token: $(cat "$PKI/$who.token")}
			contexts:
			- name: raygate-local
			  context: {cluster: raygate-local, user: $who}
			current-context: raygate-local
		EOF
		chmod 600 "$RN/$who.kubeconfig"
	done
}

# Node and kube-proxy identities (tokens.csv is read when the apiserver starts).
real_node_tokens() {
	[[ -f "$PKI/kubelet.token" ]] && return 0
	openssl rand -hex 24 >"$PKI/kubelet.token"
	openssl rand -hex 24 >"$PKI/kube-proxy.token"
	chmod 600 "$PKI/kubelet.token" "$PKI/kube-proxy.token"
	echo "$(cat "$PKI/kubelet.token"),system:node:$REAL_NODE_NAME,$REAL_NODE_NAME,\"system:nodes\"" >>"$PKI/tokens.csv"
	echo "$(cat "$PKI/kube-proxy.token"),system:kube-proxy,kube-proxy,\"system:node-proxier\"" >>"$PKI/tokens.csv"
}

real_node_cgroups() {
	local d
	for d in /sys/fs/cgroup/*/; do
		[[ -f "$d/tasks" || -f "$d/cgroup.procs" ]] || continue
		mkdir -p "$d$CGROUP_ROOT"
		if [[ -f "$d/cpuset.cpus" ]]; then
			cat "$d/cpuset.cpus" >"$d$CGROUP_ROOT/cpuset.cpus"
			cat "$d/cpuset.mems" >"$d$CGROUP_ROOT/cpuset.mems"
		fi
	done
}

node_ready_real() {
	[[ "$(kc get node "$REAL_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}

# Everything before the apiserver starts.
real_node_prepare() {
	real_node_check
	mkdir -p "$RN"
	real_node_pki
	real_node_tokens
	touch "$STATE/real-node.enabled"
}

# After the control plane is up: containerd, images, kubelet, kube-proxy.
real_node_start() {
	local t0=$SECONDS
	sysctl -qw net.ipv4.ip_forward=1
	[[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]] || modprobe br_netfilter 2>/dev/null || true
	[[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]] && sysctl -qw net.bridge.bridge-nf-call-iptables=1
	real_node_write_config
	real_node_cgroups
	start containerd "$(command -v containerd)" --config "$RN/containerd.toml"
	wait_until 30 "containerd" rn_ctr version || { tail -20 "$LOGS/containerd.log"; die "containerd did not start"; }
	real_node_pause_image
	bash "$ROOT/hack/image.sh" --tag "$RAYGATE_IMAGE" >"$LOGS/image.log" 2>&1 ||
		{ tail -20 "$LOGS/image.log"; die "hack/image.sh failed"; }
	rn_ctr images import "${RAYGATE_IMAGE_DIR:-$ROOT/build-image}/raygate.oci.tar" >/dev/null
	say "images imported: $(rn_ctr images ls -q | grep -c '^raygate.local/') ($(tail -1 "$LOGS/image.log"))"

	start kubelet "$K8S_BIN/kubelet" --config "$RN/kubelet-config.yaml" --kubeconfig "$RN/kubelet.kubeconfig" \
		--root-dir "$RN/kubelet" --cert-dir "$RN/kubelet/pki" --hostname-override "$REAL_NODE_NAME" \
		--node-ip "$(real_node_ip)" --node-labels raygate.io/real-node=true --v 1
	wait_until 120 "node $REAL_NODE_NAME Ready" node_ready_real ||
		{ grep -E '^E|Error|error' "$LOGS/kubelet.log" | tail -20; die "the kubelet did not make $REAL_NODE_NAME Ready"; }
	start kube-proxy "$K8S_BIN/kube-proxy" --kubeconfig "$RN/kube-proxy.kubeconfig" \
		--hostname-override "$REAL_NODE_NAME" --proxy-mode iptables --cluster-cidr "$POD_CIDR" \
		--metrics-bind-address "127.0.0.1:$KUBE_PROXY_METRICS_PORT" \
		--healthz-bind-address "127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT" \
		--conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 --v 1
	wait_until 60 "kube-proxy healthz" curl -sf "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz" ||
		{ tail -20 "$LOGS/kube-proxy.log"; die "kube-proxy did not become healthy"; }
	say "real node $REAL_NODE_NAME Ready in $((SECONDS - t0))s (pods $POD_CIDR on $CNI_BRIDGE)"
}

# raygate in-cluster: the kustomize overlay for the image built here.
real_node_install_raygate() {
	local t0=$SECONDS
	kc apply --server-side --force-conflicts -k "$ROOT/hack/real-node-overlay" >/dev/null
	wait_until 120 "raygate-certs Job complete" kc wait -n raygate-system --for=condition=Complete job/raygate-certs --timeout 1s ||
		{ kc describe job -n raygate-system raygate-certs | tail -20; die "raygate's certificate Job did not complete"; }
	wait_until 120 "raygate Deployments available" kc rollout status -n raygate-system deployment/raygate-webhook deployment/raygate-gate --timeout 1s ||
		{ kc get pods -n raygate-system -o wide; die "raygate's Deployments did not become available"; }
	say "raygate installed in-cluster in $((SECONDS - t0))s"
}

# What kube-proxy --cleanup leaves: the kubelet's KUBE-FIREWALL and the canary
# chains. Every KUBE-* chain is this node's (one real node per machine).
real_node_iptables_cleanup() {
	local ipt table rule chain
	for ipt in iptables ip6tables; do
		command -v "$ipt" >/dev/null || continue
		for table in filter nat mangle; do
			{ "$ipt-save" -t "$table" 2>/dev/null | grep -- '^-A .* -j KUBE-' | grep -v '^-A KUBE-' || true; } | sed 's/^-A /-D /' |
				while read -r rule; do eval "$ipt -t $table $rule" 2>/dev/null || true; done
			for chain in $("$ipt-save" -t "$table" 2>/dev/null | awk '/^:KUBE-/ {print substr($1, 2)}'); do
				"$ipt" -t "$table" -F "$chain" 2>/dev/null || true
			done
			for chain in $("$ipt-save" -t "$table" 2>/dev/null | awk '/^:KUBE-/ {print substr($1, 2)}'); do
				"$ipt" -t "$table" -X "$chain" 2>/dev/null || true
			done
		done
	done
}

# Stops the node and removes what it left on the host: containers and their
# shims, mounts, network namespaces, the CNI bridge, kube-proxy's iptables
# chains and the cgroups. Idempotent.
real_node_down() {
	[[ -f "$STATE/real-node.enabled" ]] || return 0
	stop kube-proxy
	stop kubelet
	local netns=() id p
	if [[ -S "$CTRD_SOCK" ]] && running containerd; then
		for id in $(rn_ctr containers ls -q 2>/dev/null); do
			p="$(rn_ctr containers info "$id" 2>/dev/null | jq -r '.Spec.linux.namespaces[]? | select(.type == "network") | .path // empty' || true)"
			[[ -n "$p" ]] && netns+=("$p")
			rn_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
		done
		sleep 1
		for id in $(rn_ctr containers ls -q 2>/dev/null); do
			rn_ctr tasks delete -f "$id" >/dev/null 2>&1 || true
			rn_ctr containers delete "$id" >/dev/null 2>&1 || true
		done
	fi
	stop containerd
	# Shims of this containerd (they outlive it by design).
	for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $CTRD_SOCK" || true); do kill -KILL "$p" 2>/dev/null || true; done
	for p in "${netns[@]}"; do
		[[ "$p" == /proc/* ]] && continue
		umount "$p" 2>/dev/null || true
		rm -f "$p"
	done
	# Mounts under the state folder, deepest first.
	{ findmnt -rn -o TARGET | grep -F "$RN/" || true; } | sort -r | while read -r p; do umount -l "$p" 2>/dev/null || true; done
	ip link del "$CNI_BRIDGE" 2>/dev/null || true
	[[ -x "$K8S_BIN/kube-proxy" ]] && "$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
	real_node_iptables_cleanup
	local d
	for d in /sys/fs/cgroup/*/; do
		[[ -d "$d$CGROUP_ROOT" ]] || continue
		find "$d$CGROUP_ROOT" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	rm -f /run/raygate-real-node.owner "$STATE/real-node.enabled"
}
