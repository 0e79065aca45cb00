// bench-peer: the webhook benchmark's peer, what most Go webhooks (Kueue among
// them) are built on: sigs.k8s.io/controller-runtime's webhook server and
// webhook/admission package, doing raygate's pod mutation (lib/gang/mutate.c): on
// a pod labelled ray.io/cluster and volcano.sh/queue-name, unbound and for the
// default scheduler, add the scheduling gate raygate.io/gang and, when
// missing, the annotation scheduling.k8s.io/group-name ray-<cluster>-pg.
//
// Benchmark-only (hack/bench.sh), never part of raygate.
//
//	bench-peer --host 127.0.0.1 --port PORT --cert-dir DIR   (DIR/tls.crt, DIR/tls.key)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const (
	gateName        = "raygate.io/gang"
	labelCluster    = "ray.io/cluster"
	labelQueue      = "volcano.sh/queue-name"
	annotationGroup = "scheduling.k8s.io/group-name"
)

type podGate struct {
	decoder admission.Decoder
}

func (h *podGate) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	cluster := pod.Labels[labelCluster]
	if cluster == "" || pod.Labels[labelQueue] == "" || pod.Spec.NodeName != "" ||
		(pod.Spec.SchedulerName != "" && pod.Spec.SchedulerName != corev1.DefaultSchedulerName) {
		return admission.Allowed("")
	}
	gated := false
	for _, g := range pod.Spec.SchedulingGates {
		gated = gated || g.Name == gateName
	}
	if !gated {
		pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: gateName})
	}
	if _, ok := pod.Annotations[annotationGroup]; !ok {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[annotationGroup] = "ray-" + cluster + "-pg"
	}
	mutated, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}

func main() {
	host := flag.String("host", "127.0.0.1", "listen host")
	port := flag.Int("port", 9443, "listen port")
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key")
	flag.Parse()

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	server := webhook.NewServer(webhook.Options{Host: *host, Port: *port, CertDir: *certDir})
	server.Register("/mutate", &webhook.Admission{Handler: &podGate{decoder: admission.NewDecoder(scheme)}})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Start(ctx); err != nil {
		panic(err)
	}
}
