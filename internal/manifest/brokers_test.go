package manifest_test

import (
	"path/filepath"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/suite"
)

// TestBrokerComparisonSuite: config/samples/broker-comparison.yaml (docs/benchmarks-brokers.md)
// expands to every local broker at every QoS it offers at a fixed rate, and at QoS 1 and 2 in a
// closed loop — RabbitMQ at QoS 2 excluded, not measured as QoS 1, and no closed loop at QoS 0,
// which nothing paces — each point a valid run a local machine can start.
func TestBrokerComparisonSuite(t *testing.T) {
	d, err := manifest.ReadSuiteDoc(filepath.Join(testenv.RepoRoot(), "config", "samples", "broker-comparison.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	points, err := suite.Expand(d.Suite, d.Template)
	if err != nil {
		t.Fatal(err)
	}
	got := map[v1alpha1.BrokerType][]int32{}
	for _, p := range points {
		mb, err := suite.Benchmark(d.Suite, d.Template, p, 1)
		if err != nil {
			t.Fatalf("point %s: %v", p.Name, err)
		}
		s := mb.Spec
		if !s.Broker.Type.Local() {
			t.Errorf("point %s: broker %s does not run locally", p.Name, s.Broker.Type)
		}
		if (s.Broker.Type == v1alpha1.BrokerKafka) != (s.Protocol == v1alpha1.ProtocolKafka) {
			t.Errorf("point %s: protocol %s on broker %s", p.Name, s.Protocol, s.Broker.Type)
		}
		if s.QoS == 0 && s.Workload.Rate == 0 {
			t.Errorf("point %s: a closed loop at QoS 0", p.Name)
		}
		got[s.Broker.Type] = append(got[s.Broker.Type], s.QoS)
	}
	want := map[v1alpha1.BrokerType]int{v1alpha1.BrokerMosquitto: 5, v1alpha1.BrokerRabbitMQ: 3, v1alpha1.BrokerArtemis: 5, v1alpha1.BrokerKafka: 5}
	for b, n := range want {
		if len(got[b]) != n {
			t.Errorf("%s: QoS %v, want %d points", b, got[b], n)
		}
	}
	for _, q := range got[v1alpha1.BrokerRabbitMQ] {
		if q == 2 {
			t.Error("RabbitMQ at QoS 2 is a point: its plugin has none")
		}
	}
}
