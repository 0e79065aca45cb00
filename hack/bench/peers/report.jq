# The Markdown of the peers part (hack/bench.sh --parts peers), from the results JSON.
def r1: if . == null then "–" else (. * 10 | round / 10 | tostring) end;
def r2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
def k: if . == null then "–" else (. | round | tostring) end;
def fig(f): if . == null then "–" elif (.min | f) == (.max | f) then (.median | f) else "\(.median | f) (\(.min | f)–\(.max | f))" end;
def name: {raygate: "raygate", kueue: "Kueue", coscheduling: "coscheduling", none: "no gang system"}[.] // .;
def ms: if . == null then "–" else (. * 1000 | r1) end;
# The audit log's components, in the by-component table's order, and their names there.
def comps: ["raygate", "kueue", "podgroup-controller", "kuberay", "kube-scheduler", "kube-controller-manager", "kwok", "bench"];
def cname: {raygate: "raygate gate", kueue: "Kueue", "podgroup-controller": "PodGroup controller", kuberay: "KubeRay",
	"kube-scheduler": "scheduler", "kube-controller-manager": "controller-manager", kwok: "kwok (kubelet)", bench: "bench client"}[.] // .;
# A by-component row's cells: comps' medians, then the other components' sum, then the total.
def bycomp($c; $t): ($c // {}) as $m |
	(comps | map($m[.].median // null | if . == null then "–" else r2 end)) +
	[[$m | to_entries[] | select(.key as $k | comps | index($k) | not) | .value.median] | if length == 0 then "–" else add | r2 end, ($t | fig(r2))];
def yn: if . == null then "–" elif . then "yes" else "no" end;

select(.peers) | .peers as $p | $p.setup as $s | $p.by_system as $b | ($s.systems) as $sys |
"## Peers: raygate, Kueue and coscheduling on the same control plane\n",
"One gang system at a time (`hack/cluster.sh up --gang SYSTEM`), the same \($s.nodes) kwok nodes (\($s.node_capacity)), the same KubeRay \(.versions.kuberay) and Kubernetes \(.versions.kubernetes); the same RayClusters, only the opt-in label differs (raygate `volcano.sh/queue-name`, Kueue `kueue.x-k8s.io/queue-name`, coscheduling `ray.io/gang-scheduling-enabled` with KubeRay's `--batch-scheduler=scheduler-plugins`). Kueue \($p.versions.kueue) (Ray integrations, a ClusterQueue sized like raygate's Queue, default configuration: no waitForPodsReady); scheduler-plugins \($p.versions.scheduler_plugins) as the scheduler (Coscheduling, permitWaitingTimeSeconds 10) with its PodGroup controller. Volcano: \($p.versions.volcano). Medians of \($s.runs) runs (min–max); the systems ran one after another, each on a fresh control plane.\n",
"Machine load (1-minute average) at each workload: " + ($sys | map(. as $x | "\($x | name) \($b[$x].load | map(split(" ")[0]) | join(", "))") | join("; ")) + ".\n",
(if ([$sys[] | $b[.].walkthrough] | map(select(. != null)) | length) > 0 then
"### Walkthrough (the KubeRay + Volcano guide, queue cpu 4, memory 6Gi)\n",
"| system | test-cluster-0 all bound | test-cluster-1 while test-cluster-0 runs | after test-cluster-0 is deleted | what `kubectl describe` shows for test-cluster-1 |",
"|---|---|---|---|---|",
($sys[] | . as $x | $b[$x].walkthrough as $w | select($w != null) |
	"| \($x | name) | \($w.cluster0_all_bound_s | r1) s | \(if $w.cluster1_while_cluster0_runs.held_whole then "held whole: \($w.cluster1_while_cluster0_runs.pods) pods, 0 bound\(if $w.cluster1_suspended then " (RayCluster suspended)" else "" end)" else "**not held**: \($w.cluster1_while_cluster0_runs.bound) of \($w.cluster1_while_cluster0_runs.pods) pods bound" end) | \(if $w.cluster1_while_cluster0_runs.held_whole then "all bound in \($w.cluster1_all_bound_after_delete_s | r1) s" else "–" end) | \($w.describe.kind) \($w.describe.name | sub("-[a-z0-9]{5}$"; "-…")): \(if $w.cluster1_while_cluster0_runs.held_whole then ($w.describe.events | map(select(startswith("Warning")) | sub("^Warning +[A-Za-z]+ +[0-9a-z]+ +"; "")) | unique | if length == 0 then [$w.describe.why] else . end) else [$w.describe.events[-1] // $w.describe.why | sub("^[A-Za-z]+ +[A-Za-z]+ +[0-9a-z]+ +"; "")] end | map("“" + (gsub("\\|"; "/") | .[0:300]) + "”") | join(" / ")) |"),
""
else empty end),
(if ([$sys[] | $b[.].contention] | map(select(. != null)) | length) > 0 then
"### Contention: \($s.contention_clusters) RayClusters of seeded random shapes (seed \($s.contention_seed)) asking \($b[$sys[0]].contention.ask_over_nodes // "–")× what the nodes hold, created at once\n",
"Sampled every second until nothing changed for \(if $s.quick then 15 else 30 end) s. A cluster is *partly placed* when some but not all of its pods are bound (for a moment, also while an admitted gang's pods are being bound one by one: *at the end* is what stays); *useful CPU* is the share of the nodes' CPU held by fully placed clusters. Kueue's waiting RayClusters are suspended and have no pods.\n",
"| system | partly placed at the end | partly placed at most | partly placed cluster-seconds | fully placed at the end | useful CPU | pods not bound at the end | settled after | scheduler attempts per pod |",
"|---|---|---|---|---|---|---|---|---|",
($sys[] | . as $x | $b[$x].contention as $c | select($c != null) |
	"| \($x | name) | \($c.partial_end | fig(k)) | \($c.partial_max | fig(k)) | \($c.partial_cluster_s | fig(k)) | \($c.full_end | fig(k)) of \($s.contention_clusters) | \($c.useful_cpu_share | fig(. * 100 | r1))% | \($c.pending_end | fig(k)) | \($c.settled_s | fig(r1)) s\(if $c.settled_runs < $c.full_end.n then " (\($c.full_end.n - $c.settled_runs) runs still changing at the limit)" else "" end) | \($c.scheduler_attempts_per_pod | fig(r2)) |"),
""
else empty end),
(if ([$sys[] | $b[.].flood, $b[.].gang] | map(select(. != null)) | length) > 0 then
"### Flood, one big gang, cost\n",
"Flood: \($s.flood_clusters) RayClusters × \($s.flood_pods_per_cluster) pods into a queue with room for all, first create → all bound. Gang: one RayCluster of \($s.gang_pods) pods; *admissible* is when raygate’s Queue or Kueue’s LocalQueue appears (coscheduling and no gang system hold nothing: when the last pod exists); *÷ none* is admissible → all bound over no gang system’s created → all bound (the same pods, nothing holding them). Cost per Ray pod over the flood. KubeRay’s wait-gcs-ready init container makes every worker ask the scheduler for 200m CPU\([$sys[] | $b[.].flood.nodes_added // 0, $b[.].gang.nodes_added // 0] | max | if . > 0 then ": where the nodes could not hold a workload, it added kwok nodes like the others for its runs (flood \([$sys[] | $b[.].flood.nodes_added // 0] | max), gang \([$sys[] | $b[.].gang.nodes_added // 0] | max))" else "" end).\n",
"| system | flood: all bound | × none | gang: admissible → all bound | gang: created → all bound | × none | ÷ none | apiserver requests per pod | mutating requests per pod | apiserver CPU per pod | etcd writes per pod | gang system CPU (flood) | gang system peak RSS | scheduler attempts per pod |",
"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
($sys[] | . as $x | $b[$x] as $v | ($p.ratios[$x] // {}) as $q |
	"| \($x | name) | \($v.flood.all_bound_s | fig(r1)) s | \($q.flood_all_bound | r2) | \($v.gang.admissible_to_all_bound_s | fig(r1)) s | \($v.gang.created_to_all_bound_s | fig(r1)) s | \($q.gang_created_to_all_bound | r2) | \($q.gang_admissible_to_all_bound | r2) | \($v.flood.requests_per_pod // {} | to_entries | map(select(.value.median > 0.05)) | map("\(.key) \(.value.median | r1)") | join(", ")) | \($v.flood.mutations_per_pod | fig(r1)) | \($v.flood.apiserver_cpu_s_per_pod | fig(ms)) ms | \($v.flood.etcd_writes_per_pod | fig(r1)) | \(if $x == "none" then "–" else "\($v.flood.gang_cpu_s | fig(r1)) s" end) | \(if $x == "none" then "–" else "\($v.flood.gang_hwm_kb.max // null | if . == null then "–" else (. / 1024 | r1) + " MB" end)" end) | \($v.flood.scheduler_attempts_per_pod | fig(r2)) |"),
"",
(if ([$sys[] | $b[.].gang.mutations_per_pod] | map(select(. != null)) | length) > 0 then
"Cost per Ray pod over the gang of \($s.gang_pods) (from its RayCluster’s creation to the last bind; kwok writes each pod’s status a while after its bind, so where the binds come in one burst at the end, as after raygate’s gate removal, fewer of those writes fall inside):\n",
"| system | apiserver requests per pod | mutating requests per pod | apiserver CPU per pod | etcd writes per pod | gang system CPU | gang system peak RSS | scheduler attempts per pod |",
"|---|---|---|---|---|---|---|---|",
($sys[] | . as $x | $b[$x].gang as $g | select($g != null and $g.mutations_per_pod != null) |
	"| \($x | name) | \($g.requests_per_pod // {} | to_entries | map(select(.value.median > 0.05)) | map("\(.key) \(.value.median | r1)") | join(", ")) | \($g.mutations_per_pod | fig(r1)) | \($g.apiserver_cpu_s_per_pod | fig(ms)) ms | \($g.etcd_writes_per_pod | fig(r1)) | \(if $x == "none" then "–" else "\($g.gang_cpu_s | fig(r1)) s" end) | \(if $x == "none" then "–" else "\($g.gang_hwm_kb.max // null | if . == null then "–" else (. / 1024 | r1) + " MB" end)" end) | \($g.scheduler_attempts_per_pod | fig(r2)) |"),
""
else empty end),
(if ([$sys[] | $b[.].flood.mutations_by_component, $b[.].gang.mutations_by_component] | map(select(. != null)) | length) > 0 then
"Mutating requests per Ray pod by component, from the apiserver’s audit log (every create, update, patch and delete, attributed by the sender’s user agent; the bench client’s are its RayCluster creates):\n",
"| system | workload | " + (comps | map(cname) | join(" | ")) + " | other | total |",
"|---|---|" + (comps | map("---|") | join("")) + "---|---|",
($sys[] | . as $x | ("flood", "gang") as $wl | $b[$x][$wl] as $v | select($v != null and $v.mutations_by_component != null) |
	"| \($x | name) | \($wl) | " + (bycomp($v.mutations_by_component; $v.audit_mutations_per_pod) | join(" | ")) + " |"),
"",
(("flood", "gang") as $wl | [$sys[] | . as $x | $b[$x][$wl].mutations_by_request // null | select(. != null) |
	"\($x | name): " + (to_entries | sort_by(.key as $k | comps | index($k) // 99) | map(.key as $c | .value | to_entries | map(select(.value >= 0.05)) | select(length > 0) |
		"\($c | cname) " + (sort_by(-.value) | map("\(.key) \(.value | r2)") | join(", "))) | join("; "))] | select(length > 0) |
	"Which requests (\($wl), per Ray pod, median; ≥ 0.05 shown): " + join(". ") + ".\n")
else empty end),
"Gang system: raygate’s webhook and gate controller, Kueue’s manager, scheduler-plugins’ PodGroup controller (coscheduling’s gang logic itself runs inside the scheduler: compare kube-scheduler below). CPU seconds of the other processes over the flood (median): " + ($sys | map(. as $x | $b[$x].flood.procs_cpu_s // {} | "\($x | name): " + (to_entries | map("\(.key) \(.value.median | r1)") | join(", "))) | join("; ")) + ".\n"
else empty end),
(if ([$sys[] | $b[.].autoscaling] | map(select(. != null)) | length) > 0 then
"### Autoscaling RayCluster (head with the autoscaler, workers min 1, replicas 3, max 5; queue cpu 2)\n",
"| system | accepted | gang size used | pods bound (queue cpu 2) | after the queue grows to cpu 4 |",
"|---|---|---|---|---|",
($sys[] | . as $x | $b[$x].autoscaling as $a | select($a != null) |
	"| \($x | name) | \(if $a.created then "yes" else "**denied**: \($a.denied | .[0:160])" end) | \($a.gang_size // "–") | \($a.bound_small_queue // "–") of \($a.pods // "–") | \($a.bound_queue_grown // "–") |"),
""
else empty end),
(if [$sys[] | $b[.].rayjob] | map(select(. != null)) | length > 0 then
"### RayJobs (KubeRay's sample: a cluster of cpu 3, 4Gi, then its submitter; two jobs, a queue of cpu 5, memory 8Gi)\n",
"| system | first job's cluster all bound | second job while the first runs | after the first is deleted |",
"|---|---|---|---|",
($sys[] | . as $x | $b[$x].rayjob as $j | select($j != null) |
	if $j.denied then "| \($x | name) | **denied**: \($j.denied | .[0:160]) | – | – |" else
	if $j.job_a_cluster_bound_s == null then "| \($x | name) | **never placed** (no pod of the first job bound in 120 s) | – | – |" else
	"| \($x | name) | \($j.job_a_cluster_bound_s | r1) s | \(if $j.job_b_while_job_a_runs.held_whole then "held whole: \($j.job_b_while_job_a_runs.pods) pods, 0 bound\(if $j.job_b_while_job_a_runs.suspended then " (RayJob suspended)" else "" end)" else "**not held**: \($j.job_b_while_job_a_runs.bound) of \($j.job_b_while_job_a_runs.pods) cluster pods bound" end) | \(if $j.job_b_while_job_a_runs.held_whole then "cluster all bound in \($j.job_b_cluster_bound_after_delete_s | r1) s" else "–" end) |" end end),
""
else empty end),
(if ([$b[]] | map(.errors | length) | add) > 0 then
	"Errors: " + ($sys | map(. as $x | $b[$x].errors[] | "\($x | name) \(.workload) run \(.run): \(.error | gsub("\n"; " ") | .[0:200])") | join("; ")) + "\n"
else empty end)
