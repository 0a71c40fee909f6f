{{/* Name of the operator's objects: <release>-operator, at most 63 characters. */}}
{{- define "msgbench.fullname" -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "msgbench.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "msgbench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: msgbench
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "msgbench.selectorLabels" -}}
app.kubernetes.io/name: msgbench-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "msgbench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "msgbench.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The msgbench image: repository@digest, or repository:tag (tag defaults to appVersion). */}}
{{- define "msgbench.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "msgbench.workerImage" -}}
{{- default (include "msgbench.image" .) .Values.workerImage -}}
{{- end -}}
