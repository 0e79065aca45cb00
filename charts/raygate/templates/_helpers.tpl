{{/* The image of all three programs. */}}
{{- define "raygate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Labels of a component: raygate.labels (dict "name" NAME "root" $) */}}
{{- define "raygate.labels" -}}
{{- $l := dict "app.kubernetes.io/part-of" "raygate" }}
{{- if .name }}{{ $_ := set $l "app.kubernetes.io/name" .name }}{{ end }}
{{- toYaml (merge $l .root.Values.commonLabels) }}
{{- end }}

{{/* metadata.labels for objects that carry only commonLabels (none by default). */}}
{{- define "raygate.commonLabels" -}}
{{- with .Values.commonLabels }}
labels:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The hardened container securityContext every container uses. */}}
{{- define "raygate.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: {drop: [ALL]}
{{- end }}

{{/* The pod securityContext: non-root uid 65532, seccomp RuntimeDefault. */}}
{{- define "raygate.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile: {type: RuntimeDefault}
{{- end }}

{{/* Pull policy and secrets. */}}
{{- define "raygate.pullPolicy" -}}
{{- with .Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end }}

{{- define "raygate.pullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Spread a component's replicas over nodes unless affinity is given: raygate.affinity (dict "name" NAME "affinity" VALUE) */}}
{{- define "raygate.affinity" -}}
{{- if .affinity }}
{{- toYaml .affinity }}
{{- else }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 100
    podAffinityTerm:
      topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels: {app.kubernetes.io/name: {{ .name }}}
{{- end }}
{{- end }}

{{/*
The --native-gang flag of both programs from .Values.nativeGang, as a JSON list:
none for off (their default), else the flag and the mode; another value fails.
*/}}
{{- define "raygate.holdGangsArgs" -}}
{{- $m := toString .Values.webhook.holdGangs -}}
{{- if not (has $m (list "decide" "wait" "off")) -}}
{{- fail (printf "webhook.holdGangs must be decide, wait or off, not %q" $m) -}}
{{- end -}}
{{- if eq $m "wait" }}[]{{ else }}{{ list "--hold-gangs" $m | toJson }}{{ end -}}
{{- end }}

{{- define "raygate.nativeGangArgs" -}}
{{- $m := toString .Values.nativeGang -}}
{{- /* YAML reads an unquoted off or on as a boolean */ -}}
{{- $m = get (dict "false" "off" "true" "on") $m | default $m -}}
{{- if not (has $m (list "auto" "on" "off")) -}}
{{- fail (printf "nativeGang must be auto, on or off, not %q" $m) -}}
{{- end -}}
{{- if eq $m "off" }}[]{{ else }}{{ list "--native-gang" $m | toJson }}{{ end -}}
{{- end }}
