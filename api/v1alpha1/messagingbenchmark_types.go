package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Protocol is the messaging protocol the load generator speaks.
// +kubebuilder:validation:Enum=mqtt;mqtt-sn;http;mqtt-quic;kafka
type Protocol string

// Protocols msgbench drives.
const (
	ProtocolMQTT     Protocol = "mqtt"
	ProtocolMQTTSN   Protocol = "mqtt-sn"
	ProtocolHTTP     Protocol = "http"
	ProtocolMQTTQUIC Protocol = "mqtt-quic"
	ProtocolKafka    Protocol = "kafka"
)

// BrokerType selects who provides the broker.
// +kubebuilder:validation:Enum=mosquitto;kafka;rabbitmq;artemis;emqx;nanomq;hivemq-ce;vernemq;external
type BrokerType string

// Broker types.
const (
	BrokerMosquitto BrokerType = "mosquitto"
	BrokerKafka     BrokerType = "kafka"
	BrokerRabbitMQ  BrokerType = "rabbitmq"
	BrokerArtemis   BrokerType = "artemis"
	BrokerEMQX      BrokerType = "emqx"
	BrokerNanoMQ    BrokerType = "nanomq"
	BrokerHiveMQCE  BrokerType = "hivemq-ce"
	BrokerVerneMQ   BrokerType = "vernemq"
	BrokerExternal  BrokerType = "external"
)

