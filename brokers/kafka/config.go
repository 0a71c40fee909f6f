// Package kafka runs Apache Kafka for a benchmark: a single-node KRaft broker as a local process
// (from the jars hack/kafka.sh fetches from Maven Central), and the rules for spec.broker.config
// shared with the operator's Strimzi objects.
package kafka

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Version is the Kafka release msgbench runs: locally (hack/kafka.sh) and on Kubernetes (the
// Strimzi Kafka's spec.kafka.version). It is the newest release Strimzi 1.2.0 supports.
const Version = "4.3.1"

// MetadataVersion is the KRaft metadata version of Version (what kafka-storage format picks by
// default), pinned in the Strimzi Kafka so a cluster never runs a newer one than local runs.
const MetadataVersion = "4.3-IV0"

// MaxMessageBytes is the broker's and topics' largest record batch: room for msgbench's
// largest payload (spec.workload.payloadBytes ≤ 16 MiB) plus framing. Kafka's default of about
// 1 MiB would refuse the larger payloads a benchmark may ask for.
const MaxMessageBytes = 16<<20 + 64<<10

// ManagedPrefixes are the keys (exact, or ending in '.': a prefix) spec.broker.config cannot
// set, the list api/v1alpha1's admission rule repeats (brokers/caps holds the two equal).
func ManagedPrefixes() []string {
	out := make([]string, 0, len(managedPrefixes))
	for k := range managedPrefixes {
		out = append(out, k)
	}
	return out
}

// managedPrefixes are broker settings msgbench decides; spec.broker.config cannot change them
// without breaking the benchmark (they are the keys Strimzi also refuses to pass through).
var managedPrefixes = map[string]string{
	"listeners":                        "msgbench opens the listeners the benchmark needs",
	"advertised.":                      "msgbench opens the listeners the benchmark needs",
	"listener.":                        "msgbench opens the listeners the benchmark needs",
	"inter.broker.listener.name":       "msgbench opens the listeners the benchmark needs",
	"controller.":                      "msgbench runs KRaft with its own controller quorum",
	"process.roles":                    "msgbench runs KRaft with its own controller quorum",
	"node.id":                          "msgbench runs KRaft with its own controller quorum",
	"broker.id":                        "msgbench runs KRaft with its own controller quorum",
	"log.dir":                          "msgbench chooses the storage",
	"ssl.":                             "TLS settings come from spec.tls",
	"security.":                        "TLS settings come from spec.tls",
	"sasl.":                            "client authentication comes from spec.identity",
	"authorizer.":                      "client authentication comes from spec.identity",
	"super.users":                      "client authentication comes from spec.identity",
	"zookeeper.":                       "msgbench runs KRaft: there is no ZooKeeper",
	"metadata.log.dir":                 "msgbench chooses the storage",
	"cruise.control.metrics.topic":     "not used by msgbench",
	"principal.builder.class":          "client authentication comes from spec.identity",
	"password.encoder.":                "client authentication comes from spec.identity",
	"host.name":                        "msgbench opens the listeners the benchmark needs",
	"port":                             "msgbench opens the listeners the benchmark needs",
	"broker.rack":                      "msgbench runs one rack",
	"config.providers":                 "msgbench runs without external configuration",
	"node.":                            "msgbench runs KRaft with its own controller quorum",
	"inter.broker.protocol.version":    "set by spec.kafka's version (KRaft metadata version)",
	"log.message.format.version":       "set by spec.kafka's version",
	"offsets.topic.replication.factor": "set from spec.kafka.replicas",
}

// CheckConfig refuses spec.broker.config keys msgbench manages, naming the field and why.
func CheckConfig(extra map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if k == "" || strings.ContainsAny(k, " \t\r\n=:#!") {
			return fmt.Errorf("spec.broker.config: %q is not a Kafka broker setting", k)
		}
		for prefix, why := range managedPrefixes {
			if k == prefix || (strings.HasSuffix(prefix, ".") && strings.HasPrefix(k, prefix)) {
				return fmt.Errorf("spec.broker.config: key %q is managed by msgbench (%s)", k, why)
			}
		}
		if strings.ContainsAny(extra[k], "\r\n") {
			return fmt.Errorf("spec.broker.config: value of %q spans lines", k)
		}
	}
	return nil
}

