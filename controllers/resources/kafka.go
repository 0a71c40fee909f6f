package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/plan"
)

// Strimzi's API (kafka.strimzi.io/v1, Strimzi 1.0 and later; KRaft with node pools only).
var (
	KafkaGVK         = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "Kafka"}
	KafkaNodePoolGVK = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaNodePool"}
	KafkaTopicGVK    = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaTopic"}
)

// Kafka listener ports: Strimzi's conventional plain and TLS internal listeners.
const (
	KafkaPort    = 9092
	KafkaTLSPort = 9093
)

// Strimzi listener names (status.listeners[].name).
const (
	KafkaPlainListener = "plain"
	KafkaTLSListener   = "tls"
)

// LabelStrimziCluster ties a KafkaNodePool or KafkaTopic to its Kafka.
const LabelStrimziCluster = "strimzi.io/cluster"

// kafkaNameLimit keeps every name Strimzi derives from the cluster name a DNS label: broker
// pods are named <cluster>-<pool>-<id>, and msgbench names the pool like the cluster, so
// 2×28 + 2 dashes + two digits of id (spec.kafka.replicas ≤ 15) fit 63.
const kafkaNameLimit = 28

// KafkaClusterName is the name of the benchmark's Kafka and of its KafkaNodePool: the
// benchmark's name when it is short enough, else a prefix of it with a hash of the whole.
func KafkaClusterName(mb *v1alpha1.MessagingBenchmark) string {
	name := mb.Name
	if len(name) <= kafkaNameLimit && !strings.Contains(name, ".") {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:8]
	keep := min(len(name), kafkaNameLimit-len(h)-1)
	return strings.Trim(strings.ReplaceAll(name[:keep], ".", "-"), "-") + "-" + h
}

// KafkaBootstrapService is the Service Strimzi creates for clients of the cluster.
func KafkaBootstrapService(mb *v1alpha1.MessagingBenchmark) string {
	return KafkaClusterName(mb) + "-kafka-bootstrap"
}

// KafkaListener is the Strimzi listener the workers use: tls with spec.tls, else plain.
func KafkaListener(p *plan.Plan) (name string, port int) {
	if p.Broker.TLS {
		return KafkaTLSListener, KafkaTLSPort
	}
	return KafkaPlainListener, KafkaPort
}

// KafkaBootstrapAddress is the bootstrap address of the workers' listener, as Strimzi reports
// it in status.listeners[].bootstrapServers.
func KafkaBootstrapAddress(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) string {
	_, port := KafkaListener(p)
	return fmt.Sprintf("%s.%s.svc:%d", KafkaBootstrapService(mb), mb.Namespace, port)
}

// KafkaCertificateHosts are the names a Kafka TLS listener's certificate must hold: the
// bootstrap Service, and every broker pod behind the headless brokers Service (clients
// connect to the brokers the metadata names after bootstrapping).
func KafkaCertificateHosts(mb *v1alpha1.MessagingBenchmark) []string {
	k, ns := KafkaClusterName(mb), mb.Namespace
	boot, brokers := k+"-kafka-bootstrap", k+"-kafka-brokers"
	return []string{boot, boot + "." + ns, boot + "." + ns + ".svc", boot + "." + ns + ".svc.cluster.local",
		"*." + brokers + "." + ns + ".svc", "*." + brokers + "." + ns + ".svc.cluster.local"}
}

// KafkaTopicName is the name of the KafkaTopic object of benchmark topic t (the Kafka topic's own
// name, workload.topicPrefix + t, is in spec.topicName: topic names allow characters and
// lengths object names do not).
func KafkaTopicName(mb *v1alpha1.MessagingBenchmark, t int) string {
	return KafkaClusterName(mb) + "-topic-" + strconv.Itoa(t)
}