// MessagingBenchmarkSpec describes one benchmark run: what is measured, against which broker, with
// how many clients, on which emulated network.
//
// +kubebuilder:validation:XValidation:rule="self.qos != -1 || self.protocol == 'mqtt-sn'",message="spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn",fieldPath=".qos",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.qos != -1 || self.protocol != 'mqtt-sn' || self.mqttsn.topicIdType != 'normal'",message="spec.mqttsn.topicIdType: QoS -1 publishes without a connection, so there is no REGISTER to learn a normal topic id: set topicIdType predefined or short",fieldPath=".mqttsn.topicIdType",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'mqtt-sn' || self.mqttsn.topicIdType == 'short' || self.workload.topics <= 65534",message="spec.workload.topics: MQTT-SN topic ids are 16-bit (1..65534; 0 and 65535 are reserved), so at most 65534 topics with normal or predefined topic ids",fieldPath=".workload.topics",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!(self.broker.type == 'external' && self.protocol in ['mqtt', 'kafka'] && self.network.profile != 'none' && self.network.direction != 'to') || (self.network.profile == 'custom' && !has(self.network.down) && !has(self.network.delay) && !has(self.network.jitter) && !has(self.network.lossPercent) && !has(self.network.duplicatePercent) && !has(self.network.corruptPercent) && !has(self.network.reorderPercent) && !has(self.network.bandwidth))",message="spec.network.direction: the broker is external, so its egress toward the workers cannot be impaired (Chaos Mesh shapes only pods msgbench runs); set direction: to to impair only the uplink",fieldPath=".network.direction",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'mqtt-sn' || self.workload.payloadBytes <= 65498",message="spec.workload.payloadBytes: an MQTT-SN 1.2 PUBLISH over UDP carries at most 65498 payload bytes (65507-byte IPv4 datagram minus the 9-byte PUBLISH header)",fieldPath=".workload.payloadBytes",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'mosquitto' || !has(self.broker.config) || !self.broker.config.exists(k, k in ['listener', 'port', 'bind_address', 'cafile', 'certfile', 'keyfile', 'tls_version', 'include_dir', 'per_listener_settings', 'user', 'pid_file', 'allow_anonymous', 'password_file', 'acl_file', 'psk_file', 'auth_plugin', 'plugin'] || k.startsWith('auth_opt_') || k.startsWith('plugin_opt_'))",message="spec.broker.config: listener, port, bind_address, cafile, certfile, keyfile, tls_version, include_dir, per_listener_settings, user and pid_file are managed by msgbench (listeners, TLS files and version, the user and the pid file follow from the spec), and so are allow_anonymous, password_file, acl_file, psk_file, auth_plugin, plugin, auth_opt_* and plugin_opt_* (the benchmark's clients connect anonymously and may use every topic)",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'mosquitto' || !has(self.broker.config) || self.broker.config.all(k, k in ['acl_file', 'allow_anonymous', 'allow_duplicate_messages', 'allow_zero_length_clientid', 'auth_plugin', 'auth_plugin_deny_special_chars', 'auto_id_prefix', 'autosave_interval', 'autosave_on_changes', 'bind_address', 'bind_interface', 'cafile', 'capath', 'certfile', 'check_retain_source', 'ciphers', 'ciphers_tls1.3', 'clientid_prefixes', 'connection_messages', 'crlfile', 'dhparamfile', 'http_dir', 'include_dir', 'keyfile', 'listener', 'log_dest', 'log_facility', 'log_timestamp', 'log_timestamp_format', 'log_type', 'max_connections', 'max_inflight_bytes', 'max_inflight_messages', 'max_keepalive', 'max_packet_size', 'max_qos', 'max_queued_bytes', 'max_queued_messages', 'max_topic_alias', 'maximum_qos', 'memory_limit', 'message_size_limit', 'mount_point', 'password_file', 'per_listener_settings', 'persistence', 'persistence_file', 'persistence_location', 'persistent_client_expiration', 'pid_file', 'plugin', 'port', 'protocol', 'psk_file', 'psk_hint', 'queue_qos0_messages', 'require_certificate', 'retain_available', 'retained_persistence', 'retry_interval', 'set_tcp_nodelay', 'socket_domain', 'sys_interval', 'tls_engine', 'tls_engine_kpass_sha1', 'tls_keyform', 'tls_version', 'upgrade_outgoing_qos', 'use_identity_as_username', 'use_subject_as_username', 'use_username_as_clientid', 'user', 'websockets_headers_size', 'websockets_log_level'] || k.startsWith('auth_opt_') || k.startsWith('plugin_opt_'))",messageExpression="'spec.broker.config.' + self.broker.config.filter(k, !(k in ['acl_file', 'allow_anonymous', 'allow_duplicate_messages', 'allow_zero_length_clientid', 'auth_plugin', 'auth_plugin_deny_special_chars', 'auto_id_prefix', 'autosave_interval', 'autosave_on_changes', 'bind_address', 'bind_interface', 'cafile', 'capath', 'certfile', 'check_retain_source', 'ciphers', 'ciphers_tls1.3', 'clientid_prefixes', 'connection_messages', 'crlfile', 'dhparamfile', 'http_dir', 'include_dir', 'keyfile', 'listener', 'log_dest', 'log_facility', 'log_timestamp', 'log_timestamp_format', 'log_type', 'max_connections', 'max_inflight_bytes', 'max_inflight_messages', 'max_keepalive', 'max_packet_size', 'max_qos', 'max_queued_bytes', 'max_queued_messages', 'max_topic_alias', 'maximum_qos', 'memory_limit', 'message_size_limit', 'mount_point', 'password_file', 'per_listener_settings', 'persistence', 'persistence_file', 'persistence_location', 'persistent_client_expiration', 'pid_file', 'plugin', 'port', 'protocol', 'psk_file', 'psk_hint', 'queue_qos0_messages', 'require_certificate', 'retain_available', 'retained_persistence', 'retry_interval', 'set_tcp_nodelay', 'socket_domain', 'sys_interval', 'tls_engine', 'tls_engine_kpass_sha1', 'tls_keyform', 'tls_version', 'upgrade_outgoing_qos', 'use_identity_as_username', 'use_subject_as_username', 'use_username_as_clientid', 'user', 'websockets_headers_size', 'websockets_log_level'] || k.startsWith('auth_opt_') || k.startsWith('plugin_opt_')))[0] + ': not a mosquitto.conf key that Mosquitto 2.0 reads outside a bridge section (mosquitto.conf(5)); Mosquitto would refuse to start, and msgbench runs one broker with no bridge: remove it or fix its spelling (docs/brokers.md)'",fieldPath=".broker.config",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'kafka' || !has(self.broker.config) || !self.broker.config.exists(k, ['listeners', 'advertised.', 'listener.', 'inter.broker.listener.name', 'controller.', 'process.roles', 'node.id', 'broker.id', 'log.dir', 'ssl.', 'security.', 'sasl.', 'authorizer.', 'super.users', 'zookeeper.', 'metadata.log.dir', 'cruise.control.metrics.topic', 'principal.builder.class', 'password.encoder.', 'host.name', 'port', 'broker.rack', 'config.providers', 'node.', 'inter.broker.protocol.version', 'log.message.format.version', 'offsets.topic.replication.factor'].exists(p, k == p || (p.endsWith('.') && k.startsWith(p))))",message="spec.broker.config: a key is managed by msgbench: listeners, KRaft quorum and node ids (controller.*, node.*, process.roles, broker.id), storage (log.dir and the metadata log dir), TLS and authentication (ssl.*, security.*, sasl.*, authorizer.*, super.users, principal.builder.class, password.encoder.*), versions, broker.rack, config.providers and offsets.topic.replication.factor follow from the spec",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.protocol == 'kafka' || self.broker.type != 'kafka'",messageExpression="'spec.broker.type: protocol ' + self.protocol + ' needs an MQTT broker (mosquitto, rabbitmq, artemis, emqx, nanomq, hivemq-ce, vernemq or external), not kafka'",fieldPath=".broker.type",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'kafka' || self.broker.type in ['kafka', 'external']",messageExpression="'spec.broker.type: protocol kafka needs broker type kafka or external, not ' + self.broker.type + ' (an MQTT broker)'",fieldPath=".broker.type",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'rabbitmq' || self.qos != 2",message="spec.qos: RabbitMQ's MQTT plugin has no QoS 2 (it grants QoS 1 to a QoS 2 subscription and treats QoS 2 publishes as QoS 1), so a QoS 2 run would measure QoS 1; use qos 0 or 1, or another broker",fieldPath=".qos",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.publishers == 0 || self.workload.publishers >= self.workers.replicas",message="spec.workload.publishers: every worker needs at least one publisher, so publishers must be at least spec.workers.replicas",fieldPath=".workload.publishers",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.topics >= self.workers.replicas",message="spec.workload.topics: each topic lives in one worker (one clock for end-to-end latency), so topics must be at least spec.workers.replicas",fieldPath=".workload.topics",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!(self.protocol in ['mqtt-quic', 'http']) || !has(self.tls) || self.tls.version != '1.2' || (self.protocol == 'http' && self.http.version != '3')",message="spec.tls.version: QUIC (mqtt-quic, HTTP/3) always uses TLS 1.3",fieldPath=".tls.version",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.quic) || !self.quic.zeroRTT || (self.protocol == 'mqtt-quic' || (self.protocol == 'http' && self.http.version == '3'))",message="spec.quic.zeroRTT: 0-RTT is a QUIC feature: protocol mqtt-quic, or http with http.version \"3\"",fieldPath=".quic.zeroRTT",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || self.tls.enabled || (self.protocol == 'mqtt-quic' || (self.protocol == 'http' && self.http.version == '3')) || ((!has(self.tls.groups) || size(self.tls.groups) == 0) && (!has(self.tls.cipherSuites) || size(self.tls.cipherSuites) == 0) && !(has(self.tls.resumption) && self.tls.resumption))",message="spec.tls.enabled: groups, cipherSuites and resumption apply to TLS: set spec.tls.enabled (QUIC protocols always use TLS 1.3)",fieldPath=".tls.enabled",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.cipherSuites) || !(self.tls.cipherSuites.filter(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256']).size() in [1, 2]) || (self.protocol == 'mqtt' && self.broker.type == 'mosquitto' && (!has(self.mqtt.transport) || self.mqtt.transport == 'tcp'))",message="spec.tls.cipherSuites: Go's TLS 1.3 client always offers all three TLS 1.3 suites and the server picks one; msgbench enforces a TLS 1.3 choice only on the Mosquitto broker it runs (protocol mqtt over tcp, ciphers_tls1.3), not on the msgbench gateways, another broker or an external one (docs/tls.md)",fieldPath=".tls.cipherSuites",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.cipherSuites) || has(self.tls.secretRef) || self.broker.type == 'external' || !self.tls.cipherSuites.exists(s, s in ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA']) || self.tls.cipherSuites.exists(s, s.startsWith('TLS_ECDHE_ECDSA_'))",message="spec.tls.cipherSuites: the certificate msgbench generates has an ECDSA key, so a TLS 1.2 suite must be an ECDHE_ECDSA one; add one or set spec.tls.secretRef to an RSA certificate",fieldPath=".tls.cipherSuites",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.groups) || size(self.tls.groups) == 0 || self.tls.version != '1.2' || !(self.protocol in ['mqtt', 'kafka']) || (self.protocol == 'mqtt-quic' || (self.protocol == 'http' && self.http.version == '3')) || has(self.tls.secretRef) || self.broker.type == 'external' || 'p256' in self.tls.groups",message="spec.tls.groups: in TLS 1.2 the groups also name the curves a client accepts in the server's ECDSA certificate (RFC 8422), which brokers enforce, and the one msgbench generates is P-256: add p256, or set spec.tls.secretRef",fieldPath=".tls.groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.cipherSuites) || self.protocol != 'http' || self.http.version != '2' || !self.tls.cipherSuites.exists(s, s.contains('_CBC_'))",message="spec.tls.cipherSuites: HTTP/2 forbids the CBC suites (RFC 9113 section 9.2.2): the gateway would refuse the connection; choose an AES-GCM or ChaCha20 suite",fieldPath=".tls.cipherSuites",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.clientCertificates) || self.tls.enabled || self.protocol == 'mqtt-quic' || (self.protocol == 'http' && self.http.version == '3')",message="spec.tls.clientCertificates: the clients do not use TLS; set spec.tls.enabled (QUIC protocols always do)",fieldPath=".tls.clientCertificates",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.clientCertificates) || self.broker.type in ['mosquitto', 'external'] || self.protocol == 'http' || (self.protocol == 'mqtt-quic' && self.broker.type != 'emqx')",messageExpression="'spec.tls.clientCertificates: msgbench makes the broker it runs require client certificates only for mosquitto (and its own HTTP and QUIC gateways), not ' + self.broker.type + '; use broker type mosquitto, or external (a broker you configured)'",fieldPath=".tls.clientCertificates",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'mqtt-sn' || !has(self.tls) || !self.tls.enabled",message="spec.tls.enabled: MQTT-SN runs over plain UDP; msgbench has no DTLS transport",fieldPath=".tls.enabled",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'mqtt-sn' || self.mqttsn.topicIdType != 'short' || self.workload.topics <= 3844",message="spec.workload.topics: short topic ids are two characters from [0-9A-Za-z], so at most 3844 topics",fieldPath=".workload.topics",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.protocol != 'kafka' || self.workload.topicPrefix.matches('^[a-zA-Z0-9._-]*$')",message="spec.workload.topicPrefix: Kafka topic names allow only letters, digits, '.', '_' and '-'",fieldPath=".workload.topicPrefix",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.messages > 0 || !has(self.network.timeline) || self.network.timeline.all(s, duration(s.at) < duration(self.workload.duration))",message="spec.network.timeline: a step begins at or after the end of the measured window (spec.workload.duration), so it would never apply",fieldPath=".network.timeline",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.messages > 0 || duration(self.workload.duration) == duration('0s') || duration(self.workload.duration) >= duration('1s')",message="spec.workload.duration: the measured window must be at least 1s: rates are per second and the timeline's default bucket is 1s, and in a shorter window the workers' start and stop skew and the messages still in flight are most of what is measured; set 1s or more, or set messages",fieldPath=".workload.duration",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.messages > 0 || ((has(self.timeout) && duration(self.timeout) > duration('0s')) ? duration(self.timeout).getMilliseconds() : 900000) > (duration(self.workload.warmup).getMilliseconds() + duration(self.workload.duration).getMilliseconds() + ((self.workload.connectRate > 0 && self.workers.replicas > 0) ? (self.workload.publishers + self.workload.subscribers) / self.workers.replicas * 1000 / self.workload.connectRate : 0))",message="spec.timeout: not longer than the run's own phases: spec.workload.warmup + spec.workload.duration, plus each worker's clients divided by workload.connectRate when that is set, and the timeout must also cover starting the broker, connecting the clients, draining and collecting the results; raise spec.timeout (15m when unset) or shorten the run",fieldPath=".timeout",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.messages > 0 || duration(self.workload.duration) > duration('0s')",message="spec.workload: set messages or duration; both are zero, so the run would never publish",fieldPath=".workload.duration",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.publishers >= 1",message="spec.workload.publishers: at least one publisher is needed; with none nothing is published and the run measures nothing",fieldPath=".workload.publishers",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.messages == 0 || self.workload.messages >= self.workload.publishers",message="spec.workload.messages: every publisher sends at least one message, so messages must be 0 (use duration) or at least spec.workload.publishers",fieldPath=".workload.messages",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.workload.messages == 0 || self.workload.rate == 0 || double(self.workload.messages - 1) >= double(self.workload.rate) * double(duration(self.workload.warmup).getMilliseconds()) / 1000.0",message="spec.workload.messages: at spec.workload.rate every message is sent within spec.workload.warmup, so nothing would be measured: raise messages above rate × warmup, or shorten the warm-up",fieldPath=".workload.messages",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || self.workload.rate == 0",message="spec.workload.rate: a duty cycle sets the rate itself (publishers × dutyCycle.messagesPerWake / dutyCycle.period); remove rate",fieldPath=".workload.rate",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || self.workload.messages == 0",message="spec.workload.messages: a duty cycle runs for duration, and its messages follow from publishers, period and messagesPerWake (docs/churn.md); remove messages",fieldPath=".workload.messages",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || self.protocol in ['mqtt', 'mqtt-quic']",messageExpression="'spec.workload.dutyCycle: protocol ' + self.protocol + ' has no duty-cycle driver yet; devices that connect and disconnect run on mqtt and mqtt-quic'",fieldPath=".workload.dutyCycle",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || !(has(self.workload.dutyCycle.subscribers) && self.workload.dutyCycle.subscribers) || self.protocol == 'mqtt'",message="spec.workload.dutyCycle.subscribers: a sleeping subscriber resumes its persistent session on the broker; msgbench's gateways (mqtt-quic on Mosquitto) keep no session for it, so only protocol mqtt",fieldPath=".workload.dutyCycle.subscribers",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || !(has(self.workload.dutyCycle.subscribers) && self.workload.dutyCycle.subscribers) || (has(self.mqtt.cleanSession) && !self.mqtt.cleanSession)",message="spec.mqtt.cleanSession: sleeping subscribers (dutyCycle.subscribers) with a clean session lose by design every message published while they sleep; set cleanSession: false so that the broker queues them",fieldPath=".mqtt.cleanSession",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || !(has(self.workload.dutyCycle.subscribers) && self.workload.dutyCycle.subscribers) || self.qos >= 1",message="spec.qos: brokers queue only QoS 1 and 2 messages for a sleeping subscriber (dutyCycle.subscribers); at QoS 0 they would be lost by design: set qos 1 or 2",fieldPath=".qos",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || !(has(self.workload.dutyCycle.subscribers) && self.workload.dutyCycle.subscribers) || !has(self.mqtt.version) || self.mqtt.version != '5' || duration(self.workload.dutyCycle.period) <= duration('1h')",message="spec.workload.dutyCycle.period: MQTT 5 clients ask for a session expiry of 3600 s, so a subscriber sleeping longer would find its session (and what was queued for it) gone; at most 1h with mqtt.version 5, or use 3.1.1, whose sessions never expire",fieldPath=".workload.dutyCycle.period",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.dutyCycle) || !has(self.workload.reconnectStorm)",message="spec.workload.reconnectStorm: drops connections that stay; duty-cycled devices already come and go: set dutyCycle or reconnectStorm, not both",fieldPath=".workload.reconnectStorm",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.reconnectStorm) || self.protocol in ['mqtt', 'mqtt-quic']",messageExpression="'spec.workload.reconnectStorm: protocol ' + self.protocol + ' has no driver that can drop a connection abruptly and resume it; reconnect storms run on mqtt and mqtt-quic'",fieldPath=".workload.reconnectStorm",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.reconnectStorm) || self.workload.messages == 0",message="spec.workload.messages: a reconnect storm must fall inside the run, whose end is known only with duration; remove messages",fieldPath=".workload.messages",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.reconnectStorm) || duration(self.workload.reconnectStorm.at) + (has(self.workload.reconnectStorm.spread) ? duration(self.workload.reconnectStorm.spread) : duration('0s')) < duration(self.workload.warmup) + duration(self.workload.duration)",message="spec.workload.reconnectStorm.at: the drop plus spread must come before the end of publishing (warmup + duration), or the storm would be cut short",fieldPath=".workload.reconnectStorm.at",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="duration(self.workload.timelineInterval) >= duration('100ms')",message="spec.workload.timelineInterval: must be at least 100ms",fieldPath=".workload.timelineInterval",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'external' || (has(self.broker.external) && has(self.broker.external.address))",message="spec.broker.external.address: required when spec.broker.type is external",fieldPath=".broker.external",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.broker.type == 'external' || !has(self.broker.external)",message="spec.broker.external: only allowed when spec.broker.type is external",fieldPath=".broker.external",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'emqx' || !has(self.broker.config) || self.broker.config.all(k, ['mqtt.', 'force_shutdown.', 'force_gc.', 'overload_protection.', 'conn_congestion.', 'sysmon.', 'alarm.', 'flapping_detect.', 'sys_topics.', 'retainer.', 'durable_sessions.', 'log.console.', 'log.file.', 'node.process_limit', 'node.max_ports', 'node.dist_buffer_size', 'node.max_ets_tables', 'node.broker_pool_size', 'node.generic_pool_size', 'node.channel_cleanup_batch_size', 'node.global_gc_interval', 'listeners.tcp.default.tcp_options.', 'listeners.ssl.default.tcp_options.', 'listeners.tcp.default.acceptors', 'listeners.ssl.default.acceptors', 'listeners.quic.default.acceptors', 'listeners.quic.default.idle_timeout', 'listeners.quic.default.handshake_idle_timeout', 'listeners.quic.default.keep_alive_interval', 'listeners.quic.default.conn_flow_control_window', 'listeners.quic.default.stream_recv_window_default', 'listeners.quic.default.initial_window_packets', 'listeners.quic.default.send_buffering_enabled', 'listeners.quic.default.pacing_enabled'].exists(p, k == p || (p.endsWith('.') && k.startsWith(p))))",message="spec.broker.config: EMQX accepts only its documented tuning keys that msgbench does not manage (listeners, TLS, node identity and access follow from the spec); see docs/brokers.md",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'nanomq' || !has(self.broker.config) || self.broker.config.all(k, k in ['mqtt.max_packet_size', 'mqtt.max_mqueue_len', 'mqtt.retry_interval', 'mqtt.keepalive_multiplier', 'mqtt.property_size', 'mqtt.max_inflight_window', 'mqtt.max_awaiting_rel', 'mqtt.await_rel_timeout', 'system.num_taskq_thread', 'system.max_taskq_thread', 'system.parallel', 'log.level'])",message="spec.broker.config: NanoMQ accepts only its documented tuning keys that msgbench does not manage (listeners, TLS, node identity and access follow from the spec); see docs/brokers.md",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'hivemq-ce' || !has(self.broker.config) || self.broker.config.all(k, k in ['mqtt.queued-messages.max-queue-size', 'mqtt.queued-messages.strategy', 'mqtt.retained-messages.enabled', 'mqtt.wildcard-subscriptions.enabled', 'mqtt.quality-of-service.max-qos', 'mqtt.topic-alias.enabled', 'mqtt.topic-alias.max-per-client', 'mqtt.message-expiry.max-interval', 'mqtt.session-expiry.max-interval', 'mqtt.subscription-identifier.enabled', 'mqtt.shared-subscriptions.enabled', 'mqtt.keep-alive.max-keep-alive', 'mqtt.keep-alive.allow-unlimited', 'mqtt.packets.max-packet-size', 'mqtt.receive-maximum.server-receive-maximum', 'restrictions.max-connections', 'restrictions.max-client-id-length', 'restrictions.max-topic-length', 'restrictions.no-connect-idle-timeout', 'restrictions.incoming-bandwidth-throttling', 'security.payload-format-validation.enabled', 'security.utf8-validation.enabled', 'security.allow-empty-client-id.enabled', 'security.allow-request-problem-information.enabled', 'persistence.mode'])",message="spec.broker.config: HiveMQ CE accepts only its documented tuning keys that msgbench does not manage (listeners, TLS, node identity and access follow from the spec); see docs/brokers.md",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'vernemq' || !has(self.broker.config) || self.broker.config.all(k, k in ['accept_eula', 'max_inflight_messages', 'max_online_messages', 'max_offline_messages', 'max_message_size', 'max_message_rate', 'upgrade_outgoing_qos', 'retry_interval', 'max_client_id_size', 'persistent_client_expiration', 'max_last_will_delay', 'max_drain_time', 'max_msgs_per_drain_step', 'queue_type', 'override_max_online_messages', 'receive_max_client', 'receive_max_broker', 'topic_alias_max_client', 'topic_alias_max_broker', 'topic_max_depth', 'shared_subscription_policy', 'suppress_lwt_on_session_takeover', 'coordinate_registrations', 'allow_register_during_netsplit', 'allow_publish_during_netsplit', 'allow_subscribe_during_netsplit', 'allow_unsubscribe_during_netsplit', 'mqtt_connect_timeout', 'systree_enabled', 'systree_interval', 'tcp_listen_options', 'listener.max_connections', 'listener.nr_of_acceptors', 'listener.tcp.buffer_sizes', 'listener.ssl.buffer_sizes', 'listener.tcp.nr_of_acceptors', 'listener.ssl.nr_of_acceptors', 'log.console.level'])",message="spec.broker.config: VerneMQ accepts only its documented tuning keys that msgbench does not manage (listeners, TLS, node identity and access follow from the spec); see docs/brokers.md",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'nanomq' || !has(self.tls) || !self.tls.enabled || self.tls.version == '1.2'",message="spec.tls.version: NanoMQ's image serves TLS 1.2 only (Mbed TLS 2.16 has no TLS 1.3); set tls.version \"1.2\"",fieldPath=".tls.version",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'vernemq' || has(self.broker.image) || (has(self.broker.config) && 'accept_eula' in self.broker.config && self.broker.config['accept_eula'] == 'yes')",message="spec.broker.config.accept_eula: the official VerneMQ images hold binaries under the VerneMQ EULA (commercial use needs a paid subscription); set accept_eula: \"yes\" if it applies to you and you accept it, or set spec.broker.image to a VerneMQ you built from source",fieldPath=".broker.config",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'vernemq' || !has(self.broker.config) || !('accept_eula' in self.broker.config) || self.broker.config['accept_eula'] == 'yes'",message="spec.broker.config.accept_eula: the only value is \"yes\"",fieldPath=".broker.config",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'artemis' || !has(self.broker.config) || !self.broker.config.exists(k, k in ['acceptors', 'connectors', 'acceptor.protocols', 'acceptor.host', 'acceptor.port', 'acceptor.enabledProtocols', 'acceptor.needClientAuth', 'acceptor.wantClientAuth', 'security-enabled', 'security-settings', 'address-settings', 'paging-directory', 'bindings-directory', 'journal-directory', 'large-messages-directory', 'node-manager-lock-directory', 'journal-retention-directory', 'ha-policy', 'cluster-connections', 'broadcast-groups', 'discovery-groups', 'cluster-user', 'cluster-password'] || ['acceptor.ssl', 'acceptor.keyStore', 'acceptor.trustStore'].exists(p, k.startsWith(p)))",message="spec.broker.config: a key is managed by msgbench: the acceptors (acceptors, connectors, acceptor.protocols, acceptor.host, acceptor.port), TLS (acceptor.ssl*, acceptor.keyStore*, acceptor.trustStore*, acceptor.enabledProtocols, acceptor.needClientAuth, acceptor.wantClientAuth), security (security-enabled, security-settings), the storage directories, address-settings (use address-setting.<element>) and clustering (ha-policy, cluster-connections, broadcast-groups, discovery-groups, cluster-user, cluster-password) follow from the spec",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'rabbitmq' || !has(self.broker.config) || !self.broker.config.exists(k, ['listeners', 'listeners.', 'mqtt.listeners', 'mqtt.listeners.', 'ssl_options.', 'mqtt.allow_anonymous', 'mqtt.vhost', 'mqtt.default_user', 'mqtt.default_pass', 'anonymous_login_user', 'anonymous_login_pass', 'loopback_users', 'loopback_users.', 'default_user', 'default_pass', 'default_vhost', 'default_permissions.', 'mqtt.prefetch', 'cluster_formation.', 'log.file', 'log.dir', 'web_mqtt.tcp.', 'web_mqtt.ssl.', 'web_mqtt.ws_path'].exists(p, k == p || (p.endsWith('.') && k.startsWith(p))))",message="spec.broker.config: a key is managed by msgbench: listeners (listeners.*, mqtt.listeners.*, web_mqtt.tcp.*, web_mqtt.ssl.*, web_mqtt.ws_path), TLS (ssl_options.*), anonymous login as guest on the default vhost (mqtt.allow_anonymous, mqtt.vhost, mqtt.default_user/pass, anonymous_login_user/pass, loopback_users, default_user/pass/vhost, default_permissions.*), mqtt.prefetch (set spec.mqtt.inflight), cluster_formation.* (one node) and log.file/log.dir (logs go to the console) follow from the spec",fieldPath=".broker.config",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.mqtt) || !has(self.mqtt.transport) || self.mqtt.transport == 'tcp' || (self.protocol == 'mqtt' && self.broker.type != 'kafka')",message="spec.mqtt.transport: websocket carries MQTT between the clients and an MQTT broker: it needs protocol mqtt (not mqtt-sn, http, mqtt-quic or kafka, nor a Kafka broker)",fieldPath=".mqtt.transport",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'vernemq' || !has(self.mqtt) || !has(self.mqtt.transport) || self.mqtt.transport == 'tcp' || !has(self.mqtt.webSocketPath) || self.mqtt.webSocketPath == '/mqtt'",message="spec.mqtt.webSocketPath: VerneMQ serves MQTT over WebSocket at /mqtt only",fieldPath=".mqtt.webSocketPath",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || (self.workload.publishers == 1 && self.workload.subscribers == 1 && self.workload.topics == 1 && self.workload.payloadBytes == 256 && self.workload.rate == 0 && self.workload.messages == 0)",message="spec.workload: with spec.groups, the clients, their topics, payload and load are each group's (groups[].count, publish, subscribe); leave workload's publishers, subscribers, topics, payloadBytes, rate and messages out (workload keeps the run's warmup, duration and timelineInterval)",fieldPath=".workload",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || (!has(self.workload.dutyCycle) && !has(self.workload.reconnectStorm))",message="spec.workload: duty cycles and reconnect storms apply to the one-group form only; a run with spec.groups has none of them yet",fieldPath=".workload",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || (self.protocol in ['mqtt', 'mqtt-sn', 'http'] && self.broker.type != 'kafka')",message="spec.protocol: device groups speak mqtt, mqtt-sn or http to an MQTT broker (docs/fleets.md)",fieldPath=".protocol",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || self.workers.replicas <= 1",message="spec.workers.replicas: a run with spec.groups runs in one worker for now (a topic's publisher and subscriber in two workers need the workers' clock offset, which msgbench does not measure yet)",fieldPath=".workers.replicas",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(l, has(l.start) && has(l.subscribe)) || !self.groups.exists(g, (has(g.network) || has(g.placement)) && (has(g.publish) || (has(g.start) && has(g.subscribe))))",message="on Kubernetes, spec.groups: a group that joins late (start) and subscribes counts what it expects from its publishers' sequence numbers read in its own worker, so it must share its worker pod with every publishing group; a group with a network or a placement of its own runs in a pod of its own, so with a late subscribing group neither it nor a publishing group may have one; msgbench run runs it",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.network)) || self.network.profile == 'none'",message="spec.network: groups with a network of their own (spec.groups[].network) sit behind their own links; the others reach the broker directly, so leave spec.network out",fieldPath=".network",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="has(self.groups) || !has(self.topics)",message="spec.topics: topic groups are for spec.groups; the one-group form names its topics with workload.topics and topicPrefix",fieldPath=".topics",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || self.groups.all(g, !has(g.publish) || (has(self.topics) && self.topics.exists(t, t.name == g.publish.topics)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && !(has(self.topics) && self.topics.exists(t, t.name == g.publish.topics)), g.name)[0] + '].publish.topics: no topic group of that name in spec.topics'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || self.groups.all(g, !has(g.subscribe) || !has(g.subscribe.topics) || (has(self.topics) && self.topics.exists(t, t.name == g.subscribe.topics)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.subscribe) && has(g.subscribe.topics) && !(has(self.topics) && self.topics.exists(t, t.name == g.subscribe.topics)), g.name)[0] + '].subscribe.topics: no topic group of that name in spec.topics'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.topics) || self.topics.all(t, !has(t.devices) || (has(self.groups) && self.groups.exists(g, g.name == t.devices)))",messageExpression="'spec.topics[' + self.topics.map(t, has(t.devices) && !(has(self.groups) && self.groups.exists(g, g.name == t.devices)), t.name)[0] + '].devices: no device group of that name in spec.groups'",fieldPath=".topics",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.subscribe) && (has(g.protocol) ? g.protocol : self.protocol) != 'mqtt')",messageExpression="'spec.groups[' + self.groups.map(g, has(g.subscribe) && (has(g.protocol) ? g.protocol : self.protocol) != 'mqtt', g.name)[0] + '].protocol: a subscribing group speaks mqtt (over tcp or websocket); devices on mqtt-sn and http publish'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && (has(g.protocol) ? g.protocol : self.protocol) != 'mqtt' && has(self.topics) && self.topics.exists(t, t.name == g.publish.topics && !(has(t.devices) ? self.groups.all(d, d.name != t.devices || d.count <= g.count) : (has(t.count) ? t.count : 1) <= g.count)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && (has(g.protocol) ? g.protocol : self.protocol) != 'mqtt' && has(self.topics) && self.topics.exists(t, t.name == g.publish.topics && !(has(t.devices) ? self.groups.all(d, d.name != t.devices || d.count <= g.count) : (has(t.count) ? t.count : 1) <= g.count)), g.name)[0] + '].publish.topics: the topic group has more topics than the group has devices, so each device would cycle over several, which only MQTT clients do; give the group a device per topic'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && (has(g.protocol) ? g.protocol : self.protocol) == 'mqtt-sn' && (has(g.mqttsn) ? g.mqttsn.topicIdType : self.mqttsn.topicIdType) != 'normal')",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && (has(g.protocol) ? g.protocol : self.protocol) == 'mqtt-sn' && (has(g.mqttsn) ? g.mqttsn.topicIdType : self.mqttsn.topicIdType) != 'normal', g.name)[0] + '].mqttsn.topicIdType: the MQTT-SN devices of a device group register their topics by name (normal); predefined and short topic ids name the numbered topics of a spec without groups'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && has(g.publish.retain) && g.publish.retain && (has(g.protocol) ? g.protocol : self.protocol) != 'mqtt')",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && has(g.publish.retain) && g.publish.retain && (has(g.protocol) ? g.protocol : self.protocol) != 'mqtt', g.name)[0] + '].publish.retain: retained messages are published by MQTT groups only'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.subscribe) && has(g.subscribe.share) && self.groups.exists(o, has(o.subscribe) && has(o.subscribe.share) && o.subscribe.share == g.subscribe.share && o.name != g.name))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.subscribe) && has(g.subscribe.share) && self.groups.exists(o, has(o.subscribe) && has(o.subscribe.share) && o.subscribe.share == g.subscribe.share && o.name != g.name), g.name)[0] + '].subscribe.share: another group holds a shared subscription of that name; give each group its own'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.subscribe) && has(g.subscribe.topics) && has(self.topics) && self.topics.exists(t, t.name == g.subscribe.topics && !(has(t.devices) ? self.groups.all(d, d.name != t.devices || d.count <= g.count) : (has(t.count) ? t.count : 1) <= g.count)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.subscribe) && has(g.subscribe.topics) && has(self.topics) && self.topics.exists(t, t.name == g.subscribe.topics && !(has(t.devices) ? self.groups.all(d, d.name != t.devices || d.count <= g.count) : (has(t.count) ? t.count : 1) <= g.count)), g.name)[0] + '].subscribe.topics: the topic group has more topics than the group has devices, and a device holds one subscription: subscribe with a filter, or give the group a device per topic'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && has(g.publish.messages) && g.publish.messages > 0 && (has(g.publish.interval) ? double(g.publish.messages) * double(duration(g.publish.interval).getMilliseconds()) <= double(g.count) * double(duration(self.workload.warmup).getMilliseconds()) : has(g.publish.rate) && double(g.publish.messages) * 1000.0 <= double(g.publish.rate) * double(duration(self.workload.warmup).getMilliseconds())))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && has(g.publish.messages) && g.publish.messages > 0 && (has(g.publish.interval) ? double(g.publish.messages) * double(duration(g.publish.interval).getMilliseconds()) <= double(g.count) * double(duration(self.workload.warmup).getMilliseconds()) : has(g.publish.rate) && double(g.publish.messages) * 1000.0 <= double(g.publish.rate) * double(duration(self.workload.warmup).getMilliseconds())), g.name)[0] + '].publish.messages: at the group rate all of them go out during the warm-up (spec.workload.warmup), so nothing would be measured: raise messages or shorten the warm-up'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.start) && duration(g.start) >= duration(self.workload.warmup) + duration(self.workload.duration) && self.groups.exists(q, has(q.publish) && (!has(q.publish.messages) || q.publish.messages == 0)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.start) && duration(g.start) >= duration(self.workload.warmup) + duration(self.workload.duration) && self.groups.exists(q, has(q.publish) && (!has(q.publish.messages) || q.publish.messages == 0)), g.name)[0] + '].start: not before the end of the run (spec.workload.warmup + duration; a run that ends on message counts, every publishing group having messages, waits for its late groups instead)'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || self.groups.exists(g, has(g.publish))",message="spec.groups: no group publishes (each one subscribes), so the run would measure nothing; give at least one group publish",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !has(self.tls) || !self.tls.enabled || self.groups.all(g, !has(g.protocol) || g.protocol == self.protocol)",message="spec.tls.enabled: TLS with device groups on several protocols is not supported yet (each group's own TLS comes with its own gateway's certificate); use one protocol, or no TLS",fieldPath=".tls.enabled",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && (has(g.protocol) ? g.protocol : self.protocol) == 'mqtt-sn' && !has(g.publish.payload) && g.publish.payloadBytes > 65498)",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && (has(g.protocol) ? g.protocol : self.protocol) == 'mqtt-sn' && !has(g.publish.payload) && g.publish.payloadBytes > 65498, g.name)[0] + '].publish.payloadBytes: an MQTT-SN 1.2 PUBLISH over UDP carries at most 65498 payload bytes (65507-byte IPv4 datagram minus the 9-byte PUBLISH header)'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && has(g.publish.replyTo) && !(has(self.topics) && self.topics.exists(t, t.name == g.publish.replyTo)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && has(g.publish.replyTo) && !(has(self.topics) && self.topics.exists(t, t.name == g.publish.replyTo)), g.name)[0] + '].publish.replyTo: no topic group of that name in spec.topics'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && has(g.publish.replyTo) && ((has(g.protocol) ? g.protocol : self.protocol) != 'mqtt' || (has(g.mqtt) && has(g.mqtt.version) ? g.mqtt.version : self.mqtt.version) != '5'))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && has(g.publish.replyTo) && ((has(g.protocol) ? g.protocol : self.protocol) != 'mqtt' || (has(g.mqtt) && has(g.mqtt.version) ? g.mqtt.version : self.mqtt.version) != '5'), g.name)[0] + '].publish.replyTo: requests take MQTT 5 (Response Topic and Correlation Data are MQTT 5 properties); set protocol mqtt and mqtt.version: 5'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.publish) && has(g.publish.replyTo) && has(self.topics) && self.topics.exists(t, t.name == g.publish.replyTo && (has(t.devices) ? self.groups.exists(d, d.name == t.devices && d.count != g.count) : (has(t.count) ? t.count : 1) != g.count)))",messageExpression="'spec.groups[' + self.groups.map(g, has(g.publish) && has(g.publish.replyTo) && has(self.topics) && self.topics.exists(t, t.name == g.publish.replyTo && (has(t.devices) ? self.groups.exists(d, d.name == t.devices && d.count != g.count) : (has(t.count) ? t.count : 1) != g.count)), g.name)[0] + '].publish.replyTo: the topic group needs a topic per device of the group, each device answered on its own (devices: the group)'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !self.groups.exists(g, has(g.subscribe) && has(g.subscribe.respond) && (has(g.mqtt) && has(g.mqtt.version) ? g.mqtt.version : self.mqtt.version) != '5')",messageExpression="'spec.groups[' + self.groups.map(g, has(g.subscribe) && has(g.subscribe.respond) && (has(g.mqtt) && has(g.mqtt.version) ? g.mqtt.version : self.mqtt.version) != '5', g.name)[0] + '].subscribe.respond: answering requests takes MQTT 5 (Response Topic and Correlation Data are MQTT 5 properties); set mqtt.version: 5'",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !has(self.gateway.external) || (has(self.broker) && has(self.broker.external))",message="spec.gateway.external: the gateway bridges to a broker msgbench does not start: set spec.broker.external.address to that broker (where the MQTT groups connect; docs/gateways.md)",fieldPath=".gateway.external",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.http.endpoint) || has(self.groups) || self.workload.subscribers == 0",message="spec.workload.subscribers: an HTTP endpoint of your own (spec.http.endpoint) takes messages in, and msgbench cannot observe where they go: set subscribers to 0 (the result then counts the messages sent and accepted), or subscribe with MQTT on the broker behind it in a device group (docs/http-api.md)",fieldPath=".workload.subscribers",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.http.endpoint) || self.protocol == 'http' || (has(self.groups) && self.groups.exists(g, has(g.protocol) && g.protocol == 'http'))",message="spec.http.endpoint: no group speaks http: only HTTP clients send its requests",fieldPath=".http.endpoint",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.http.endpoint) || !has(self.gateway) || !has(self.gateway.external)",message="spec.http.endpoint: the endpoint is where the clients send; leave spec.gateway.external out",fieldPath=".http.endpoint",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !has(self.gateway.external) || ['mqtt-sn', 'http', 'mqtt-quic'].exists(p, self.protocol == p || (has(self.groups) && self.groups.exists(g, has(g.protocol) && g.protocol == p)))",message="spec.gateway.external: no group goes through a gateway (mqtt and kafka clients reach the broker directly): leave it out, or set spec.broker.external for the broker",fieldPath=".gateway.external",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="has(self.groups) || !has(self.mqttsn) || !has(self.mqttsn.sourcePort) || self.mqttsn.sourcePort + self.workload.publishers + self.workload.subscribers <= 65536",message="spec.mqttsn.sourcePort: client i sends from sourcePort + i, and the last client's port would be above 65535: lower sourcePort",fieldPath=".mqttsn.sourcePort",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.broker.type != 'kafka' || !((has(self.identity) && (has(self.identity.username) || has(self.identity.credentials))) || (has(self.groups) && self.groups.exists(g, has(g.identity) && (has(g.identity.username) || has(g.identity.credentials)))))",message="on Kubernetes, spec.identity: the Strimzi Kafka msgbench runs has no SASL listener for the devices' users yet, so Kafka devices cannot show it credentials; run this spec with msgbench run (its local Kafka gets a SASL listener with the users), or set broker.type external with a Kafka that knows them (docs/kafka.md)",fieldPath=".identity",reason="FieldValueForbidden"
type MessagingBenchmarkSpec struct {
	// protocol is the messaging protocol under test: mqtt (MQTT over TCP, MQTTS with tls.enabled),
	// mqtt-sn (MQTT-SN 1.2 over UDP through the msgbench gateway), http (HTTP/1.1, 2 or 3
	// publish/subscribe through the msgbench gateway), mqtt-quic (MQTT over a QUIC stream, ALPN
	// "mqtt") or kafka.
	// +required
	Protocol Protocol `json:"protocol"`

	// tls encrypts the client connections (MQTTS, HTTPS, Kafka TLS). QUIC protocols (mqtt-quic,
	// HTTP/3) always encrypt with TLS 1.3 whatever this says.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// qos is the delivery guarantee: 0 at most once, 1 at least once, 2 exactly once, -1 MQTT-SN
	// publish without a connection. Kafka maps 0 to acks=0, 1 to acks=1, 2 to acks=all with the
	// idempotent producer.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=2
	// +optional
	QoS int32 `json:"qos"`

	// mqtt holds MQTT session settings (protocol mqtt and mqtt-quic, and the MQTT side of the
	// gateways).
	// +kubebuilder:default={}
	// +optional
	MQTT MQTTSpec `json:"mqtt,omitzero"`

	// quic holds QUIC settings (protocol mqtt-quic, and http version 3).
	// +optional
	QUIC *QUICSpec `json:"quic,omitempty"`

	// mqttsn holds MQTT-SN settings (protocol mqtt-sn).
	// +kubebuilder:default={}
	// +optional
	MQTTSN MQTTSNSpec `json:"mqttsn,omitzero"`

	// http holds HTTP publish/subscribe settings (protocol http).
	// +kubebuilder:default={}
	// +optional
	HTTP HTTPSpec `json:"http,omitzero"`

	// kafka holds producer, consumer and topic settings (protocol kafka).
	// +kubebuilder:default={}
	// +optional
	Kafka KafkaSpec `json:"kafka,omitzero"`

	// broker says which broker receives the load and who runs it.
	// +kubebuilder:default={}
	// +optional
	Broker BrokerSpec `json:"broker,omitzero"`

	// gateway configures the protocol gateway that bridges mqtt-sn, http and mqtt-quic clients to
	// the MQTT broker. Unused for mqtt and kafka.
	// +kubebuilder:default={}
	// +optional
	Gateway GatewaySpec `json:"gateway,omitzero"`

	// workload is the load: clients, topics, payload, rate and length of the run.
	// +kubebuilder:default={}
	// +optional
	Workload WorkloadSpec `json:"workload,omitzero"`

	// workers are the load-generator processes (pods on Kubernetes) the clients are divided among.
	// +kubebuilder:default={}
	// +optional
	Workers WorkersSpec `json:"workers,omitzero"`

	// network is the emulated link between the clients (devices) and the broker or gateway.
	// +kubebuilder:default={}
	// +optional
	Network NetworkSpec `json:"network,omitzero"`

	// results says where the full result document is stored besides the status summary.
	// +optional
	Results ResultsSpec `json:"results,omitzero"`

	// timeout bounds the whole run, from creation to results stored. When it passes, the
	// benchmark ends Failed naming the step that did not finish. With messages 0 it must be
	// longer than workload.warmup + workload.duration plus each worker's connect ramp when
	// workload.connectRate is set: a timeout that cannot even hold the run's own phases is refused
	// at admission rather than cut off. Starting the broker, connecting, draining and collecting
	// take more (seconds locally, minutes with an image pull), which the spec cannot decide.
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	Timeout metav1.Duration `json:"timeout,omitzero"`

	// cleanup says when the broker, gateway, network chaos and workers are deleted after the run:
	// OnCompletion (always), OnSuccess (keep them after a failure, to debug) or Never.
	// +kubebuilder:default=OnCompletion
	// +optional
	Cleanup CleanupPolicy `json:"cleanup,omitempty"`

	// ttlSecondsAfterFinished, when set, deletes the MessagingBenchmark itself this many seconds
	// after it reached Succeeded or Failed. Unset keeps it until you delete it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// objectives are conditions on the result's figures that the run should meet, each
	// "<figure> <op> <value>" (docs/objectives.md): e.g. "latency.endToEnd.p99 <= 50ms",
	// "lost == 0", "throughput.receivedPerSecond >= 1000". They do not change the phase (a run
	// can measure correctly and miss them): the ObjectivesMet condition says whether they were
	// met, and `msgbench run` exits non-zero when they were not. A run with spec.groups also has
	// figures per device group and per pair of groups: "groups.sensors.latency.endToEnd.p99 <= 2s",
	// "pairs.sensors.backend.lost == 0".
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=200
	// +kubebuilder:validation:items:Pattern=`^\s*[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*\s*(<=|>=|==|!=|<|>)\s*\S+\s*$`
	// +optional
	Objectives []string `json:"objectives,omitempty"`

	// topics are the topic groups of a run with device groups (docs/fleets.md).
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Topics []TopicGroupSpec `json:"topics,omitempty"`

	// groups makes the run a fleet of several kinds of device, each with its own count, QoS, MQTT
	// settings, topics, payload and load, with results per group and per pair of groups
	// (docs/fleets.md). Without groups the run is one group, described by protocol, qos and
	// workload.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Groups []DeviceGroupSpec `json:"groups,omitempty"`

	// identity is who the devices are: client ids, usernames and passwords (docs/identity.md).
	// +optional
	Identity *IdentitySpec `json:"identity,omitempty"`
}

