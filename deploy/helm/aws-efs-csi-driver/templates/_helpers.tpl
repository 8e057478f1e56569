{{- define "aws-efs-csi-driver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "aws-efs-csi-driver.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "aws-efs-csi-driver.labels" -}}
app.kubernetes.io/name: {{ include "aws-efs-csi-driver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The pods' identity within the release; also what every selector matches. */}}
{{- define "aws-efs-csi-driver.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aws-efs-csi-driver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The controller pods' selector. "app" follows controller.name, as in the Go driver's chart, so a
release switched from that chart keeps its (immutable) Deployment selector.
*/}}
{{- define "aws-efs-csi-driver.controllerSelectorLabels" -}}
app: {{ .Values.controller.name }}
{{ include "aws-efs-csi-driver.selectorLabels" . }}
{{- end -}}

{{- define "aws-efs-csi-driver.nodeSelectorLabels" -}}
app: efs-csi-node
{{ include "aws-efs-csi-driver.selectorLabels" . }}
{{- end -}}

{{- define "aws-efs-csi-driver.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion (.Values.image.tag | toString) }}
{{- end -}}

{{/* imagePullSecrets: names ("regcred"), as the Go driver's chart takes them, or {name: regcred}. */}}
{{- define "aws-efs-csi-driver.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
{{- if kindIs "map" . }}
  - name: {{ .name | quote }}
{{- else }}
  - name: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
A container's resources: the first non-empty of the given candidates (values the Go driver's
chart reads, in its order of precedence), then the chart's own default for that container.
*/}}
{{- define "aws-efs-csi-driver.resources" -}}
{{- $chosen := dict -}}
{{- range .candidates -}}
{{- if and (empty $chosen) . -}}{{- $chosen = . -}}{{- end -}}
{{- end -}}
{{- with (empty $chosen | ternary .default $chosen) }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The container's memory limit for the launcher, which sizes the JVM heap from it. */}}
{{- define "aws-efs-csi-driver.memoryLimitEnv" -}}
- name: EFS_CSI_MEMORY_LIMIT
  valueFrom:
    resourceFieldRef:
      containerName: efs-plugin
      resource: limits.memory
      divisor: "1"
{{- end -}}

{{/* --tags: "k:v k2:v2", with \ : and space escaped as the driver reads them */}}
{{- define "aws-efs-csi-driver.tags" -}}
{{- $pairs := list -}}
{{- range $k, $v := .Values.controller.tags -}}
{{- $ek := $k | toString | replace "\\" "\\\\" | replace ":" "\\:" | replace " " "\\ " -}}
{{- $ev := $v | toString | replace "\\" "\\\\" | replace ":" "\\:" | replace " " "\\ " -}}
{{- $pairs = append $pairs (printf "%s:%s" $ek $ev) -}}
{{- end -}}
{{- join " " $pairs -}}
{{- end -}}

{{/* A node flag the Go driver's chart passes with a default when the key is absent. */}}
{{- define "aws-efs-csi-driver.nodeFlag" -}}
- --{{ .flag }}={{ hasKey .root.Values.node .key | ternary (get .root.Values.node .key) .default }}
{{- end -}}

{{/*
A ServiceMonitor endpoint's scrape of an authenticated /metrics: HTTPS (the plugin's certificate is
self-signed unless one is given) with Prometheus' own ServiceAccount token, which the
efs-csi-metrics-reader ClusterRole lets read /metrics.
*/}}
{{- define "aws-efs-csi-driver.secureScrape" -}}
scheme: https
tlsConfig:
  insecureSkipVerify: true
bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
{{- end }}
