package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupPlacement is where a device group's worker pods run on Kubernetes.
type GroupPlacement struct {
	// nodeSelector constrains the nodes the group's worker pods run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the group's worker pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity of the group's worker pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// TopicGroupSpec is a named set of topics device groups publish to and subscribe to
// (docs/fleets.md).
// +kubebuilder:validation:XValidation:rule="!self.pattern.contains('{device}') || has(self.devices)",message="devices: the pattern has {device}, so name the device group whose client ids fill it",fieldPath=".devices",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.devices) || self.pattern.contains('{device}')",message="pattern: devices is set, so the pattern must contain {device}",fieldPath=".pattern",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.devices) || !has(self.count)",message="count: a topic group with devices has one topic per device of that group; remove count",fieldPath=".count",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.count) || self.count == 1 || self.pattern.contains('{index}')",message="pattern: count is more than 1, so the pattern must contain {index} to name each topic apart",fieldPath=".pattern",reason="FieldValueInvalid"
type TopicGroupSpec struct {
	// name identifies the topic group in spec.groups[].publish.topics and subscribe.topics.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// pattern names each topic: {index} becomes the topic's number (0 to count-1), {device} the
	// client id of the device of the group named in devices (e.g. devices/{device}/telemetry, one
	// topic per device). A topic name has no wildcard (+, #).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[^#+\x00]*$`
	// +required
	Pattern string `json:"pattern"`

	// count is how many topics the group has (default 1); not with devices.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Count *int32 `json:"count,omitempty"`

	// devices names the device group whose client ids fill {device}: the topic group then has one
	// topic per device of that group, topic i for its device i.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Devices string `json:"devices,omitempty"`
}

// DeviceGroupSpec is one kind of device in the run: how many, how they connect, what they publish
// and what they subscribe to. Settings a group leaves out are the spec's own (spec.qos, spec.mqtt),
// so settings all groups share are written once.
// +kubebuilder:validation:XValidation:rule="has(self.publish) != has(self.subscribe)",message="publish: a device group either publishes or subscribes (a device that asks, publish.replyTo, subscribes to its own answers by itself); set one of publish and subscribe",fieldPath=".publish",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.publish) || !has(self.publish.messages) || self.publish.messages == 0 || self.publish.messages >= self.count",message="publish.messages: fewer than the group's devices (count); each sends at least one",fieldPath=".publish.messages",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.network) || !has(self.network.timeline) || size(self.network.timeline) == 0",message="network.timeline: a group's own link has no timeline yet; use spec.network's (for every client)",fieldPath=".network.timeline",reason="FieldValueForbidden"
type DeviceGroupSpec struct {
	// name identifies the group in results, metrics (label group) and objectives
	// (groups.<name>.<figure>).
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// count is how many devices (clients) the group has.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +required
	Count int32 `json:"count"`

	// clientID names each device's client id: {index} becomes its number in the group (0 to
	// count-1), {group} the group's name and {run} the run's random id (which keeps ids unique on
	// a shared broker). Default "{run}-{group}-{index}". It must contain {index}.
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[^#+/\x00]*\{index\}[^#+/\x00]*$`
	// +optional
	ClientID string `json:"clientID,omitempty"`

	// protocol is the group's protocol (default spec.protocol): mqtt (straight to the broker,
	// over TCP or WebSocket: mqtt.transport), mqtt-sn (through the msgbench MQTT-SN gateway) or
	// http (through the msgbench HTTP gateway). Groups on MQTT-SN and HTTP publish; a
	// subscribing group speaks MQTT.
	// +kubebuilder:validation:Enum=mqtt;mqtt-sn;http
	// +optional
	Protocol Protocol `json:"protocol,omitempty"`

	// mqttsn holds the group's MQTT-SN settings (protocol mqtt-sn; default spec.mqttsn).
	// +optional
	MQTTSN *MQTTSNSpec `json:"mqttsn,omitempty"`

	// http holds the group's HTTP settings (protocol http; default spec.http).
	// +optional
	HTTP *HTTPSpec `json:"http,omitempty"`

	// qos is the group's delivery guarantee (default spec.qos): 0, 1 or 2.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2
	// +optional
	QoS *int32 `json:"qos,omitempty"`

	// start is when the group's devices connect, counted from the run's start (warm-up
	// included): a group that joins late, as devices that come online after a firmware notice
	// went out. Its publishers publish from then on; its subscribers count the messages sent
	// once all of them have subscribed (docs/fleets.md, "Groups that join late"). Default: they
	// connect before the run starts, as a flat spec's clients do.
	// +optional
	Start *metav1.Duration `json:"start,omitempty"`

	// network puts the group's devices behind an emulated link of their own (profile, overrides,
	// radio; as spec.network): NB-IoT sensors beside a backend on the broker's LAN. With a
	// network on a group, spec.network is left out (a group without one reaches the broker
	// directly). msgbench run only for now; no timeline on a group's link yet.
	// +optional
	Network *NetworkSpec `json:"network,omitempty"`

	// placement runs the group, on Kubernetes, in worker pods of its own, scheduled as it says:
	// a backend on the broker's node, a device group on nodes of its own. Each field left out is
	// spec.workers' (a group with a network of its own gets pods of its own anyway). Its
	// messages to and from the other pods are timed across two clocks, corrected by their
	// measured offsets (docs/measurement.md). msgbench run runs every group in one process.
	// +optional
	Placement *GroupPlacement `json:"placement,omitempty"`

	// identity is the group's devices' client ids, usernames and passwords; a field left out is
	// spec.identity's. identity.clientId replaces clientID (not both).
	// +optional
	Identity *IdentitySpec `json:"identity,omitempty"`

	// mqtt holds the group's MQTT session settings; a field left out is spec.mqtt's.
	// +optional
	MQTT *GroupMQTTSpec `json:"mqtt,omitempty"`

	// publish makes the group's devices publishers.
	// +optional
	Publish *PublishSpec `json:"publish,omitempty"`

	// subscribe makes the group's devices subscribers.
	// +optional
	Subscribe *SubscribeSpec `json:"subscribe,omitempty"`
}

// GroupMQTTSpec is a device group's own MQTT session settings; a field left out is spec.mqtt's.
type GroupMQTTSpec struct {
	// transport carries the group's MQTT over tcp or websocket (dashboards in a browser).
	// +kubebuilder:validation:Enum=tcp;websocket
	// +optional
	Transport MQTTTransport `json:"transport,omitempty"`

	// version is the group's MQTT protocol version, "3.1.1" or "5".
	// +optional
	Version MQTTVersion `json:"version,omitempty"`

	// cleanSession starts every client of the group with a fresh session.
	// +optional
	CleanSession *bool `json:"cleanSession,omitempty"`

	// keepAliveSeconds is the keep-alive interval the group's clients announce; 0 disables it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +optional
	KeepAliveSeconds *int32 `json:"keepAliveSeconds,omitempty"`

	// inflight is the most QoS 1/2 publishes one of its clients keeps unacknowledged.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Inflight *int32 `json:"inflight,omitempty"`
}

// PublishSpec is what a device group publishes.
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || !has(self.rate)",message="rate: set interval (each device's period) or rate (the group's total), not both",fieldPath=".rate",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || duration(self.interval) >= duration('1ms')",message="interval: at least 1ms",fieldPath=".interval",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.payloadBytes >= 16",message="payloadBytes: at least 16: a device group's messages carry msgbench's 16-byte header, which tells a subscriber of any group whose message it is",fieldPath=".payloadBytes",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.replyTo) || !has(self.retain) || !self.retain",message="retain: a request is not retained (its answer goes to the asking device, once)",fieldPath=".retain",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.payload) || self.payloadBytes == 256",message="payloadBytes: payload sets the messages' size (payload.size) or content (payload.template); leave payloadBytes out",fieldPath=".payloadBytes",reason="FieldValueForbidden"
type PublishSpec struct {
	// topics names the topic group (spec.topics) the devices publish to. Device i publishes to
	// topic i mod the topic group's count; when the topic group has more topics than the group
	// has devices, device i cycles over topics i, i+count, i+2·count, … one message each (a
	// backend sending each device its own command).
	// +kubebuilder:validation:MaxLength=63
	// +required
	Topics string `json:"topics"`

	// payloadBytes is each message's size (default 256), when payload does not vary it. Payloads
	// of 16 bytes or more carry msgbench's header, which counts losses, duplicates and order and
	// measures latency.
	// +kubebuilder:default=256
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	PayloadBytes int32 `json:"payloadBytes"`

	// payload varies the messages: their size drawn from a distribution (payload.size, random
	// content) or their content rendered from a JSON template with the device, a counter and a
	// timestamp (payload.template); payloadBytes is then left out. Default: payloadBytes of
	// random bytes.
	// +optional
	Payload *PayloadSpec `json:"payload,omitempty"`

	// interval is each device's period between messages (open loop): 10s is one message per
	// device every ten seconds.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// rate is the group's total messages per second, shared by its devices (open loop). Without
	// interval or rate the devices publish as fast as their inflight window allows (closed loop).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	Rate *int32 `json:"rate,omitempty"`

	// messages is how many messages the group publishes in all, warm-up included, after which
	// its devices stop. When every publishing group has messages the run ends once they were
	// sent and delivered; otherwise it lasts spec.workload.duration. 0: until the run ends.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Messages int64 `json:"messages,omitempty"`

	// retain asks the broker to keep each topic's last message and give it to every client that
	// subscribes later (a firmware notice, a device's last known state). Deliveries of retained
	// messages to a new subscription are counted apart from the others (retained in the
	// results). msgbench clears the retained messages it left when the run ends.
	// +optional
	Retain bool `json:"retain,omitempty"`

	// replyTo makes each message a request (MQTT 5 request/response): it carries the device's
	// own topic of this topic group as its Response Topic and msgbench's header as its
	// Correlation Data; the device subscribes to that topic, and a group that responds
	// (subscribe.respond) answers there. Each answer's round trip is measured, on the device's
	// own clock. The topic group needs a topic per device of the group (devices: <this group>).
	// Needs MQTT 5.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ReplyTo string `json:"replyTo,omitempty"`
}

// RespondSpec is how a subscribing group answers requests.
type RespondSpec struct {
	// payloadBytes is each answer's size (default 16).
	// +kubebuilder:default=16
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	PayloadBytes int32 `json:"payloadBytes"`
}

// SubscribeSpec is what a device group subscribes to: one subscription per device.
// +kubebuilder:validation:XValidation:rule="has(self.topics) != has(self.filter)",message="topics: subscribe to a topic group (topics) or a topic filter (filter), one of them",fieldPath=".topics",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.filter) || self.filter.matches('^(([+]|[^#+/]*)/)*([+]|#|[^#+/]*)$')",message="filter: a wildcard (+ one level, # every level below) must fill a whole level, and # must be the last level (MQTT 3.1.1 section 4.7.1)",fieldPath=".filter",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.filter) || !self.filter.startsWith('$share/')",message="filter: name the shared subscription with share, not in the filter",fieldPath=".filter",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.share) || has(self.filter)",message="share: a shared subscription takes a filter",fieldPath=".share",reason="FieldValueInvalid"
type SubscribeSpec struct {
	// topics names the topic group (spec.topics) to subscribe to: device i subscribes to topic i
	// mod the topic group's count (a topic group of one topic per device gives each device its
	// own).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Topics string `json:"topics,omitempty"`

	// filter is an MQTT topic filter with wildcards: + one level, # every level below
	// (devices/+/telemetry). Every device subscribes to it.
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[^\x00]+$`
	// +optional
	Filter string `json:"filter,omitempty"`

	// share makes the group's devices one shared subscription ($share/<share>/<filter>): the
	// broker gives each matching message to exactly one of them, as consumers of a backend
	// share its work.
	// +kubebuilder:validation:Pattern=`^[^#+/\x00]+$`
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Share string `json:"share,omitempty"`

	// respond answers each request the group's devices get (a message with an MQTT 5 Response
	// Topic: a group's publish.replyTo) on its Response Topic, with its Correlation Data, as a
	// service does. Needs MQTT 5.
	// +optional
	Respond *RespondSpec `json:"respond,omitempty"`
}