// Kafka is the Strimzi Kafka cluster of a benchmark: KRaft (its brokers and controllers come
// from KafkaNodePool), Kafka kafka.Version, an internal plain listener on 9092 and, with
// spec.tls, a TLS listener on 9093 serving the benchmark's certificate, spec.broker.config in
// spec.kafka.config, and the Topic Operator, which turns the KafkaTopics into topics.
func Kafka(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) (*unstructured.Unstructured, error) {
	if err := kafka.CheckConfig(mb.Spec.Broker.Config); err != nil {
		return nil, err
	}
	replicas := int64(mb.Spec.Kafka.Replicas)
	if replicas < 1 {
		replicas = 1
	}
	config := map[string]any{
		// The internal topics cannot have more replicas than there are brokers.
		"offsets.topic.replication.factor":         replicas,
		"transaction.state.log.replication.factor": replicas,
		"transaction.state.log.min.isr":            min(replicas, 2),
		"default.replication.factor":               replicas,
		// msgbench's topics come from KafkaTopics with spec.kafka.partitions.
		"auto.create.topics.enable": false,
		// Room for the largest payload a benchmark may ask for.
		"message.max.bytes":       int64(kafka.MaxMessageBytes),
		"replica.fetch.max.bytes": int64(kafka.MaxMessageBytes),
	}
	listeners := []any{map[string]any{"name": KafkaPlainListener, "port": int64(KafkaPort), "type": "internal", "tls": false}}
	if p.Broker.TLS {
		listeners = append(listeners, map[string]any{
			"name": KafkaTLSListener, "port": int64(KafkaTLSPort), "type": "internal", "tls": true,
			// The benchmark's certificate (generated, or spec.tls.secretRef), so workers verify
			// the broker with the same CA as for every other protocol.
			"configuration": map[string]any{"brokerCertChainAndKey": map[string]any{
				"secretName": TLSSecretName(mb), "certificate": "tls.crt", "key": "tls.key"}},
		})
		// Strimzi passes the TLS versions through; the client pins the same one.
		proto := "TLSv1.3"
		if mb.Spec.TLS.Version == v1alpha1.TLS12 {
			proto = "TLSv1.2"
		}
		config["ssl.enabled.protocols"], config["ssl.protocol"] = proto, proto
	}
	for k, v := range mb.Spec.Broker.Config {
		config[k] = v
	}
	spec := map[string]any{
		"version":         kafka.Version,
		"metadataVersion": kafka.MetadataVersion,
		"listeners":       listeners,
		"config":          config,
	}
	if mb.Spec.Broker.Image != "" {
		spec["image"] = mb.Spec.Broker.Image
	}
	u := newUnstructured(KafkaGVK, meta(mb, KafkaClusterName(mb), v1alpha1.ComponentBroker))
	// Strimzi 0.49 and 0.50 serve kafka.strimzi.io/v1 but still want these two annotations;
	// Strimzi 1.x ignores them.
	u.SetAnnotations(map[string]string{"strimzi.io/kraft": "enabled", "strimzi.io/node-pools": "enabled"})
	u.Object["spec"] = map[string]any{
		"kafka":          spec,
		"entityOperator": map[string]any{"topicOperator": map[string]any{}},
	}
	return u, nil
}

// KafkaNodePool is the cluster's one pool: spec.kafka.replicas nodes that are controllers and
// brokers at once, on ephemeral storage (a benchmark keeps no data), with
// spec.broker.resources.
func KafkaNodePool(mb *v1alpha1.MessagingBenchmark) (*unstructured.Unstructured, error) {
	m := meta(mb, KafkaClusterName(mb), v1alpha1.ComponentBroker)
	m.Labels[LabelStrimziCluster] = KafkaClusterName(mb)
	u := newUnstructured(KafkaNodePoolGVK, m)
	spec := map[string]any{
		"replicas": int64(max(1, mb.Spec.Kafka.Replicas)),
		"roles":    []any{"controller", "broker"},
		"storage":  map[string]any{"type": "ephemeral"},
	}
	res := mb.Spec.Broker.Resources
	if len(res.Limits) > 0 || len(res.Requests) > 0 {
		r, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&res)
		if err != nil {
			return nil, err
		}
		spec["resources"] = r
	}
	u.Object["spec"] = spec
	return u, nil
}

// KafkaTopics are one KafkaTopic per benchmark topic, with spec.kafka.partitions and replicas.
func KafkaTopics(mb *v1alpha1.MessagingBenchmark) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, mb.Spec.Workload.Topics)
	for t := 0; t < int(mb.Spec.Workload.Topics); t++ {
		m := meta(mb, KafkaTopicName(mb, t), v1alpha1.ComponentBroker)
		m.Labels[LabelStrimziCluster] = KafkaClusterName(mb)
		u := newUnstructured(KafkaTopicGVK, m)
		u.Object["spec"] = map[string]any{
			"topicName":  mb.Spec.Workload.TopicName(t),
			"partitions": int64(max(1, mb.Spec.Kafka.Partitions)),
			"replicas":   int64(max(1, mb.Spec.Kafka.Replicas)),
		}
		out = append(out, u)
	}
	return out
}

// KafkaObjects are all Strimzi objects of a benchmark with broker type kafka, in the order the
// operator applies them: Kafka, KafkaNodePool, KafkaTopics.
func KafkaObjects(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) ([]client.Object, error) {
	k, err := Kafka(mb, p)
	if err != nil {
		return nil, err
	}
	pool, err := KafkaNodePool(mb)
	if err != nil {
		return nil, err
	}
	objs := []client.Object{k, pool}
	for _, t := range KafkaTopics(mb) {
		objs = append(objs, t)
	}
	return objs, nil
}

func newUnstructured(gvk schema.GroupVersionKind, m metav1.ObjectMeta) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetName(m.Name)
	u.SetNamespace(m.Namespace)
	u.SetLabels(maps.Clone(m.Labels))
	u.SetOwnerReferences(m.OwnerReferences)
	return u
}