// TLSVersion is a TLS protocol version.
// +kubebuilder:validation:Enum="1.2";"1.3"
type TLSVersion string

// TLS versions.
const (
	TLS12 TLSVersion = "1.2"
	TLS13 TLSVersion = "1.3"
)

// TLSSpec encrypts client connections.
// +kubebuilder:validation:XValidation:rule="!has(self.cipherSuites) || !has(self.version) || self.version != '1.2' || !self.cipherSuites.exists(s, s in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'])",message="spec.tls.cipherSuites: a TLS 1.3 suite (TLS_AES_*, TLS_CHACHA20_*) with spec.tls.version 1.2",fieldPath=".cipherSuites",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.cipherSuites) || (has(self.version) && self.version == '1.2') || !self.cipherSuites.exists(s, s in ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA'])",message="spec.tls.cipherSuites: a TLS 1.2 suite (TLS_ECDHE_*) with TLS 1.3 (spec.tls.version, whose default is 1.3); set version \"1.2\"",fieldPath=".cipherSuites",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !has(self.version) || self.version != '1.2' || !('x25519mlkem768' in self.groups)",message="spec.tls.groups: x25519mlkem768 exists only in TLS 1.3; spec.tls.version is 1.2",fieldPath=".groups",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || self.enabled",message="spec.tls.secretRef: set spec.tls.enabled to true to use a certificate",fieldPath=".secretRef",reason="FieldValueInvalid"
type TLSSpec struct {
	// enabled turns TLS on (MQTTS on port 8883, HTTPS, Kafka SSL).
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// version is the TLS version clients and server agree on, "1.2" or "1.3". TLS 1.2 uses an
	// AES-GCM cipher suite, so each record costs 29 bytes (TLS 1.3: 22).
	// +kubebuilder:default="1.3"
	// +optional
	Version TLSVersion `json:"version,omitempty"`

	// secretRef names a kubernetes.io/tls Secret (keys tls.crt, tls.key and ca.crt) for the
	// server. Unset: msgbench generates a CA and a server certificate for this benchmark. For an
	// external broker only ca.crt is read, to verify the broker.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// groups are the key-exchange groups the clients offer, most preferred first: x25519, p256,
	// p384, p521 (classical) or x25519mlkem768 (hybrid post-quantum, TLS 1.3 only); the server
	// picks one. Unset: Go 1.26's default, which offers an X25519MLKEM768 key share (1.2 KB) next
	// to an X25519 one, as a classical device does not. With TLS 1.2 to a broker the list must
	// include p256 when msgbench generates the (ECDSA P-256) certificate. The result records the
	// group negotiated (docs/tls.md).
	// +kubebuilder:validation:MaxItems=5
	// +listType=set
	// +optional
	Groups []TLSGroup `json:"groups,omitempty"`

	// cipherSuites are the suites the connection may use, by their IANA names
	// (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256, …), all of the TLS
	// version in use. TLS 1.2 suites restrict what the clients offer. Go's TLS 1.3 client always
	// offers all three TLS 1.3 suites, so a TLS 1.3 choice is enforced by the server, which only
	// the Mosquitto broker msgbench runs can do. The AES-CCM suites of small devices cannot be
	// offered: Go implements none. Unset: Go's defaults (TLS 1.2: the AES-GCM suites). The result
	// records the suite negotiated (docs/tls.md).
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^TLS_[A-Z0-9_]+$`
	// +kubebuilder:validation:items:XValidation:rule="!self.contains('_CCM')",messageExpression="self + ' is an AES-CCM suite, which many small devices use, but the Go crypto/tls of the msgbench clients implements no AES-CCM suite, so they cannot offer it (docs/tls.md)'",reason="FieldValueInvalid"
	// +kubebuilder:validation:items:XValidation:rule="self.contains('_CCM') || self in ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'] || self in ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA']",messageExpression="self + ' is not a suite Go crypto/tls offers, or one it lists as insecure (no forward secrecy, RC4, 3DES, CBC with SHA-256); docs/tls.md lists the suites'",reason="FieldValueInvalid"
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	// +optional
	CipherSuites []string `json:"cipherSuites,omitempty"`

	// resumption lets clients resume their TLS session (a session ticket, TLS 1.2 or 1.3) when
	// they reconnect, as a device that keeps its ticket does: each client keeps its own tickets,
	// never another device's. The result counts the resumed handshakes. Clients of a run
	// reconnect only with http.keepAlive false (a connection per message) and when the HTTP
	// gateway closed an idle connection; Kafka clients open several connections (docs/tls.md).
	// +optional
	Resumption bool `json:"resumption,omitempty"`

	// clientCertificates gives each device its own client certificate (mutual TLS), which the
	// broker or gateway msgbench runs requires and verifies (docs/tls.md).
	// +optional
	ClientCertificates *ClientCertificatesSpec `json:"clientCertificates,omitempty"`
}

// TLSGroup is a TLS key-exchange group.
// +kubebuilder:validation:Enum=x25519;p256;p384;p521;x25519mlkem768
type TLSGroup string

// TLS key-exchange groups.
const (
	GroupX25519         TLSGroup = "x25519"
	GroupP256           TLSGroup = "p256"
	GroupP384           TLSGroup = "p384"
	GroupP521           TLSGroup = "p521"
	GroupX25519MLKEM768 TLSGroup = "x25519mlkem768"
)

// QUICSpec holds QUIC settings (protocol mqtt-quic, and http version 3).
type QUICSpec struct {
	// zeroRTT lets a client that reconnects send its first request in 0-RTT packets, resuming the
	// TLS session of its previous connection: an MQTT CONNECT, or an HTTP/3 subscriber's GET (a
	// POST is not idempotent and waits for the handshake; the HTTP gateway answers another
	// client's 0-RTT POST 425 Too Early unless spec.http.acceptEarlyPublishes). Each client's
	// first connection still takes a full handshake; the result counts the connections that used
	// 0-RTT (docs/tls.md).
	// +optional
	ZeroRTT bool `json:"zeroRTT,omitempty"`
}

// LocalSecretReference names a Secret in the benchmark's namespace.
type LocalSecretReference struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// MQTTVersion is an MQTT protocol version.
// +kubebuilder:validation:Enum="3.1.1";"5"
type MQTTVersion string

// MQTT versions.
const (
	MQTT311 MQTTVersion = "3.1.1"
	MQTT5   MQTTVersion = "5"
)

// MQTTTransport is what carries MQTT packets.
// +kubebuilder:validation:Enum=tcp;websocket
type MQTTTransport string

// MQTT transports.
const (
	TransportTCP       MQTTTransport = "tcp"
	TransportWebSocket MQTTTransport = "websocket"
)

// MQTTSpec holds MQTT session settings.
type MQTTSpec struct {
	// version is the MQTT protocol version, "3.1.1" or "5".
	// +kubebuilder:default="3.1.1"
	// +optional
	Version MQTTVersion `json:"version,omitempty"`

	// cleanSession starts every client with a fresh session (MQTT 5: clean start with a session
	// expiry of zero).
	// +kubebuilder:default=true
	// +optional
	CleanSession *bool `json:"cleanSession,omitempty"`

	// keepAliveSeconds is the MQTT keep-alive interval the clients announce; 0 disables it.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +optional
	KeepAliveSeconds *int32 `json:"keepAliveSeconds,omitempty"`

	// inflight is the most QoS 1/2 publishes a client keeps unacknowledged. With workload.rate 0
	// (closed loop) it sets how hard each publisher pushes.
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Inflight int32 `json:"inflight,omitempty"`

	// transport carries MQTT over tcp (with TLS when spec.tls.enabled) or over websocket (ws://,
	// wss:// with TLS), as browsers and many gateways do.
	// +kubebuilder:default=tcp
	// +optional
	Transport MQTTTransport `json:"transport,omitempty"`

	// webSocketPath is the HTTP path of the broker's WebSocket endpoint (transport websocket).
	// +kubebuilder:default="/mqtt"
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~/-]*$`
	// +kubebuilder:validation:MaxLength=256
	// +optional
	WebSocketPath string `json:"webSocketPath,omitempty"`
}

