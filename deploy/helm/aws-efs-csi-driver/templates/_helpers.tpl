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
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "aws-efs-csi-driver.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
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

{{- define "aws-efs-csi-driver.verbosity" -}}
{{- if .root.Values.debugLogs -}}5{{- else -}}{{ .level }}{{- end -}}
{{- end -}}