// Config is what msgbench needs from a local single-node KRaft broker.
type Config struct {
	// Host is the loopback address every listener binds and advertises.
	Host string
	// Port of the PLAINTEXT listener, TLSPort of the SSL listener (0: none) and ControllerPort
	// of the KRaft controller.
	Port, TLSPort, ControllerPort int
	// KeystoreFile is a PEM file with the server's PKCS #8 private key and certificate chain;
	// TLSVersion is "1.2" or "1.3", or empty to accept both (the client then decides).
	KeystoreFile string
	TLSVersion   string
	// DataDir holds the log (formatted by kafka-storage before the first start).
	DataDir string
	// Extra is spec.broker.config.
	Extra map[string]string
	// SASLPort is the port of the SASL listener (0: none), where the devices authenticate as
	// SASL's users: SASL_SSL with the keystore when TLSPort is set, else SASL_PLAINTEXT.
	SASLPort int
	SASL     *SASL
}

// Render writes server.properties. Comments say why a setting differs from Kafka's default.
func (c Config) Render() (string, error) {
	if err := CheckConfig(c.Extra); err != nil {
		return "", err
	}
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s=%v\n", k, v) }
	b.WriteString("# server.properties written by msgbench for one benchmark run: single-node KRaft\n")
	w("process.roles", "broker,controller")
	w("node.id", 1)
	w("controller.quorum.voters", fmt.Sprintf("1@%s:%d", c.Host, c.ControllerPort))
	w("controller.listener.names", "CONTROLLER")
	listeners := []string{fmt.Sprintf("PLAINTEXT://%s:%d", c.Host, c.Port)}
	protocols := "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
	if c.TLSPort > 0 {
		listeners = append(listeners, fmt.Sprintf("SSL://%s:%d", c.Host, c.TLSPort))
		protocols += ",SSL:SSL"
	}
	if c.SASLPort > 0 {
		if c.SASL == nil {
			return "", fmt.Errorf("a SASL listener needs its users")
		}
		if err := c.SASL.check(); err != nil {
			return "", err
		}
		l := c.listenerName()
		listeners = append(listeners, fmt.Sprintf("%s://%s:%d", l, c.Host, c.SASLPort))
		protocols += "," + l + ":" + l
	}
	w("advertised.listeners", strings.Join(listeners, ","))
	w("listeners", strings.Join(append(listeners, fmt.Sprintf("CONTROLLER://%s:%d", c.Host, c.ControllerPort)), ","))
	w("listener.security.protocol.map", protocols)
	w("inter.broker.listener.name", "PLAINTEXT")
	w("log.dirs", c.DataDir)
	b.WriteString("# one broker: internal topics cannot have more replicas\n")
	for _, k := range []string{"offsets.topic.replication.factor", "transaction.state.log.replication.factor",
		"transaction.state.log.min.isr", "share.coordinator.state.topic.replication.factor", "share.coordinator.state.topic.min.isr"} {
		w(k, 1)
	}
	b.WriteString("# msgbench creates its topics with spec.kafka.partitions; auto-creation would not\n")
	w("auto.create.topics.enable", false)
	b.WriteString("# room for the largest payload a benchmark may ask for\n")
	w("message.max.bytes", MaxMessageBytes)
	w("replica.fetch.max.bytes", MaxMessageBytes)
	w("group.initial.rebalance.delay.ms", 0)
	if c.TLSPort > 0 {
		b.WriteString("# a PEM keystore: the key and certificate msgbench generated (internal/certs)\n")
		w("ssl.keystore.type", "PEM")
		w("ssl.keystore.location", c.KeystoreFile)
		enabled := map[string]string{"1.2": "TLSv1.2", "1.3": "TLSv1.3", "": "TLSv1.2,TLSv1.3"}[c.TLSVersion]
		if enabled == "" {
			return "", fmt.Errorf("spec.tls.version: %q is not 1.2 or 1.3", c.TLSVersion)
		}
		w("ssl.enabled.protocols", enabled)
		w("ssl.protocol", "TLSv1.3")
	}
	if c.SASLPort > 0 {
		c.renderSASL(&b)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		w(k, c.Extra[k])
	}
	return b.String(), nil
}
