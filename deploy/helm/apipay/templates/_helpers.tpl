{{/* Names, labels and the pod pieces every process shares. */}}
{{- define "apipay.fullname" -}}
{{- if .Values.fullnameOverride -}}{{ .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "apipay.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "apipay.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "apipay.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The environment of every container: the ConfigMap of settings, then each secret by reference. */}}
{{- define "apipay.env" -}}
- name: APIPAY_PROFILE
  value: /etc/apipay/profile/profile.yaml
{{- range $name, $key := .Values.secrets.keys }}
{{- if and $key (ne $name "MIGRATION_DATABASE_URL") }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $.Values.secrets.name }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- if .Values.kafka.sasl.mechanism }}
- name: KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.kafka.sasl.passwordSecret.name | default .Values.secrets.name }}
      key: {{ .Values.kafka.sasl.passwordSecret.key }}
{{- end }}
{{- if and .Values.tracing.endpoint .Values.tracing.headersSecret.name }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.tracing.headersSecret.name }}
      key: {{ .Values.tracing.headersSecret.key }}
{{- end }}
{{- end -}}

{{- define "apipay.envFrom" -}}
- configMapRef:
    name: {{ include "apipay.fullname" . }}-env
{{- end -}}

{{- define "apipay.volumeMounts" -}}
- name: profile
  mountPath: /etc/apipay/profile
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- if .Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: /etc/apipay/temporal-tls
  readOnly: true
{{- end }}
{{- if .Values.extraCaSecretName }}
- name: extra-ca
  mountPath: /etc/apipay/ca
  readOnly: true
{{- end }}
{{- end -}}

{{- define "apipay.volumes" -}}
- name: profile
  configMap:
    name: {{ include "apipay.fullname" . }}-profile
- name: tmp
  emptyDir: {}
{{- if .Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.secretName }}
{{- end }}
{{- if .Values.extraCaSecretName }}
- name: extra-ca
  secret:
    secretName: {{ .Values.extraCaSecretName }}
{{- end }}
{{- end -}}

{{- define "apipay.podSecurity" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "apipay.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{- /* Issue 34 (R23): a tier's replicas on different nodes (and zones): values.spread. */}}
{{- define "apipay.spread" -}}
{{- $spread := .root.Values.spread -}}
{{- $constraints := list -}}
{{- range $key, $topology := dict "hostname" "kubernetes.io/hostname" "zone" "topology.kubernetes.io/zone" -}}
{{- with index $spread $key -}}
{{- $constraints = append $constraints (dict "maxSkew" 1 "topologyKey" $topology "whenUnsatisfiable" . "labelSelector" (dict "matchLabels" (include "apipay.selector" $ | fromYaml))) -}}
{{- end -}}
{{- end -}}
{{- with $constraints }}
topologySpreadConstraints: {{- toYaml . | nindent 2 }}
{{- end }}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "apipay.selector" . | fromYaml)) -}}
{{- if eq $spread.antiAffinity "required" }}
affinity:
  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution: {{- toYaml (list $term) | nindent 6 }}
{{- else if eq $spread.antiAffinity "preferred" }}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution: {{- toYaml (list (dict "weight" 100 "podAffinityTerm" $term)) | nindent 6 }}
{{- end }}
{{- end -}}