// MQTTSNTopicIDType is how MQTT-SN clients name topics in PUBLISH.
// +kubebuilder:validation:Enum=normal;predefined;short
type MQTTSNTopicIDType string

// MQTT-SN topic id types.
const (
	TopicIDNormal     MQTTSNTopicIDType = "normal"
	TopicIDPredefined MQTTSNTopicIDType = "predefined"
	TopicIDShort      MQTTSNTopicIDType = "short"
)

// MQTTSNGatewayMode is how the MQTT-SN gateway maps clients to MQTT connections.
// +kubebuilder:validation:Enum=transparent;aggregating
type MQTTSNGatewayMode string

// MQTT-SN gateway modes.
const (
	GatewayTransparent MQTTSNGatewayMode = "transparent"
	GatewayAggregating MQTTSNGatewayMode = "aggregating"
)

// MQTTSNSpec holds MQTT-SN settings.
type MQTTSNSpec struct {
	// topicIdType is how publishers name topics: normal (REGISTER a topic name, then use the
	// topic id the gateway returns), predefined (ids agreed in the gateway's configuration:
	// predefinedTopicIds, or topic i has id i+1) or short (a two-character topic name carried in
	// the id field).
	// +kubebuilder:default=normal
	// +optional
	TopicIDType MQTTSNTopicIDType `json:"topicIdType,omitempty"`

	// predefinedTopicIds maps topic names to the predefined topic ids a gateway is configured
	// with (1 to 65534, each once): what a third-party gateway's predefined-topic list says
	// (spec.gateway.external), and what msgbench's own gateway is given. Every topic a
	// predefined publisher or subscriber uses needs one. Unset: topic i has id i+1.
	// +kubebuilder:validation:MaxProperties=1024
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k] >= 1 && self[k] <= 65534)",message="spec.mqttsn.predefinedTopicIds: an id is 1 to 65534 (0 and 0xFFFF are reserved by MQTT-SN 1.2)"
	// +optional
	PredefinedTopicIDs map[string]int32 `json:"predefinedTopicIds,omitempty"`

	// sourcePort, when set, makes every MQTT-SN client send from a port of its own: client i
	// (publishers first, then subscribers, in the run's order) from sourcePort + i, on the
	// worker's address. A gateway that lists its clients by address — QoS -1 publishers, which
	// never connect — can then admit them. Unset: ports the system chooses.
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	// +optional
	SourcePort *int32 `json:"sourcePort,omitempty"`

	// discovery, when set, makes every MQTT-SN client find its gateway before CONNECT, as a
	// deployed device does (MQTT-SN 1.2 §6.1): it sends SEARCHGW to discovery.address, sends it
	// again after T_SEARCHGW (discovery.interval, doubling, with jitter) until discovery.timeout,
	// and connects to the gateway at the source address of the first GWINFO (or the address a
	// client's GWINFO carries). Unset: the clients are given the gateway's address.
	// +optional
	Discovery *MQTTSNDiscoverySpec `json:"discovery,omitempty"`

	// gatewayMode is transparent (one MQTT connection to the broker per MQTT-SN client) or
	// aggregating (all clients share a few MQTT connections).
	// +kubebuilder:default=transparent
	// +optional
	GatewayMode MQTTSNGatewayMode `json:"gatewayMode,omitempty"`

	// retryInterval is T_retry of MQTT-SN 1.2: how long a sender waits for an acknowledgement
	// before it sends again.
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	RetryInterval metav1.Duration `json:"retryInterval,omitzero"`

	// maxRetries is N_retry of MQTT-SN 1.2: how often a message is sent again before the sender
	// gives up on the gateway.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	MaxRetries *int32 `json:"maxRetries,omitempty"`
}

