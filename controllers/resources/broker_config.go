package resources

import (
	"encoding/xml"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
)

// CheckBrokerConfigKeys refuses spec.broker.config keys of a broker msgbench also runs locally
// (Mosquitto, RabbitMQ, Artemis, Kafka) that the broker does not know or msgbench manages, with
// the tables local runs check too (brokers/<type>); version is the broker's, from its image tag
// ("" when the tag names none). The operator calls it before it creates anything for the run;
// the other brokers' keys are checked when their configuration is rendered.
func CheckBrokerConfigKeys(mb *v1alpha1.MessagingBenchmark, version string) error {
	cfg := mb.Spec.Broker.Config
	switch mb.Spec.Broker.Type {
	case v1alpha1.BrokerMosquitto:
		return mosquitto.CheckConfig(cfg)
	case v1alpha1.BrokerRabbitMQ:
		return rabbitmq.CheckConfig(cfg, version)
	case v1alpha1.BrokerArtemis:
		return artemis.CheckConfig(cfg)
	case v1alpha1.BrokerKafka:
		return kafka.CheckConfig(cfg)
	}
	return nil
}

// What the brokers msgbench configures through a file it renders (EMQX, NanoMQ, HiveMQ CE,
// VerneMQ) share: the limits a benchmark needs, the check of spec.broker.config keys against a
// broker's documented ones, and a tree of dotted keys written as HOCON or XML.

// brokerQueueLen is each client's queue of messages beyond the inflight window (EMQX
// max_mqueue_len, NanoMQ max_mqueue_len, HiveMQ max-queue-size, VerneMQ max_online_messages):
// the brokers' defaults (1000 to 2048) drop QoS 1/2 messages under load, which a benchmark
// would count as loss of the broker rather than of its configuration. Mosquitto's too.
const brokerQueueLen = 1000000

// mqttInflight is spec.mqtt.inflight (20 when unset, the CRD default).
func mqttInflight(mb *v1alpha1.MessagingBenchmark) int {
	if mb.Spec.MQTT.Inflight <= 0 {
		return 20
	}
	return int(mb.Spec.MQTT.Inflight)
}

// checkBrokerConfig refuses spec.broker.config keys that are not among a broker's documented
// keys msgbench accepts (exact keys, or prefixes ending in '.'), naming the managed ones.
func checkBrokerConfig(broker string, cfg map[string]string, allowed, managed []string) error {
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if keyMatches(k, allowed) {
			if strings.ContainsAny(cfg[k], "\n\r\x00") {
				return fmt.Errorf("spec.broker.config.%s: the value has a line break or NUL; values are single-line settings", k)
			}
			continue
		}
		if keyMatches(k, managed) {
			return fmt.Errorf("spec.broker.config.%s: managed by msgbench for %s (listeners, TLS files and versions, node identity and access follow from the spec)", k, broker)
		}
		return fmt.Errorf("spec.broker.config.%s: not a %s setting msgbench accepts; accepted keys (exact, or prefixes ending in '.'): %s", k, broker, strings.Join(allowed, ", "))
	}
	return nil
}

func keyMatches(k string, list []string) bool {
	for _, p := range list {
		if k == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(k, p)) {
			return true
		}
	}
	return false
}

// confTree is a nested configuration (HOCON blocks, XML elements) built from dotted paths;
// leaves hold the value as it is written.
type confTree map[string]any

func (t confTree) set(path, value string) error {
	parts := strings.Split(path, ".")
	node := t
	for i, p := range parts {
		if p == "" {
			return fmt.Errorf("empty path element in %q", path)
		}
		if i == len(parts)-1 {
			if _, isTree := node[p].(confTree); isTree {
				return fmt.Errorf("%q is a section, not a setting", path)
			}
			node[p] = value
			return nil
		}
		switch next := node[p].(type) {
		case confTree:
			node = next
		case nil:
			n := confTree{}
			node[p] = n
			node = n
		default:
			return fmt.Errorf("%q is a setting, so %q cannot be under it", strings.Join(parts[:i+1], "."), path)
		}
	}
	return nil
}

// merge sets spec.broker.config's keys (already checked by checkBrokerConfig) over msgbench's
// own settings, in key order, each value as format writes it; a key that clashes with the tree's
// shape is refused naming the field.
func (t confTree) merge(cfg map[string]string, format func(string) string) error {
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if err := t.set(k, format(cfg[k])); err != nil {
			return fmt.Errorf("spec.broker.config.%s: %w", k, err)
		}
	}
	return nil
}

// writeHOCON writes the tree as HOCON blocks, the values as they are (see hoconValue).
func (t confTree) writeHOCON(b *strings.Builder, depth int) {
	indent := strings.Repeat("  ", depth)
	for _, k := range slices.Sorted(maps.Keys(t)) {
		switch v := t[k].(type) {
		case confTree:
			fmt.Fprintf(b, "%s%s {\n", indent, k)
			v.writeHOCON(b, depth+1)
			fmt.Fprintf(b, "%s}\n", indent)
		case string:
			fmt.Fprintf(b, "%s%s = %s\n", indent, k, v)
		}
	}
}

// writeXML writes the tree as nested XML elements, the values escaped.
func (t confTree) writeXML(b *strings.Builder, depth int) {
	indent := strings.Repeat("  ", depth)
	for _, k := range slices.Sorted(maps.Keys(t)) {
		switch v := t[k].(type) {
		case confTree:
			fmt.Fprintf(b, "%s<%s>\n", indent, k)
			v.writeXML(b, depth+1)
			fmt.Fprintf(b, "%s</%s>\n", indent, k)
		case string:
			fmt.Fprintf(b, "%s<%s>", indent, k)
			_ = xml.EscapeText(b, []byte(v)) // a strings.Builder never fails
			fmt.Fprintf(b, "</%s>\n", k)
		}
	}
}

// hoconUnquoted are values HOCON reads the same unquoted: numbers, sizes, durations, booleans,
// enum atoms. Anything else is written as a quoted string.
var hoconUnquoted = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.]*$`)

func hoconValue(v string) string {
	if hoconUnquoted.MatchString(v) {
		return v
	}
	return strconv.Quote(v)
}
