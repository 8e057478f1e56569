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

{{/*
The plugin image. A values file copied from the Go driver's chart names the Go driver's image
(public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver, amazon/aws-efs-csi-driver, EKS' regional
…/eks/aws-efs-csi-driver): that binary refuses this chart's arguments, so the install fails here.
*/}}
{{- define "aws-efs-csi-driver.image" -}}
{{- if regexMatch "(^|/)aws-efs-csi-driver$" (.Values.image.repository | toString) -}}
{{- fail (printf "image.repository %s is the Go driver's image, which cannot run this chart's efs-csi-java node and controller (its binary refuses their arguments). Remove image.repository and image.tag from your values (the chart's default is efs-csi-java/efs-csi:%s) or set them to where you pushed efs-csi-java's image (docs/install.md, \"The image\")" .Values.image.repository .Chart.AppVersion) -}}
{{- end -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion (.Values.image.tag | toString) }}
{{- end -}}

{{/* A memory quantity ("128Mi", "1G", "134217728") in bytes, as a float; 0 when empty. */}}
{{- define "aws-efs-csi-driver.bytes" -}}
{{- $q := . | toString | trim -}}
{{- if or (eq $q "") (eq $q "<nil>") -}}0{{- else -}}
{{- $unit := regexFind "[A-Za-z]+$" $q -}}
{{- $units := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "K" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- mulf (float64 (trimSuffix $unit $q)) (get $units $unit | default 1) -}}
{{- end -}}
{{- end -}}

{{/*
A plugin container whose memory limit is below what it was measured to need (docs/install.md,
"Memory and CPU"; e.g. Go-sized resources in a copied values file) fails the install, unless
acknowledgeLowMemoryLimits is true: then it is a warning, printed in NOTES. A GitOps tool shows
no NOTES, hence a failure first. Candidates as for "aws-efs-csi-driver.resources".
*/}}
{{- define "aws-efs-csi-driver.memoryCheck" -}}
{{- $chosen := dict -}}
{{- range .candidates -}}
{{- if and (empty $chosen) . -}}{{- $chosen = . -}}{{- end -}}
{{- end -}}
{{- $r := empty $chosen | ternary .default $chosen -}}
{{- $limit := ((($r | default dict).limits | default dict).memory) -}}
{{- if $limit -}}
{{- $bytes := include "aws-efs-csi-driver.bytes" $limit | float64 -}}
{{- if lt $bytes (mulf .needMi 1048576) -}}
{{- $why := printf "the %s has a memory limit of %v, below the %vMi it was measured to need (docs/install.md, \"Memory and CPU\"): its JVM sizes its heap from the limit and would be OOM-killed under load. Raise %s.limits.memory, or remove %s to get the chart's default (%s)" .what $limit .needMi .key .key .defaultLimit -}}
{{- if .root.Values.acknowledgeLowMemoryLimits }}
WARNING: {{ $why }}.
{{- else -}}
{{- fail (printf "%s; or set acknowledgeLowMemoryLimits: true to install it anyway" $why) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Both plugin containers' memory checks (node, then controller when created). */}}
{{- define "aws-efs-csi-driver.memoryChecks" -}}
{{- $defaults := .Values.defaultResources | default dict -}}
{{- include "aws-efs-csi-driver.memoryCheck" (dict "root" . "candidates" (list .Values.node.resources) "default" (get $defaults "node") "what" "node plugin (efs-csi-node, efs-plugin)" "key" "node.resources" "needMi" 160 "defaultLimit" "320Mi") -}}
{{- if .Values.controller.create -}}
{{- include "aws-efs-csi-driver.memoryCheck" (dict "root" . "candidates" (list .Values.controller.resources) "default" (get $defaults "controller") "what" "controller (efs-csi-controller, efs-plugin)" "key" "controller.resources" "needMi" 256 "defaultLimit" "320Mi") -}}
{{- end -}}
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