// MQTTSNDiscoverySpec is how MQTT-SN clients search for their gateway (MQTT-SN 1.2 §6.1,
// SEARCHGW and GWINFO).
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || duration(self.interval) > duration('0s')",message="T_SEARCHGW must be above 0s",fieldPath=".interval",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.timeout) || duration(self.timeout) > duration('0s')",message="a search needs time to be answered: set it above 0s",fieldPath=".timeout",reason="FieldValueInvalid"
type MQTTSNDiscoverySpec struct {
	// address is where each client sends SEARCHGW: a broadcast address (255.255.255.255, or a
	// subnet's broadcast address) or a unicast one, an IP address or host name with or without
	// a port ([v6]:port); without a port, the gateway's port. Unset: the gateway's own address
	// (on Kubernetes its Service, since a broadcast does not cross a Service).
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:Pattern=`^[^\s/]+$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([^:]+|[[][^]]+[]]):[0-9]+$') || (int(self.substring(self.lastIndexOf(':') + 1)) >= 1 && int(self.substring(self.lastIndexOf(':') + 1)) <= 65535)",message="the port is 1 to 65535"
	// +optional
	Address string `json:"address,omitempty"`

	// radius is SEARCHGW's Radius field: how many hops a forwarder may rebroadcast it (1: the
	// client's own network).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=255
	// +optional
	Radius *int32 `json:"radius,omitempty"`

	// interval is T_SEARCHGW of MQTT-SN 1.2: how long a client waits for a GWINFO before it sends
	// SEARCHGW again; each later wait is twice the one before, and every wait is drawn uniformly
	// from [wait, 1.5 × wait) so that clients that started together spread out.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	Interval metav1.Duration `json:"interval,omitzero"`

	// timeout bounds each client's search: a client with no GWINFO by then fails the run, naming
	// the address it searched.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	Timeout metav1.Duration `json:"timeout,omitzero"`
}

// HTTPVersion is an HTTP protocol version.
// +kubebuilder:validation:Enum="1.1";"2";"3"
type HTTPVersion string

// HTTP versions.
const (
	HTTP11 HTTPVersion = "1.1"
	HTTP2  HTTPVersion = "2"
	HTTP3  HTTPVersion = "3"
)

// HTTPSpec holds HTTP publish/subscribe settings.
type HTTPSpec struct {
	// version is the HTTP version, "1.1", "2" (h2c without TLS, h2 with TLS) or "3" (QUIC).
	// +kubebuilder:default="1.1"
	// +optional
	Version HTTPVersion `json:"version,omitempty"`

	// keepAlive reuses connections between requests; false opens a new connection per message.
	// +kubebuilder:default=true
	// +optional
	KeepAlive *bool `json:"keepAlive,omitempty"`

	// acceptEarlyPublishes lets the gateway act on a publish (any request but GET and HEAD) that
	// may be replayed: one that arrived in HTTP/3 0-RTT data before the QUIC handshake completed,
	// or one that carries "Early-Data: 1" from a proxy that received it in TLS early data. An
	// attacker who captured such a request can send it again, and each copy would be published.
	// By default (false) the gateway answers these 425 Too Early (RFC 8470), and the client
	// retries once the handshake is done; GET and HEAD (a subscription) are served in 0-RTT
	// either way. Groups that share the gateway must agree (docs/http-api.md).
	// +kubebuilder:default=false
	// +optional
	AcceptEarlyPublishes bool `json:"acceptEarlyPublishes,omitempty"`

	// endpoint is an HTTP ingestion endpoint of the user's own, described by a request template:
	// the publishers send to it and msgbench starts no HTTP gateway (docs/http-api.md).
	// +optional
	Endpoint *HTTPEndpointSpec `json:"endpoint,omitempty"`
}

// KafkaCompression is a Kafka producer compression codec.
// +kubebuilder:validation:Enum=none;gzip;snappy;lz4;zstd
type KafkaCompression string

// KafkaSpec holds Kafka settings.
type KafkaSpec struct {
	// partitions of each benchmark topic.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Partitions int32 `json:"partitions,omitempty"`

	// replicas is the replication factor of each benchmark topic and the number of brokers
	// msgbench provisions.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=15
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// lingerMs is how long the producer waits to fill a batch (linger.ms).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=60000
	// +optional
	LingerMs int32 `json:"lingerMs"`

	// batchBytes is the producer's largest batch per partition (batch.size).
	// +kubebuilder:default=16384
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	// +optional
	BatchBytes int32 `json:"batchBytes,omitempty"`

	// compression of produced batches.
	// +kubebuilder:default=none
	// +optional
	Compression KafkaCompression `json:"compression,omitempty"`
}

// BrokerSpec says which broker receives the load.
type BrokerSpec struct {
	// type is the broker: mosquitto (Eclipse Mosquitto), kafka (through Strimzi on Kubernetes; a
	// single-node KRaft broker locally), rabbitmq (RabbitMQ with its MQTT plugin), artemis (Apache
	// ActiveMQ Artemis), emqx, nanomq, hivemq-ce, vernemq (on Kubernetes only), or external (an
	// existing broker at external.address). msgbench runs every type but external.
	// +kubebuilder:default=mosquitto
	// +optional
	Type BrokerType `json:"type,omitempty"`

	// image overrides the broker's default container image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// config holds extra broker settings, in each broker's own terms: mosquitto.conf keys for
	// mosquitto, broker configs for kafka, rabbitmq.conf keys for rabbitmq, acceptor.<param>,
	// address-setting.<element> or broker.xml core elements for artemis, HOCON paths for emqx and
	// nanomq, config.xml element paths for hivemq-ce, vernemq.conf keys for vernemq (docs/brokers.md
	// lists what each accepts). Keys msgbench manages (listeners, TLS, storage, identity) are
	// refused. Keys are letters, digits, '.', '_' and '-'.
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 256 && k.matches('^[A-Za-z0-9][A-Za-z0-9_.-]*$'))",message="keys are the broker's own setting names (docs/brokers.md): letters, digits, '.', '_' and '-'"
	// +optional
	Config map[string]string `json:"config,omitempty"`

	// resources of the broker container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitzero"`

	// external locates a broker msgbench does not run.
	// +optional
	External *ExternalBroker `json:"external,omitempty"`
}

