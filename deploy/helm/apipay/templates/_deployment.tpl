{{/* One process's Deployment: the image's node entry point with dist/workers/<component>.js. */}}
{{- define "apipay.deployment" -}}
{{- $root := .root -}}
{{- $values := index $root.Values .component -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "apipay.fullname" $root }}-{{ .component }}
  labels:
    {{- include "apipay.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  {{- if not (dig "hpa" "enabled" false $values) }}
  replicas: {{ $values.replicas }}
  {{- end }}
  selector:
    matchLabels: {{- include "apipay.selector" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxUnavailable: 0, maxSurge: 1 }
  template:
    metadata:
      labels: {{- include "apipay.selector" . | nindent 8 }}
      annotations:
        checksum/env: {{ include (print $root.Template.BasePath "/configmap-env.yaml") $root | sha256sum }}
        checksum/profile: {{ include (print $root.Template.BasePath "/configmap-profile.yaml") $root | sha256sum }}
    spec:
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets: {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext: {{- include "apipay.podSecurity" $root | nindent 8 }}
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      {{- include "apipay.spread" . | trim | nindent 6 }}
      containers:
        - name: {{ .component }}
          image: {{ include "apipay.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command: ["node"]
          args: ["dist/workers/{{ .component }}.js"]
          envFrom: {{- include "apipay.envFrom" $root | nindent 12 }}
          env: {{- include "apipay.env" $root | nindent 12 }}
          ports:
            {{- if eq .component "api" }}
            - name: http
              containerPort: {{ $values.port }}
            {{- end }}
            - name: metrics
              containerPort: {{ $values.metricsPort }}
          livenessProbe:
            httpGet: { path: /healthz, port: metrics }
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: metrics }
            periodSeconds: 5
            failureThreshold: 2
          startupProbe:
            httpGet: { path: /healthz, port: metrics }
            periodSeconds: 2
            failureThreshold: 60
          lifecycle:
            preStop:
              # The Service stops sending to a terminating pod a moment after SIGTERM could arrive: wait that out.
              exec: { command: ["sleep", "{{ $root.Values.preStopSleepSeconds }}"] }
          resources: {{- toYaml $values.resources | nindent 12 }}
          securityContext: {{- include "apipay.containerSecurity" $root | nindent 12 }}
          volumeMounts: {{- include "apipay.volumeMounts" $root | nindent 12 }}
      volumes: {{- include "apipay.volumes" $root | nindent 8 }}
{{- end -}}
