# The peers' side of hack/cluster.sh up --gang kueue|coscheduling (sourced by
# hack/cluster.sh after its own helpers: start, kc, wait_until, PKI, STATE,
# LOGS). Kueue and scheduler-plugins are what hack/bench.sh --parts peers
# compares raygate with; nothing here is part of raygate.

KUEUE_WEBHOOK_PORT="${RAYGATE_KUEUE_WEBHOOK_PORT:-$((29461 + _po))}"
KUEUE_METRICS_PORT="${RAYGATE_KUEUE_METRICS_PORT:-$((29463 + _po))}"
KUEUE_HEALTH_PORT="${RAYGATE_KUEUE_HEALTH_PORT:-$((29465 + _po))}"
PODGROUP_CTRL_METRICS_PORT="${RAYGATE_PODGROUP_CTRL_METRICS_PORT:-$((29467 + _po))}"
PODGROUP_CTRL_PROBE_PORT="${RAYGATE_PODGROUP_CTRL_PROBE_PORT:-$((29469 + _po))}"
# Kueue reads its metrics certificate from this fixed path when it does not
# manage certificates itself (cmd/kueue/main.go).
KUEUE_METRICS_CERT_DIR=/etc/kueue/metrics/certs

# kuberay_batch_flag GANG: the KubeRay operator's batch scheduler flag.
kuberay_batch_flag() {
	if [[ "$1" == coscheduling ]]; then echo --batch-scheduler=scheduler-plugins; else echo --enable-batch-scheduler=false; fi
}

# peer_crds GANG: the CRDs of the gang system, from its module in the Go module cache.
peer_crds() {
	case "$1" in
	kueue) kc apply --server-side --force-conflicts -f "$(kueue_module_dir)/config/components/crd/bases" >/dev/null ;;
	coscheduling)
		# The PodGroup controller also reconciles ElasticQuotas: it needs their CRD to start.
		kc apply --server-side --force-conflicts -f "$(schedplugins_module_dir)/manifests/coscheduling/crd.yaml" \
			-f "$(schedplugins_module_dir)/manifests/capacityscheduling/crd.yaml" >/dev/null
		;;
	esac
}

# peer_cert DIR: a serving certificate for 127.0.0.1 and localhost signed by
# the local CA (tls.crt, tls.key in DIR), made with openssl like the PKI's own.
peer_cert() {
	local dir="$1"
	[[ -f "$dir/tls.crt" ]] && return 0
	mkdir -p "$dir"
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' >"$dir/ext"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
	openssl x509 -req -in "$dir/tls.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial -days 365 \
		-extfile "$dir/ext" -out "$dir/tls.crt" 2>/dev/null
	chmod 600 "$dir/tls.key"
}

# ---------------------------------------------------------------- Kueue

kueue_ready() { curl -sf --max-time 2 "http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz" >/dev/null; }

# Kueue's webhook configurations (config/components/webhook), kept to the
# webhooks its manager serves with the Ray integrations, pointed at 127.0.0.1.
register_kueue_webhooks() {
	local bundle
	bundle="$(base64 -w0 "$PKI/ca.crt")"
	kc create --dry-run=client -o json -f "$(kueue_module_dir)/config/components/webhook/manifests.yaml" |
		jq -c --arg base "https://127.0.0.1:$KUEUE_WEBHOOK_PORT" --arg ca "$bundle" '
			(if .kind == "List" then .items[] else . end) | .metadata.name = "kueue-" + .metadata.name |
			.webhooks |= map(select(.name | test("^[mv](raycluster|rayjob|clusterqueue|cohort|resourceflavor|workload)\\.kb\\.io$")) |
				.clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca})' |
		kc apply -f - >/dev/null
}