// ExternalBroker locates a broker msgbench does not run.
type ExternalBroker struct {
	// address is host:port of the broker (for kafka, the bootstrap address). For mqtt-sn, http and
	// mqtt-quic it is the MQTT broker the gateway bridges to.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=260
	// +kubebuilder:validation:Pattern=`^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):[0-9]{1,5}$`
	// +required
	Address string `json:"address"`

	// credentialsSecretRef names a Secret with keys username and password for the broker.
	// +optional
	CredentialsSecretRef *LocalSecretReference `json:"credentialsSecretRef,omitempty"`
}

// GatewaySpec configures the protocol gateway.
// +kubebuilder:validation:XValidation:rule="!has(self.external) || !has(self.replicas) || self.replicas == 1",message="spec.gateway.replicas: msgbench starts no gateway when spec.gateway.external names one",fieldPath=".replicas",reason="FieldValueForbidden"
type GatewaySpec struct {
	// external is a gateway msgbench does not start: the clients whose protocol goes through a
	// gateway (mqtt-sn, http, mqtt-quic to a broker without QUIC) connect to it instead of to
	// msgbench's, and it bridges to spec.broker.external, which the other groups' MQTT clients
	// reach directly (docs/gateways.md).
	// +optional
	External *ExternalGateway `json:"external,omitempty"`

	// replicas of the gateway.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// resources of the gateway container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitzero"`
}

// ExternalGateway is a protocol gateway msgbench does not start.
type ExternalGateway struct {
	// address is host:port of the gateway: UDP for mqtt-sn, QUIC for mqtt-quic and HTTP/3, TCP
	// for HTTP/1.1 and /2.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=260
	// +kubebuilder:validation:Pattern=`^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):[0-9]{1,5}$`
	// +required
	Address string `json:"address"`
}