start_kueue() {
	local dir="$STATE/kueue"
	mkdir -p "$dir"
	kc get namespace kueue-system >/dev/null 2>&1 || kc create namespace kueue-system >/dev/null
	peer_cert "$dir/certs"
	mkdir -p "$KUEUE_METRICS_CERT_DIR" 2>/dev/null && cp "$dir/certs/tls.crt" "$dir/certs/tls.key" "$KUEUE_METRICS_CERT_DIR/" ||
		die "Kueue needs its metrics certificate in $KUEUE_METRICS_CERT_DIR (not writable here)"
	# Kueue's defaults (config/components/manager) but on 127.0.0.1, no leader
	# election, certificates from here, and only the Ray integrations.
	cat >"$dir/config.yaml" <<-EOF
		apiVersion: config.kueue.x-k8s.io/v1beta1
		kind: Configuration
		namespace: kueue-system
		health:
		  healthProbeBindAddress: 127.0.0.1:$KUEUE_HEALTH_PORT
		metrics:
		  bindAddress: 127.0.0.1:$KUEUE_METRICS_PORT
		webhook:
		  host: 127.0.0.1
		  port: $KUEUE_WEBHOOK_PORT
		  certDir: $dir/certs
		leaderElection:
		  leaderElect: false
		internalCertManagement:
		  enable: false
		controller:
		  groupKindConcurrency:
		    Job.batch: 5
		    Pod: 5
		    Workload.kueue.x-k8s.io: 5
		    LocalQueue.kueue.x-k8s.io: 1
		    Cohort.kueue.x-k8s.io: 1
		    ClusterQueue.kueue.x-k8s.io: 1
		    ResourceFlavor.kueue.x-k8s.io: 1
		clientConnection:
		  qps: 50
		  burst: 100
		integrations:
		  frameworks:
		  - ray.io/raycluster
		  - ray.io/rayjob
		featureGates:
		  # The visibility API server would listen on :8082 on every address.
		  VisibilityOnDemand: false
	EOF
	start kueue "$KUEUE_BIN/kueue" --config "$dir/config.yaml" --zap-log-level=info
	wait_until 90 "Kueue /readyz" kueue_ready || { tail -30 "$LOGS/kueue.log"; die "Kueue did not become ready"; }
	register_kueue_webhooks
	# Webhooks answer: a ResourceFlavor goes through Kueue's mutating and validating webhooks.
	wait_until 60 "Kueue's webhooks answer" kc apply --dry-run=server -f - <<<'{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "probe"}}' ||
		{ tail -30 "$LOGS/kueue.log"; die "Kueue's webhooks do not answer"; }
}

# ---------------------------------------------------------------- coscheduling

# scheduler-plugins' scheduler in place of kube-scheduler: its coscheduling
# configuration (manifests/coscheduling/scheduler-config.yaml) for the default
# profile and for scheduler-plugins-scheduler, the scheduler name KubeRay's
# scheduler-plugins integration gives every Ray pod (all profiles must share
# the queue-sort plugin, so both have Coscheduling). The PodGroup controller
# writes PodGroup status.
start_coscheduling_scheduler() {
	local dir="$STATE/coscheduling" p
	mkdir -p "$dir"
	{
		printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n'
		printf 'leaderElection:\n  leaderElect: false\nclientConnection:\n  kubeconfig: %s\n  qps: 50\n  burst: 100\nprofiles:\n' "$KUBECONFIG"
		for p in default-scheduler scheduler-plugins-scheduler; do
			cat <<-EOF
				- schedulerName: $p
				  plugins:
				    multiPoint:
				      enabled:
				      - name: Coscheduling
				    queueSort:
				      enabled:
				      - name: Coscheduling
				      disabled:
				      - name: "*"
				  pluginConfig:
				  - name: Coscheduling
				    args:
				      permitWaitingTimeSeconds: 10
			EOF
		done
	} >"$dir/scheduler-config.yaml"
	start kube-scheduler "$SCHEDPLUGINS_BIN/scheduler" --config "$dir/scheduler-config.yaml" \
		--authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
		--bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --profiling=false --v 1
	# It reads KUBECONFIG (exported by hack/lib.sh); its --qps and --burst reach no client (app/server.go).
	start podgroup-controller "$SCHEDPLUGINS_BIN/controller" \
		--metricsAddr "127.0.0.1:$PODGROUP_CTRL_METRICS_PORT" --probeAddr "127.0.0.1:$PODGROUP_CTRL_PROBE_PORT" \
		--workers 4
}