// WorkloadSpec is the load: who sends what, how fast, for how long.
type WorkloadSpec struct {
	// publishers is the number of publishing clients in total, over all workers (SINETStream's
	// "threads"), at least 1 and at least workers.replicas. Publisher i publishes to topic i mod
	// topics.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Publishers int32 `json:"publishers"`

	// subscribers is the number of subscribing clients in total. Subscriber i subscribes to topic
	// i mod topics and receives every message of every publisher on it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Subscribers int32 `json:"subscribers"`

	// topics is the number of distinct topics publishers and subscribers are spread over. All
	// clients of one topic run in the same worker, so topics must be at least workers.replicas.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	Topics int32 `json:"topics,omitempty"`

	// topicPrefix starts every topic name; topic i is named topicPrefix followed by i. Its length
	// is part of every PUBLISH on the wire.
	// +kubebuilder:default="msgbench-"
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[^#+\x00]*$`
	// +optional
	TopicPrefix string `json:"topicPrefix"`

	// payloadBytes is the size of each message's payload. Payloads of 16 bytes or more carry
	// msgbench's header (publisher id, sequence number, send time), which lets subscribers count
	// losses, duplicates and reordering and measure end-to-end latency; smaller payloads are
	// counted only.
	// +kubebuilder:default=256
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	PayloadBytes int32 `json:"payloadBytes"`

	// rate is the total target of messages per second over all publishers (open loop: latency
	// counts from the intended send time). 0 publishes as fast as each client's inflight window
	// allows (closed loop).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000000
	// +optional
	Rate int32 `json:"rate"`

	// messages is the total number of messages to publish over all publishers, warm-up included
	// (warm-up is time-based, so with messages set it is usually 0s).
	// When set, the run ends once they are published and delivered (bounded by spec.timeout) and
	// duration is ignored. 0 runs for duration. When set, at least publishers, and with rate > 0
	// more than rate × warmup (otherwise every message would go out during the warm-up).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	Messages int64 `json:"messages"`

	// duration is the length of the measured window when messages is 0; publishing runs for
	// warmup + duration.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	Duration metav1.Duration `json:"duration,omitzero"`

	// warmup is publishing that comes before the measured window: its messages are sent but
	// left out of every figure.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	Warmup metav1.Duration `json:"warmup,omitzero"`

	// connectRate is how many new connections per second each worker opens while ramping up;
	// 0 opens them all at once.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	// +optional
	ConnectRate int32 `json:"connectRate"`

	// timelineInterval is the width of one timeline bucket (sent/received per interval), at
	// least 100ms.
	// +kubebuilder:default="1s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	TimelineInterval metav1.Duration `json:"timelineInterval,omitzero"`

	// dutyCycle makes the publishers (and with subscribers: true the subscribers) devices that
	// wake once per period, connect, publish, disconnect and sleep, instead of clients that
	// connect once and stay (docs/churn.md). The rate follows from it: publishers ×
	// messagesPerWake / period.
	// +optional
	DutyCycle *DutyCycleSpec `json:"dutyCycle,omitempty"`

	// reconnectStorm drops every client's connection at once, abruptly (no DISCONNECT, as when a
	// NAT or a gateway loses them), and every client reconnects at once or spread over a time
	// (docs/churn.md). Publishes unacknowledged at the drop are resent (QoS ≥ 1); subscribers
	// with persistent sessions (mqtt.cleanSession false, QoS ≥ 1) get what the broker queued
	// meanwhile, others lose it by design (result: churn.storm.lostAtDrop).
	// +optional
	ReconnectStorm *ReconnectStormSpec `json:"reconnectStorm,omitempty"`
}

// DutyCycleSpec is devices that come and go: each wakes once per period, at a phase of its own
// (device i of n at i/n of the period), connects, publishes messagesPerWake messages (at QoS > 0
// each acknowledged), disconnects cleanly and sleeps until its next wake.
// +kubebuilder:validation:XValidation:rule="!(has(self.subscribers) && self.subscribers) || has(self.awake)",message="spec.workload.dutyCycle.awake: sleeping subscribers (subscribers: true) need awake, how long they stay connected per period, e.g. awake: 1s",fieldPath=".awake",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="(has(self.subscribers) && self.subscribers) || !has(self.awake)",message="spec.workload.dutyCycle.awake: applies to sleeping subscribers only; set subscribers: true or remove awake",fieldPath=".awake",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.awake) || duration(self.awake) < duration(self.period)",message="spec.workload.dutyCycle.awake: must be shorter than period, or the subscriber never sleeps (then leave subscribers false)",fieldPath=".awake",reason="FieldValueInvalid"
type DutyCycleSpec struct {
	// period is the time from one wake of a device to its next, above 0s and at most 24h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10ms') && duration(self) <= duration('24h')",message="must be at least 10ms and at most 24h"
	// +required
	Period metav1.Duration `json:"period"`

	// messagesPerWake is how many messages a publisher sends each time it wakes; at QoS > 0 all
	// are acknowledged before it disconnects.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MessagesPerWake int32 `json:"messagesPerWake,omitempty"`

	// subscribers makes the subscribers sleep too: each is connected only awake per period and
	// collects, when it returns, what the broker queued for its persistent session
	// (spec.mqtt.cleanSession false, QoS ≥ 1, protocol mqtt). Every subscriber subscribes once
	// before the start; after the end each one still asleep wakes once more to collect the rest.
	// +optional
	Subscribers bool `json:"subscribers,omitempty"`

	// awake is how long a sleeping subscriber stays connected each period (required with
	// subscribers: true, shorter than period).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be above 0s"
	// +optional
	Awake *metav1.Duration `json:"awake,omitempty"`
}

// ReconnectStormSpec drops every connection at once and has every client reconnect.
type ReconnectStormSpec struct {
	// at is when the connections drop, counted from the start of the run (warm-up included),
	// above 0s and, with spread, before the end of publishing (warmup + duration).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('24h')",message="must be above 0s and at most 24h"
	// +required
	At metav1.Duration `json:"at"`

	// spread spreads the reconnects uniformly over this time (devices with jittered backoff);
	// 0s, the default, reconnects every client at once, which measures the broker's
	// connect-rate ceiling.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('1h')",message="must be at most 1h"
	// +optional
	Spread *metav1.Duration `json:"spread,omitempty"`
}

// WorkersSpec configures the load-generator processes.
type WorkersSpec struct {
	// replicas is the number of load-generator workers (pods); topics, with their publishers and
	// subscribers, are divided evenly among them.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// resources of each worker container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitzero"`

	// nodeSelector constrains the nodes worker pods run on.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations of the worker pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity of the worker pods, for example to keep them off the broker's node.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// NetworkProfile names a preset emulated link (see docs/network-profiles.md for each one's source).
// +kubebuilder:validation:Enum=none;nb-iot;lte-m;lte;5g-sa;5g-urban;cell-edge;congested;3g;wifi;satellite;custom
type NetworkProfile string

// Network profiles.
const (
	ProfileNone   NetworkProfile = "none"
	ProfileCustom NetworkProfile = "custom"
)

// NetworkDirection selects which directions of the link are impaired.
// +kubebuilder:validation:Enum=to;from;both
type NetworkDirection string

// Network directions.
const (
	DirectionTo   NetworkDirection = "to"
	DirectionFrom NetworkDirection = "from"
	DirectionBoth NetworkDirection = "both"
)

// LinkSpec impairs one direction of a link. Every field overrides the profile's value.
// +kubebuilder:validation:XValidation:rule="!has(self.lossPercent) || !has(self.gilbertElliott)",message="set either lossPercent (independent loss) or gilbertElliott (burst loss), not both",fieldPath=".gilbertElliott",reason="FieldValueInvalid"
type LinkSpec struct {
	// delay is the one-way delay added to every packet (RTT ≈ delay up + delay down), at most 1h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('1h')",message="must be at most 1h: a packet held longer is a broken network, not a slow one"
	// +optional
	Delay *metav1.Duration `json:"delay,omitempty"`

	// jitter is the random variation of delay (normal distribution, standard deviation jitter,
	// packets keep their order unless reorderPercent is set), at most 1h. Jitter needs a delay.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('1h')",message="must be at most 1h: a packet held longer is a broken network, not a slow one"
	// +optional
	Jitter *metav1.Duration `json:"jitter,omitempty"`

	// lossPercent of packets dropped at random, as a decimal string ("2", "0.5"; at most 7
	// decimal places, like every percentage here).
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	LossPercent *string `json:"lossPercent,omitempty"`

	// duplicatePercent of packets sent twice.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	DuplicatePercent *string `json:"duplicatePercent,omitempty"`

	// corruptPercent of packets with one bit flipped.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	CorruptPercent *string `json:"corruptPercent,omitempty"`

	// reorderPercent of packets sent at once, ahead of delayed ones. Reordering needs a delay.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ReorderPercent *string `json:"reorderPercent,omitempty"`

	// bandwidth is the link rate in bits per second with a unit: bit, kbit, mbit or gbit
	// ("250kbit", "15mbit"). Bytes-per-second units are refused on purpose: tc and Chaos Mesh
	// read "bps" as bytes. "0bit" lifts a profile's limit; otherwise from 1bit (0.5bit rounds up)
	// to 1000gbit.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^0*([.]0*)?[a-z]+$') || (double(self.substring(0, self.size() - (self.endsWith('gbit') || self.endsWith('mbit') || self.endsWith('kbit') ? 4 : 3))) * (self.endsWith('gbit') ? 1e9 : self.endsWith('mbit') ? 1e6 : self.endsWith('kbit') ? 1e3 : 1.0) >= 0.5 && double(self.substring(0, self.size() - (self.endsWith('gbit') || self.endsWith('mbit') || self.endsWith('kbit') ? 4 : 3))) * (self.endsWith('gbit') ? 1e9 : self.endsWith('mbit') ? 1e6 : self.endsWith('kbit') ? 1e3 : 1.0) <= 1e12)",message="must be 0bit (no limit) or from 1bit to 1000gbit"
	// +optional
	Bandwidth *string `json:"bandwidth,omitempty"`

	// gilbertElliott replaces the independent (Bernoulli) lossPercent with the two-state
	// Gilbert-Elliott burst-loss model, as tc netem's "loss gemodel p r 1-h 1-k" takes it. Set
	// either lossPercent or gilbertElliott. Chaos Mesh has no field for it, so the Kubernetes API
	// server refuses it; msgbench run applies it exactly (docs/netem.md).
	// +optional
	GilbertElliott *GilbertElliottSpec `json:"gilbertElliott,omitempty"`

	// correlation makes each impairment's random draw depend on the previous packet's, exactly
	// as tc netem's (and Chaos Mesh's) "correlation" does. It does not keep the mean: see
	// docs/netem.md before you use it for burst loss, which gilbertElliott models.
	// +optional
	Correlation *CorrelationSpec `json:"correlation,omitempty"`
}

// GilbertElliottSpec is the Gilbert-Elliott burst-loss model: a good and a bad state, a
// transition probability each way per packet, and a loss probability in each state. The mean
// burst of bad state lasts 100/badToGoodPercent packets; the stationary loss rate is
// (p·lossInBad + r·lossInGood)/(p + r) with p = goodToBad and r = badToGood.
// +kubebuilder:validation:XValidation:rule="!self.badToGoodPercent.matches('^0*([.]0*)?$')",message="badToGoodPercent: 0 would keep the link in the bad state for ever once it got there",fieldPath=".badToGoodPercent",reason="FieldValueInvalid"
type GilbertElliottSpec struct {
	// goodToBadPercent is p: the probability, per packet, of going from the good to the bad state.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +required
	GoodToBadPercent string `json:"goodToBadPercent"`

	// badToGoodPercent is r: the probability, per packet, of going back from bad to good.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +required
	BadToGoodPercent string `json:"badToGoodPercent"`

	// lossInBadPercent is netem's 1-h: the loss probability in the bad state. Default 100.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	LossInBadPercent *string `json:"lossInBadPercent,omitempty"`

	// lossInGoodPercent is netem's 1-k: the loss probability in the good state. Default 0.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	LossInGoodPercent *string `json:"lossInGoodPercent,omitempty"`
}

// CorrelationSpec holds netem's correlation of each impairment with the previous packet's, in
// percent: each random draw is (1 − c)·fresh + c·previous.
type CorrelationSpec struct {
	// delayPercent correlates the jitter of successive packets.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	DelayPercent *string `json:"delayPercent,omitempty"`

	// lossPercent correlates the Bernoulli loss draws (not gilbertElliott, which has state).
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	LossPercent *string `json:"lossPercent,omitempty"`

	// duplicatePercent correlates the duplication draws.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	DuplicatePercent *string `json:"duplicatePercent,omitempty"`

	// corruptPercent correlates the corruption draws.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	CorruptPercent *string `json:"corruptPercent,omitempty"`

	// reorderPercent correlates the reordering draws.
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[0-9]{1,2}(\.[0-9]{1,7}0*)?)$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ReorderPercent *string `json:"reorderPercent,omitempty"`
}

// NetworkStep changes the link from a time in the run on: an outage, a switch to another
// profile, or new numbers. A step's link is spec.network's with the step's profile and fields
// applied (steps do not build on each other); with for, the link returns to spec.network's
// when it ends.
// +kubebuilder:validation:XValidation:rule="!has(self.outage) || !self.outage || (!has(self.profile) && !has(self.delay) && !has(self.jitter) && !has(self.lossPercent) && !has(self.duplicatePercent) && !has(self.corruptPercent) && !has(self.reorderPercent) && !has(self.bandwidth) && !has(self.gilbertElliott) && !has(self.correlation) && !has(self.up) && !has(self.down))",message="outage drops every packet both ways, so the step takes no other link field",fieldPath=".outage",reason="FieldValueInvalid"
type NetworkStep struct {
	// at is when the step begins, counted from the start of the measured window (the result
	// timeline's t = 0), at most 24h.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="must be at most 24h"
	// +required
	At metav1.Duration `json:"at"`

	// for is how long the step lasts; then the link returns to spec.network's. Unset: until the
	// next step, or the end of the run.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('24h')",message="must be above 0s and at most 24h"
	// +optional
	For *metav1.Duration `json:"for,omitempty"`

	// outage drops every packet in both directions: a handover gap, a lost cell.
	// +optional
	Outage bool `json:"outage,omitempty"`

	// profile switches to a preset; the step's fields then override it. Unset: spec.network's
	// link with the step's fields applied.
	// +optional
	Profile NetworkProfile `json:"profile,omitempty"`

	// Impairments for both directions; up and down override them per direction.
	LinkSpec `json:",inline"`

	// up overrides the device → broker direction during the step.
	// +optional
	Up *LinkSpec `json:"up,omitempty"`

	// down overrides the broker → device direction during the step.
	// +optional
	Down *LinkSpec `json:"down,omitempty"`
}

// RadioSpec emulates a cellular device's radio power states, per device: after inactivityTimer
// without a packet either way the radio goes idle (RRC idle); the first uplink packet after that
// waits promotionDelay (connection setup), and a downlink packet waits for the device's next
// paging occasion (one every pagingCycle, DRX or eDRX), then promotionDelay. With psmAfter the
// idle device falls asleep (power saving mode) after that long and hears no paging at all: a
// downlink packet waits for the device's next uplink. Unset fields take the profile's numbers
// (nb-iot, lte-m, lte, 5g-sa; docs/network-profiles.md cites each); other profiles must set
// inactivityTimer and promotionDelay. Only the local emulator keeps per-device radio state:
// Chaos Mesh has nothing like it, so on Kubernetes radio only accounts energy (with energy set;
// the API server refuses it without), from what the workers' sockets wrote and read.
type RadioSpec struct {
	// inactivityTimer is how long the radio stays connected without traffic.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('24h')",message="must be above 0s and at most 24h"
	// +optional
	InactivityTimer *metav1.Duration `json:"inactivityTimer,omitempty"`

	// promotionDelay is the idle → connected transition (RRC connection setup or resume).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('1h')",message="must be at most 1h"
	// +optional
	PromotionDelay *metav1.Duration `json:"promotionDelay,omitempty"`

	// pagingCycle is the idle device's (e)DRX cycle: it listens for paging once per cycle, at a
	// phase of its own. 0s: a downlink packet pages the device at once.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('3h')",message="must be at most 3h (NB-IoT's longest eDRX cycle is 10485.76 s)"
	// +optional
	PagingCycle *metav1.Duration `json:"pagingCycle,omitempty"`

	// psmAfter is the active timer (T3324): after this long idle the device enters power saving
	// mode and is unreachable until it sends. Unset: no PSM.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="must be at most 24h"
	// +optional
	PSMAfter *metav1.Duration `json:"psmAfter,omitempty"`

	// energy estimates what each device's radio spends, from every packet it sent and received
	// and the states above, with a radio power model (docs/energy.md): energy per message, mean
	// current, the time and energy in each state, and the battery life.
	// +optional
	Energy *EnergySpec `json:"energy,omitempty"`
}

// EnergySpec is a radio power model and the battery a device runs on. The model's numbers
// (docs/energy.md cites each) can be overridden one by one.
type EnergySpec struct {
	// model names the radio's power numbers: nb-iot, lte-m, lte, 5g-sa (default: the network
	// profile's, when it is one of these) or wifi (an ESP32 station in Wi-Fi power save; with
	// the wifi profile, name it and set the radio's timers: docs/energy.md).
	// +kubebuilder:validation:Enum=nb-iot;lte-m;lte;5g-sa;wifi
	// +optional
	Model string `json:"model,omitempty"`

	// batteryMilliampHours is the device's battery: its life at the run's traffic is reported.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	BatteryMilliampHours *int32 `json:"batteryMilliampHours,omitempty"`

	// voltage is the supply voltage in volts ("3.6"), at which currents are reported.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,3}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('^0*([.]0*)?$')",message="must be above 0"
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Voltage *string `json:"voltage,omitempty"`

	// milliwatts overrides the model's power in each state.
	// +optional
	Milliwatts *PowerSpec `json:"milliwatts,omitempty"`

	// pagingOnDuration is how long the radio listens at each paging occasion.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	PagingOnDuration *metav1.Duration `json:"pagingOnDuration,omitempty"`
}

// PowerSpec is a radio's power in each state, in milliwatts as decimal strings ("230.5").
type PowerSpec struct {
	// transmit and receive while a packet is on the air.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Transmit *string `json:"transmit,omitempty"`
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Receive *string `json:"receive,omitempty"`
	// connected is connected-mode DRX between packets, until the inactivity timer.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Connected *string `json:"connected,omitempty"`
	// promotion while the connection is set up.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Promotion *string `json:"promotion,omitempty"`
	// idle between paging occasions, and paging during each occasion's on-duration.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Idle *string `json:"idle,omitempty"`
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Paging *string `json:"paging,omitempty"`
	// psm is the power saving mode floor.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,6})?$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	PSM *string `json:"psm,omitempty"`
}

// NetworkSpec is the emulated link between the clients (devices) and the broker or gateway.
// +kubebuilder:validation:XValidation:rule="(has(self.direction) && self.direction == 'from') || (has(self.up) && has(self.up.jitter) ? duration(self.up.jitter) : has(self.jitter) ? duration(self.jitter) : duration((has(self.profile) && self.profile == 'custom') ? '0s' : '1ms')) == duration('0s') || (has(self.up) && has(self.up.delay) ? duration(self.up.delay) : has(self.delay) ? duration(self.delay) : duration((has(self.profile) && self.profile == 'custom') ? '0s' : '1ms')) > duration('0s')",message="spec.network.up.jitter: jitter varies the delay, so it needs a delay, and the uplink's delay is 0 (a profile's jitter stays when only delay is set to 0s): set a delay, or jitter: 0s too",fieldPath=".up.jitter",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="(has(self.direction) && self.direction == 'from') || (has(self.up) && has(self.up.reorderPercent) ? self.up.reorderPercent : has(self.reorderPercent) ? self.reorderPercent : '0').matches('^0*([.]0*)?$') || (has(self.up) && has(self.up.delay) ? duration(self.up.delay) : has(self.delay) ? duration(self.delay) : duration((has(self.profile) && self.profile == 'custom') ? '0s' : '1ms')) > duration('0s')",message="spec.network.up.reorderPercent: reordering needs a delay (reordered packets overtake delayed ones), and the uplink's delay is 0: set a delay too",fieldPath=".up.reorderPercent",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="(has(self.direction) && self.direction == 'to') || (has(self.down) && has(self.down.jitter) ? duration(self.down.jitter) : has(self.jitter) ? duration(self.jitter) : duration((has(self.profile) && self.profile == 'custom') ? '0s' : '1ms')) == duration('0s') || (has(self.down) && has(self.down.delay) ? duration(self.down.delay) : has(self.delay) ? duration(self.delay) : duration((has(self.profile) && self.profile == 'custom') ? '0s' : '1ms')) > duration('0s')",message="spec.network.down.jitter: jitter varies the delay, so it needs a delay, and the downlink's delay is 0 (a profile's jitter stays when only delay is set to 0s): set a delay, or jitter: 0s too",fieldPath=".down.jitter",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="(has(self.direction) && self.direction == 'to') || (has(self.down) && has(self.down.reorderPercent) ? self.down.reorderPercent : has(self.reorderPercent) ? self.reorderPercent : '0').matches('^0*([.]0*)?$') || (has(self.down) && has(self.down.delay) ? duration(self.down.delay) : has(self.delay) ? duration(self.delay) : duration((has(self.profile) && self.profile == 'custom') ? '0s' : '1ms')) > duration('0s')",message="spec.network.down.reorderPercent: reordering needs a delay (reordered packets overtake delayed ones), and the downlink's delay is 0: set a delay too",fieldPath=".down.reorderPercent",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.profile != 'none' || (!has(self.delay) && !has(self.jitter) && !has(self.lossPercent) && !has(self.duplicatePercent) && !has(self.corruptPercent) && !has(self.reorderPercent) && !has(self.bandwidth) && !has(self.gilbertElliott) && !has(self.correlation) && !has(self.up) && !has(self.down) && !has(self.mtuBytes))",message="spec.network.profile: none applies no impairment; use profile custom (or a preset) with explicit fields",fieldPath=".profile",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!(has(self.gilbertElliott) || (has(self.up) && has(self.up.gilbertElliott)) || (has(self.down) && has(self.down.gilbertElliott)) || (has(self.timeline) && self.timeline.exists(s, has(s.gilbertElliott) || (has(s.up) && has(s.up.gilbertElliott)) || (has(s.down) && has(s.down.gilbertElliott)))))",message="on Kubernetes, spec.network: Chaos Mesh's NetworkChaos has no Gilbert-Elliott loss (tc netem's gemodel), so it cannot apply gilbertElliott; use lossPercent with correlation there (docs/netem.md), or run the manifest with msgbench run, whose emulator applies the model exactly",fieldPath=".gilbertElliott",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.radio) || has(self.radio.energy)",message="on Kubernetes, spec.network.radio: Chaos Mesh applies one netem queue to a pod's traffic and cannot keep per-device radio states (idle, paging, power saving), so there radio only accounts the devices' energy (radio.energy, docs/energy.md) and without energy would do nothing; add radio.energy, or run the manifest with msgbench run, whose emulator keeps the states",fieldPath=".radio",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.radio) || !has(self.radio.energy) || has(self.radio.energy.model) || (has(self.profile) && self.profile in ['nb-iot', 'lte-m', 'lte', '5g-sa'])",message="spec.network.radio.energy.model: only the nb-iot, lte-m, lte and 5g-sa profiles have a power model; with another profile name one",fieldPath=".radio.energy.model",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.radio) || (has(self.profile) && self.profile in ['nb-iot', 'lte-m', 'lte', '5g-sa']) || (has(self.radio.inactivityTimer) && has(self.radio.promotionDelay))",message="spec.network.radio: only the nb-iot, lte-m, lte and 5g-sa profiles carry radio numbers; with another profile set radio.inactivityTimer and radio.promotionDelay",fieldPath=".radio",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.timeline) || self.timeline.all(a, self.timeline.exists_one(b, duration(b.at) == duration(a.at)) && self.timeline.all(b, duration(b.at) <= duration(a.at) || !has(a.for) || duration(a.at) + duration(a.for) <= duration(b.at)))",message="spec.network.timeline: two steps start at the same time, or a step begins before the one before it has ended (its at + for)",fieldPath=".timeline",reason="FieldValueInvalid"
type NetworkSpec struct {
	// profile names a preset link: none, nb-iot, lte-m, lte, 5g-sa, 5g-urban, cell-edge,
	// congested, 3g, wifi, satellite, or custom (only the fields given here).
	// +kubebuilder:default=none
	// +optional
	Profile NetworkProfile `json:"profile,omitempty"`

	// Impairments for both directions; up and down override them per direction.
	LinkSpec `json:",inline"`

	// up overrides the impairment of the device → broker direction.
	// +optional
	Up *LinkSpec `json:"up,omitempty"`

	// down overrides the impairment of the broker → device direction.
	// +optional
	Down *LinkSpec `json:"down,omitempty"`

	// direction limits impairment to one direction: to (device → broker only, the workers'
	// egress), from (broker → device only) or both.
	// +kubebuilder:default=both
	// +optional
	Direction NetworkDirection `json:"direction,omitempty"`

	// mtuBytes is the link MTU of the local link emulator (nb-iot: 296). Kubernetes pods keep
	// their interface MTU; Chaos Mesh cannot change it.
	// +kubebuilder:validation:Minimum=68
	// +kubebuilder:validation:Maximum=65535
	// +optional
	MTUBytes *int32 `json:"mtuBytes,omitempty"`

	// timeline changes the link during the run, step by step (at most 32 steps, in order of
	// at, none starting before the previous one has ended). The result's network.timeline
	// records when each step took effect.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Timeline []NetworkStep `json:"timeline,omitempty"`

	// radio emulates the cellular radio's idle, paging and sleep states per device (local
	// emulator; on Kubernetes it only accounts energy).
	// +optional
	Radio *RadioSpec `json:"radio,omitempty"`
}

// ResultsSpec says where the full result document goes.
type ResultsSpec struct {
	// objectStore receives result.json (merged) and one result per worker.
	// +optional
	ObjectStore *ObjectStoreSpec `json:"objectStore,omitempty"`
}

// ObjectStoreSpec is an S3-compatible bucket or a local folder.
// +kubebuilder:validation:XValidation:rule="!self.url.startsWith('file://') || (!has(self.endpoint) && !has(self.secretRef))",message="spec.results.objectStore: endpoint and secretRef apply only to s3:// URLs",fieldPath=".url",reason="FieldValueInvalid"
type ObjectStoreSpec struct {
	// url is s3://bucket/prefix or file:///path. Results go to
	// <url>/<namespace>/<name>/<uid>/result.json.
	// +kubebuilder:validation:Pattern=`^(s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?|file:///.*)$`
	// +kubebuilder:validation:MaxLength=1024
	// +required
	URL string `json:"url"`

	// endpoint is the S3-compatible endpoint, e.g. http://minio.minio:9000. Unset uses AWS S3.
	// +kubebuilder:validation:Pattern=`^https?://[^\s/]+(/.*)?$`
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// region of the bucket.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// secretRef names a Secret with keys accessKeyID and secretAccessKey.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
}

// CleanupPolicy says when owned objects are deleted after a run.
// +kubebuilder:validation:Enum=OnCompletion;OnSuccess;Never
type CleanupPolicy string

// Cleanup policies.
const (
	CleanupOnCompletion CleanupPolicy = "OnCompletion"
	CleanupOnSuccess    CleanupPolicy = "OnSuccess"
	CleanupNever        CleanupPolicy = "Never"
)

// Phase summarises where a benchmark is.
// +kubebuilder:validation:Enum=Pending;Provisioning;Starting;Running;Collecting;Succeeded;Failed
type Phase string

// Phases, in order.
const (
	PhasePending      Phase = "Pending"
	PhaseProvisioning Phase = "Provisioning"
	PhaseStarting     Phase = "Starting"
	PhaseRunning      Phase = "Running"
	PhaseCollecting   Phase = "Collecting"
	PhaseSucceeded    Phase = "Succeeded"
	PhaseFailed       Phase = "Failed"
)

// Condition types of a MessagingBenchmark.
const (
	ConditionBrokerReady     = "BrokerReady"
	ConditionGatewayReady    = "GatewayReady"
	ConditionNetworkImpaired = "NetworkImpaired"
	ConditionWorkersReady    = "WorkersReady"
	ConditionCompleted       = "Completed"
	ConditionResultsStored   = "ResultsStored"
)

// MessagingBenchmarkStatus is what the operator observed of the run.
type MessagingBenchmarkStatus struct {
	// phase summarises the run: Pending, Provisioning, Starting, Running, Collecting, Succeeded or
	// Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: BrokerReady, GatewayReady, NetworkImpaired, WorkersReady, Completed,
	// ResultsStored.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// startTime is when the workers were told to start publishing.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run reached Succeeded or Failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// workers counts the load-generator pods by state.
	// +optional
	Workers WorkerCounts `json:"workers,omitzero"`

	// summary holds the headline numbers of the merged result.
	// +optional
	Summary *ResultSummary `json:"summary,omitempty"`

	// resultsURL is where the full merged result.json was stored.
	// +optional
	ResultsURL string `json:"resultsURL,omitempty"`

	// networkTimeline records each step of spec.network.timeline the operator applied, and
	// when; the result's network.timeline is made from it.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	NetworkTimeline []NetworkStepStatus `json:"networkTimeline,omitempty"`

	// message explains the phase in words a user can act on, above all when it is Failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// NetworkStepStatus is one step of spec.network.timeline as the operator applied it.
type NetworkStepStatus struct {
	// at is when the step was planned, counted from the start of the measured window.
	At metav1.Duration `json:"at"`

	// step is the step's index in spec.network.timeline; absent for the return to
	// spec.network's link when a step's for ended.
	// +optional
	Step *int32 `json:"step,omitempty"`

	// description says what the step does: "outage", "profile lte, delay 300ms".
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description"`

	// appliedTime is when the operator had created the step's NetworkChaos objects (Chaos Mesh
	// injects them right after), in microseconds.
	AppliedTime metav1.MicroTime `json:"appliedTime"`
}

// WorkerCounts counts load-generator workers by state.
type WorkerCounts struct {
	// desired is spec.workers.replicas.
	Desired int32 `json:"desired"`
	// ready workers have connected and subscribed all their clients.
	Ready int32 `json:"ready"`
	// succeeded workers finished and delivered their result.
	Succeeded int32 `json:"succeeded"`
	// failed workers ended without a result.
	Failed int32 `json:"failed"`
}

// ResultSummary holds the headline numbers of a result (definitions in docs/results.md).
type ResultSummary struct {
	// sent messages, warm-up excluded.
	Sent int64 `json:"sent"`
	// received messages over all subscribers, warm-up excluded.
	Received int64 `json:"received"`
	// lost messages: expected at a subscriber but never received.
	Lost int64 `json:"lost"`
	// duplicates received more than once.
	Duplicates int64 `json:"duplicates"`
	// receivedPerSecond over the measured window, rounded down.
	ReceivedPerSecond int64 `json:"receivedPerSecond"`
	// latencyP50Micros is the median end-to-end latency in microseconds.
	// +optional
	LatencyP50Micros *int64 `json:"latencyP50Micros,omitempty"`
	// latencyP99Micros is the 99th percentile end-to-end latency in microseconds.
	// +optional
	LatencyP99Micros *int64 `json:"latencyP99Micros,omitempty"`
	// connectP50Micros is the median connect latency in microseconds.
	// +optional
	ConnectP50Micros *int64 `json:"connectP50Micros,omitempty"`
	// wireBytesPerMessage is all bytes the clients' sockets carried divided by messages received,
	// rounded to the nearest byte.
	// +optional
	WireBytesPerMessage *int64 `json:"wireBytesPerMessage,omitempty"`
	// brokerCPUMillis is the CPU time the broker's processes used over the measured window, in
	// whole milliseconds (a measured value under 0.5 ms is 1, never 0); brokerMaxRSSBytes their peak resident memory (absent for an external broker
	// or a Strimzi Kafka).
	// +optional
	BrokerCPUMillis *int64 `json:"brokerCPUMillis,omitempty"`
	// +optional
	BrokerMaxRSSBytes *int64 `json:"brokerMaxRSSBytes,omitempty"`
	// gatewayCPUMillis and gatewayMaxRSSBytes are the same for the protocol gateway (one
	// replica).
	// +optional
	GatewayCPUMillis *int64 `json:"gatewayCPUMillis,omitempty"`
	// +optional
	GatewayMaxRSSBytes *int64 `json:"gatewayMaxRSSBytes,omitempty"`
	// groups are the headline numbers of each device group of a run with spec.groups, in the
	// spec's order (result.json's groups[] has them all); absent for a run without groups.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Groups []GroupSummary `json:"groups,omitempty"`
}

// GroupSummary holds one device group's headline numbers (result.json's groups[]).
type GroupSummary struct {
	// name is the group's, spec.groups[].name.
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`
	// sent messages of the group's publishers, warm-up excluded.
	Sent int64 `json:"sent"`
	// received deliveries to the group's subscribers, warm-up excluded.
	Received int64 `json:"received"`
	// lost deliveries: expected at the group's subscribers but never received; absent for a
	// group that subscribes to nothing.
	// +optional
	Lost *int64 `json:"lost,omitempty"`
	// endToEndP99Micros is the 99th percentile end-to-end latency of the messages the group's
	// subscribers received, in microseconds; absent when they received none with msgbench's
	// header.
	// +optional
	EndToEndP99Micros *int64 `json:"endToEndP99Micros,omitempty"`
}

// MessagingBenchmark is one IoT messaging benchmark run: protocol, broker, QoS, payload and
// clients, on an emulated network. A benchmark runs once; to run again, create a new object
// (metadata.generateName helps).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mb;msgbench,categories=msgbench
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Protocol",type=string,JSONPath=`.spec.protocol`
// +kubebuilder:printcolumn:name="QoS",type=integer,JSONPath=`.spec.qos`
// +kubebuilder:printcolumn:name="Payload",type=integer,JSONPath=`.spec.workload.payloadBytes`
// +kubebuilder:printcolumn:name="Received/s",type=integer,JSONPath=`.status.summary.receivedPerSecond`
// +kubebuilder:printcolumn:name="P99-Micros",type=integer,JSONPath=`.status.summary.latencyP99Micros`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'Pending' || self.spec == oldSelf.spec",message="spec: a MessagingBenchmark is one run and its spec is immutable once the run has started; create a new one (metadata.generateName helps)",reason="FieldValueForbidden"
type MessagingBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the benchmark.
	// +required
	Spec MessagingBenchmarkSpec `json:"spec"`

	// status is what the operator observed of the run.
	// +optional
	Status MessagingBenchmarkStatus `json:"status,omitzero"`
}

// MessagingBenchmarkList is a list of MessagingBenchmarks.
//
// +kubebuilder:object:root=true
type MessagingBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MessagingBenchmark `json:"items"`
}
